"""Blob decompression: one batch call (on threads, or on the worker thread beside the caller)
gives what one call per blob gives, and damage is an error."""

from __future__ import annotations

import os

import pytest
import zstandard

from inspector.errors import CorruptDataError
from inspector.store.native import blobs


def _blobs(count: int) -> tuple[list[bytes], list[tuple[int, bytes, int]]]:
    raws = [(f"piece {n} " * (n % 50 + 1)).encode() + os.urandom(n % 7) for n in range(count)]
    return raws, [(*blobs.compress(raw), len(raw)) for raw in raws]


@pytest.fixture(params=["one call per blob", "batch on threads", "batch on the worker"])
def decompress(request, monkeypatch):
    """``decompress_many`` as a plain loop or as one threaded batch call, or ``decompress_later``."""
    if request.param == "batch on threads":
        monkeypatch.setattr(blobs, "THREADS_FROM_BYTES", 1)
        monkeypatch.setattr(blobs, "_THREADS", 2)
    if request.param == "batch on the worker":
        monkeypatch.setattr(blobs, "_THREADS", 2)      # a one-CPU machine decompresses in the caller
        monkeypatch.setattr(blobs, "LATER_FROM_BYTES", 1)
        return lambda stored: blobs.decompress_later(stored)()
    return blobs.decompress_many


def test_a_batch_gives_each_blob_in_order(decompress) -> None:
    raws, stored = _blobs(300)
    assert {codec for codec, _, _ in stored} == {blobs.CODEC_RAW, blobs.CODEC_ZSTD}
    assert decompress(stored) == raws
    assert decompress(stored[:1]) == raws[:1]
    assert decompress([]) == []


def test_decompress_later_returns_at_once_and_the_worker_does_the_work(monkeypatch) -> None:
    import threading

    monkeypatch.setattr(blobs, "_THREADS", 2)
    monkeypatch.setattr(blobs, "LATER_FROM_BYTES", 1)
    raws, stored = _blobs(300)
    release = threading.Event()
    blocker = blobs._worker().submit(release.wait, 10)      # the worker is busy for now
    got: list = []
    caller = threading.Thread(target=lambda: got.append(blobs.decompress_later(stored)))
    caller.start()
    caller.join(5)
    assert got, "decompress_later waited for the busy worker instead of queueing the work"
    assert got[0].future is not None and not got[0].future.done(), "the work was not left to the worker"
    release.set()
    assert blocker.result() is True and got[0]() == raws


@pytest.mark.parametrize("damage", ["bytes", "truncated", "size", "smaller", "codec"])
def test_one_damaged_blob_fails_the_batch(damage: str, decompress) -> None:
    raws, stored = _blobs(40)
    n = next(i for i, (codec, _, _) in enumerate(stored) if codec == blobs.CODEC_ZSTD)
    codec, data, size = stored[n]
    stored[n] = {"bytes": (codec, data[:6] + bytes(12) + data[18:], size),
                 "truncated": (codec, data[:-4], size),
                 "size": (codec, data, size + 1),
                 "smaller": (codec, data, size - 1),
                 "codec": (7, data, size)}[damage]
    with pytest.raises(CorruptDataError):
        decompress(stored)


def test_sizes_the_batch_call_cannot_take_are_decompressed_alone(decompress) -> None:
    empty = zstandard.ZstdCompressor().compress(b"")     # never written (too small), but a store may hold it
    raws, stored = _blobs(10)
    assert decompress([*stored, (blobs.CODEC_ZSTD, empty, 0)]) == [*raws, b""]
    with pytest.raises(CorruptDataError):
        decompress([*stored, (blobs.CODEC_ZSTD, stored[-1][1], 0)])


def test_a_batch_claiming_absurd_sizes_goes_blob_by_blob(decompress, monkeypatch) -> None:
    raws, stored = _blobs(50)
    monkeypatch.setattr(blobs, "BATCH_MAX_BYTES", sum(len(r) for r in raws) - 1)
    assert decompress(stored) == raws
    codec, data, size = next(b for b in stored if b[0] == blobs.CODEC_ZSTD)
    with pytest.raises(CorruptDataError):
        decompress([*stored, (codec, data, blobs.BATCH_MAX_PIECE)])


def test_a_small_batch_is_decompressed_by_its_caller(monkeypatch) -> None:
    monkeypatch.setattr(blobs, "_THREADS", 2)
    raws, stored = _blobs(300)
    total = sum(stored[n][2] for n in blobs._batchable(stored))   # the zstd blobs the worker would take
    monkeypatch.setattr(blobs, "LATER_FROM_BYTES", total + 1)
    later = blobs.decompress_later(stored)
    assert later.future is None and later() == raws
    monkeypatch.setattr(blobs, "LATER_FROM_BYTES", total)
    later = blobs.decompress_later(stored)
    assert later.future is not None and later() == raws


def test_on_one_cpu_the_caller_decompresses(monkeypatch) -> None:
    monkeypatch.setattr(blobs, "_THREADS", 1)
    raws, stored = _blobs(300)
    later = blobs.decompress_later(stored)
    assert later.future is None and later() == raws


def test_small_structural_pieces_use_the_fast_mode_and_text_keeps_level_three() -> None:
    """A small piece that is not one string (a root map, a table of digests) is compressed in
    zstd's fast mode; a string piece and a bigger piece get level 3 (entropy-coded literals,
    which only a string's text needs); every one reads back as it was written."""
    import msgpack
    level3 = zstandard.ZstdCompressor(level=blobs.LEVEL)
    fast = zstandard.ZstdCompressor(level=blobs.FAST_LEVEL)
    words = "the quick brown fox jumps over the lazy dog and then some more "
    root = msgpack.packb({"messages": [os.urandom(16) for _ in range(20)], "step": 3,
                          "notes": words * 5})
    text = msgpack.packb((words * 12)[:700])
    big = msgpack.packb([{"id": n, "text": words[n % 40:]} for n in range(150)])
    assert len(root) < blobs.FAST_MAX <= len(big)
    assert blobs.compress(root) == (blobs.CODEC_ZSTD, fast.compress(root))
    assert fast.compress(root) != level3.compress(root)
    assert blobs.compress(text) == (blobs.CODEC_ZSTD, level3.compress(text))
    assert len(level3.compress(text)) < len(fast.compress(text))
    assert blobs.compress(big) == (blobs.CODEC_ZSTD, level3.compress(big))
    for raw in (root, text, big):
        codec, data = blobs.compress(raw)
        assert blobs.decompress(codec, data, len(raw)) == raw
    incompressible = msgpack.packb([os.urandom(16) for _ in range(20)])
    assert blobs.compress(incompressible) == (blobs.CODEC_RAW, incompressible)


def test_a_finished_threads_compressors_serve_the_next_thread_and_never_two_at_once() -> None:
    """LangGraph runs a saver's puts on threads made afresh for each ``invoke``: the zstd
    contexts a thread made go to the next thread once it has ended, instead of being made
    again (~30 µs a thread); two live threads never hold the same ones."""
    import gc
    import threading

    def compressors_of_a_thread(hold: threading.Event | None = None, ready: threading.Event | None = None) -> list:
        seen: list = []

        def work() -> None:
            raw = b"some piece of text " * 40
            assert blobs.decompress_many([(*blobs.compress(raw), len(raw))]) == [raw]
            seen.append(blobs._compressors())
            if ready is not None and hold is not None:
                ready.set()
                hold.wait(10)
        thread = threading.Thread(target=work)
        thread.start()
        if ready is not None:
            ready.wait(10)
            return [thread, seen]
        thread.join()
        gc.collect()
        return seen

    first = compressors_of_a_thread()[0]
    second = compressors_of_a_thread()[0]
    assert second is first                   # handed on, not made again
    hold, ready_a, ready_b = threading.Event(), threading.Event(), threading.Event()
    thread_a, seen_a = compressors_of_a_thread(hold, ready_a)
    thread_b, seen_b = compressors_of_a_thread(hold, ready_b)
    hold.set()
    thread_a.join()
    thread_b.join()
    assert seen_a[0] is not seen_b[0]        # both alive at once: one of them made new ones
    assert len(blobs._SPARE) <= blobs._SPARE_MAX
