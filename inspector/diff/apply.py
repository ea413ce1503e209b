"""Apply a list of changes to a value: ``apply(a, diff_values(a, b)) == b``.

The input is never mutated: containers on the changed paths are copied (copy-on-write),
untouched subtrees are shared with the input. Containers are processed parents first,
because the indices of nested changes refer to positions in the new lists.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from inspector.diff.model import ADDED, CHANGED, MOVED, REMOVED, Change, DiffError, Move, format_path


def apply(value: Any, changes: Iterable[Change]) -> Any:
    """Return ``value`` with ``changes`` applied (a new value; the input stays as it was)."""
    groups: dict[tuple, list[Change]] = {}
    for change in changes:
        if not change.path:
            if change.op != CHANGED:
                raise DiffError("Only a 'changed' change can replace the whole value.")
            return change.new
        groups.setdefault(change.path[:-1], []).append(change)
    writer = _Writer(value)
    for container_path in sorted(groups, key=len):
        node = writer.open(container_path)
        if isinstance(node, dict):
            _apply_dict(node, groups[container_path])
        elif isinstance(node, list):
            _apply_list(node, groups[container_path])
        else:
            raise DiffError(f"A change at {format_path(container_path)} does not fit the value there.")
    return writer.root[0]


class _Writer:
    """Copy-on-write navigation from the root to a container."""

    def __init__(self, value: Any) -> None:
        self.root = [value]
        self._mine: dict[int, Any] = {}   # id -> copy we made (kept alive so ids stay unique)

    def _own(self, holder: Any, slot: Any) -> Any:
        node = holder[slot]
        if id(node) in self._mine:
            return node
        if isinstance(node, dict):
            node = dict(node)
        elif isinstance(node, (list, tuple)):
            node = list(node)
        else:
            return node
        holder[slot] = node
        self._mine[id(node)] = node
        return node

    def open(self, path: tuple) -> Any:
        node = self._own(self.root, 0)
        for depth, part in enumerate(path):
            try:
                node[part]
            except (KeyError, IndexError, TypeError) as err:
                where = format_path(path[:depth + 1])
                raise DiffError(f"A change refers to {where}, which the value does not have.") from err
            node = self._own(node, part)
        return node


def _apply_dict(node: dict, changes: list[Change]) -> None:
    for change in changes:
        key = change.path[-1]
        if change.op in (ADDED, CHANGED):
            node[key] = change.new
        elif change.op == REMOVED:
            if key not in node:
                raise DiffError(f"Cannot remove {change.display_path}: it is not there.")
            del node[key]
        else:
            raise DiffError(f"Cannot apply {change.op!r} at {change.display_path}: it is not in a list.")


def _apply_list(node: list, changes: list[Change]) -> None:
    gone: set[int] = set()
    placed: dict[int, Any] = {}
    replaced: dict[int, Any] = {}
    for change in changes:
        index = change.path[-1]
        if change.op == REMOVED:
            gone.add(index)
        elif change.op == ADDED:
            placed[index] = change.new
        elif change.op == MOVED and isinstance(change.detail, Move):
            gone.add(change.detail.source)
            placed[index] = node[change.detail.source] if change.detail.source < len(node) else change.new
        elif change.op == CHANGED:
            replaced[index] = change.new
        else:
            raise DiffError(f"Cannot apply {change.op!r} at {change.display_path}.")
    if any(not 0 <= i < len(node) for i in gone):
        raise DiffError("A list change refers to an item the list does not have.")
    kept = iter([item for i, item in enumerate(node) if i not in gone])
    size = len(node) - len(gone) + len(placed)
    out = []
    try:
        for j in range(size):
            out.append(placed[j] if j in placed else next(kept))
    except StopIteration:
        raise DiffError("The list changes do not fit the list they are applied to.") from None
    if next(kept, _END) is not _END or any(not 0 <= j < size for j in replaced):
        raise DiffError("The list changes do not fit the list they are applied to.")
    for j, new in replaced.items():
        out[j] = new
    node[:] = out


_END = object()
