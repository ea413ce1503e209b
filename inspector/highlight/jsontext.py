"""Pretty JSON text of any decoded value, tolerant of values JSON cannot hold.

Bytes are written as ``{"__bytes__": …}`` holding their hex dump (``hexdump -C``'s columns):
a short value on one line, a longer one a line per 16 bytes, so that two values that differ
differ in the text too, on the lines where they do (a side-by-side diff tints them), and bytes
are never taken for a string. The text stays JSON (a fork dialog parses it back).
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
from typing import Any

INDENT = 2
BYTES_KEY = "__bytes__"
ROW_BYTES = 16         # bytes per line of a hex dump
SHORT_BYTES = 16       # bytes this short (or fewer) are dumped on their line
DUMP_BYTES = 64 * 1024  # bytes beyond this are not dumped: their count and a digest of the whole say they differ
_OPEN_DUMP = f'{{"{BYTES_KEY}": ['


def _hex_row(data: bytes) -> str:
    """``61 62 63  |abc|``: the bytes in hex, then as ASCII (a dot for the others)."""
    text = "".join(chr(b) if 32 <= b < 127 else "." for b in data)
    return f"{data.hex(' ')}  |{text}|" if data else ""


def bytes_text(data: bytes, indent: int | None, at: int) -> str:
    """Bytes as JSON text: ``{"__bytes__": "61 62 63  |abc|"}``, or a dump of one line per
    16 bytes (``"0010  10 11 …  |..|"``) for longer ones, indented from column ``at``
    (one line when ``indent`` is None: the first bytes, then their count)."""
    key = json.dumps(BYTES_KEY)
    if len(data) <= SHORT_BYTES:
        return f"{{{key}: {json.dumps(_hex_row(data))}}}"
    if indent is None:
        head = f"{len(data):,} bytes: {data[:SHORT_BYTES].hex(' ')} …"
        return f"{{{key}: {json.dumps(head, ensure_ascii=False)}}}"
    rows = [f"{offset:04x}  {_hex_row(data[offset:offset + ROW_BYTES])}"
            for offset in range(0, min(len(data), DUMP_BYTES), ROW_BYTES)]
    if len(data) > DUMP_BYTES:
        digest = hashlib.sha256(data).hexdigest()[:16]
        rows.append(f"… {len(data) - DUMP_BYTES:,} more bytes ({len(data):,} in all, sha256 {digest}…)")
    inner = " " * (at + indent)
    body = ",\n".join(inner + json.dumps(row, ensure_ascii=False) for row in rows)
    return f"{_OPEN_DUMP}\n{body}\n{' ' * at}]}}"


class _Fallback:
    """``json.dumps``' ``default``: sets and tuples as lists, anything else as its repr, and
    bytes as a marker string that ``restore`` replaces with their ``bytes_text``."""

    def __init__(self) -> None:
        self.found: list[bytes] = []
        self._tag = secrets.token_hex(6)     # (a string in the value cannot be taken for a marker)

    def __call__(self, value: Any) -> Any:
        if isinstance(value, (bytes, bytearray, memoryview)):
            self.found.append(bytes(value))
            return f"\x00{self._tag}:{len(self.found) - 1}\x00"
        if isinstance(value, (set, frozenset, tuple)):
            return list(value)
        return repr(value)

    def restore(self, text: str, indent: int | None) -> str:
        """``text`` with each bytes marker replaced by its bytes' text."""
        if not self.found:
            return text
        pattern = re.compile(rf'"\\u0000{self._tag}:(\d+)\\u0000"')

        def replace(match: re.Match[str]) -> str:
            start = text.rfind("\n", 0, match.start()) + 1
            at = len(text) - len(text[start:].lstrip(" ")) - start    # the line's indent
            return bytes_text(self.found[int(match.group(1))], indent, at)
        return pattern.sub(replace, text)


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
    """``value`` as pretty-printed JSON (keys in stored order, non-ASCII kept readable; bytes
    as their hex dump, see the module docstring)."""
    fallback = _Fallback()

    def dump(plain: Any) -> str:
        return json.dumps(plain, indent=indent, ensure_ascii=False, default=fallback, allow_nan=True)
    try:
        return fallback.restore(dump(value), indent)
    except TypeError:
        return fallback.restore(dump(_plain_keys(value)), indent)
    except (ValueError, RecursionError) as err:   # circular or absurdly deep
        return json.dumps(f"<value cannot be shown as JSON: {err}>")


def line_paths(text: str) -> list[tuple]:
    """The path of the value each line of ``to_json_text`` output belongs to (one per line).

    A line opening a value (``"key": …`` or a list item) gets that value's path; a closing
    ``}``/``]`` line gets its container's path. Object keys come back as the strings JSON wrote.
    """
    out: list[tuple] = []
    stack: list[list] = []          # frames: [path, is_list (None: a hex dump of bytes), next_index]
    decoder = json.JSONDecoder()
    for line in text.split("\n"):
        content = line.lstrip(" ")
        if content[:1] in ("}", "]"):
            out.append(stack.pop()[0] if stack else ())
            continue
        if stack and stack[-1][1] is None:     # a line of a hex dump: the bytes' own
            out.append(stack[-1][0])
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
        elif rest == _OPEN_DUMP:
            stack.append([path, None, 0])
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
