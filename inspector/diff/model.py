"""Frozen result types of a diff: changes, their details, task changes and the whole result."""

from __future__ import annotations

import math
import re
from typing import Any
from collections.abc import Callable

from inspector.diff.preview import preview_pair, short_repr
from inspector.errors import StoreError
from inspector.model import CheckpointInfo, Record, field

ADDED = "added"
REMOVED = "removed"
CHANGED = "changed"
MOVED = "moved"
OPS = (ADDED, REMOVED, CHANGED, MOVED)

CancelFn = Callable[[], bool]
ProgressFn = Callable[[str, int], None]
"""``progress(stage, done)``: stage is "loading", "diffing", "tasks" or "ancestor"; done counts work."""

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_WORD = re.compile(r"\w+|[^\w\s]")


class DiffCancelled(Exception):
    """Raised inside a diff when its ``cancel`` callable returned True."""


class DiffError(StoreError):
    """Two values cannot be compared (absurdly deep nesting, broken references)."""


class TextDelta(Record, slots=True):
    """A line- or word-level diff of two long strings: segments of ('=', '-', '+', text).

    In huge strings (``inspector.diff.text.HUGE_TEXT``) long unchanged runs are a segment
    ``("…", "<count>")`` instead: that many unchanged characters, not kept."""

    unit: str                               # "line" | "word"
    segments: tuple[tuple[str, str], ...]   # (tag, text) with tag '=', '-', '+' or '…'

    @property
    def added(self) -> int:
        """How many lines or words were added."""
        return sum(_units(text, self.unit) for tag, text in self.segments if tag == "+")

    @property
    def removed(self) -> int:
        """How many lines or words were removed."""
        return sum(_units(text, self.unit) for tag, text in self.segments if tag == "-")


def _units(text: str, unit: str) -> int:
    if unit == "line":
        if len(text) < 1_000_000:
            return len(text.splitlines()) or 1
        return (text.count("\n") + (not text.endswith("\n"))) or 1   # no list of a huge text's lines
    return sum(1 for _ in _WORD.finditer(text)) or 1


class NumberDelta(Record, slots=True):
    """The difference new - old of two numbers."""

    delta: int | float

    def text(self) -> str:
        """The signed difference as people read it: ``+1``, ``-3,000,000``, ``+0.25``."""
        delta = self.delta
        if isinstance(delta, int):
            return f"{delta:+,}"
        if 1e6 <= abs(delta) < 1e18:
            return f"{delta:+,.0f}"
        return f"{delta:+g}"


class Move(Record, slots=True):
    """A list item that moved from old index ``source`` to new index ``target``."""

    source: int
    target: int


Detail = TextDelta | NumberDelta | Move | None


def format_path(path: tuple) -> str:
    """A display form of a path: ``messages[501].content``; the root is ``(root)``."""
    if not path:
        return "(root)"
    out: list[str] = []
    for part in path:
        if isinstance(part, int) and not isinstance(part, bool):
            out.append(f"[{part}]")
        elif isinstance(part, str) and _IDENT.match(part):
            out.append(f".{part}" if out else part)
        else:
            out.append(f"[{part!r}]")
    return "".join(out)


_NAME_AT = re.compile(r"\.?([A-Za-z_][A-Za-z0-9_]*)")
_KEY_TYPES = (str, int, float, bytes, bool, type(None))


def read_path(text: str) -> tuple | None:
    """The path ``format_path`` printed as ``text`` (``files[b'x']``, ``pairs[(1, 'a')]``,
    ``flags[True]``: any key a state holds, written as Python writes it), or None when it is
    not one. A bracket is read as a literal alone (``ast.literal_eval``: nothing is run)."""
    import ast

    parts: list = []
    pos = 0
    while pos < len(text):
        name = _NAME_AT.match(text, pos)
        if name is not None and (text[pos] == "." or pos == 0) and not (pos == 0 and text[0] == "."):
            parts.append(name.group(1))
            pos = name.end()
            continue
        if text[pos] != "[":
            return None
        end = text.find("]", pos)
        while end >= 0:          # the first "]" that closes a literal (a key may hold "]")
            try:
                key = ast.literal_eval(text[pos + 1:end])
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                end = text.find("]", end + 1)
                continue
            if not _is_key(key):
                return None
            parts.append(key)
            pos = end + 1
            break
        else:
            return None
    return tuple(parts) if parts else None


def _is_key(key: Any) -> bool:
    """Whether a literal is a key a state's map can hold: a scalar, or a tuple of keys."""
    if type(key) is tuple:
        return all(map(_is_key, key))
    return type(key) in _KEY_TYPES


def number_note(old: Any, new: Any, delta: NumberDelta) -> str:
    """What a changed number's line adds in brackets: the difference (``(+2)``), the type when
    it changed (``(int → float)`` for ``1 → 1.0``, ``(+0.5, int → float)``), and no difference
    when a side is not finite (``1.5 → nan`` has none worth printing); "" when nothing is left."""
    kinds = f"{type(old).__name__} → {type(new).__name__}" if type(old) is not type(new) else ""
    finite = not any(isinstance(v, float) and not math.isfinite(v) for v in (old, new))
    said = [delta.text()] if finite and (delta.delta or not kinds) else []
    said += [kinds] if kinds else []
    return f"({', '.join(said)})" if said else ""


class Change(Record, slots=True):
    """One structural change at ``path`` (tuple of dict keys and list indices).

    List indices follow the new list, except for ``removed`` items (old index). A moved
    item has ``detail=Move(source, target)``, ``old`` the item where it was and ``new`` where
    it is: equal, or (an item with the same id, edited on the way) followed by the changes
    inside it at its new index.
    """

    path: tuple
    op: str
    old: Any = None
    new: Any = None
    detail: Detail = None

    @property
    def display_path(self) -> str:
        """The path as ``messages[501].content``."""
        return format_path(self.path)

    def describe(self) -> str:
        """One line for a terminal or a list view."""
        where = self.display_path
        if self.op == ADDED:
            return f"+ {where} = {short_repr(self.new)}"
        if self.op == REMOVED:
            return f"- {where} (was {short_repr(self.old)})"
        if self.op == MOVED and isinstance(self.detail, Move):
            return f"↕ {where} moved from [{self.detail.source}] to [{self.detail.target}]"
        if isinstance(self.detail, NumberDelta):
            note = number_note(self.old, self.new, self.detail)
            return f"~ {where}: {short_repr(self.old)} → {short_repr(self.new)}{_spaced(note)}"
        if isinstance(self.detail, TextDelta):
            d = self.detail
            return f"~ {where}: text, +{d.added} -{d.removed} {d.unit}s"
        old, new, note = preview_pair(self.old, self.new, short_repr)
        return f"~ {where}: {old} → {new}{_spaced(note)}"


def _spaced(note: str) -> str:
    return f" {note}" if note else ""


class TaskChange(Record, slots=True):
    """One semantic change of the task state.

    ``kind`` is one of: added, removed, status, progress, review, check, check_added,
    check_removed, title, goal. ``name`` is the check's name for check kinds; ``reviewer``
    the reviewer after a review transition; ``regression`` flags a check going pass → fail
    (or a done task going back).
    """

    task_id: str
    title: str
    kind: str
    old: Any = None
    new: Any = None
    name: str | None = None
    reviewer: str | None = None
    regression: bool = False

    def describe(self) -> str:
        """One line, e.g. ``task 3 'draft': in_progress → done``."""
        who = f"task {self.task_id} {self.title!r}" if self.title != self.task_id else f"task {self.task_id!r}"
        flag = "  [REGRESSION]" if self.regression else ""
        if self.kind == "added":
            return f"+ {who} ({self.new})"
        if self.kind == "removed":
            return f"- {who} (was {self.old})"
        if self.kind == "goal":
            return f"~ goal: {self.old!r} → {self.new!r}"
        if self.kind == "status":
            return f"~ {who}: {self.old} → {self.new}{flag}"
        if self.kind == "progress":
            delta = (self.new or 0) - (self.old or 0)
            return f"~ {who}: progress {self.old:.0%} → {self.new:.0%} ({delta:+.0%})"
        if self.kind == "review":
            by = f" by {self.reviewer}" if self.reviewer else ""
            return f"~ {who}: review {self.old} → {self.new}{by}"
        if self.kind == "check" and self.old == self.new:
            return f"~ {who}: check {self.name!r} detail changed ({_check_word(self.new)})"
        if self.kind == "check":
            return f"~ {who}: check {self.name!r} {_check_word(self.old)} → {_check_word(self.new)}{flag}"
        if self.kind == "check_added":
            return f"+ {who}: check {self.name!r} ({_check_word(self.new)})"
        if self.kind == "check_removed":
            return f"- {who}: check {self.name!r} (was {_check_word(self.old)})"
        return f"~ {who}: {self.kind} {self.old} → {self.new}{flag}"


def _check_word(passed: Any) -> str:
    return {True: "pass", False: "fail", None: "not run"}.get(passed, str(passed))


class ThreeWay(Record, slots=True):
    """Where two branches diverged: changes from the common ancestor to each side."""

    ancestor: CheckpointInfo
    to_a: tuple[Change, ...]
    to_b: tuple[Change, ...]

    @property
    def both_changed(self) -> tuple[tuple, ...]:
        """Paths the two branches changed differently since the ancestor (possible conflicts);
        a change made identically on both sides is not one."""
        left = {c.path: (c.op, c.new) for c in self.to_a}
        paths = {c.path for c in self.to_b if c.path in left and not _same_change(left[c.path], c)}
        return tuple(sorted(paths, key=path_sort_key))


def _same_change(left: tuple, change: Change) -> bool:
    try:
        return left == (change.op, change.new)
    except RecursionError:
        return False


def path_sort_key(path: tuple) -> tuple:
    """Orders paths naturally: list indices numerically, keys by text."""
    return tuple((0, part, "") if isinstance(part, int) else (1, 0, str(part)) for part in path)


class DiffResult(Record):
    """Everything a diff of two snapshots found."""

    changes: tuple[Change, ...]
    task_changes: tuple[TaskChange, ...] = ()
    summary: str = ""
    a: CheckpointInfo | None = None
    b: CheckpointInfo | None = None
    ancestor: CheckpointInfo | None = None
    three_way: ThreeWay | None = None
    stats: dict = field(default_factory=dict)
    # LangGraph's own channels (``__start__``, ``branch:to:*``…: not part of the state shown)
    # whose values differ between the two checkpoints, by name
    hidden: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        """True when the two snapshots are equal in state and task state."""
        return not self.changes and not self.task_changes
