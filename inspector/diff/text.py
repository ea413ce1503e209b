"""Line- and word-level diff of long strings (difflib on tokens, trimmed ends first).

In a line diff each changed line is one line removed and one added, as difflib counts lines
(``TextDelta.added`` and ``removed`` count the lines of the '+' and '-' segments): an edited
line is its unchanged words around one changed span, the line end both sides share outside it.

Huge strings (``HUGE_TEXT`` characters or more, e.g. a 200 MB document) are never tokenized
whole: their common head and tail are found by comparing 64 KB blocks, only the differing
middle (plus a little context) is diffed by tokens, and unchanged runs longer than
``2 * KEEP`` characters are kept as ``KEEP`` characters of context next to the change and an
``ELIDED`` segment (``("…", "<count>")``: that many unchanged characters not kept; in a line
diff the context kept is whole lines). A middle over ``HUGE_MIDDLE`` characters is one
replaced region, not tokenized.
"""

from __future__ import annotations

import re
from collections import Counter

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
    lines = unit == "line"
    keep_from = _line_after(old, max(0, head - KEEP), head) if lines else max(0, head - KEEP)
    if keep_from:
        segments.append((ELIDED, str(keep_from)))
    _add(segments, "=", old[keep_from:head])
    if len(mid_old) > HUGE_MIDDLE or len(mid_new) > HUGE_MIDDLE:
        _add(segments, "-", mid_old)
        _add(segments, "+", mid_new)
    else:
        for tag, text in _small_delta(mid_old, mid_new, unit).segments:
            if tag == "=" and len(text) > 2 * KEEP:
                first = _line_before(text, 0, KEEP) if lines else KEEP
                last = _line_after(text, len(text) - KEEP, len(text)) if lines else len(text) - KEEP
                _add(segments, "=", text[:first])
                segments.append((ELIDED, str(last - first)))
                _add(segments, "=", text[last:])
            else:
                _add(segments, tag, text)
    start = len(old) - tail
    keep_to = min(len(old), start + KEEP)
    if lines and keep_to < len(old):
        keep_to = _line_before(old, start, keep_to)
    _add(segments, "=", old[start:keep_to])
    if keep_to < len(old):
        segments.append((ELIDED, str(len(old) - keep_to)))
    return TextDelta(unit, tuple(segments))


def _line_after(text: str, pos: int, limit: int) -> int:
    """The first line start at or after ``pos`` (before ``limit``), else ``pos``: context kept
    beside a change in huge text starts with a whole line."""
    if pos == 0:
        return 0
    cut = text.find("\n", pos - 1, limit)
    return cut + 1 if cut >= 0 else pos


def _line_before(text: str, pos: int, limit: int) -> int:
    """The last line start after ``pos`` and at or before ``limit``, else ``limit``: context
    kept beside a change in huge text ends with a whole line."""
    cut = text.rfind("\n", pos, limit)
    return cut + 1 if cut >= 0 else limit


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
        if tag == "equal":
            _add(segments, "=", "".join(mid_a[i1:i2]))
        elif unit == "line" and tag == "replace":
            old_lines, new_lines = mid_a[i1:i2], mid_b[j1:j2]
            if sum(map(len, old_lines)) + sum(map(len, new_lines)) <= REFINE_CHARS:
                parts = _refine(old_lines, new_lines)
            else:
                parts = _replaced_lines(old_lines, new_lines)
            for sub_tag, text in parts:
                _add(segments, sub_tag, text)
        else:
            _add(segments, "-", "".join(mid_a[i1:i2]))
            _add(segments, "+", "".join(mid_b[j1:j2]))
    _add(segments, "=", "".join(a[len(a) - end:]))
    return TextDelta(unit, tuple(segments))


# A line diff says which lines changed: each changed line is one removed and one added line
# (as difflib and git count them), so every changed line gets exactly one '-' and one '+'
# segment. An edited line keeps what did not change around one changed span inside it, and a
# line end common to both sides stays outside the change.
_LINE_ENDS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")   # str.splitlines' line ends
_PAIR_SEARCH = 400      # replaced blocks up to this many old x new lines look for the best pairs


def _line_end(line: str) -> str:
    """The line end a line (from ``splitlines(keepends=True)``) ends with, or ''."""
    if line.endswith("\r\n"):
        return "\r\n"
    return line[-1] if line and line[-1] in _LINE_ENDS else ""


def _likeness(old: str, new: str) -> float:
    """difflib's ``quick_ratio`` of two lines (the characters they share, in any order), 0
    at once when their lengths alone rule out half of them alike."""
    total = len(old) + len(new)
    if not total:
        return 1.0
    if 4 * min(len(old), len(new)) < total:     # even all of the shorter one shared: under 0.5
        return 0.0
    shared = Counter(old) & Counter(new)
    return 2 * sum(shared.values()) / total


def _pairs(old_lines: list[str], new_lines: list[str]) -> list[tuple[int, int]]:
    """Which replaced lines are edits of which (in order): the same places when as many lines
    were replaced, else the most alike pairs first (as ndiff pairs them, in small blocks)."""
    if len(old_lines) == len(new_lines) or len(old_lines) * len(new_lines) > _PAIR_SEARCH:
        return [(i, i) for i, (old, new) in enumerate(zip(old_lines, new_lines, strict=False))
                if _likeness(old, new) >= 0.5]
    alike = {(i, j): ratio for i, old in enumerate(old_lines) for j, new in enumerate(new_lines)
             if (ratio := _likeness(old, new)) >= 0.5}
    out: list[tuple[int, int]] = []
    stack = [(0, len(old_lines), 0, len(new_lines))]
    while stack:
        lo_a, hi_a, lo_b, hi_b = stack.pop()
        inside = [(-ratio, i, j) for (i, j), ratio in alike.items() if lo_a <= i < hi_a and lo_b <= j < hi_b]
        if inside:
            _, i, j = min(inside)
            out.append((i, j))
            stack += [(lo_a, i, lo_b, j), (i + 1, hi_a, j + 1, hi_b)]
    return sorted(out)


def _refine(old_lines: list[str], new_lines: list[str]) -> list[tuple[str, str]]:
    """Replaced lines: each edited line with its change inside it, the others replaced whole."""
    out: list[tuple[str, str]] = []
    i = j = 0
    for pi, pj in [*_pairs(old_lines, new_lines), (len(old_lines), len(new_lines))]:
        out += _replaced_lines(old_lines[i:pi], new_lines[j:pj])
        if pi < len(old_lines):
            out += _edited_line(old_lines[pi], new_lines[pj])
        i, j = pi + 1, pj + 1
    return out


def _replaced_lines(old_lines: list[str], new_lines: list[str]) -> list[tuple[str, str]]:
    """Whole lines removed and added; the last line end, when both sides share it, unchanged."""
    old, new = "".join(old_lines), "".join(new_lines)
    if not old or not new:
        return [(tag, text) for tag, text in (("-", old), ("+", new)) if text]
    end = _line_end(old)
    if not end or end != _line_end(new) or len(old) == len(end) or len(new) == len(end):
        return [("-", old), ("+", new)]
    return [("-", old[:-len(end)]), ("+", new[:-len(end)]), ("=", end)]


def _edited_line(old: str, new: str) -> list[tuple[str, str]]:
    """One edited line: its unchanged words around one changed span (a word inserted or
    deleted takes its neighbour word in, so the line reads as one removed and one added)."""
    old_end, new_end = _line_end(old), _line_end(new)
    end = old_end if old_end == new_end else ""      # a line end that changed is part of the change
    a = tokens(old[:len(old) - len(end)], "word")
    b = tokens(new[:len(new) - len(end)], "word")
    if a == b:
        return [("=", old)]
    limit = min(len(a), len(b))
    p = 0
    while p < limit and a[p] == b[p]:
        p += 1
    s = 0
    while s < limit - p and a[-1 - s] == b[-1 - s]:
        s += 1
    if p + s in (len(a), len(b)):        # nothing left on one side
        longer = b if p + s == len(a) else a
        while p > 0 and longer[len(longer) - s - 1].isspace() and longer[len(longer) - s - 1] == longer[p - 1]:
            p, s = p - 1, s + 1          # "b [X ]b" reads "b[ X] b": the space before the word
        if p > 0:                        # the word before it
            p -= 1
            if a[p].isspace() and p > 0:
                p -= 1
            while p > 0 and not a[p - 1].isspace():
                p -= 1
        elif s > 0:                      # at the line's start: the word after it
            s -= 1
            if a[len(a) - 1 - s].isspace() and s > 0:
                s -= 1
            while s > 0 and not a[len(a) - s].isspace():
                s -= 1
        else:                            # an empty line: replaced whole
            return [("-", old), ("+", new)]
    out = [("=", "".join(a[:p])), ("-", "".join(a[p:len(a) - s])), ("+", "".join(b[p:len(b) - s])),
           ("=", "".join(a[len(a) - s:]) + end)]
    return [(tag, text) for tag, text in out if text]


def _add(segments: list[tuple[str, str]], tag: str, text: str) -> None:
    if not text:
        return
    if segments and segments[-1][0] == tag:
        segments[-1] = (tag, segments[-1][1] + text)
    else:
        segments.append((tag, text))


CONTEXT_LINES = 2          # whole unchanged lines render_delta shows on each side of a change


def render_delta(delta: TextDelta, context: int = 40, max_segment: int = 300) -> str:
    """A compact one-string rendering: ``context [-old-]{+new+} context``, where what is left
    out says what it was: ``…(1,233 unchanged lines)…`` in a line diff (whole lines of context,
    each cut at ``2 * context`` characters), ``…(5,000 unchanged chars)…`` otherwise."""
    out: list[str | list] = []      # text, or [lines or None, chars] not shown
    segments = delta.segments
    changed = [index for index, (tag, _) in enumerate(segments) if tag in "-+"]
    first, last = (changed[0], changed[-1]) if changed else (len(segments), -1)
    for index, (tag, text) in enumerate(segments):
        if tag == ELIDED:
            _skip(out, None, int(text))
        elif tag in "-+":
            if len(text) > max_segment:
                text = f"{text[:max_segment]}…({len(text) - max_segment} more chars)"
            out.append(f"[-{text}-]" if tag == "-" else f"{{+{text}+}}")
        elif delta.unit == "line":
            at_line_start = index == 0 or segments[index - 1][0] == ELIDED or bool(_line_end(segments[index - 1][1]))
            _context_lines(out, text, at_line_start, index > first, index < last, 2 * context)
        elif len(text) > 2 * context:
            head = text[:context] if index > first else ""
            tail = text[-context:] if index < last else ""
            out.append(head)
            _skip(out, None, len(text) - len(head) - len(tail))
            out.append(tail)
        else:
            out.append(text)
    while out and out[-1] == "":
        out.pop()
    lines = delta.unit == "line"
    return "".join(part if isinstance(part, str) else _skipped(part, lines and at < len(out) - 1)
                   for at, part in enumerate(out))


def _context_lines(out: list[str | list], text: str, at_line_start: bool, after: bool, before: bool,
                   width: int) -> None:
    """Unchanged text of a line diff: the rest of a changed line, ``CONTEXT_LINES`` whole lines
    after a change and before the next one, the start of the next changed line; the lines
    between are counted, not shown."""
    lines = text.splitlines(keepends=True)
    lead = lines.pop(0) if lines and not at_line_start else ""
    trail = lines.pop() if lines and before and not _line_end(lines[-1]) else ""
    head = lines[:CONTEXT_LINES] if after else []
    tail = lines[len(head):][-CONTEXT_LINES:] if before else []
    hidden = lines[len(head):len(lines) - len(tail)]
    out.append(_clip(lead, width) + "".join(_clip(line, width) for line in head))
    if hidden:
        _skip(out, len(hidden), sum(map(len, hidden)))
    out.append("".join(_clip(line, width) for line in tail) + _clip(trail, width, keep_end=True))


def _clip(line: str, width: int, keep_end: bool = False) -> str:
    """A line cut at ``width`` characters (its end kept), saying how many more it has."""
    end = _line_end(line)
    body = line[:len(line) - len(end)]
    if len(body) <= width:
        return line
    if keep_end:
        return f"({len(body) - width:,} more chars)…{body[-width:]}{end}"
    return f"{body[:width]}…({len(body) - width:,} more chars){end}"


def _skip(out: list[str | list], lines: int | None, chars: int) -> None:
    """Text not shown, joined with text not shown just before it (lines, if both are lines)."""
    while out and out[-1] == "":
        out.pop()
    if not chars:
        return
    if out and isinstance(out[-1], list):
        before = out[-1]
        before[0] = None if before[0] is None or lines is None else before[0] + lines
        before[1] += chars
    else:
        out.append([lines, chars])


def _skipped(part: list, own_line: bool) -> str:
    lines, chars = part
    said = f"…({lines:,} unchanged line{'s' * (lines != 1)})…" if lines is not None else f"…({chars:,} unchanged chars)…"
    return said + "\n" if own_line else said
