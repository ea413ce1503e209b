"""Blob decompression: one batch call gives what one call per blob gives, and damage is an error."""

from __future__ import annotations

import os

import pytest
import zstandard

from inspector.errors import CorruptDataError
from inspector.store.native import blobs


def _blobs(count: int) -> tuple[list[bytes], list[tuple[int, bytes, int]]]:
    raws = [(f"piece {n} " * (n % 50 + 1)).encode() + os.urandom(n % 7) for n in range(count)]
    return raws, [(*blobs.compress(raw), len(raw)) for raw in raws]


def test_a_batch_gives_each_blob_in_order() -> None:
    raws, stored = _blobs(300)
    assert {codec for codec, _, _ in stored} == {blobs.CODEC_RAW, blobs.CODEC_ZSTD}
    assert blobs.decompress_many(stored) == raws
    assert blobs.decompress_many(stored[:1]) == raws[:1]
    assert blobs.decompress_many([]) == []


def test_a_big_batch_on_threads_gives_the_same(monkeypatch) -> None:
    monkeypatch.setattr(blobs, "THREADS_FROM_BYTES", 1)
    monkeypatch.setattr(blobs, "_THREADS", 2)
    raws, stored = _blobs(300)
    assert blobs.decompress_many(stored) == raws


@pytest.mark.parametrize("threads", [False, True])
@pytest.mark.parametrize("damage", ["bytes", "truncated", "size", "smaller", "codec"])
def test_one_damaged_blob_fails_the_batch(damage: str, threads: bool, monkeypatch) -> None:
    if threads:
        monkeypatch.setattr(blobs, "THREADS_FROM_BYTES", 1)
        monkeypatch.setattr(blobs, "_THREADS", 2)
    raws, stored = _blobs(40)
    n = next(i for i, (codec, _, _) in enumerate(stored) if codec == blobs.CODEC_ZSTD)
    codec, data, size = stored[n]
    stored[n] = {"bytes": (codec, data[:6] + bytes(12) + data[18:], size),
                 "truncated": (codec, data[:-4], size),
                 "size": (codec, data, size + 1),
                 "smaller": (codec, data, size - 1),
                 "codec": (7, data, size)}[damage]
    with pytest.raises(CorruptDataError):
        blobs.decompress_many(stored)


def test_sizes_the_batch_call_cannot_take_are_decompressed_alone(monkeypatch) -> None:
    monkeypatch.setattr(blobs, "THREADS_FROM_BYTES", 1)
    monkeypatch.setattr(blobs, "_THREADS", 2)
    empty = zstandard.ZstdCompressor().compress(b"")     # never written (too small), but a store may hold it
    raws, stored = _blobs(10)
    assert blobs.decompress_many([*stored, (blobs.CODEC_ZSTD, empty, 0)]) == [*raws, b""]
    with pytest.raises(CorruptDataError):
        blobs.decompress_many([*stored, (blobs.CODEC_ZSTD, stored[-1][1], 0)])


def test_a_batch_claiming_absurd_sizes_goes_blob_by_blob(monkeypatch) -> None:
    monkeypatch.setattr(blobs, "THREADS_FROM_BYTES", 1)
    monkeypatch.setattr(blobs, "_THREADS", 2)
    raws, stored = _blobs(50)
    monkeypatch.setattr(blobs, "BATCH_MAX_BYTES", sum(len(r) for r in raws) - 1)
    assert blobs.decompress_many(stored) == raws
    codec, data, size = next(b for b in stored if b[0] == blobs.CODEC_ZSTD)
    with pytest.raises(CorruptDataError):
        blobs.decompress_many([*stored, (codec, data, blobs.BATCH_MAX_PIECE)])
