"""The markers a stored piece may hold (Ref, chunked lists and maps) and their msgpack form.

A state is msgpack. A value stored as a piece of its own is replaced in its parent by a
``Ref`` (ext 1). A long list is a ``ChunkedList`` (ext 2, or ext 6 when its table is a tree)
naming its chunks; a big map is a ``ChunkedMap`` (ext 4) naming its map chunks. A list chunk
piece frames each item's encoding as a bin (ext 3), a map chunk piece its keys and each
value's encoding (ext 5), so a reader splits a chunk without decoding it. Markers are
NamedTuples: C-fast to build, immutable, and compared field by field.
"""

import struct
from itertools import starmap
from typing import Any, NamedTuple

import msgpack
import xxhash

from inspector.errors import CorruptDataError

EXT_REF = 1
EXT_CHUNKED = 2           # a chunked list; its entries are chunk pieces (table of height 0)
EXT_FRAMED = 3            # a list chunk piece (format 2): its items' encodings, each framed as a bin
EXT_MAP = 4               # a chunked map (format 3): height byte, then entries
EXT_MAP_CHUNK = 5         # a map chunk piece (format 3): [keys, value encodings as bins]
EXT_DEEP_LIST = 6         # a chunked list whose table is a tree (format 3): height byte, then entries
EXT_TEXT = 7              # a text piece (format 4, a whole piece, never inside a value): height byte, then
                          # the entries of a chunked list of strings whose concatenation is the text
MAX_HEIGHT = 8            # tables deeper than this are damage (2**40 chunks need 6 levels)

_SIZE = struct.Struct("<Q")
ENTRY = struct.Struct("<IQ16s")     # one table entry: count, size, digest (28 bytes)
ENTRY_SIZE = ENTRY.size
_tuple_new = tuple.__new__


class Ref(NamedTuple):
    """A reference to a stored piece holding one value; ``size`` is its logical size."""

    digest: bytes
    size: int


class Chunk(NamedTuple):
    """One entry of a chunked list's or map's table: ``count`` items (or map entries) in
    piece ``digest``, ``size`` their logical size. In a table of height > 0 the piece is
    itself a table (a marker of height - 1) covering those items."""

    count: int  # type: ignore[assignment]  # the on-disk name; shadows tuple.count, never called on a Chunk
    size: int
    digest: bytes


class ChunkedList(NamedTuple):
    """A long list stored as consecutive chunks; ``height`` > 0: its entries are sub-tables."""

    chunks: tuple[Chunk, ...]
    height: int = 0

    @property
    def length(self) -> int:
        """Number of items in the whole list."""
        return sum(c.count for c in self.chunks)

    @property
    def size(self) -> int:
        """Logical size in bytes of the whole list."""
        return sum(c.size for c in self.chunks)


class ChunkedMap(NamedTuple):
    """A big map stored as consecutive map chunks (entries in insertion order)."""

    chunks: tuple[Chunk, ...]
    height: int = 0

    @property
    def length(self) -> int:
        """Number of keys in the whole map."""
        return sum(c.count for c in self.chunks)

    @property
    def size(self) -> int:
        """Logical size in bytes of the whole map."""
        return sum(c.size for c in self.chunks)


class ChunkedText(NamedTuple):
    """A long string stored as a chunked list of its segments (a text piece, ext 7): the
    string is the segments joined. Only ever a whole piece, named by a ``Ref``; its table
    and sub-tables are those of a ``ChunkedList`` of the segments."""

    chunks: tuple[Chunk, ...]
    height: int = 0


MARKERS = (Ref, ChunkedList, ChunkedMap)
TABLES = (ChunkedList, ChunkedMap)


DIGEST_SIZE = 16          # bytes of a piece's content address (xxh3-128)


def digest_of(raw: bytes) -> bytes:
    """The content address of a piece's raw bytes."""
    return xxhash.xxh3_128_digest(raw)


def table_payload(chunks: tuple[Chunk, ...]) -> bytes:
    """The entries of a table as stored (28 bytes each)."""
    return b"".join(starmap(ENTRY.pack, chunks))      # no Python step per entry


def _ext(code: int, data: bytes) -> msgpack.ExtType:
    # ExtType's own __new__ checks its arguments in Python; these are known good
    return _tuple_new(msgpack.ExtType, (code, data))


def _default(obj: Any) -> Any:
    kind = type(obj)
    if kind is Ref:
        return _ext(EXT_REF, obj.digest + _SIZE.pack(obj.size))
    if kind is ChunkedList:
        if obj.height:
            return _ext(EXT_DEEP_LIST, bytes((obj.height,)) + table_payload(obj.chunks))
        return _ext(EXT_CHUNKED, table_payload(obj.chunks))
    if kind is ChunkedMap:
        return _ext(EXT_MAP, bytes((obj.height,)) + table_payload(obj.chunks))
    if kind is ChunkedText:
        return _ext(EXT_TEXT, bytes((obj.height,)) + table_payload(obj.chunks))
    # strict packing hands subclasses of the plain types here: store them as the plain type
    if isinstance(obj, (tuple, list)):
        return list(obj)
    if isinstance(obj, dict):
        return dict(obj)
    return plain_scalar(obj)


def plain_scalar(obj: Any) -> Any:
    """A subclass of str, int, float or bytes as the plain value it holds; TypeError
    (``unstorable``) for any other type. The value held, not what its class prints or
    converts to: a (str, Enum) member is its value ("red", where ``str()`` says
    "Color.RED"), an IntEnum member its int, a str subclass's own ``__str__`` is ignored."""
    if isinstance(obj, str):
        return str.__str__(obj)
    if isinstance(obj, int):
        return int.__int__(obj)
    if isinstance(obj, float):
        return float.__float__(obj)
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return bytes(memoryview(obj))      # (a bytes subclass's own ``__bytes__`` is ignored)
    raise unstorable(obj)


def unstorable(obj: Any) -> TypeError:
    """The error for a value a state cannot hold, saying what to store instead where the
    type is a common one (a model, a dataclass, a set, a date …)."""
    import dataclasses
    import datetime
    import enum
    import uuid
    from decimal import Decimal

    kind = type(obj)
    if callable(getattr(obj, "model_dump", None)):
        hint = "a pydantic model: save its model_dump()"
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        hint = "a dataclass: save dataclasses.asdict() of it"
    elif isinstance(obj, enum.Enum):
        hint = "an Enum: save its .value"
    elif isinstance(obj, (set, frozenset)):
        hint = "a set: save it as a list"
    elif isinstance(obj, (datetime.date, datetime.time)):
        hint = "save its isoformat()"
    elif isinstance(obj, (uuid.UUID, Decimal)):
        hint = "save str() of it"
    elif kind.__module__.partition(".")[0] == "numpy":
        hint = _numpy_hint(obj)
    else:
        hint = "a state holds dicts, lists, strings, numbers, booleans, None and bytes"
    return TypeError(f"cannot store a value of type {type_name(kind)} in a state ({hint})")


def type_name(kind: type) -> str:
    """A type's name as messages give it: qualified by its module unless built in (numpy's
    bool is ``numpy.bool``, not the ``bool`` a state holds)."""
    return kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def _numpy_hint(obj: Any) -> str:
    """What to store instead of a numpy value: the Python scalar it holds, or a list."""
    if getattr(obj, "ndim", None) != 0 or not callable(getattr(obj, "item", None)):
        return "a numpy array: save x.tolist()"
    plain = type(obj.item())
    if plain in (bool, int, float, str, bytes):
        return f"a numpy scalar: pass {plain.__name__}(x)"
    return "a numpy scalar: pass x.item()"


def _entries(data: bytes, offset: int = 0) -> tuple[Chunk, ...]:
    if (len(data) - offset) % ENTRY_SIZE:
        raise CorruptDataError("A stored piece has a malformed chunk table.")
    view = memoryview(data)[offset:] if offset else data
    return tuple([_tuple_new(Chunk, e) for e in ENTRY.iter_unpack(view)])


def _height(data: bytes) -> int:
    if not data or not 0 <= data[0] <= MAX_HEIGHT:
        raise CorruptDataError("A stored piece has a malformed chunk table.")
    return data[0]


def _marker_hook(code: int, data: bytes) -> Any:
    try:
        if code == EXT_REF and len(data) == 24:
            return _tuple_new(Ref, (data[:16], _SIZE.unpack_from(data, 16)[0]))
        if code == EXT_CHUNKED:
            return _tuple_new(ChunkedList, (_entries(data), 0))
        if code == EXT_MAP:
            return _tuple_new(ChunkedMap, (_entries(data, 1), _height(data)))
        if code == EXT_DEEP_LIST:
            return _tuple_new(ChunkedList, (_entries(data, 1), _height(data)))
    except struct.error as exc:
        raise CorruptDataError(f"A stored piece has a malformed reference ({exc}).") from exc
    if code == EXT_REF:
        raise CorruptDataError("A stored piece has a malformed reference.")
    if code in (EXT_FRAMED, EXT_MAP_CHUNK):
        raise CorruptDataError("A stored list item holds a list chunk.")
    if code == EXT_TEXT:
        raise CorruptDataError("A stored value holds a text piece inside it.")
    raise CorruptDataError(f"A stored piece uses an unknown extension type {code}.")


def _ext_hook(code: int, data: bytes) -> Any:
    if code == EXT_FRAMED:       # a whole list chunk piece: its items, decoded in one C call
        return decode_items(frames(data))
    if code == EXT_MAP_CHUNK:    # a whole map chunk piece: its entries, values decoded in one C call
        keys, values = map_frames(data)
        return as_map(keys, decode_items(values))
    return _marker_hook(code, data)


_array_header = msgpack.Packer().pack_array_header


def decode_items(encoded: list[bytes]) -> list:
    """The values whose msgpack encodings are ``encoded`` (markers left in place), in one C call."""
    data = _array_header(len(encoded)) + b"".join(encoded)
    try:
        return msgpack.unpackb(data, ext_hook=_marker_hook, raw=False, strict_map_key=False)
    except TypeError:       # a map keyed by a tuple (stored as an array): see ``_tuple_keys``
        return msgpack.unpackb(data, ext_hook=_marker_hook, raw=False, strict_map_key=False,
                               object_pairs_hook=_tuple_keys)


def _tuple_keys(pairs: list) -> dict:
    """A map whose keys may be arrays: a tuple key is stored as an array (msgpack has no
    tuples), and read back as the tuple it was. Only a map that failed to decode otherwise
    takes this slower path; a key that still cannot be one is damage."""
    try:
        return {(_as_tuple(k) if type(k) is list else k): v for k, v in pairs}
    except TypeError as exc:
        raise CorruptDataError("A stored map has a key that cannot be a key.") from exc


def _as_tuple(items: list) -> tuple:
    return tuple(_as_tuple(x) if type(x) is list else x for x in items)


def as_map(keys: list, values: list) -> dict:
    """A map chunk's keys and values as a dict (a key stored as an array is the tuple it was);
    CorruptDataError for an unhashable or repeated key."""
    try:
        out = dict(zip(keys, values))
    except TypeError:
        out = _tuple_keys(list(zip(keys, values)))
    if len(out) != len(keys):
        raise CorruptDataError("A stored map chunk repeats a key.")
    return out


def unpack_plain(raw: bytes | memoryview) -> Any:
    """msgpack without markers (extensions come back as ExtType); CorruptDataError if malformed."""
    try:
        return msgpack.unpackb(raw, strict_map_key=False)
    except (ValueError, TypeError, msgpack.UnpackException) as exc:
        raise CorruptDataError(f"A stored chunk cannot be decoded ({str(exc) or type(exc).__name__}).") from exc


def frames(payload: bytes | memoryview) -> list[bytes]:
    """The item encodings framed in a list chunk's payload (a msgpack array of bins)."""
    found = unpack_plain(payload)
    if type(found) is not list or not set(map(type, found)) <= {bytes}:
        raise CorruptDataError("A stored list chunk is malformed.")
    return found


def map_frames(payload: bytes | memoryview) -> tuple[list, list[bytes]]:
    """The keys and value encodings framed in a map chunk's payload."""
    found = unpack_plain(payload)
    if (type(found) is not list or len(found) != 2 or type(found[0]) is not list
            or type(found[1]) is not list or len(found[0]) != len(found[1])
            or not set(map(type, found[1])) <= {bytes}):
        raise CorruptDataError("A stored map chunk is malformed.")
    return found[0], found[1]


def frame_chunk(encoded: list[bytes]) -> bytes:
    """A list chunk piece (format 2) holding the items whose msgpack encodings are ``encoded``."""
    return ext_bytes(EXT_FRAMED, msgpack.packb(encoded, use_bin_type=True))


_FIXEXT = {1: 0xd4, 2: 0xd5, 4: 0xd6, 8: 0xd7, 16: 0xd8}


def ext_bytes(code: int, payload: bytes) -> bytes:
    """The msgpack encoding of extension ``code`` holding ``payload`` (as msgpack writes it)."""
    n = len(payload)
    fixed = _FIXEXT.get(n)
    if fixed is not None:
        head = bytes((fixed, code))
    elif n < 0x100:
        head = bytes((0xc7, n, code))
    elif n < 0x10000:
        head = b"\xc8" + n.to_bytes(2, "big") + bytes((code,))
    else:
        head = b"\xc9" + n.to_bytes(4, "big") + bytes((code,))
    return head + payload


def frame_map_chunk(keys: list, encoded: list[bytes]) -> bytes:
    """A map chunk piece (format 3): the keys and their values' msgpack encodings."""
    return msgpack.packb(msgpack.ExtType(EXT_MAP_CHUNK, msgpack.packb([keys, encoded], use_bin_type=True,
                                                                       strict_types=True, default=_default)))


def pack(value: Any) -> bytes:
    """Encode a value (which may hold markers) as msgpack."""
    return msgpack.packb(value, default=_default, use_bin_type=True, strict_types=True)


def new_packer() -> msgpack.Packer:
    """A reusable packer for one thread (faster than ``pack`` in hot loops)."""
    return msgpack.Packer(default=_default, use_bin_type=True, strict_types=True)


_EXT_HEADS = {0xc7: 1, 0xc8: 2, 0xc9: 4}     # msgpack ext 8/16/32 (how chunk and text pieces start): the length's width


def ext_frame(raw: bytes | memoryview) -> tuple[int, memoryview | None] | None:
    """(extension code, payload) of a piece that is one msgpack ext 8/16/32; the payload is None
    when the length the piece declares is not its own. None when the piece starts otherwise."""
    width = _EXT_HEADS.get(raw[0]) if len(raw) else None
    if width is None:
        return None
    start = 2 + width
    if len(raw) < start:
        return -1, None
    if int.from_bytes(raw[1:1 + width], "big") != len(raw) - start:
        return raw[start - 1], None
    return raw[start - 1], memoryview(raw)[start:]


def text_piece(raw: bytes | memoryview) -> ChunkedText | None:
    """The ChunkedText a whole text piece holds (ext 7), or None when ``raw`` is not one."""
    frame = ext_frame(raw)
    if frame is None or frame[0] != EXT_TEXT:
        return None
    if frame[1] is None:
        raise CorruptDataError("A stored text piece is malformed.")
    data = bytes(frame[1])
    try:
        return _tuple_new(ChunkedText, (_entries(data, 1), _height(data)))
    except struct.error as exc:
        raise CorruptDataError(f"A stored text piece is malformed ({exc}).") from exc


def unpack(raw: bytes | memoryview) -> Any:
    """Decode one piece, leaving markers in place (never runs code). A text piece decodes to
    its ChunkedText; a text marker anywhere inside a value is damage."""
    text = text_piece(raw)
    if text is not None:
        return text
    try:
        try:
            return msgpack.unpackb(raw, ext_hook=_ext_hook, raw=False, strict_map_key=False)
        except TypeError:   # a map keyed by a tuple (stored as an array): see ``_tuple_keys``
            return msgpack.unpackb(raw, ext_hook=_ext_hook, raw=False, strict_map_key=False,
                                   object_pairs_hook=_tuple_keys)
    except CorruptDataError:
        raise
    except (ValueError, TypeError, msgpack.UnpackException, RecursionError) as exc:
        raise CorruptDataError(f"A stored piece cannot be decoded ({str(exc) or type(exc).__name__}).") from exc


def may_hold_markers(raw: bytes) -> bool:
    """False when the bytes of a piece cannot hold a marker: every marker is a msgpack
    extension of 24 or more bytes, which starts with byte 0xc7, 0xc8 or 0xc9 (an empty
    chunked list is a 0-byte ext 8 too), but for an empty chunked map (fixext 1, type 4)."""
    return b"\xc7" in raw or b"\xc8" in raw or b"\xc9" in raw or b"\xd4\x04" in raw
