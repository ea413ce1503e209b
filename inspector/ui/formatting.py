"""Text for the views: relative times, gaps, sizes and size changes (no Qt)."""

from __future__ import annotations

import html
import math
import re
import time

from inspector.humanize import CONTROL_CHARS, escape_char, fmt_size

__all__ = ["relative_time", "fmt_gap", "fmt_size", "fmt_delta", "clock_time", "compact_count", "full_time",
           "local_time", "elide_middle", "visible", "visible_html"]

# what a store's text may hold that a window must not draw as it is: control characters (Qt draws
# them as empty boxes; ESC]0;…BEL is a terminal's retitle) and the bidirectional overrides and
# isolates, which reorder the text after them (a run name could show "txt.exe" as "exe.txt")
_UNSEEN = CONTROL_CHARS + "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_UNSEEN_TEXT = re.compile(f"[{_UNSEEN}]")
_UNSEEN_LINE = re.compile(f"[{_UNSEEN}\n]")
_NAMED = {"\t": "\\t", "\r": "\\r", "\n": " \u23ce "}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return _NAMED.get(char) or escape_char(char)


def visible(text: str, *, lines: bool = False) -> str:
    """``text`` from a store as a view draws it: control characters and bidirectional overrides
    as escapes (``\\x1b``, ``\\u202e``, as the CLI prints them); a line break as `` ⏎ `` unless
    ``lines`` (text shown on several lines keeps its breaks and tabs)."""
    if text.isprintable():   # a C loop; nearly every name and value
        return text
    return (_UNSEEN_TEXT if lines else _UNSEEN_LINE).sub(_escape, text)


def local_time(ts: float) -> time.struct_time | None:
    """``ts`` as local time, or None for a time no clock has (a damaged store's times may be
    infinite, not a number, or years past 9999)."""
    try:
        return time.localtime(ts) if math.isfinite(ts) else None
    except (OverflowError, OSError, ValueError, TypeError):
        return None


def relative_time(ts: float | None, now: float | None = None) -> str:
    """'just now', '42 s ago', '3 min ago', '5 h ago', 'yesterday', '12 days ago' or a date."""
    if not ts:
        return ""
    local = local_time(ts)
    if local is None:
        return "?"
    delta = (time.time() if now is None else now) - ts
    if delta < 5:
        return "just now"
    if delta < 60:
        return f"{int(delta)} s ago"
    if delta < 3600:
        return f"{int(delta // 60)} min ago"
    if delta < 86_400:
        return f"{int(delta // 3600)} h ago"
    days = int(delta // 86_400)
    if days == 1:
        return "yesterday"
    if days < 30:
        return f"{days} days ago"
    return time.strftime("%Y-%m-%d", local)


def fmt_gap(seconds: float | None) -> str:
    """A time gap: '+12 ms', '+1.4 s', '+2 min 05 s', '+3 h 02 min'."""
    if seconds is None:
        return ""
    if not math.isfinite(seconds) or abs(seconds) >= 1e12:    # (no two times a store can hold)
        return "?"
    sign = "-" if seconds < 0 else "+"
    s = abs(seconds)
    if s < 1:
        return f"{sign}{s * 1000:.0f} ms"
    if s < 60:
        return f"{sign}{s:.1f} s"
    if s < 3600:
        return f"{sign}{int(s // 60)} min {int(s % 60):02d} s"
    return f"{sign}{int(s // 3600)} h {int(s % 3600 // 60):02d} min"


def fmt_delta(n: int) -> str:
    """A size change with its sign: '+1.2 KB', '−340 B', or '' for no change."""
    if not n:
        return ""
    return ("+" if n > 0 else "\u2212") + fmt_size(abs(n))


def clock_time(ts: float, now: float | None = None) -> str:
    """HH:MM:SS for today, 'MM-DD HH:MM' otherwise (the full time goes in the tooltip); '' when
    unknown."""
    if not ts:
        return ""
    local = local_time(ts)
    if local is None:
        return "?"
    today = time.localtime(time.time() if now is None else now)
    if local[:3] == today[:3]:
        return time.strftime("%H:%M:%S", local)
    return time.strftime("%m-%d %H:%M", local)


def compact_count(n: int) -> str:
    """'9,999', '12.3k', '100k', '1.2M' — counts that fit a narrow column."""
    if n < 10_000:
        return f"{n:,}"
    if n < 100_000:
        return f"{n / 1000:.1f}k"
    if n < 1_000_000:
        return f"{n / 1000:.0f}k"
    return f"{n / 1_000_000:.1f}M"


def full_time(ts: float | None) -> str:
    """YYYY-MM-DD HH:MM:SS.mmm in local time."""
    if not ts:
        return ""
    local = local_time(ts)
    if local is None:
        return "? (not a time)"
    return time.strftime("%Y-%m-%d %H:%M:%S", local) + f".{int(ts * 1000) % 1000:03d}"


def elide_middle(text: str, limit: int) -> str:
    """Shorten ``text`` to ``limit`` characters with an ellipsis in the middle."""
    if len(text) <= limit:
        return text
    keep = max(1, limit - 1)
    return text[: keep - keep // 2] + "\u2026" + text[len(text) - keep // 2:]


def step_label(kind: str, name: str) -> str:
    """``kind name`` without saying the kind twice ("fork of …", not "fork fork of …")."""
    name = name or ""
    return name if name.split(" ", 1)[0] == kind else f"{kind} {name}".rstrip()


def visible_html(text: str) -> str:
    """:func:`visible` text for a rich-text label (HTML-escaped)."""
    return html.escape(visible(text))


UUID = re.compile(r"[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}", re.IGNORECASE)
ID_KEPT = 8          # characters of a name that is an opaque id kept in sight


def readable_part(name: str, run_id: str) -> str:
    """What of a run's name must stay readable: all of it, but of a name that is an opaque id
    (the run's id, a UUID: a CrewAI flow's) its first characters, as short ids go elsewhere —
    the rest elides rather than push Checks and Updated (or a header's chips) out of view."""
    if len(name) > ID_KEPT + 1 and (name == run_id or UUID.fullmatch(name)):
        return name[:ID_KEPT] + "\u2026"
    return name
