"""A bounded reader of SQLite's binary JSON (JSONB, SQLite ≥ 3.45), for Python builds whose
SQLite is older and cannot run ``json(data)`` (CrewAI's SQLite checkpoints store JSONB).

Format (sqlite.org/jsonb.html): each element is a header byte — low 4 bits the type, high 4
bits the payload size (0–11 inline; 12, 13, 14, 15: the size follows in 1, 2, 4, 8 bytes,
big-endian) — then the payload. Containers hold their elements back to back. Every size is
checked against the buffer and nesting is capped, so a damaged blob raises ``JsonbError``.
"""

from __future__ import annotations

import json
from typing import Any

from inspector import limits

MAX_DEPTH = 200


class JsonbError(ValueError):
    """The bytes are not well-formed JSONB."""


def _header(buf: bytes, pos: int, end: int) -> tuple[int, int, int]:
    """(type, payload start, payload end) of the element at ``pos``."""
    if pos >= end:
        raise JsonbError("truncated element")
    first = buf[pos]
    kind, size = first & 0x0F, first >> 4
    start = pos + 1
    if size >= 12:
        width = (1, 2, 4, 8)[size - 12]
        if start + width > end:
            raise JsonbError("truncated size")
        size = int.from_bytes(buf[start:start + width], "big")
        start += width
    if start + size > end:
        raise JsonbError("element larger than its container")
    return kind, start, start + size


def _text(raw: bytes, kind: int) -> str:
    text = raw.decode("utf-8")
    if kind == 7 or kind == 10:   # TEXT / TEXTRAW: no escapes
        return text
    try:                          # TEXTJ / TEXT5: JSON escapes inside
        return json.loads(f'"{text}"')
    except ValueError as err:
        raise JsonbError("bad escape in text") from err


def _number(raw: bytes, kind: int) -> Any:
    text = raw.decode("ascii")
    try:
        if kind == 3:
            return int(text)
        if kind == 4:
            return int(text, 0)
        return float(text)
    except ValueError as err:
        raise JsonbError(f"bad number {text[:20]!r}") from err


def _value(buf: bytes, pos: int, end: int, depth: int) -> tuple[Any, int]:
    if depth > min(MAX_DEPTH, limits.current().depth):
        raise JsonbError("nested too deeply")
    kind, start, stop = _header(buf, pos, end)
    if kind in (0, 1, 2):
        return (None, True, False)[kind], stop
    if kind in (3, 4, 5, 6):
        return _number(buf[start:stop], kind), stop
    if kind in (7, 8, 9, 10):
        return _text(buf[start:stop], kind), stop
    if kind == 11:
        items, at = [], start
        while at < stop:
            item, at = _value(buf, at, stop, depth + 1)
            items.append(item)
        return items, stop
    if kind == 12:
        obj, at = {}, start
        while at < stop:
            key, at = _value(buf, at, stop, depth + 1)
            if not isinstance(key, str):
                raise JsonbError("object key is not text")
            obj[key], at = _value(buf, at, stop, depth + 1)
        return obj, stop
    raise JsonbError(f"reserved element type {kind}")


def decode(data: bytes) -> Any:
    """The JSON value in a JSONB blob; ``JsonbError`` when it is not well-formed."""
    try:
        value, end = _value(bytes(data), 0, len(data), 0)
    except UnicodeDecodeError as err:
        raise JsonbError("text is not UTF-8") from err
    if end != len(data):
        raise JsonbError("trailing bytes")
    return value


def looks_like_jsonb(data: bytes) -> bool:
    """True when ``data`` starts with a JSONB object or array header spanning the whole blob."""
    try:
        kind, _start, stop = _header(bytes(data), 0, len(data))
    except JsonbError:
        return False
    return kind in (11, 12) and stop == len(data)
