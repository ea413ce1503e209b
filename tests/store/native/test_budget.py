"""Read budgets (inspector.limits): shared subtrees, decompression bombs, deep nesting."""

from __future__ import annotations

import pytest
import zstandard

from inspector import limits
from inspector.errors import CorruptDataError
from inspector.codec import expand
from inspector.store.native import blobs
from inspector.codec import Chunk, ChunkedList, Ref, digest_of, pack, unpack


@pytest.fixture(autouse=True)
def _fresh_limits():
    limits.reset()
    yield
    limits.reset()


def _dag(levels: int) -> tuple[bytes, dict]:
    """``levels`` of ``[Ref(next), Ref(next)]``: 2**levels leaves in a few hundred bytes."""
    table: dict = {}
    raw = pack("leaf")
    digest = digest_of(raw)
    table[digest] = unpack(raw)
    for _ in range(levels):
        raw = pack([Ref(digest, 1), Ref(digest, 1)])
        digest = digest_of(raw)
        table[digest] = unpack(raw)
    return digest, table


def test_a_2_to_the_40_dag_is_refused_before_anything_is_built() -> None:
    root, table = _dag(40)
    with pytest.raises(limits.BudgetExceeded, match=r"2,199,023,255,551 values.*--max-nodes"):
        expand.resolve_all([root], table, "The state of checkpoint r:1")


def test_a_small_dag_is_built_with_each_piece_once() -> None:
    root, table = _dag(4)
    value = expand.resolve_all([root], table)[root]
    assert value[0] is value[1]                  # shared, not copied
    flat = value
    for _ in range(3):
        flat = flat[0]
    assert flat == ["leaf", "leaf"]


def test_a_chunk_table_repeating_one_chunk_counts_every_repeat() -> None:
    raw = pack(list(range(100)))
    digest = digest_of(raw)
    table = {digest: unpack(raw)}
    chunked = ChunkedList(tuple(Chunk(100, len(raw), digest) for _ in range(1000)))
    root_raw = pack({"big": chunked})
    root = digest_of(root_raw)
    table[root] = unpack(root_raw)
    assert len(expand.resolve_all([root], table)[root]["big"]) == 100_000
    limits.configure(nodes=50_000)
    with pytest.raises(limits.BudgetExceeded, match="value count budget of 50,000"):
        expand.resolve_all([root], table)


def test_depth_is_measured_across_pieces() -> None:
    raw = pack(1)
    digest = digest_of(raw)
    table = {digest: 1}
    for _ in range(300):
        raw = pack([Ref(digest, 1)])
        digest = digest_of(raw)
        table[digest] = unpack(raw)
    with pytest.raises(limits.BudgetExceeded, match="nests 300 levels deep.*--max-depth"):
        expand.resolve_all([digest], table)
    limits.configure(depth=400)
    value = expand.resolve_all([digest], table)[digest]
    assert limits.depth_of(value) == 300


@pytest.mark.parametrize("declared", [4 << 30, 16 << 30])
def test_a_frame_declaring_gigabytes_is_refused_without_allocating(declared: int) -> None:
    frame = zstandard.ZstdCompressor().compress(b"x" * 1000)
    params = zstandard.get_frame_parameters(frame)
    assert params.content_size == 1000
    # a frame whose header claims far more than the size column: damaged, nothing allocated
    fake = zstandard.ZstdCompressor(write_content_size=False).compress(b"\x00" * (1 << 20))
    with pytest.raises(CorruptDataError, match="wrong length"):
        blobs.decompress(blobs.CODEC_ZSTD, fake, 1000)        # streamed, stops at 1,001 bytes
    with pytest.raises(limits.BudgetExceeded, match="--max-piece-mb"):
        blobs.decompress(blobs.CODEC_ZSTD, frame, declared)   # the size column itself is absurd
    with pytest.raises(CorruptDataError, match="wrong length"):
        blobs.decompress(blobs.CODEC_ZSTD, frame, 999)


def test_a_frame_without_content_size_is_streamed() -> None:
    data = b"abc" * 10_000
    frame = zstandard.ZstdCompressor(write_content_size=False).compress(data)
    assert blobs.decompress(blobs.CODEC_ZSTD, frame, len(data)) == data


def test_non_binary_data_is_damage() -> None:
    with pytest.raises(CorruptDataError, match="not binary"):
        blobs.decompress(blobs.CODEC_RAW, "text", 4)
