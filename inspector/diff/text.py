"""Line- and word-level diff of long strings (difflib on tokens, trimmed ends first)."""

from __future__ import annotations

import difflib
import re

from inspector.diff.matching import matcher, word_matcher
from inspector.diff.model import TextDelta

TEXT_MIN = 80              # strings at least this long get a text diff
_WORDS = re.compile(r"\s+|\w+|[^\w\s]")
_MAX_TOKENS_EXACT = 4000   # beyond this many middle tokens, let difflib treat popular tokens as junk
REFINE_CHARS = 20_000      # replaced line blocks up to this size get word diffs inside lines


def tokens(text: str, unit: str) -> list[str]:
    """Split text into lines (keeping ends) or into words, spaces and punctuation."""
    if unit == "line":
        return text.splitlines(keepends=True)
    return _WORDS.findall(text)


def choose_unit(old: str, new: str) -> str:
    """Lines for multi-line text, words otherwise."""
    return "line" if ("\n" in old.rstrip("\n") or "\n" in new.rstrip("\n")) else "word"


def text_delta(old: str, new: str) -> TextDelta:
    """The token-level diff of two strings as ordered segments ('=', '-', '+')."""
    unit = choose_unit(old, new)
    a, b = tokens(old, unit), tokens(new, unit)
    start = 0
    limit = min(len(a), len(b))
    while start < limit and a[start] == b[start]:
        start += 1
    end = 0
    while end < limit - start and a[-1 - end] == b[-1 - end]:
        end += 1
    segments: list[tuple[str, str]] = []
    _add(segments, "=", "".join(a[:start]))
    mid_a, mid_b = a[start:len(a) - end], b[start:len(b) - end]
    junk = len(mid_a) + len(mid_b) > _MAX_TOKENS_EXACT
    match = word_matcher if unit == "word" else matcher
    for tag, i1, i2, j1, j2 in match(mid_a, mid_b, junk).get_opcodes():
        old_part, new_part = "".join(mid_a[i1:i2]), "".join(mid_b[j1:j2])
        if tag == "equal":
            _add(segments, "=", old_part)
        elif unit == "line" and tag == "replace" and len(old_part) + len(new_part) <= REFINE_CHARS:
            for sub_tag, text in _refine(mid_a[i1:i2], mid_b[j1:j2]):
                _add(segments, sub_tag, text)
        else:
            _add(segments, "-", old_part)
            _add(segments, "+", new_part)
    _add(segments, "=", "".join(a[len(a) - end:]))
    return TextDelta(unit, tuple(segments))


def _refine(old_lines: list[str], new_lines: list[str]) -> list[tuple[str, str]]:
    """Replaced lines paired in order; a pair that is mostly alike gets a word diff inside."""
    out: list[tuple[str, str]] = []
    for old, new in zip(old_lines, new_lines, strict=False):
        if difflib.SequenceMatcher(None, old, new, autojunk=False).quick_ratio() >= 0.5:
            out.extend(_word_segments(old, new))
        else:
            out.extend([("-", old), ("+", new)])
    paired = min(len(old_lines), len(new_lines))
    rest_old, rest_new = old_lines[paired:], new_lines[paired:]
    out.append(("-", "".join(rest_old)))
    out.append(("+", "".join(rest_new)))
    return [(tag, text) for tag, text in out if text]


def _word_segments(old: str, new: str) -> list[tuple[str, str]]:
    a, b = tokens(old, "word"), tokens(new, "word")
    out: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in word_matcher(a, b).get_opcodes():
        if tag == "equal":
            out.append(("=", "".join(a[i1:i2])))
            continue
        out.append(("-", "".join(a[i1:i2])))
        out.append(("+", "".join(b[j1:j2])))
    return [(tag, text) for tag, text in out if text]


def _add(segments: list[tuple[str, str]], tag: str, text: str) -> None:
    if not text:
        return
    if segments and segments[-1][0] == tag:
        segments[-1] = (tag, segments[-1][1] + text)
    else:
        segments.append((tag, text))


def render_delta(delta: TextDelta, context: int = 40, max_segment: int = 300) -> str:
    """A compact one-string rendering: ``…context [-old-]{+new+} context…``."""
    out: list[str] = []
    last = len(delta.segments) - 1
    for index, (tag, text) in enumerate(delta.segments):
        if tag != "=" and len(text) > max_segment:
            text = f"{text[:max_segment]}…({len(text) - max_segment} more chars)"
        if tag == "-":
            out.append(f"[-{text}-]")
        elif tag == "+":
            out.append(f"{{+{text}+}}")
        elif len(text) > 2 * context:
            head = text[:context] if index > 0 else ""
            tail = text[-context:] if index < last else ""
            out.append(f"{head}…{tail}")
        else:
            out.append(text)
    return "".join(out)
