"""The Diff tab's change list as shown: every row of the source model, or only the rows a filter chose.

A QSortFilterProxyModel asks every source row's text on the GUI thread each time the filter
changes (60,000 changes: half a second per keystroke); here the panel computes the matching
rows in a worker and hands them over, and showing them is one model reset.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import (QAbstractItemModel, QAbstractProxyModel, QModelIndex, QObject,
                            QPersistentModelIndex, Qt)

AnyIndex = QModelIndex | QPersistentModelIndex


class ChangeRowsProxy(QAbstractProxyModel):
    """Shows the source's rows ``rows`` (ascending source rows), or all of them (``show_all``).

    After the source resets, all its rows are shown when no filter is set; with one, none are
    until the filter's new rows arrive (``show_rows``): rows of the old changes mean nothing.
    """

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: Sequence[int] = range(0)
        self._filtered = False

    @property
    def filtered(self) -> bool:
        """True while only chosen rows are shown."""
        return self._filtered

    def setSourceModel(self, model: QAbstractItemModel) -> None:  # Qt override
        old = self.sourceModel()
        if old is not None:
            old.modelAboutToBeReset.disconnect(self.beginResetModel)
            old.modelReset.disconnect(self._on_source_reset)
            old.dataChanged.disconnect(self._on_source_data_changed)
        self.beginResetModel()
        super().setSourceModel(model)
        model.modelAboutToBeReset.connect(self.beginResetModel)
        model.modelReset.connect(self._on_source_reset)
        model.dataChanged.connect(self._on_source_data_changed)
        self._rows = range(model.rowCount())
        self._filtered = False
        self.endResetModel()

    def show_all(self) -> None:
        """Show every source row (the filter was cleared)."""
        self._reset(None)

    def show_rows(self, rows: Sequence[int]) -> None:
        """Show only these source rows (ascending)."""
        self._reset(rows)

    def _reset(self, rows: Sequence[int] | None) -> None:
        self.beginResetModel()
        source = self.sourceModel()
        self._filtered = rows is not None
        self._rows = rows if rows is not None else range(source.rowCount() if source is not None else 0)
        self.endResetModel()

    def _on_source_reset(self) -> None:
        source = self.sourceModel()
        self._rows = () if self._filtered else range(source.rowCount())
        self.endResetModel()

    def _on_source_data_changed(self, _top: QModelIndex, _bottom: QModelIndex, roles: list[int]) -> None:
        # (the source says so of whole columns, after a theme switch): every shown row, at C speed
        if self._rows:
            source = self.sourceModel()
            self.dataChanged.emit(self.index(0, 0), self.index(len(self._rows) - 1, source.columnCount() - 1), roles)

    # -- the proxy's mapping ---------------------------------------------------------------
    def mapToSource(self, index: AnyIndex) -> QModelIndex:  # Qt override
        source = self.sourceModel()
        if not index.isValid() or source is None or not 0 <= index.row() < len(self._rows):
            return QModelIndex()
        return source.index(self._rows[index.row()], index.column())

    def mapFromSource(self, index: AnyIndex) -> QModelIndex:  # Qt override
        if not index.isValid():
            return QModelIndex()
        row = index.row()
        at = bisect.bisect_left(self._rows, row)
        if at < len(self._rows) and self._rows[at] == row:
            return self.index(at, index.column())
        return QModelIndex()

    def index(self, row: int, column: int, parent: AnyIndex = QModelIndex()) -> QModelIndex:  # Qt override
        if parent.isValid() or not 0 <= row < len(self._rows) or not 0 <= column < self.columnCount():
            return QModelIndex()
        return self.createIndex(row, column)

    def parent(self, index: AnyIndex = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # Qt overloads parent() (QObject's) and parent(index)
        return QModelIndex()

    def sibling(self, row: int, column: int, index: AnyIndex) -> QModelIndex:  # Qt override
        return self.index(row, column)

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # Qt override
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:  # Qt override
        source = self.sourceModel()
        return 0 if parent.isValid() or source is None else source.columnCount()

    def hasChildren(self, parent: AnyIndex = QModelIndex()) -> bool:  # Qt override
        return not parent.isValid() and bool(self._rows)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # Qt override
        source = self.sourceModel()
        if source is None or orientation == Qt.Orientation.Vertical:
            return None
        return source.headerData(section, orientation, role)
