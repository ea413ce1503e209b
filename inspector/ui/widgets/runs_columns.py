"""The runs list's columns fit its width: the name column keeps room for names, others give way."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QModelIndex, QObject, QTimer
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import QHeaderView, QTreeView

from inspector.ui.formatting import readable_part
from inspector.ui.models.run_tree import COL_CHECKPOINTS, COL_CHECKS, COL_NAME, COL_UPDATED
from inspector.ui.models.runs_model import RunRole

NAME_MAX = 240       # px a name may ask for (longer names elide, with the full name in the tooltip)
NAME_PADDING = 40    # the delegate's margins, the fork icon and the branch indentation
ICON = 18            # a damaged run's warning mark (before the name, beside a fork's icon)
ROWS_MEASURED = 500  # rows whose names are measured (the first ones shown)
GIVE_WAY = (COL_UPDATED, COL_CHECKS, COL_CHECKPOINTS)   # hidden in this order when names need room


class RunsColumnFit(QObject):
    """Hides Updated, then Checks, then Ckpts while the Run column would cut names short
    (those of the rows shown: forks under expanded runs too; see ``readable_part``).

    Columns the user hid or showed from the header menu stay as the user left them
    (``user_choice``). Runs after every resize of the view, deferred so a scroll bar
    appearing is counted.
    """

    def __init__(self, view: QTreeView) -> None:
        super().__init__(view)
        self.view = view
        self.auto_hidden: set[int] = set()
        self.user_set: set[int] = set()
        self._timer = QTimer(self, singleShot=True, interval=0)
        self._timer.timeout.connect(self.fit)
        self._viewport = view.viewport()    # compared by identity: no call into a view being destroyed
        self._viewport.installEventFilter(self)
        model = view.model()
        for signal in (model.modelReset, model.rowsInserted, model.layoutChanged, view.expanded, view.collapsed):
            signal.connect(self._timer.start)

    def user_choice(self, column: int) -> None:
        """The user toggled ``column`` from the header menu: never hide or show it automatically."""
        self.user_set.add(column)
        self.auto_hidden.discard(column)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # Qt override
        if watched is self._viewport and event.type() == QEvent.Type.Resize:
            self._timer.start()
        return super().eventFilter(watched, event)

    def name_need(self) -> int:
        """Pixels the Run column needs for the widest name shown (capped at NAME_MAX): a fork's
        row is indented under its run (top-level rows alone were measured, and forks' names were
        cut while Ckpts stayed)."""
        font = QFont(self.view.font())
        font.setWeight(QFont.Weight.Medium)
        metrics = QFontMetrics(font)
        widest = 0
        for index, depth in self._shown_rows(ROWS_MEASURED):
            run = index.data(RunRole)
            if run is not None:
                mark = ICON if run.damaged else 0
                widest = max(widest, metrics.horizontalAdvance(readable_part(run.name, run.id))
                             + depth * self.view.indentation() + mark)
        return min(NAME_MAX, widest + NAME_PADDING + self.view.indentation())

    def _shown_rows(self, limit: int) -> list[tuple[QModelIndex, int]]:
        """The first ``limit`` rows the view shows (top-level ones and those under expanded
        rows), each with its depth."""
        model = self.view.model()
        out: list[tuple[QModelIndex, int]] = []
        todo = [(model.index(row, COL_NAME), 0) for row in range(min(model.rowCount(), limit))]
        while todo and len(out) < limit:
            index, depth = todo.pop(0)
            out.append((index, depth))
            if self.view.isExpanded(index):
                todo[:0] = [(model.index(row, COL_NAME, index), depth + 1)
                            for row in range(min(model.rowCount(index), limit))]
        return out

    def fit(self) -> None:
        """Show every give-way column that fits beside the names, hide the others."""
        header = self.view.header()
        available = self.view.viewport().width()
        need = self.name_need()
        for column in reversed(GIVE_WAY):       # start from all shown (but the user's choices)
            if column in self.auto_hidden:
                header.setSectionHidden(column, False)
        self.auto_hidden.clear()
        for column in GIVE_WAY:
            if available - self._others(header) >= need:
                break
            if column not in self.user_set and not header.isSectionHidden(column):
                header.setSectionHidden(column, True)
                self.auto_hidden.add(column)

    @staticmethod
    def _others(header: QHeaderView) -> int:
        return sum(header.sectionSize(c) for c in range(header.count())
                   if c != COL_NAME and not header.isSectionHidden(c))
