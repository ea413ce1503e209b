"""Human-readable sizes and durations shared by the CLI, the core's messages and the GUI."""

from __future__ import annotations

# the control characters a terminal obeys and a window draws as empty boxes (tab and line break
# aside): the CLI and the GUI show them escaped (``escape_char``), for a regular expression's class
CONTROL_CHARS = "\x00-\x08\x0b-\x1f\x7f-\x9f"


def escape_char(char: str) -> str:
    """One character as the CLI and the GUI show it: ``\\x1b``, ``\\u202e``."""
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def fmt_size(n: int | None) -> str:
    """A short size: ``512 B``, ``4.2 KB``, ``1.3 MB`` ('' for None)."""
    if n is None:
        return ""
    if abs(n) < 1024:
        return f"{n} B"
    value = float(n)
    for unit in ("KB", "MB", "GB"):
        value /= 1024
        if abs(value) < 1024 or unit == "GB":
            return f"{value:.1f} {unit}" if abs(value) < 100 else f"{value:.0f} {unit}"
    return f"{n} B"


def fmt_age(seconds: float | None) -> str:
    """A short duration: ``12 s``, ``4 min``, ``3.2 h``, ``2.0 days`` ('never' for None)."""
    if seconds is None:
        return "never"
    seconds = max(0.0, seconds)
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    if seconds < 172800:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def plural(n: int, word: str, words: str | None = None) -> str:
    """'1 checkpoint', '23 checkpoints', '1,024 runs' (``words``: an irregular plural)."""
    return f"{n:,} {word if n == 1 else (words or word + 's')}"
