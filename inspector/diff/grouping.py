"""Rows for reading a change list: consecutive list items added (or removed) together are one row.

A message history cut by twenty messages reads as ``- messages[30…49]: 20 items removed``
instead of twenty rows. Grouping is for display only: the changes themselves (what
``apply`` and ``--json`` use) stay one per item.
"""

from __future__ import annotations

from typing import Any

from inspector.diff.model import ADDED, REMOVED, Change, format_path
from inspector.diff.preview import short_repr
from inspector.model import Record

MIN_ITEMS = 3       # fewer consecutive items stay separate rows


class ItemRange(Record, slots=True):
    """Consecutive items of one list, added (new indices) or removed (old indices) together.

    It reads like a Change: ``path`` is its first item (where the side-by-side text
    scrolls), ``old``/``new`` the list of the items removed/added.
    """

    parent: tuple
    op: str
    changes: tuple[Change, ...]

    @property
    def start(self) -> int:
        """Index of the first item."""
        return self.changes[0].path[-1]

    @property
    def stop(self) -> int:
        """Index of the last item."""
        return self.changes[-1].path[-1]

    @property
    def path(self) -> tuple:
        return self.changes[0].path

    @property
    def old(self) -> Any:
        return [c.old for c in self.changes] if self.op == REMOVED else None

    @property
    def new(self) -> Any:
        return [c.new for c in self.changes] if self.op == ADDED else None

    @property
    def detail(self) -> None:
        return None

    @property
    def display_path(self) -> str:
        """``messages[30…49]``."""
        return f"{format_path(self.parent) if self.parent else ''}[{self.start}…{self.stop}]"

    @property
    def summary(self) -> str:
        """``20 items removed``."""
        return f"{len(self.changes)} items {'added' if self.op == ADDED else 'removed'}"

    def describe(self) -> str:
        """One line for a terminal or a list view."""
        first = self.changes[0]
        if self.op == ADDED:
            return f"+ {self.display_path}: {self.summary}, first {short_repr(first.new)}"
        return f"- {self.display_path}: {self.summary}, first was {short_repr(first.old)}"


Row = Change | ItemRange


def group_changes(changes: tuple[Change, ...] | list[Change], min_items: int = MIN_ITEMS) -> list[Row]:
    """The changes as rows: runs of ``min_items`` or more items added (or removed) at
    consecutive indices of one list become one ItemRange, in place of their first change."""
    rows: list[Row] = []
    run: list[Change] = []

    def close() -> None:
        if len(run) >= min_items:
            rows.append(ItemRange(run[0].path[:-1], run[0].op, tuple(run)))
        else:
            rows.extend(run)
        run.clear()

    for change in changes:
        if run and not _continues(run[-1], change):
            close()
        if _is_item(change):
            run.append(change)
        else:
            close()
            rows.append(change)
    close()
    return rows


def _is_item(change: Change) -> bool:
    """An added or removed list item (its last path part is an index)."""
    if change.op not in (ADDED, REMOVED) or not change.path:
        return False
    last = change.path[-1]
    return type(last) is int


def _continues(previous: Change, change: Change) -> bool:
    return (_is_item(change) and change.op == previous.op and change.path[:-1] == previous.path[:-1]
            and change.path[-1] == previous.path[-1] + 1)
