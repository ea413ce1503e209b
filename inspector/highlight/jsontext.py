"""Pretty JSON text of any decoded value, tolerant of values JSON cannot hold."""

from __future__ import annotations

import json
from typing import Any

INDENT = 2


def _fallback(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"<{len(bytes(value))} bytes>"
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return repr(value)


def _plain_keys(value: Any) -> Any:
    """A copy whose dict keys are all JSON keys (str/int/float/bool/None); iterative-safe enough
    for the rare values that need it."""
    if isinstance(value, dict):
        return {(k if isinstance(k, (str, int, float, bool)) or k is None else repr(k)): _plain_keys(v)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain_keys(v) for v in value]
    return value


def to_json_text(value: Any, indent: int | None = INDENT) -> str:
    """``value`` as pretty-printed JSON (keys in stored order, non-ASCII kept readable)."""
    try:
        return json.dumps(value, indent=indent, ensure_ascii=False, default=_fallback,
                          allow_nan=True)
    except TypeError:
        return json.dumps(_plain_keys(value), indent=indent, ensure_ascii=False,
                          default=_fallback, allow_nan=True)
    except (ValueError, RecursionError) as err:   # circular or absurdly deep
        return json.dumps(f"<value cannot be shown as JSON: {err}>")


def line_paths(text: str) -> list[tuple]:
    """The path of the value each line of ``to_json_text`` output belongs to (one per line).

    A line opening a value (``"key": …`` or a list item) gets that value's path; a closing
    ``}``/``]`` line gets its container's path. Object keys come back as the strings JSON wrote.
    """
    out: list[tuple] = []
    stack: list[list] = []          # frames: [path, is_list, next_index]
    decoder = json.JSONDecoder()
    for line in text.split("\n"):
        content = line.lstrip(" ")
        if content[:1] in ("}", "]"):
            out.append(stack.pop()[0] if stack else ())
            continue
        rest = content
        if not stack:
            path: tuple = ()
        elif stack[-1][1]:
            frame = stack[-1]
            path = frame[0] + (frame[2],)
            frame[2] += 1
        else:
            try:
                key, end = decoder.raw_decode(content)
            except ValueError:
                out.append(stack[-1][0])
                continue
            path = stack[-1][0] + (key,)
            rest = content[end + 2:]
        out.append(path)
        if rest in ("{", "["):
            stack.append([path, rest == "[", 0])
    return out


MAX_LINE = 10_000   # characters of one line shown in a text view (longer strings are cut)


def elide_long_lines(text: str, limit: int = MAX_LINE) -> tuple[str, int]:
    """Cut lines longer than ``limit`` inside their string, keeping a valid JSON string.

    Returns the text and how many lines were cut. Text views lay out whole lines, and one
    line of a megabyte freezes them; the tree and detail views still show the full value.
    """
    if len(text) <= limit:
        return text, 0
    lines = text.split("\n")
    cut = 0
    for i, line in enumerate(lines):
        if len(line) <= limit:
            continue
        head = line[:limit]
        if (len(head) - len(head.rstrip("\\"))) % 2:   # do not split an escape sequence
            head = head[:-1]
        if head.count('"') % 2 == 0:        # the cut fell outside a string: end one cleanly
            head = head.rstrip('"')
        tail = "," if line.endswith(",") else ""
        hidden = len(line) - len(head) - 1 - len(tail)      # less the closing quote and comma
        lines[i] = f'{head}… [+{hidden:,} characters]"{tail}'
        cut += 1
    return "\n".join(lines), cut
