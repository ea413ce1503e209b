"""Reading pieces: split chunks into encoded items, resolve markers, list a piece's references."""

from __future__ import annotations

from typing import Any
from collections.abc import Callable, Iterable

import msgpack

from inspector.codec.markers import (EXT_FRAMED, EXT_MAP_CHUNK, Chunk, ChunkedList, ChunkedMap, ChunkedText, Ref,
                                     as_map, decode_items, ext_frame, frames, map_frames, may_hold_markers, unpack,
                                     unpack_plain)
from inspector.errors import CorruptDataError


def _ext_payload(raw: bytes, code: int, what: str) -> memoryview | bytes | None:
    """The payload of a piece that is one msgpack extension of type ``code``, or None when
    the piece is not an extension at all."""
    frame = ext_frame(raw)
    if frame is not None:
        found, payload = frame
        if found != code or payload is None:
            raise CorruptDataError(f"A stored {what} is malformed.")
        return payload
    if raw and 0xd4 <= raw[0] <= 0xd8:       # fixext: a chunk of one or two tiny items
        top = unpack_plain(raw)
        if type(top) is not msgpack.ExtType or top.code != code:
            raise CorruptDataError(f"A stored {what} is malformed.")
        return top.data
    return None


def split_items(raw: bytes) -> list[bytes]:
    """The items of a list chunk piece, each still in its msgpack encoding (nothing decoded).

    Equal encodings mean equal values, so two chunks can be compared item by item with
    C-level bytes comparisons and only the items that differ need ``unpack``. A chunk of
    format 2 or 3 frames its items, so one C call splits it; a format 1 chunk (a plain
    array) is walked item by item.
    """
    payload = _ext_payload(raw, EXT_FRAMED, "list chunk")
    if payload is not None:
        return frames(payload)
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
        raise CorruptDataError(f"A stored list chunk cannot be decoded ({str(exc) or type(exc).__name__}).") from exc
    if start != len(raw):
        raise CorruptDataError("A stored list chunk has bytes after its items.")
    return items


def split_map(raw: bytes) -> dict:
    """The entries of a map chunk piece: key -> the value's msgpack encoding (undecoded)."""
    payload = _ext_payload(raw, EXT_MAP_CHUNK, "map chunk")
    if payload is None:
        raise CorruptDataError("A stored map chunk is malformed.")
    keys, values = map_frames(payload)
    return as_map(keys, values)


def check_part(entry: Chunk, part: Any, table: ChunkedList | ChunkedMap) -> None:
    """CorruptDataError unless ``part`` (what ``entry``'s piece decoded to) is what the table
    says: a chunk of ``entry.count`` items, or a sub-table one level lower."""
    if table.height:
        if type(part) is not type(table) or part.height != table.height - 1 or part.length != entry.count:
            raise CorruptDataError("A stored chunk table does not match its parent.")
    elif not isinstance(part, dict if type(table) is ChunkedMap else list) or len(part) != entry.count:
        raise CorruptDataError("A stored chunk does not match its table.")


def resolve(value: Any, fetch: Callable[[bytes], Any], depth: int = 0) -> Any:
    """Replace every marker in ``value`` by the content it names, using ``fetch``, within
    the read budgets (``inspector.codec.expand``; ``depth`` is unused)."""
    from inspector.codec.expand import resolve_value
    return resolve_value(value, fetch)


def iter_digests(value: Any) -> Iterable[bytes]:
    """The digests a decoded piece refers to directly (one level)."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is Ref:
            yield item.digest
        elif kind is ChunkedList or kind is ChunkedMap or kind is ChunkedText:
            yield from (c.digest for c in item.chunks)
        elif kind is dict:
            stack.extend(item.values())
        elif kind is list:
            stack.extend(item)


def refs_of(raw: bytes) -> list[bytes]:
    """The digests the piece ``raw`` refers to directly; of a list or map chunk only the items
    whose encodings may hold a marker are decoded (a chunk of messages decodes none)."""
    if not may_hold_markers(raw):
        return []
    frame = ext_frame(raw)
    if frame is not None and frame[1] is not None and frame[0] in (EXT_FRAMED, EXT_MAP_CHUNK):
        encoded = frames(frame[1]) if frame[0] == EXT_FRAMED else map_frames(frame[1])[1]
        return list(iter_digests(decode_items([e for e in encoded if may_hold_markers(e)])))
    return list(iter_digests(unpack(raw)))
