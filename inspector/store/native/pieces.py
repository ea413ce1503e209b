"""Content-addressed encoding of JSON states into pieces (pure, no SQL).

A state is msgpack. A container or string whose encoding exceeds ``INLINE_MAX`` bytes is
stored as its own *piece* and replaced in its parent by a ``Ref`` (msgpack ext 1). A long
list is split into chunks by content-defined boundaries and replaced by a ``ChunkedList``
(ext 2) naming its chunks; appending to a message history therefore writes the new items,
the last chunk and the small parent, never the history again. A chunk piece frames each
item's encoding as a msgpack bin (ext 3), so a reader splits it into items without decoding
them (the diff compares items as bytes). A piece's id is the
xxh3-128 digest of its raw (uncompressed) bytes, so equal content is stored once and equal
subtrees of two states have equal digests (the diff skips them unread).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable, Iterable

import struct

import msgpack
import xxhash

from inspector.errors import CorruptDataError

INLINE_MAX = 512          # bytes: larger children become pieces of their own
CHUNK_MIN_ITEMS = 16      # lists at least this long are chunked
CHUNK_MASK = 0x1F         # content-defined boundary: about 32 items per chunk on average
CHUNK_MAX_ITEMS = 128
CHUNK_MAX_BYTES = 64 * 1024
EXT_REF = 1
EXT_CHUNKED = 2
EXT_FRAMED = 3            # a chunk piece (format 2): its items' encodings, each framed as a bin


@dataclass(frozen=True, slots=True)
class Ref:
    """A reference to a stored piece holding one value; ``size`` is its logical size."""

    digest: bytes
    size: int


@dataclass(frozen=True, slots=True)
class Chunk:
    """One chunk of a chunked list: ``count`` items stored in piece ``digest``."""

    count: int
    digest: bytes
    size: int


@dataclass(frozen=True, slots=True)
class ChunkedList:
    """A long list stored as consecutive chunks (each a piece holding a list of items)."""

    chunks: tuple[Chunk, ...]
    packed: bytes | None = field(default=None, compare=False, repr=False)  # the ext payload, if known

    @property
    def length(self) -> int:
        """Number of items in the whole list."""
        return sum(c.count for c in self.chunks)

    @property
    def size(self) -> int:
        """Logical size in bytes of the whole list."""
        return sum(c.size for c in self.chunks)


def digest_of(raw: bytes) -> bytes:
    """The content address of a piece's raw bytes."""
    return xxhash.xxh3_128_digest(raw)


_SIZE = struct.Struct("<Q")
_CHUNK = struct.Struct("<IQ")


def _default(obj: Any) -> Any:
    if isinstance(obj, Ref):
        return msgpack.ExtType(EXT_REF, obj.digest + _SIZE.pack(obj.size))
    if isinstance(obj, ChunkedList):
        return msgpack.ExtType(EXT_CHUNKED, obj.packed or b"".join(
            _CHUNK.pack(c.count, c.size) + c.digest for c in obj.chunks))
    if isinstance(obj, tuple):
        return list(obj)
    raise TypeError(f"cannot store a value of type {type(obj).__name__} in a state")


# Decoding makes thousands of markers: their slots are filled directly, without the frozen
# dataclasses' __init__ (one object.__setattr__ call per field), for a quarter of the cost.
_new = object.__new__
_REF_DIGEST, _REF_SIZE = Ref.digest.__set__, Ref.size.__set__     # the slots' own descriptors
_CHUNK_COUNT, _CHUNK_DIGEST, _CHUNK_SIZE = Chunk.count.__set__, Chunk.digest.__set__, Chunk.size.__set__
_LIST_CHUNKS, _LIST_PACKED = ChunkedList.chunks.__set__, ChunkedList.packed.__set__
_CHUNK_ENTRY = struct.Struct("<IQ16s")   # one chunk in an EXT_CHUNKED payload: count, size, digest


def _decoded_ref(digest: bytes, size: int) -> Ref:
    ref = _new(Ref)
    _REF_DIGEST(ref, digest)
    _REF_SIZE(ref, size)
    return ref


def _decoded_chunk(count: int, size: int, digest: bytes) -> Chunk:
    chunk = _new(Chunk)
    _CHUNK_COUNT(chunk, count)
    _CHUNK_DIGEST(chunk, digest)
    _CHUNK_SIZE(chunk, size)
    return chunk


def _decoded_chunked(chunks: tuple[Chunk, ...]) -> ChunkedList:
    chunked = _new(ChunkedList)
    _LIST_CHUNKS(chunked, chunks)
    _LIST_PACKED(chunked, None)
    return chunked


def _marker_hook(code: int, data: bytes) -> Any:
    try:
        if code == EXT_REF and len(data) == 24:
            return _decoded_ref(data[:16], _SIZE.unpack_from(data, 16)[0])
        if code == EXT_CHUNKED and len(data) % 28 == 0:
            return _decoded_chunked(tuple([_decoded_chunk(*entry) for entry in _CHUNK_ENTRY.iter_unpack(data)]))
    except struct.error as exc:
        raise CorruptDataError(f"A stored piece has a malformed reference ({exc}).") from exc
    if code == EXT_FRAMED:
        raise CorruptDataError("A stored list item holds a list chunk.")
    raise CorruptDataError(f"A stored piece uses an unknown extension type {code}.")


def _ext_hook(code: int, data: bytes) -> Any:
    if code == EXT_FRAMED:       # a whole chunk piece: its items, decoded in one C call
        frames = _frames(data)
        return msgpack.unpackb(_array_header(len(frames)) + b"".join(frames), ext_hook=_marker_hook,
                               raw=False, strict_map_key=False)
    return _marker_hook(code, data)


_array_header = msgpack.Packer().pack_array_header
# msgpack ext 8/16/32 (how a chunk piece of format 2 starts): width of the length, payload offset
_EXT_LENGTHS = {0xc7: (1, 3), 0xc8: (2, 4), 0xc9: (4, 6)}


def frame_chunk(encoded: list[bytes]) -> bytes:
    """A chunk piece (format 2) holding the items whose msgpack encodings are ``encoded``."""
    return msgpack.packb(msgpack.ExtType(EXT_FRAMED, msgpack.packb(encoded, use_bin_type=True)))


def _unpack_plain(raw: bytes | memoryview) -> Any:
    """msgpack without markers (extensions come back as ExtType); CorruptDataError if malformed."""
    try:
        return msgpack.unpackb(raw)
    except (ValueError, TypeError, msgpack.UnpackException) as exc:
        raise CorruptDataError(f"A stored list chunk cannot be decoded ({exc}).") from exc


def _frames(payload: bytes | memoryview) -> list[bytes]:
    """The item encodings framed in a chunk piece's payload (a msgpack array of bins)."""
    frames = _unpack_plain(payload)
    if type(frames) is not list or not set(map(type, frames)) <= {bytes}:
        raise CorruptDataError("A stored list chunk is malformed.")
    return frames


def pack(value: Any) -> bytes:
    """Encode a value (which may hold Ref/ChunkedList markers) as msgpack."""
    return msgpack.packb(value, default=_default, use_bin_type=True)


def new_packer() -> msgpack.Packer:
    """A reusable packer for one thread (faster than ``pack`` in hot loops)."""
    return msgpack.Packer(default=_default, use_bin_type=True)


def unpack(raw: bytes) -> Any:
    """Decode one piece, leaving Ref/ChunkedList markers in place (never runs code)."""
    try:
        return msgpack.unpackb(raw, ext_hook=_ext_hook, raw=False, strict_map_key=False)
    except CorruptDataError:
        raise
    except (ValueError, TypeError, msgpack.UnpackException, RecursionError) as exc:
        raise CorruptDataError(f"A stored piece cannot be decoded ({exc}).") from exc


def may_hold_markers(raw: bytes) -> bool:
    """False when the bytes of a piece cannot hold a Ref or a ChunkedList: either is a
    msgpack extension of 24 or 28·n bytes, which starts with byte 0xc7, 0xc8 or 0xc9."""
    return b"\xc7" in raw or b"\xc8" in raw or b"\xc9" in raw


def split_items(raw: bytes) -> list[bytes]:
    """The items of a chunk piece, each still in its msgpack encoding (nothing is decoded).

    Equal encodings mean equal values, so two chunks can be compared item by item with
    C-level bytes comparisons and only the items that differ need ``unpack``. A chunk of
    format 2 frames its items, so one C call splits it; a format 1 chunk (a plain array)
    is walked item by item.
    """
    head = _EXT_LENGTHS.get(raw[0]) if raw else None
    if head is not None:
        width, start = head
        if (len(raw) < start or raw[start - 1] != EXT_FRAMED
                or int.from_bytes(raw[1:1 + width], "big") != len(raw) - start):
            raise CorruptDataError("A stored list chunk is malformed.")
        return _frames(memoryview(raw)[start:])
    if raw and 0xd4 <= raw[0] <= 0xd8:       # fixext: a chunk of one or two tiny items
        top = _unpack_plain(raw)
        if type(top) is not msgpack.ExtType or top.code != EXT_FRAMED:
            raise CorruptDataError("A stored list chunk is malformed.")
        return _frames(top.data)
    unpacker = msgpack.Unpacker(max_buffer_size=max(len(raw), 1))
    unpacker.feed(raw)
    try:
        count = unpacker.read_array_header()
        items: list[bytes] = []
        append, skip, tell = items.append, unpacker.skip, unpacker.tell
        start = tell()
        for _ in range(count):
            skip()
            end = tell()
            append(raw[start:end])
            start = end
    except (ValueError, TypeError, msgpack.UnpackException, RecursionError) as exc:
        raise CorruptDataError(f"A stored list chunk cannot be decoded ({exc}).") from exc
    if start != len(raw):
        raise CorruptDataError("A stored list chunk has bytes after its items.")
    return items


def resolve(value: Any, fetch: Callable[[bytes], Any], depth: int = 0) -> Any:
    """Replace every marker in ``value`` by the content it names, using ``fetch``."""
    if depth > 10_000:
        raise CorruptDataError("A stored state nests references too deeply.")
    if isinstance(value, Ref):
        return resolve(fetch(value.digest), fetch, depth + 1)
    if isinstance(value, ChunkedList):
        out: list = []
        for chunk in value.chunks:
            items = fetch(chunk.digest)
            if not isinstance(items, list) or len(items) != chunk.count:
                raise CorruptDataError("A stored list chunk does not match its table.")
            out.extend(resolve(item, fetch, depth + 1) for item in items)
        return out
    if isinstance(value, dict):
        if not any(isinstance(v, (Ref, ChunkedList, dict, list)) for v in value.values()):
            return value
        return {k: resolve(v, fetch, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        if not any(isinstance(v, (Ref, ChunkedList, dict, list)) for v in value):
            return value
        return [resolve(v, fetch, depth + 1) for v in value]
    return value


def iter_digests(value: Any) -> Iterable[bytes]:
    """The digests a decoded piece refers to directly (one level)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Ref):
            yield item.digest
        elif isinstance(item, ChunkedList):
            yield from (c.digest for c in item.chunks)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


_SCALARS = frozenset({int, float, bool, type(None)})


@dataclass(slots=True)
class _Cached:
    copy: Any
    form: Any       # what the parent embeds: the value itself, a Ref or a ChunkedList
    size: int


@dataclass(slots=True)
class _CachedChunk:
    items: list          # private copies of the items
    forms: list          # what the chunk piece stores for each item
    encoded: list        # ... and its msgpack encoding (only until the chunk is closed)
    sizes: list
    marks: list          # the byte deciding content-defined boundaries, per item
    chunk: Chunk
    packed: bytes | None = None   # this chunk's 28-byte entry in the table


def encode_flat(value: Any) -> tuple[bytes, int, dict[bytes, bytes]]:
    """Store a small value (a task state) as one piece: (digest, size, {digest: raw})."""
    raw = pack(value)
    digest = digest_of(raw)
    return digest, len(raw), {digest: raw}


class PieceEncoder:
    """Encodes successive states of one run; unchanged parts cost a C-level comparison.

    The cache keeps a private copy of each stored subtree (keyed by its path), so an agent
    that mutates its state in place is still diffed correctly.
    """

    chunk_format = 2    # 1 writes chunks as older versions did (plain arrays): tests read such stores

    def __init__(self) -> None:
        self._cache: dict[tuple, _Cached] = {}
        self._chunks: dict[tuple, list[_CachedChunk]] = {}
        self.new_pieces: dict[bytes, bytes] = {}
        self._pack = new_packer().pack
        self.top_form: Any = None

    def encode(self, value: Any) -> tuple[bytes, int, dict[bytes, bytes]]:
        """Store ``value`` as a root piece: (root digest, logical size, new pieces)."""
        self.new_pieces = {}
        form, size, _ = self._encode(value, ("$",), top=True)
        self.top_form = form
        raw = self._pack(form)
        digest = digest_of(raw)
        self.new_pieces[digest] = raw
        pieces, self.new_pieces = self.new_pieces, {}
        return digest, max(size, len(raw)), pieces

    def forget(self) -> None:
        """Drop the cache (e.g. after a failed transaction)."""
        self._cache.clear()
        self._chunks.clear()

    # -- internals -----------------------------------------------------------
    def _store(self, form: Any) -> tuple[Ref, int]:
        raw = self._pack(form)
        digest = digest_of(raw)
        self.new_pieces.setdefault(digest, raw)
        return Ref(digest, len(raw)), len(raw)

    def _encode(self, value: Any, path: tuple | None, top: bool = False) -> tuple[Any, int, Any]:
        kind = type(value)
        if kind in _SCALARS:   # the common leaf: no further checks
            return value, 9, value
        if kind is str and (top or len(value) <= INLINE_MAX):
            return value, len(value) + 5, value
        if isinstance(value, tuple):
            value = list(value)
        chunkable = isinstance(value, list) and len(value) >= CHUNK_MIN_ITEMS
        if isinstance(value, (dict, list)) and path is not None and not top and not chunkable:
            hit = self._cache.get(path)
            if hit is not None and type(hit.copy) is type(value) and hit.copy == value:
                return hit.form, hit.size, hit.copy
        if chunkable:
            result = self._encode_chunked(value, path)
        elif isinstance(value, dict):
            result = self._encode_container(
                {k: self._encode(v, None if path is None else path + (k,)) for k, v in value.items()},
                dict, top)
        elif isinstance(value, list):
            result = self._encode_container(
                {i: self._encode(v, None if path is None else path + (i,)) for i, v in enumerate(value)},
                list, top)
        elif isinstance(value, (str, bytes)) and len(value) > INLINE_MAX and not top:
            ref, size = self._store(value)
            return ref, size, value
        else:
            if value is not None and not isinstance(value, (str, bytes, int, float, bool)):
                raise TypeError(f"cannot store a value of type {type(value).__name__} in a state")
            return value, 9 if not isinstance(value, (str, bytes)) else len(value) + 5, value
        if path is not None:
            self._cache[path] = _Cached(result[2], result[0], result[1])
        return result

    def _encode_container(self, parts: dict, kind: type, top: bool) -> tuple[Any, int, Any]:
        if kind is dict:
            form = {k: p[0] for k, p in parts.items()}
            copy = {k: p[2] for k, p in parts.items()}
        else:
            form = [p[0] for p in parts.values()]
            copy = [p[2] for p in parts.values()]
        raw = self._pack(form)
        size = len(raw) + sum(p[1] for p in parts.values() if isinstance(p[0], (Ref, ChunkedList)))
        if top or len(raw) <= INLINE_MAX:
            return form, size, copy
        digest = digest_of(raw)
        self.new_pieces.setdefault(digest, raw)
        return Ref(digest, size), size, copy

    def _encode_chunked(self, value: list, path: tuple | None) -> tuple[Any, int, Any]:
        old = self._chunks.get(path, []) if path is not None else []
        chunks: list[_CachedChunk] = []
        pos = 0
        index = 0
        while index < len(old):
            entry = old[index]
            end = pos + entry.chunk.count
            if end > len(value) or value[pos:end] != entry.items:
                break
            chunks.append(entry)
            pos, index = end, index + 1
        if index == len(old) and chunks and pos < len(value):
            # the old last chunk was cut by the end of the list, not by a boundary
            index -= 1
            pos -= chunks.pop().chunk.count
        chunks.extend(self._rechunk(value, pos, old[index:], len(value) - sum(
            e.chunk.count for e in old)))
        if path is not None:
            self._chunks[path] = chunks
        table = ChunkedList(tuple(c.chunk for c in chunks),
                            b"".join(_CHUNK.pack(c.chunk.count, c.chunk.size) + c.chunk.digest
                                     if c.packed is None else c.packed for c in chunks))
        for c in chunks:
            if c.packed is None:
                c.packed = _CHUNK.pack(c.chunk.count, c.chunk.size) + c.chunk.digest
        return table, table.size, [item for c in chunks for item in c.items]

    def _rechunk(self, value: list, pos: int, rest: list[_CachedChunk], shift: int) -> list[_CachedChunk]:
        """Chunk value[pos:], reusing old item encodings and resynchronising on old chunks."""
        hints = {}
        old_starts = {}
        start = pos - 0
        old_pos = pos
        for entry in rest:
            old_starts[old_pos] = entry
            for j, item in enumerate(entry.items):
                hints[old_pos + j] = (item, entry.forms[j], entry.sizes[j], entry.marks[j])
            old_pos += entry.chunk.count
        chunks: list[_CachedChunk] = []
        cur = _CachedChunk([], [], [], [], [], Chunk(0, b"", 0))
        size = 0
        i = start
        n = len(value)
        while i < n:
            if not cur.items and chunks:
                entry = self._resync(value, i, old_starts, shift)
                if entry is not None:
                    chunks.append(entry)
                    i += entry.chunk.count
                    continue
            item = value[i]
            hint = hints.get(i) or hints.get(i - shift)
            if hint is not None and type(hint[0]) is type(item) and hint[0] == item:
                copy, form, item_size, mark = hint
                encoded = self._pack(form)
            else:
                form, item_size, copy = self._encode(item, None)
                encoded = self._pack(form)
                mark = (form.digest if isinstance(form, Ref) else digest_of(encoded))[0]
            cur.items.append(copy)
            cur.forms.append(form)
            cur.encoded.append(encoded)
            cur.sizes.append(item_size)
            cur.marks.append(mark)
            size += item_size
            i += 1
            if (mark & CHUNK_MASK) == 0 or len(cur.items) >= CHUNK_MAX_ITEMS or size >= CHUNK_MAX_BYTES:
                chunks.append(self._close_chunk(cur, size))
                cur, size = _CachedChunk([], [], [], [], [], Chunk(0, b"", 0)), 0
        if cur.items:
            chunks.append(self._close_chunk(cur, size))
        return chunks

    @staticmethod
    def _resync(value: list, i: int, old_starts: dict, shift: int) -> _CachedChunk | None:
        for old_pos in (i - shift, i):
            entry = old_starts.get(old_pos)
            if entry is not None:
                end = i + entry.chunk.count
                if end <= len(value) and value[i:end] == entry.items:
                    return entry
        return None

    def _close_chunk(self, cur: _CachedChunk, size: int) -> _CachedChunk:
        raw = frame_chunk(cur.encoded) if self.chunk_format == 2 else self._pack(cur.forms)
        cur.encoded = []     # the encoder's cache keeps no second copy of the items
        digest = digest_of(raw)
        self.new_pieces.setdefault(digest, raw)
        cur.chunk = Chunk(len(cur.forms), digest, max(size, len(raw)))
        return cur
