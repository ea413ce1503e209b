"""Qt-free helpers over decoded JSON values: type names, one-line previews, sizes, search."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Collection
from itertools import repeat
from typing import Any

from inspector.humanize import fmt_size as fmt_bytes
from inspector.lazy import LazyText, LazyValue
from inspector.diff.model import format_path

ELIDE_AT = 160          # characters of a string shown in a one-line cell
PREVIEW_BYTES = 16      # bytes of a bytes value shown in hex in its cell
MAX_MATCHES = 20_000    # a search stops collecting after this many hits
_SCALAR_SIZES: dict[Any, int] = {True: 4, False: 5, None: 4}
_FLAT = frozenset({int, float, str, bool, type(None)})
_NUMBERS = frozenset({int, float})


def type_name(value: Any) -> str:
    """A JSON type name; decoded objects show their class (``HumanMessage``)."""
    if isinstance(value, LazyValue):
        return value.kind
    if isinstance(value, dict):
        tag = value.get("__type__")
        if tag is None and set(value) == {"__bytes__", "size"}:
            return "bytes"
        return tag.rsplit(".", 1)[-1] if isinstance(tag, str) and tag else "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    return type(value).__name__


def is_long_text(value: Any) -> bool:
    """True for strings a cell cannot show whole (long or multi-line)."""
    if isinstance(value, LazyText):
        return True
    return isinstance(value, str) and (len(value) > ELIDE_AT or "\n" in value)


def _message_preview(value: dict) -> str:
    role = value.get("role") or value.get("type")
    content = value.get("content")
    if isinstance(role, str) and isinstance(content, str):
        return f"  {role}: {content}"
    return ""


def typed_preview(value: dict) -> str | None:
    """One line for a decoded typed value: a datetime, UUID, Decimal… shows its value, an Enum
    ``Name.value``-like ``low``, a numpy array ``float64 3×4 [[0.0, 1.0, …``, bytes their size."""
    tag = value.get("__type__")
    if set(value) == {"__bytes__", "size"}:
        return _bytes_preview(value["__bytes__"], value["size"])
    if not isinstance(tag, str):
        return None
    if set(value) == {"__type__", "value"} and isinstance(value["value"], (str, int, float, bool)):
        return str(value["value"])
    if tag in ("builtins.set", "builtins.frozenset") and isinstance(value.get("value"), list):
        items = value["value"]
        return "{" + ", ".join(json.dumps(v, default=str) for v in items[:50]) + \
            (", \u2026" if len(items) > 50 else "") + "}"
    if tag == "numpy.ndarray":
        shape = "×".join(str(n) for n in value.get("shape") or []) or "scalar"
        dtype = {"<f8": "float64", "<f4": "float32", "<i8": "int64", "<i4": "int32", "|b1": "bool"}.get(
            str(value.get("dtype")), str(value.get("dtype")))
        values = value.get("values")
        return f"{dtype} {shape}" + (f" {json.dumps(values)}" if values is not None else "")
    return None


def _bytes_preview(head: bytes | str, size: Any) -> str:
    """``<3 bytes: 61 62 63>``: the count and the first bytes in hex, so that two values of one
    size tell apart (``head``: the bytes, or LangGraph's base64 of them)."""
    if isinstance(head, str):
        try:
            head = base64.b64decode(head[:PREVIEW_BYTES * 2], validate=True)   # (a multiple of 4 characters)
        except (binascii.Error, ValueError):
            head = b""
    shown = head[:PREVIEW_BYTES].hex(" ")
    more = " …" if isinstance(size, int) and size > PREVIEW_BYTES else ""
    count = f"{size:,}" if isinstance(size, int) else str(size)
    return f"<{count} bytes: {shown}{more}>" if shown else f"<{count} bytes>"


def preview(value: Any, limit: int = ELIDE_AT) -> str:
    """One line for a value cell: ``{5 keys}``, ``[24 items]``, an elided string, ``null``;
    typed values (``typed_preview``) show their value."""
    if isinstance(value, dict) and (typed := typed_preview(value)) is not None:
        text = typed
    elif isinstance(value, dict):
        n = len(value)
        text = f"{{{n:,} key{'s' if n != 1 else ''}}}" + _message_preview(value)
    elif isinstance(value, list):
        n = len(value)
        text = f"[{n:,} item{'s' if n != 1 else ''}]"
    elif isinstance(value, LazyText):
        text = value.prefix[:limit + 1].replace("\r\n", "\n").replace("\n", " ⏎ ")
    elif isinstance(value, LazyValue):
        n = value.length
        text = f"[{n:,} item{'s' if n != 1 else ''}]" if value.kind == "array" else \
            f"{{{n:,} key{'s' if n != 1 else ''}}}"
    elif isinstance(value, str):
        text = value.replace("\r\n", "\n").replace("\n", " ⏎ ")
    elif value is None:
        return "null"
    elif isinstance(value, bool):
        return "true" if value else "false"
    elif isinstance(value, (bytes, bytearray)):
        return _bytes_preview(bytes(value[:PREVIEW_BYTES]), len(value))
    else:
        text = repr(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def scalar_size(value: Any) -> int:
    """Approximate compact-JSON size in bytes of a non-container value (a part read on
    demand: its stored size)."""
    if isinstance(value, LazyValue):
        return value.size
    if isinstance(value, str):
        return len(value.encode("utf-8", "surrogatepass")) + 2
    if value is None or isinstance(value, bool):
        return _SCALAR_SIZES[value]
    if isinstance(value, (int, float)):
        return len(repr(value))
    if isinstance(value, (bytes, bytearray)):
        return len(value)
    return len(repr(value))


def json_sizes(value: Any, cancel: Callable[[], bool] | None = None) -> dict[int, int]:
    """Approximate compact-JSON sizes of every container in ``value``, keyed by ``id()``.

    Iterative (deep values do not hit the recursion limit); ``cancel()`` is polled.
    """
    sizes: dict[int, int] = {}
    stack: list[tuple[Any, bool]] = [(value, False)]
    steps = 0
    while stack:
        node, done = stack.pop()
        if not isinstance(node, (dict, list)) or id(node) in sizes and not done:
            continue
        if done:
            sizes[id(node)] = _container_size(node, sizes)
            continue
        steps += 1
        if cancel is not None and steps % 5000 == 0 and cancel():
            break
        children = node.values() if isinstance(node, dict) else node
        if _FLAT.issuperset(map(type, children)):     # no container inside: sized at once
            sizes[id(node)] = _container_size(node, sizes)
            continue
        stack.append((node, True))
        stack.extend((c, False) for c in children if isinstance(c, (dict, list)))
    return sizes


def _container_size(node: dict | list, sizes: dict[int, int]) -> int:
    """A container's size from its items' (its containers' sizes already in ``sizes``)."""
    if isinstance(node, dict):
        keys = flat_size(node.keys()) if all(type(k) is str for k in node) else None
        if keys is None:
            keys = sum(scalar_size(str(k)) for k in node)
        values = flat_size(node.values())
        if values is None:
            values = sum(_size(v, sizes) for v in node.values())
        total = 2 + keys + len(node) + values
    else:
        flat = flat_size(node)
        total = 2 + (flat if flat is not None else sum(_size(v, sizes) for v in node))
    return total + max(0, len(node) - 1)


def flat_size(values: Collection[Any]) -> int | None:
    """The summed ``scalar_size`` of values that are all plain scalars (str, number, bool,
    null), at C speed — no Python call per item; None when one of them is not."""
    kinds = set(map(type, values))
    if not kinds <= _FLAT:
        return None
    total = 0
    for kind in kinds:
        same = values if len(kinds) == 1 else [v for v in values if type(v) is kind]
        if kind in _NUMBERS:
            total += sum(map(len, map(repr, same)))
        elif kind is str:
            ascii_only = all(map(str.isascii, same))     # then characters are bytes (no encoding)
            lengths = map(len, same if ascii_only else map(str.encode, same, repeat("utf-8"), repeat("surrogatepass")))
            total += sum(lengths) + 2 * len(same)
        else:       # True, False, None
            total += sum(map(_SCALAR_SIZES.__getitem__, same))
    return total


def _size(value: Any, sizes: dict[int, int]) -> int:
    if isinstance(value, (dict, list)):
        return sizes.get(id(value), 0)
    return scalar_size(value)




def search_paths(value: Any, needle: str, cancel: Callable[[], bool] | None = None,
                 limit: int = MAX_MATCHES) -> list[tuple]:
    """Paths (document order) whose key or scalar value contains ``needle``, case-insensitively."""
    needle = needle.casefold()
    if not needle:
        return []
    found: list[tuple] = []
    stack: list[tuple[tuple, Any]] = [((), value)]
    steps = 0
    while stack and len(found) < limit:
        path, node = stack.pop()
        steps += 1
        if cancel is not None and steps % 5000 == 0 and cancel():
            break
        if path and (isinstance(path[-1], str) and needle in path[-1].casefold()
                     or not isinstance(node, (dict, list)) and needle in _search_text(node)):
            found.append(path)
        if isinstance(node, dict):
            stack.extend(((*path, k), v) for k, v in reversed(list(node.items())))
        elif isinstance(node, list):
            stack.extend(((*path, i), v) for i, v in reversed(list(enumerate(node))))
    return found


def _search_text(value: Any) -> str:
    return value.casefold() if isinstance(value, str) else preview(value, 1 << 30).casefold()


def value_at(value: Any, path: tuple) -> Any:
    """The value at ``path`` (KeyError/IndexError when the path does not exist)."""
    for part in path:
        value = value[part]
    return value


__all__ = ["ELIDE_AT", "fmt_bytes", "format_path", "is_long_text", "json_sizes", "preview",
           "scalar_size", "search_paths", "type_name", "value_at"]
