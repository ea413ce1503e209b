"""Line- and word-level diff of long strings (difflib on tokens, trimmed ends first).

Huge strings (``HUGE_TEXT`` characters or more, e.g. a 200 MB document) are never tokenized
whole: their common head and tail are found by comparing 64 KB blocks, only the differing
middle (plus a little context) is diffed by tokens, and unchanged runs longer than
``2 * KEEP`` characters are kept as ``KEEP`` characters of context next to the change and an
``ELIDED`` segment (``("…", "<count>")``: that many unchanged characters not kept). A middle
over ``HUGE_MIDDLE`` characters is one replaced region, not tokenized.
"""

from __future__ import annotations

import difflib
import re

from inspector.diff.matching import matcher, word_matcher
from inspector.diff.model import TextDelta

TEXT_MIN = 80              # strings at least this long get a text diff
_WORDS = re.compile(r"\s+|\w+|[^\w\s]")
_MAX_TOKENS_EXACT = 4000   # beyond this many middle tokens, let difflib treat popular tokens as junk
REFINE_CHARS = 20_000      # replaced line blocks up to this size get word diffs inside lines
HUGE_TEXT = 1_000_000      # strings this long are compared by blocks, never tokenized whole
HUGE_MIDDLE = 2_000_000    # a differing middle beyond this is one replaced region
KEEP = 2_000               # characters of unchanged context kept beside a change in huge text
ELIDED = "…"               # segment tag: unchanged characters not kept (the text is their count)
_BLOCK = 1 << 16


def tokens(text: str, unit: str) -> list[str]:
    """Split text into lines (keeping ends) or into words, spaces and punctuation."""
    if unit == "line":
        return text.splitlines(keepends=True)
    return _WORDS.findall(text)


def choose_unit(old: str, new: str) -> str:
    """Lines for multi-line text, words otherwise."""
    return "line" if ("\n" in old.rstrip("\n") or "\n" in new.rstrip("\n")) else "word"


def common_prefix(a: str, b: str, start: int = 0) -> int:
    """The length of the common head of two strings (block by block: no big copies), whose
    first ``start`` characters are known to be equal."""
    limit = min(len(a), len(b))
    i = min(start, limit)
    while i < limit and a[i:i + _BLOCK] == b[i:i + _BLOCK]:
        i += _BLOCK
    i = min(i, limit)
    end = min(i + _BLOCK, limit)
    while i < end and a[i] == b[i]:
        i += 1
    return i


def common_suffix(a: str, b: str, limit: int, start: int = 0) -> int:
    """The length of the common tail of two strings, at most ``limit``, whose last ``start``
    characters are known to be equal."""
    la, lb, n = len(a), len(b), min(start, limit)
    while n < limit:
        step = min(_BLOCK, limit - n)
        if a[la - n - step:la - n] != b[lb - n - step:lb - n]:
            break
        n += step
    if n >= limit:
        return limit
    while n < limit and a[la - 1 - n] == b[lb - 1 - n]:
        n += 1
    return n


def _boundary_back(text: str, pos: int, unit: str) -> int:
    """``pos`` moved back to a token start (a line start, or just after whitespace)."""
    floor = max(0, pos - KEEP)
    if unit == "line":
        cut = text.rfind("\n", floor, pos)
    else:
        cut = max(text.rfind(" ", floor, pos), text.rfind("\n", floor, pos), text.rfind("\t", floor, pos))
    return cut + 1 if cut >= 0 else floor


def _boundary_forward(text: str, pos: int, unit: str) -> int:
    """``pos`` (a start of the common tail) moved forward to a token start."""
    ceiling = min(len(text), pos + KEEP)
    if unit == "line":
        cut = text.find("\n", pos, ceiling)
        return cut + 1 if cut >= 0 else ceiling
    cuts = [c for c in (text.find(" ", pos, ceiling), text.find("\n", pos, ceiling),
                        text.find("\t", pos, ceiling)) if c >= 0]
    return min(cuts) if cuts else ceiling


def _huge_delta(old: str, new: str) -> TextDelta:
    """``text_delta`` of huge strings: block-compared ends, elided unchanged runs."""
    return huge_delta_at(old, new)


def huge_delta_at(old: str, new: str, same_head: int = 0, same_tail: int = 0) -> TextDelta:
    """``_huge_delta`` of two strings whose first ``same_head`` and last ``same_tail``
    characters are known to be equal (``inspector.diff.huge_text`` passes excerpts of
    strings it never holds whole: only the text near the change is read here)."""
    unit = "line" if (old.find("\n", 0, HUGE_TEXT) >= 0 or new.find("\n", 0, HUGE_TEXT) >= 0) else "word"
    head = common_prefix(old, new, same_head)
    tail = common_suffix(old, new, min(len(old), len(new)) - head, same_tail)
    head = _boundary_back(old, head, unit)
    start_tail = _boundary_forward(old, len(old) - tail, unit)
    tail = min(tail, len(old) - start_tail) if start_tail < len(old) else 0
    tail = max(0, min(tail, len(new) - head, len(old) - head))
    mid_old, mid_new = old[head:len(old) - tail], new[head:len(new) - tail]
    segments: list[tuple[str, str]] = []
    if head > KEEP:
        segments.append((ELIDED, str(head - KEEP)))
    _add(segments, "=", old[max(0, head - KEEP):head])
    if len(mid_old) > HUGE_MIDDLE or len(mid_new) > HUGE_MIDDLE:
        _add(segments, "-", mid_old)
        _add(segments, "+", mid_new)
    else:
        for tag, text in _small_delta(mid_old, mid_new, unit).segments:
            if tag == "=" and len(text) > 2 * KEEP:
                _add(segments, "=", text[:KEEP])
                segments.append((ELIDED, str(len(text) - 2 * KEEP)))
                _add(segments, "=", text[-KEEP:])
            else:
                _add(segments, tag, text)
    _add(segments, "=", old[len(old) - tail:len(old) - tail + KEEP] if tail else "")
    if tail > KEEP:
        segments.append((ELIDED, str(tail - KEEP)))
    return TextDelta(unit, tuple(segments))


def elided(delta: TextDelta) -> bool:
    """True when some unchanged text of ``delta`` was not kept (huge strings)."""
    return any(tag == ELIDED for tag, _ in delta.segments)


def text_delta(old: str, new: str) -> TextDelta:
    """The token-level diff of two strings as ordered segments ('=', '-', '+'; and ``ELIDED``
    for unchanged runs of huge strings, see the module docstring)."""
    if len(old) >= HUGE_TEXT or len(new) >= HUGE_TEXT:
        return _huge_delta(old, new)
    return _small_delta(old, new, choose_unit(old, new))


def _small_delta(old: str, new: str, unit: str) -> TextDelta:
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
        if tag == ELIDED:
            out.append(f"…({int(text):,} unchanged chars)…")
            continue
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
