"""One-line previews of values for a diff's changes: a value cut to a few characters, a chat
message said for what it is (its class or role, its id, its text or tool calls), and the two
sides of a change made to read differently when they would print alike (Unicode normal forms,
invisible code points, a difference past the cut)."""

from __future__ import annotations

import contextlib
import json
import re
import unicodedata
from typing import Any
from collections.abc import Callable

from inspector.lazy import LazyText


def short_repr(value: Any, limit: int = 60) -> str:
    """A one-line preview of a value, cut to ``limit`` characters; a chat message too long to
    show whole says what it is (``message_preview``) rather than ``{'role': 'assistant', 'co…``."""
    if isinstance(value, dict) and (message := message_preview(value, limit)) is not None:
        whole = _safe_repr(value)
        text = whole if len(whole) <= limit else message
    elif isinstance(value, dict):
        text = f"{{…{len(value)} keys}}" if len(value) > 4 else _safe_repr(value)
    elif isinstance(value, list):
        text = f"[…{len(value):,} items]" if len(value) > 4 else _safe_repr(value)
    else:
        text = _safe_repr(value)
    text = text.replace("\n", "⏎")
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _safe_repr(value: Any) -> str:
    try:
        text = repr(value)
    except RecursionError:
        return f"<deeply nested {type(value).__name__}>"
    return text if len(text) <= 4000 else text[:4000]


_ROLE_WORDS = frozenset({"user", "human", "assistant", "ai", "model", "tool", "function", "system",
                         "developer", "chat"})
_ID_SHOWN = 16          # characters of a message id kept in a preview (of a UUID, its first 8)
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)
_ARG_SHOWN = 24         # characters of a string argument of a tool call kept in a preview


def message_preview(value: dict, limit: int = 60, quote: Callable[[Any], str] = _safe_repr) -> str | None:
    """A chat message as one line that says what it is, or None for a dict that is not one:
    ``AIMessage ai-0: tool_calls write_file(path='src/f0.py', …)``, ``user: 'thanks'``.

    A LangChain message (``{"__type__": "…AIMessage", …}`` as the LangGraph adapter decodes it,
    or an ``lc`` constructor envelope) is named by its class, a plain one (``{"role": …,
    "content": …}``, ``{"type": "human", …}``) by its role; without this a message of ten
    fields read ``{…10 keys}``. ``quote`` writes the values (``repr`` for a terminal, JSON for
    the window); the line may run past ``limit``, which the caller cuts."""
    found = _message_fields(value)
    if found is None:
        return None
    kind, fields = found
    ident = fields.get("id")
    if not (isinstance(ident, str) and ident) and kind == "tool":
        ident = fields.get("tool_call_id")       # a plain tool result: the call it answers
    head = kind
    if isinstance(ident, str) and ident:
        head += " " + _short_id(ident)
    parts: list[str] = []
    calls = fields.get("tool_calls")
    if not calls and isinstance(fields.get("additional_kwargs"), dict):
        calls = fields["additional_kwargs"].get("tool_calls")
    if isinstance(calls, list) and calls:
        parts.append("tool_calls " + _calls_text(calls, limit - len(head) - 13, quote))
    text = _content_text(fields.get("content"))
    if text or not parts:
        parts.append(quote(text[:limit + 1]))
    return f"{head}: {'; '.join(parts)}"


def _short_id(ident: str) -> str:
    """A message id as a preview shows it: whole when short, else the first characters of the
    UUID it holds (``6eb83bb8…`` of ``lc_run--6eb83bb8-ba62-…``), else its first characters."""
    if len(ident) <= _ID_SHOWN:
        return ident
    found = _UUID.search(ident)
    return found.group()[:8] + "…" if found else ident[:_ID_SHOWN - 1] + "…"


def _message_fields(value: dict) -> tuple[str, dict] | None:
    """(what the message is: its class or role, its fields) for a message-like dict, else None."""
    tag = value.get("__type__")
    if isinstance(tag, str):
        name = tag.rsplit(".", 1)[-1]
        return (name, value) if "Message" in name else None
    if value.get("lc") in (1, 2) and isinstance(value.get("id"), list) and isinstance(value.get("kwargs"), dict):
        name = str(value["id"][-1]) if value["id"] else ""
        return (name, value["kwargs"]) if "Message" in name else None
    if "content" not in value and "tool_calls" not in value:
        return None
    role, kind = value.get("role"), value.get("type")
    if isinstance(role, str) and role:
        return role, value
    return (kind, value) if isinstance(kind, str) and kind in _ROLE_WORDS else None


def _content_text(content: Any) -> str:
    """A message content as text: a string, or the text of its parts (``[image]`` for others)."""
    if isinstance(content, str):
        return content
    if isinstance(content, LazyText):
        return content.prefix
    if isinstance(content, list):
        return " ".join(_part_text(part) for part in content[:20])
    return "" if content is None else _safe_repr(content)


def _part_text(part: Any) -> str:
    if isinstance(part, str):
        return part
    if isinstance(part, dict):
        text = part.get("text")
        return text if isinstance(text, str) else f"[{part.get('type', '?')}]"
    return "[?]"


def _calls_text(calls: list, room: int, quote: Callable[[Any], str]) -> str:
    """``write_file(path='src/f0.py', …), read_file(…)``: tool calls with as many of their
    arguments as ``room`` characters hold (a LangChain ``args`` map, or OpenAI's ``function``
    with ``arguments`` as a map or a JSON string)."""
    shown: list[str] = []
    used = 0
    for call in calls:
        if shown and used + 6 > room:
            shown.append("…")
            break
        text = _call_text(call, room - used, quote)
        shown.append(text)
        used += len(text) + 2
    return ", ".join(shown)


def _call_text(call: Any, room: int, quote: Callable[[Any], str]) -> str:
    if not isinstance(call, dict):
        return "?(…)"
    fn = call["function"] if isinstance(call.get("function"), dict) else call
    name = str(fn.get("name", "?"))
    args = fn.get("args", fn.get("arguments"))
    if isinstance(args, str) and args.lstrip().startswith("{") and len(args) < 100_000:
        with contextlib.suppress(ValueError, RecursionError):     # not JSON after all: shown as it is
            args = json.loads(args)
    if not isinstance(args, dict):
        return f"{name}({'' if args is None else _brief(args, quote)})"
    shown: list[str] = []
    used, last = len(name) + 2, len(args) - 1
    for at, (key, arg) in enumerate(args.items()):
        piece = f"{key}={_brief(arg, quote)}"
        if used + len(piece) + (3 if at < last else 0) > room:      # room for ", …" unless the last
            shown.append("…")
            break
        shown.append(piece)
        used += len(piece) + 2
    return f"{name}({', '.join(shown)})"


def _brief(value: Any, quote: Callable[[Any], str]) -> str:
    """An argument in a few characters: a map or a list as ``{…}``/``[…]``, a long string cut."""
    if isinstance(value, dict):
        return "{…}" if value else "{}"
    if isinstance(value, (list, tuple)):
        return "[…]" if value else "[]"
    if isinstance(value, str) and len(value) > _ARG_SHOWN:
        return quote(value[:_ARG_SHOWN - 1] + "…")
    return quote(value)


def preview_pair(old: Any, new: Any, preview: Callable[[Any], str]) -> tuple[str, str, str]:
    """The previews of a changed value's two sides, made to read differently, and a note.

    Two strings may print alike: the same text in another Unicode normal form (``'café'``
    composed or as ``e`` + U+0301), an emoji with another skin-tone modifier, a difference
    past where the preview cuts. Then the code points that draw nothing of their own are
    escaped (``'cafe\\u0301'``), a difference past the cut is shown from just before it
    (``'…old tail'``), and the note says what the difference is
    (``(same text once normalised: NFD → NFC)``); otherwise the note is ""."""
    a, b = preview(old), preview(new)
    if type(old) is bytes and type(new) is bytes and a == b and a.startswith(("b'", 'b"')):
        return _tails(old, new, preview, "byte")
    if not (isinstance(old, str) and isinstance(new, str)) or (a != b and a.isascii() and b.isascii()) \
            or not _read_alike(a, b):
        return a, b, ""
    a, b = _show_unseen(a), _show_unseen(b)
    if _read_alike(a, b):                     # the two differ past the preview's cut
        a, b, note = _tails(old, new, preview, "character")
        a, b = _show_unseen(a), _show_unseen(b)
    else:
        note = ""
    if unicodedata.normalize("NFC", old) == unicodedata.normalize("NFC", new):
        return a, b, f"(same text once normalised: {_normal_form(old)} → {_normal_form(new)})"
    if _looks(old) == _looks(new):
        return a, b, "(only combining, modifier or invisible code points differ)"
    return a, b, note


def _tails(old: Any, new: Any, preview: Callable[[Any], str], unit: str) -> tuple[str, str, str]:
    """Previews of two strings (or bytes) from just before where they first differ."""
    first = _first_difference(old, new)
    at = max(0, first - 10)
    a, b = (_elided_front(preview(value[at:]), at) for value in (old, new))
    return a, b, f"(first difference at {unit} {first:,})"


def _read_alike(a: str, b: str) -> bool:
    """Whether two previews read the same on screen, as far as the one cut shorter goes."""
    seen_a, seen_b = _looks(a.removesuffix("…")), _looks(b.removesuffix("…"))
    if seen_a == seen_b:
        return True
    (short, cut), (long, _) = sorted(((seen_a, a.endswith("…")), (seen_b, b.endswith("…"))),
                                     key=lambda pair: len(pair[0]))
    return cut and long.startswith(short)


def _unseen(char: str) -> bool:
    """A code point that draws nothing of its own or only changes its neighbour: a combining
    mark or variation selector, a joiner or other format character, a skin-tone modifier."""
    return unicodedata.category(char) in ("Mn", "Me", "Cf") or 0x1F3FB <= ord(char) <= 0x1F3FF


def _looks(text: str) -> str:
    """What ``text`` reads as on screen, near enough: composed, without unseen code points."""
    if text.isascii():
        return text
    return "".join(char for char in unicodedata.normalize("NFC", text) if not _unseen(char))


def _show_unseen(text: str) -> str:
    """``text`` with its unseen code points written as escapes (``\\u0301``, ``\\U0001f3fd``)."""
    if text.isascii():
        return text
    return "".join((f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}") if _unseen(c) else c
                   for c in text)


def _first_difference(a: str | bytes, b: str | bytes) -> int:
    """The index of the first character (byte) where ``a`` and ``b`` differ, compared in blocks."""
    n, at = min(len(a), len(b)), 0
    while at + 256 <= n and a[at:at + 256] == b[at:at + 256]:
        at += 256
    while at < n and a[at] == b[at]:
        at += 1
    return at


def _elided_front(text: str, dropped: int) -> str:
    """A preview of a string's tail: ``'…tail'`` (the ellipsis inside the quote)."""
    if not dropped:
        return text
    quote_at = next((i for i, c in enumerate(text[:2]) if c in "'\""), -1)
    return text[:quote_at + 1] + "…" + text[quote_at + 1:]


def _normal_form(text: str) -> str:
    if unicodedata.is_normalized("NFC", text):
        return "NFC"
    return "NFD" if unicodedata.is_normalized("NFD", text) else "mixed forms"
