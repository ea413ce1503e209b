"""Filter proxy over the runs model: text, effective statuses, hide forks (order kept from the source)."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSortFilterProxyModel, Qt

from inspector.ui.models.runs_model import RunRole, StatusRole


class RunsFilterProxy(QSortFilterProxyModel):
    """Shows runs matching a text (name, agent or id) and a set of statuses.

    A fork that matches keeps its parents visible (recursive filtering). Sorting is
    delegated to the source model, which sorts in Python far faster than a proxy
    comparing through ``data()`` would.
    """

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._text = ""
        self._statuses: frozenset[str] = frozenset()
        self._hide_forks = False
        self.setRecursiveFilteringEnabled(True)
        self.setDynamicSortFilter(True)

    # -- settings -------------------------------------------------------------------
    @property
    def text(self) -> str:
        """The current text filter."""
        return self._text

    @property
    def statuses(self) -> frozenset[str]:
        """Statuses shown (empty = all)."""
        return self._statuses

    @property
    def hide_forks(self) -> bool:
        """Whether forks are hidden."""
        return self._hide_forks

    def set_text(self, text: str) -> None:
        """Show only runs whose name, agent or id contains ``text`` (case-insensitive)."""
        text = text.strip().casefold()
        if text != self._text:
            self._change_filter("_text", text)

    def set_statuses(self, statuses: Collection[str]) -> None:
        """Show only runs whose effective status is in ``statuses`` (empty: all)."""
        new = frozenset(statuses)
        if new != self._statuses:
            self._change_filter("_statuses", new)

    def set_hide_forks(self, hide: bool) -> None:
        """Hide or show forked runs."""
        if hide != self._hide_forks:
            self._change_filter("_hide_forks", hide)

    def _change_filter(self, attr: str, value: object) -> None:
        if hasattr(self, "beginFilterChange"):  # Qt >= 6.9
            self.beginFilterChange()
            setattr(self, attr, value)
            self.endFilterChange()
        else:  # pragma: no cover - older Qt
            setattr(self, attr, value)
            self.invalidateRowsFilter()

    # -- QSortFilterProxyModel ----------------------------------------------------------
    def filterAcceptsRow(self, source_row: int, source_parent: QModelIndex | QPersistentModelIndex) -> bool:
        model = self.sourceModel()
        index = model.index(source_row, 0, source_parent)
        run = model.data(index, RunRole)
        if run is None:
            return False
        if self._hide_forks and run.parent_run:
            return False
        if self._statuses and model.data(index, StatusRole) not in self._statuses:
            return False
        if self._text:
            return (self._text in run.name.casefold() or self._text in run.agent.casefold()
                    or self._text in run.id.casefold())
        return True

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        self.sourceModel().sort(column, order)
