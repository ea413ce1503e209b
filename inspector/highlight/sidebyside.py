"""Align two highlighted texts line by line for a side-by-side diff (Qt-free).

Each side gets filler lines where the other side has extra lines, so line *i* of the left
view sits beside line *i* of the right one and scrolling can be synchronised 1:1.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field

from inspector.highlight.spans import Span

EQUAL, REMOVED, ADDED, CHANGED, FILLER = "equal", "removed", "added", "changed", "filler"
EXACT_LIMIT = 4000   # middle sizes above this let difflib treat popular lines as junk


@dataclass
class Side:
    """One column of a side-by-side view: text, spans and paths per line, line tags and numbers."""

    lines: list[str] = field(default_factory=list)
    spans: list[list[Span]] = field(default_factory=list)
    paths: list[tuple | None] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    numbers: list[int | None] = field(default_factory=list)   # 1-based source line, None for fillers

    @property
    def text(self) -> str:
        """The aligned text (fillers are empty lines)."""
        return "\n".join(self.lines)

    def add(self, line: str, spans: list[Span], path: tuple | None, tag: str, number: int | None) -> None:
        """Append one aligned line."""
        self.lines.append(line)
        self.spans.append(spans)
        self.paths.append(path)
        self.tags.append(tag)
        self.numbers.append(number)


@dataclass
class SideBySide:
    """Both aligned sides and where the differing hunks start (aligned line numbers)."""

    left: Side
    right: Side
    hunks: list[int]


def _trim(a: list[str], b: list[str]) -> tuple[int, int]:
    limit = min(len(a), len(b))
    start = 0
    while start < limit and a[start] == b[start]:
        start += 1
    end = 0
    while end < limit - start and a[-1 - end] == b[-1 - end]:
        end += 1
    return start, end


def align(left: tuple[list[str], list[list[Span]], list[tuple]],
          right: tuple[list[str], list[list[Span]], list[tuple]],
          cancel: Callable[[], bool] | None = None) -> SideBySide:
    """Align (lines, per-line spans, per-line paths) of the old and new texts."""
    a, a_spans, a_paths = left
    b, b_spans, b_paths = right
    # A trailing comma only says whether a sibling follows: ignore it when matching lines.
    ka, kb = [line.rstrip(",") for line in a], [line.rstrip(",") for line in b]
    start, end = _trim(ka, kb)
    opcodes: list[tuple[str, int, int, int, int]] = [("equal", 0, start, 0, start)]
    mid_a, mid_b = ka[start:len(a) - end], kb[start:len(b) - end]
    if cancel is not None and cancel():
        raise InterruptedError("alignment cancelled")
    if mid_a or mid_b:
        junk = len(mid_a) + len(mid_b) > EXACT_LIMIT
        matcher = difflib.SequenceMatcher(None, mid_a, mid_b, autojunk=junk)
        opcodes += [(tag, i1 + start, i2 + start, j1 + start, j2 + start)
                    for tag, i1, i2, j1, j2 in matcher.get_opcodes()]
    opcodes.append(("equal", len(a) - end, len(a), len(b) - end, len(b)))
    out = SideBySide(Side(), Side(), [])
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                out.left.add(a[i], a_spans[i], a_paths[i], EQUAL, i + 1)
                out.right.add(b[j], b_spans[j], b_paths[j], EQUAL, j + 1)
            continue
        if i2 > i1 or j2 > j1:
            out.hunks.append(len(out.left.lines))
        left_tag = CHANGED if tag == "replace" else REMOVED
        right_tag = CHANGED if tag == "replace" else ADDED
        for k in range(max(i2 - i1, j2 - j1)):
            i, j = i1 + k, j1 + k
            if i < i2:
                out.left.add(a[i], a_spans[i], a_paths[i], left_tag, i + 1)
            else:
                out.left.add("", [], None, FILLER, None)
            if j < j2:
                out.right.add(b[j], b_spans[j], b_paths[j], right_tag, j + 1)
            else:
                out.right.add("", [], None, FILLER, None)
    return out
