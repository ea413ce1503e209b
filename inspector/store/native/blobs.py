"""Compression of stored pieces (zstd for anything worth compressing)."""

from __future__ import annotations

import _thread
import os
import struct
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import zstandard

from inspector import limits
from inspector.errors import CorruptDataError

if TYPE_CHECKING:   # the worker thread's pool is imported when it starts (not by every read)
    from concurrent.futures import Future, ThreadPoolExecutor

CODEC_RAW = 0
CODEC_ZSTD = 1
MIN_COMPRESS = 96
FAST_MAX = 4096       # smaller pieces that are not one string or binary value: zstd's fast mode
FAST_LEVEL = -1       # LZ matches only, no entropy-coded literals: ~1/4 of level 3's time on a small piece
LEVEL = 3
# msgpack heads of a piece that is one string or binary value (fixstr, str 8/16/32, bin 8/16/32):
# text whose literals only entropy coding shrinks, so it always gets level 3
_TEXT_HEADS = frozenset([*range(0xA0, 0xC0), 0xD9, 0xDA, 0xDB, 0xC4, 0xC5, 0xC6])
BATCH_MAX_PIECE = 16 * 1024 * 1024    # larger pieces are decompressed alone (one buffer each)
BATCH_MAX_BYTES = 256 * 1024 * 1024   # a batch claiming more (a damaged size column?) goes blob by blob
THREADS_FROM_BYTES = 1024 * 1024      # batches this big are decompressed on several threads
LATER_FROM_BYTES = 64 * 1024          # smaller batches of decompress_later wait for their caller
_THREADS = max(1, min(os.cpu_count() or 1, 4))
_local = _thread._local()          # threading.local itself, without importing threading


class _Lease:
    """One thread's zstd compressors; when the thread ends (and its thread-local with it) they
    go back to ``_SPARE`` for the next thread. LangGraph runs a saver's puts on threads its
    executor makes afresh for every ``invoke``, and two zstd contexts cost ~30 µs to make."""

    __slots__ = ("compressors",)

    def __init__(self) -> None:
        try:
            self.compressors = _SPARE.pop()     # list.pop and append are atomic: no lock needed
        except IndexError:
            self.compressors = (zstandard.ZstdCompressor(level=LEVEL), zstandard.ZstdCompressor(level=FAST_LEVEL))

    def __del__(self) -> None:
        try:
            if len(_SPARE) < _SPARE_MAX:
                _SPARE.append(self.compressors)
        except Exception:   # interpreter shutdown: the module's globals may be gone already
            pass


_SPARE: list[tuple[zstandard.ZstdCompressor, zstandard.ZstdCompressor]] = []
_SPARE_MAX = 8


def _compressors() -> tuple[zstandard.ZstdCompressor, zstandard.ZstdCompressor]:
    """This thread's (level-3, fast) compressors: a finished thread's when one is spare (a
    zstd context is never used by two threads at once), else new ones."""
    lease = getattr(_local, "lease", None)
    if lease is None:
        lease = _local.lease = _Lease()
    return lease.compressors


def _decompressor() -> zstandard.ZstdDecompressor:
    """This thread's decompressor (never handed on: a stream reader may outlive its thread)."""
    found = getattr(_local, "decompressor", None)
    if found is None:
        found = _local.decompressor = zstandard.ZstdDecompressor()
    return found


def compress(raw: bytes) -> tuple[int, bytes]:
    """(codec, data) for a raw piece; small or incompressible pieces stay raw.

    A piece under ``FAST_MAX`` bytes that is not one string or binary value (a root, a
    table, a fine list or map chunk: keys, digests and short values) is compressed in zstd's
    fast mode: level 3's entropy coding costs 5-12 µs a frame on such a piece and buys a few
    per cent of its bytes. Dense rewrites (coarse chunks, tens of KB and more) and strings
    keep level 3. The frames are ordinary zstd frames (codec 1) whatever the level."""
    n = len(raw)
    if n < MIN_COMPRESS:
        return CODEC_RAW, raw
    level3, fast = _compressors()
    if n < FAST_MAX and raw[0] not in _TEXT_HEADS:
        data = fast.compress(raw)
    else:
        data = level3.compress(raw)
    return (CODEC_ZSTD, data) if len(data) < n else (CODEC_RAW, raw)


ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
BODY_TAGS = frozenset({"msgpack", "json"})   # serde tags whose bodies are stored compressed


def pack_body(tag: str, raw: bytes) -> bytes:
    """A LangGraph checkpoint body as ``ci_lg_checkpoints.body`` keeps it: one zstd frame when
    its serde tag is msgpack or json and that is smaller, else the bytes as they are. Such a
    body never starts with zstd's magic (msgpack: that byte would be a lone int; JSON: ``(``),
    so ``unpack_body`` tells the two apart; other tags (encrypted …) are never touched."""
    if tag not in BODY_TAGS or len(raw) < MIN_COMPRESS:
        return raw
    data = _compressors()[0].compress(raw)
    return data if len(data) < len(raw) else raw


def unpack_body(tag: str, data: bytes) -> bytes:
    """The serde bytes of a stored LangGraph checkpoint body (see ``pack_body``);
    CorruptDataError for a damaged frame or a column that is not bytes, BudgetExceeded past the
    piece budget."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise CorruptDataError(f"A stored LangGraph checkpoint's body is not bytes ({type(data).__name__}).")
    data = bytes(data)
    if tag not in BODY_TAGS or data[:4] != ZSTD_MAGIC:
        return data
    try:
        size = zstandard.get_frame_parameters(data).content_size
    except zstandard.ZstdError as err:
        raise CorruptDataError(f"A stored checkpoint body is damaged ({err}).") from err
    if size == zstandard.CONTENTSIZE_UNKNOWN:
        raise CorruptDataError("A stored checkpoint body is damaged (a frame without its size).")
    return decompress(CODEC_ZSTD, data, size)


def decompress(codec: int, data: bytes, size: int) -> bytes:
    """The raw piece bytes; CorruptDataError on a damaged blob, BudgetExceeded past the
    piece budget. Nothing larger than ``size`` (the size column) is ever allocated: a frame
    whose header claims another size is damaged, one without a content size is streamed."""
    if not isinstance(size, int) or size < 0:
        raise CorruptDataError("A stored piece has an unreadable size (the store is damaged).")
    if size > limits.current().piece_bytes:
        raise limits.BudgetExceeded("piece", f"A stored piece of {size:,} bytes")
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise CorruptDataError("A stored piece is not binary data (the store is damaged).")
    if codec == CODEC_RAW:
        raw = bytes(data)
    elif codec == CODEC_ZSTD:
        raw = _unzstd(bytes(data), size)
    else:
        raise CorruptDataError(f"A stored piece uses an unknown codec {codec}.")
    if len(raw) != size:
        raise CorruptDataError("A stored piece has the wrong length (the store is damaged).")
    return raw


def compressed_bound(count: int) -> int:
    """Stored bytes that surely hold the first ``count`` raw bytes of a piece (zstd's
    worst case grows a block by a few bytes)."""
    return count + count // 64 + 1024


def peek(codec: int, head: bytes, size: int, count: int) -> bytes:
    """The first ``count`` raw bytes (fewer when the piece is shorter) from ``head``, the
    start of a stored piece; never more is allocated. CorruptDataError on damage."""
    if not isinstance(size, int) or size < 0 or not isinstance(head, (bytes, bytearray, memoryview)):
        raise CorruptDataError("A stored piece is unreadable (the store is damaged).")
    count = min(count, size)
    if codec == CODEC_RAW:
        return bytes(head[:count])
    if codec != CODEC_ZSTD:
        raise CorruptDataError(f"A stored piece uses an unknown codec {codec}.")
    import io
    out = bytearray()
    try:
        with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(bytes(head))) as reader:
            while len(out) < count:
                part = reader.read(min(1 << 16, count - len(out)))
                if not part:
                    break
                out += part
    except zstandard.ZstdError as err:
        if not out:
            raise CorruptDataError(f"A stored piece cannot be decompressed ({err}).") from err
    return bytes(out)


def stream(codec: int, source: Any, size: int, digest: bytes, part: int = 1 << 20) -> Iterator[bytes]:
    """The raw bytes of a stored piece read from ``source`` (``read(n)``: its stored bytes)
    in parts of about ``part`` bytes; CorruptDataError at the end when they are not ``size``
    bytes or do not hash to ``digest`` (the parts read before are not to be trusted then)."""
    import xxhash
    if codec == CODEC_ZSTD:
        reader: Any = zstandard.ZstdDecompressor().stream_reader(source, read_size=part)
    elif codec == CODEC_RAW:
        reader = source
    else:
        raise CorruptDataError(f"A stored piece uses an unknown codec {codec}.")
    hasher = xxhash.xxh3_128()
    total = 0
    try:
        while True:
            chunk = reader.read(part)
            if not chunk:
                break
            total += len(chunk)
            if total > size:
                raise CorruptDataError("A stored piece has the wrong length (the store is damaged).")
            hasher.update(chunk)
            yield chunk
    except zstandard.ZstdError as err:
        raise CorruptDataError(f"A stored piece cannot be decompressed ({err}).") from err
    if total != size or hasher.digest() != digest:
        raise CorruptDataError("A stored piece does not match its hash (the store is damaged).")


def _unzstd(data: bytes, size: int) -> bytes:
    """One zstd frame decompressed to at most ``size`` + 1 bytes (never what its header says)."""
    try:
        declared = zstandard.get_frame_parameters(data).content_size
        if declared == zstandard.CONTENTSIZE_UNKNOWN:
            reader = _decompressor().stream_reader(data, read_across_frames=True)
            parts, got = [], 0
            while got <= size:
                part = reader.read(size + 1 - got)
                if not part:
                    break
                parts.append(part)
                got += len(part)
            return b"".join(parts)
        if declared != size:
            raise CorruptDataError("A stored piece has the wrong length (the store is damaged).")
        return _decompressor().decompress(data, max_output_size=max(size, 1))
    except zstandard.ZstdError as err:
        raise CorruptDataError(f"A stored piece is damaged ({err}).") from err


def decompress_many(blobs: Sequence[tuple[int, bytes, int]]) -> list[bytes]:
    """The raw bytes of several ``(codec, data, size)`` blobs, in order; CorruptDataError on
    a damaged one.

    A big batch of zstd blobs is decompressed on several threads by one C call (measured:
    with one thread that call is slower than one ``decompress`` per blob, so small batches
    and one-CPU machines take the plain loop). Only blobs of a plausible size go into that
    call: it is given each blob's size from the table, never a size of zero (an empty
    frame there crashes the zstandard library) nor absurd ones (it allocates buffers for
    the whole batch at once).
    """
    batch = _batchable(blobs)
    if _THREADS < 2 or len(batch) < 2 or sum(blobs[n][2] for n in batch) < THREADS_FROM_BYTES:
        return [decompress(codec, data, size) for codec, data, size in blobs]
    return _gather(blobs, batch, _zstd_call([blobs[n][1] for n in batch], _sizes(blobs, batch), _THREADS))


class Later:
    """Blobs being decompressed on the worker thread: call it to wait for their raw bytes."""

    def __init__(self, blobs: Sequence[tuple[int, bytes, int]]) -> None:
        self.blobs = blobs
        self.batch = _batchable(blobs)
        self.future: Future | None = None
        # on one CPU the caller's loop is faster; a small batch takes less time to decompress
        # (~1 GB/s) than to hand to the worker, so the caller does it when it asks (and a
        # command that reads only small ones never imports or starts the thread pool)
        if _THREADS >= 2 and len(self.batch) >= 2 and sum(blobs[n][2] for n in self.batch) >= LATER_FROM_BYTES:
            frames: list[bytes | bytearray | memoryview] = [blobs[n][1] for n in self.batch]
            self.future = _worker().submit(_zstd_call, frames, _sizes(blobs, self.batch), 1)

    def __call__(self) -> list[bytes]:
        if self.future is None:
            return decompress_many(self.blobs)
        return _gather(self.blobs, self.batch, self.future.result())

    def cancel(self) -> None:
        """Drop the work if the worker has not started it (the caller no longer wants it)."""
        if self.future is not None:
            self.future.cancel()


def decompress_later(blobs: Sequence[tuple[int, bytes, int]]) -> Later:
    """Start decompressing ``blobs`` on a worker thread; calling the result waits for them
    and gives what ``decompress_many`` gives.

    The worker makes one C call for the zstd blobs, which releases the GIL throughout: the
    caller's Python work (a diff walking the parts read before) goes on beside it. (One
    call per blob would need the GIL between blobs and wait for the caller at every one.)
    """
    return Later(blobs)


def _batchable(blobs: Sequence[tuple[int, bytes, int]]) -> list[int]:
    """Indices of the blobs one batched zstd call may take (see ``decompress_many``)."""
    most = min(BATCH_MAX_PIECE, limits.current().piece_bytes)
    batch = [n for n, (codec, _, size) in enumerate(blobs)
             if codec == CODEC_ZSTD and isinstance(size, int) and 0 < size <= most]
    return batch if sum(blobs[n][2] for n in batch) <= BATCH_MAX_BYTES else []


def _sizes(blobs: Sequence[tuple[int, bytes, int]], batch: list[int]) -> bytes:
    return struct.pack(f"={len(batch)}Q", *[blobs[n][2] for n in batch])


def _zstd_call(frames: list[bytes | bytearray | memoryview], sizes: bytes, threads: int) -> Any:
    """Decompress zstd frames of known sizes (each at least 1) in one C call."""
    try:
        return _decompressor().multi_decompress_to_buffer(frames, decompressed_sizes=sizes, threads=threads)
    except zstandard.ZstdError as err:
        raise CorruptDataError(f"A stored piece is damaged ({err}).") from err


def _gather(blobs: Sequence[tuple[int, bytes, int]], batch: list[int], result: Any) -> list[bytes]:
    """Every blob's raw bytes: the batch's from ``result``, the others decompressed here."""
    out: list[bytes | None] = [None] * len(blobs)
    for k, n in enumerate(batch):
        raw = result[k].tobytes()
        if len(raw) != blobs[n][2]:
            raise CorruptDataError("A stored piece has the wrong length (the store is damaged).")
        out[n] = raw
    return [raw if raw is not None else decompress(*blobs[n]) for n, raw in enumerate(out)]


_pool: ThreadPoolExecutor | None = None
_pool_lock = _thread.allocate_lock()   # threading.Lock()


def _worker() -> ThreadPoolExecutor:
    """The one worker thread of ``decompress_later`` (started on first use)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            from concurrent.futures import ThreadPoolExecutor
            _pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ci-zstd")
        return _pool
