"""Windows of big states around their changes, for a side-by-side text that stays small.

A state with a 3,000,000-item list, a 1,000,000-key map or a 200 MB string cannot be shown
whole as text (millions of lines, gigabytes of layout). ``window`` copies only what lies on
the way to the changes of a diff, with ``CONTEXT`` neighbours each side of a changed item;
every run of items it leaves out becomes one placeholder (``⋯ 1,499,996 unchanged items ⋯``),
containers off the way show their first ``OFF_PATH_ITEMS`` items, and long strings show the
changed region (from the diff's text delta, as lines of ``WRAP`` characters: a list of the
string's lines) or their head. ``Window.real_path`` maps a path in the copy back to the state's
path (list indices shift where items were left out; a string's lines map to the string).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Iterable

from inspector.codec import ChunkedList, ChunkedMap, Ref
from inspector.diff.model import TextDelta
from inspector.diff.piece_view import PieceView
from inspector.diff.text import ELIDED
from inspector.lazy import Blocked, LazyText, LazyValue

CONTEXT = 3               # unchanged neighbours shown each side of a changed item
OFF_PATH_ITEMS = 8        # items of a container off the way to a change
OFF_PATH_DEPTH = 4        # levels of such a container shown
STRING_CHARS = 2_000      # characters of an unchanged long string shown
CHANGED_CHARS = 20_000    # characters of one changed passage of a long string shown (longer: its two ends)
SIDE_CHARS = 400_000      # characters of a long string's changes shown in all (later changes: one line)
WRAP = 100                # a changed long string is shown in lines of this many characters (default)
MAX_CHANGES = 500         # changes a window is built around (the change list has them all)
MAX_DEPTH = 200           # deeper than this, a subtree is one placeholder
BIG_NODES = 50_000        # ``is_big``: states with more values than this are windowed
BIG_CHARS = 2_000_000     # … or with more characters of strings than this
_END = object()           # trie key: a change is at this path


def _gap(count: int, what: str, out: Window) -> str:
    """The placeholder of ``count`` values left out: unchanged ones, unless the window left
    changes out too (more than ``MAX_CHANGES``: some of these may be among them)."""
    plural = "s" if count != 1 else ""
    if out.omitted_changes:
        return f"⋯ {count:,} {what}{plural} not shown ⋯"
    return f"⋯ {count:,} unchanged {what}{plural} ⋯"


@dataclass
class Window:
    """The windowed copy of a state and how its list positions map back."""

    value: Any
    index_maps: dict[tuple, list[int | None]] = field(default_factory=dict)
    changes: int = 0          # changes the window was built around
    omitted_changes: int = 0  # changes beyond MAX_CHANGES (not windowed)
    source: PieceView | None = field(default=None, repr=False, compare=False)   # reads markers
    wrap: int = WRAP          # characters per line of a changed long string
    wrapped: bool = False     # some changed long string is shown as a list of its lines

    def real_path(self, shown: tuple) -> tuple:
        """The state's path of a path in the copy (a placeholder: its container's path)."""
        real: tuple = ()
        for part in shown:
            mapping = self.index_maps.get(real)
            if mapping is not None and isinstance(part, int):
                if not 0 <= part < len(mapping) or mapping[part] is None:
                    return real
                part = mapping[part]
            real = (*real, part)
        return real


def is_big(value: Any, nodes: int = BIG_NODES, chars: int = BIG_CHARS) -> bool:
    """True when ``value`` holds more than ``nodes`` values or ``chars`` characters of text
    (stops counting as soon as it knows)."""
    stack = [value]
    seen = total = 0
    while stack:
        item = stack.pop()
        seen += 1
        if isinstance(item, dict):
            seen += len(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            total += len(item)
        elif isinstance(item, LazyValue):      # kept encoded because it is big
            return True
        if seen + len(stack) > nodes or total > chars:
            return True
    return False


def _trie(paths: Iterable[tuple]) -> dict:
    root: dict = {}
    for path in paths:
        node = root
        for part in path:
            node = node.setdefault(part, {})
        node[_END] = True
    return root


def window(value: Any, changes: Iterable[Any], side: str, source: PieceView | None = None,
           wrap: int = WRAP) -> Window:
    """The part of ``value`` (the ``side`` "old" or "new" of a diff) around ``changes``
    (``Change`` objects: ``path``, ``detail``).

    With ``source``, ``value`` may be a stored form holding markers (a Ref, a chunked list
    or map): only the pieces holding what is shown are read from it. ``wrap``: characters per
    line of a changed long string (the width of the view that shows it)."""
    changes = list(changes)
    used = changes[:MAX_CHANGES]
    deltas = {tuple(c.path): c.detail for c in used if isinstance(c.detail, TextDelta)}
    out = Window(None, changes=len(used), omitted_changes=len(changes) - len(used), source=source,
                 wrap=max(20, wrap))
    out.value = _cut(value, _trie(tuple(c.path) for c in used), (), deltas, side, out, 0)
    return out


def _cut(value: Any, trie: dict | None, path: tuple, deltas: dict, side: str, out: Window, depth: int) -> Any:
    if depth > MAX_DEPTH:
        return _gap(1, "deeper value", out)
    delta = deltas.get(path) if trie is not None and trie.get(_END) and len(trie) == 1 else None
    if delta is not None and (isinstance(value, (str, LazyText)) or (out.source is not None and type(value) is Ref)):
        shown = _text_side(delta, side, out.wrap)  # (a text delta is only ever made for two strings)
        if isinstance(shown, list):         # its lines all stand for the string itself
            out.index_maps[path] = [None] * len(shown)
            out.wrapped = True
        return shown
    if out.source is not None:
        value = out.source.deref(value)
    if trie is None or (trie.get(_END) and len(trie) == 1):
        return _bounded(value, OFF_PATH_DEPTH if trie is None else OFF_PATH_DEPTH + 2, path, out)
    if isinstance(value, (list, ChunkedList)) or isinstance(value, Blocked) and value.kind == "array":
        return _cut_list(value, trie, path, deltas, side, out, depth)
    if isinstance(value, (dict, ChunkedMap)) or isinstance(value, Blocked) and value.kind == "object":
        return _cut_dict(value, trie, path, deltas, side, out, depth)
    return _bounded(value, 0, path, out)


def _lazy_entries(value: LazyValue, wanted: list[int]) -> dict[int, Any]:
    """Position → entry ((position, item) of an array, (key, value) of a map) of the
    ``wanted`` positions, read a run of neighbours at a time."""
    found: dict[int, Any] = {}
    runs: list[list[int]] = []
    for i in wanted:
        if runs and i == runs[-1][1]:
            runs[-1][1] = i + 1
        else:
            runs.append([i, i + 1])
    for lo, hi in runs:
        for n, entry in enumerate(value.entries(lo, hi)):
            found[lo + n] = entry
    return found


def _wanted(positions: Iterable[int], length: int) -> list[int]:
    keep: set[int] = set()
    for i in positions:
        keep.update(range(max(0, i - CONTEXT), min(length, i + CONTEXT + 1)))
    return sorted(keep)


def _cut_list(value: list | ChunkedList | Blocked, trie: dict, path: tuple, deltas: dict, side: str, out: Window,
              depth: int) -> list:
    n = value.length if isinstance(value, (ChunkedList, LazyValue)) else len(value)
    marks = [k for k in trie if isinstance(k, int) and 0 <= k < n]
    marks += [n - 1] if any(isinstance(k, int) and k >= n for k in trie) and n else []   # appended items
    wanted = _wanted(marks, n)
    items: Any = value
    if isinstance(value, LazyValue):
        items = {i: v for i, (_, v) in _lazy_entries(value, wanted).items()}
    elif isinstance(value, ChunkedList):
        assert out.source is not None   # a marker comes only from a stored form
        items = out.source.list_items(value, wanted)
    shown: list = []
    mapping: list[int | None] = []
    last = -1
    for i in wanted:
        if i > last + 1:
            shown.append(_gap(i - last - 1, "item", out))
            mapping.append(None)
        shown.append(_cut(items[i], trie.get(i), (*path, i), deltas, side, out, depth + 1))
        mapping.append(i)
        last = i
    if last < n - 1:
        shown.append(_gap(n - 1 - last, "item", out))
        mapping.append(None)
    out.index_maps[path] = mapping
    return shown


def _cut_dict(value: dict | ChunkedMap | Blocked, trie: dict, path: tuple, deltas: dict, side: str, out: Window,
              depth: int) -> dict:
    if isinstance(value, Blocked):
        n = value.length
        marks = sorted(value.key_positions(k for k in trie if k is not _END))
        entries = _lazy_entries(value, _wanted(marks, n))
    elif isinstance(value, ChunkedMap):
        assert out.source is not None   # a marker comes only from a stored form
        n = value.length
        marks = sorted(out.source.map_positions(value, (k for k in trie if k is not _END)))
        entries = out.source.map_entries(value, _wanted(marks, n))
    else:
        n = len(value)
        keys = list(value)
        marks = [i for i, k in enumerate(keys) if k in trie or (not isinstance(k, str) and str(k) in trie)]
        entries = {i: (keys[i], value[keys[i]]) for i in _wanted(marks, n)}
    shown: dict = {}
    last = -1
    for i in sorted(entries):
        if i > last + 1:
            shown[_gap(i - last - 1, "key", out) + f" #{last + 1}"] = "⋯"
        key, item = entries[i]
        sub = trie.get(key, trie.get(str(key)) if not isinstance(key, str) else None)
        shown[key] = _cut(item, sub, (*path, key), deltas, side, out, depth + 1)
        last = i
    if last < n - 1:
        shown[_gap(n - 1 - last, "key", out) + f" #{last + 1}"] = "⋯"
    return shown


def _bounded(value: Any, levels: int, path: tuple, out: Window) -> Any:
    """A copy of a value off the way to any change: a few items per container, a few levels."""
    if out.source is not None:
        value = out.source.deref(value)
        if isinstance(value, ChunkedList):
            length = value.length
            value = out.source.list_head(value, OFF_PATH_ITEMS if levels > 0 else 0)
            return _bounded_list(value, length, levels, path, out)
        if isinstance(value, ChunkedMap):
            length = value.length
            return _bounded_dict(out.source.map_head(value, OFF_PATH_ITEMS if levels > 0 else 0), length,
                                 levels, path, out)
    if isinstance(value, LazyText):
        if value.chars is None:
            return value.prefix[:STRING_CHARS] + f" ⋯ ({value.length:,} bytes in all)"
        return value.prefix[:STRING_CHARS] + f" ⋯ ({value.chars - STRING_CHARS:,} more characters)"
    if isinstance(value, LazyValue):
        head = [entry for _, entry in sorted(_lazy_entries(value, list(range(min(OFF_PATH_ITEMS, value.length)))
                                                           if levels > 0 else []).items())]
        if value.kind == "array":
            return _bounded_list([v for _, v in head], value.length, levels, path, out)
        return _bounded_dict(head, value.length, levels, path, out)
    if isinstance(value, str):
        if len(value) > STRING_CHARS:
            return value[:STRING_CHARS] + f" ⋯ ({len(value) - STRING_CHARS:,} more characters)"
        return value
    if isinstance(value, list):
        return _bounded_list(value[:OFF_PATH_ITEMS], len(value), levels, path, out)
    if isinstance(value, dict):
        return _bounded_dict(list(itertools.islice(value.items(), OFF_PATH_ITEMS)), len(value), levels, path, out)
    return value


def _bounded_list(head: list, length: int, levels: int, path: tuple, out: Window) -> list:
    """A list of ``length`` items shown by its first (``head``)."""
    if levels <= 0 and length:
        return [_gap(length, "item", out)]
    shown = [_bounded(v, levels - 1, (*path, i), out) for i, v in enumerate(head[:OFF_PATH_ITEMS])]
    if length > OFF_PATH_ITEMS:
        shown.append(_gap(length - OFF_PATH_ITEMS, "item", out))
        out.index_maps[path] = [*range(OFF_PATH_ITEMS), None]
    return shown


def _bounded_dict(head: list[tuple[Any, Any]], length: int, levels: int, path: tuple, out: Window) -> dict:
    """A map of ``length`` entries shown by its first (``head``)."""
    if levels <= 0 and length:
        return {_gap(length, "key", out): "⋯"}
    shown: dict = {k: _bounded(v, levels - 1, (*path, k), out) for k, v in head[:OFF_PATH_ITEMS]}
    if length > OFF_PATH_ITEMS:
        shown[_gap(length - OFF_PATH_ITEMS, "key", out)] = "⋯"
    return shown


def _text_side(delta: TextDelta, side: str, wrap: int = WRAP) -> str | list[str]:
    """One side of a long string's text delta: its changed regions with their context; over
    ``wrap`` characters, as a list of lines of at most ``wrap`` (each segment starts a line,
    so the context reads alike on both sides and the changed lines pair up). A changed passage
    over ``CHANGED_CHARS`` shows its two ends, and past ``SIDE_CHARS`` shown (counted over both
    sides' segments, so both stop at the same one) the rest is one line: a 1 MB text grown to
    50 MB made 800,000 lines, and the window ran out of memory drawing them."""
    skip = "+" if side == "old" else "-"
    lines: list[str] = []
    shown = 0
    for index, (tag, text) in enumerate(delta.segments):
        if shown > SIDE_CHARS:
            rest = sum(len(t) for g, t in delta.segments[index:] if g not in (ELIDED, skip))
            lines.append(_elided(rest, wrap, "more"))
            break
        if tag == ELIDED:
            lines.append(_elided(int(text), wrap))
            continue
        long = len(text) > (2 * STRING_CHARS if tag == "=" else CHANGED_CHARS)
        shown += 2 * STRING_CHARS if long else len(text)
        if tag == skip:
            continue
        if long:
            lines += [*_wrap(text[:STRING_CHARS], wrap),
                      _elided(len(text) - 2 * STRING_CHARS, wrap, "unchanged" if tag == "=" else "more changed"),
                      *_wrap(text[-STRING_CHARS:], wrap)]
        else:
            lines += _wrap(text, wrap)
    return lines if sum(map(len, lines)) > wrap else "".join(lines)


def _elided(count: int, wrap: int = WRAP, what: str = "unchanged") -> str:
    """The line standing for ``count`` characters left out: the longest wording that fits in
    ``wrap`` characters (a line wider than the others would scroll the view sideways)."""
    for text in (f" ⋯ ({count:,} {what} characters) ⋯ ", f"⋯ {count:,} {what} characters ⋯",
                 f"⋯ {count:,} {what} ⋯", f"⋯ {count:,} ⋯"):
        if len(text) <= wrap:
            return text
    return f"⋯ {count:,} ⋯"


def _wrap(text: str, wrap: int) -> list[str]:
    """``text`` cut after each line end and every ``wrap`` characters."""
    out: list[str] = []
    for line in text.splitlines(keepends=True):
        out.extend(line[i:i + wrap] for i in range(0, len(line), wrap))
    return out


__all__ = ["Window", "is_big", "window"]
