"""The Tasks tab: the semantic task state as a board (one column per status) under the score."""

from __future__ import annotations

import html

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QGuiApplication, QPalette
from PySide6.QtWidgets import (QFrame, QGridLayout, QHBoxLayout, QLabel, QProgressBar, QPushButton, QScrollArea,
                               QSizePolicy, QVBoxLayout, QWidget)

from inspector.errors import TaskStateError
from inspector.model import RunInfo, Snapshot
from inspector.taskstate import TASK_STATUSES, score, validate
from inspector.ui import icons
from inspector.ui.formatting import visible
from inspector.ui.widgets.checkpoint_header import damaged_label, kind_chip
from inspector.ui.widgets.empty_state import EmptyState
from inspector.ui.widgets.palette import STATUS_HUES, accent, muted_text, readable_on, theme_changed, tint
from inspector.ui.widgets.task_card import TaskCard

STATUS_TITLES = {"pending": "Pending", "in_progress": "In progress", "blocked": "Blocked",
                 "done": "Done", "failed": "Failed"}
EMPTY_TEXT = "This checkpoint has no task state"
MIN_COLUMN_WIDTH = 150   # below this a column cannot show a card's words
NO_CHECKPOINT_TEXT = "No checkpoint selected: pick one in the timeline to see its task board"


def with_outputs(tasks: dict, raw: dict) -> dict:
    """The validated task state with each task's ``output`` and ``agent`` text kept (adapters such
    as CrewAI's give them; the documented model has no such field, so validation drops them)."""
    extra = {str(t.get("id")): t for t in raw.get("tasks") or [] if isinstance(t, dict)}
    for task in tasks["tasks"]:
        source = extra.get(task["id"], {})
        for key in ("output", "agent"):
            if isinstance(source.get(key), str) and source[key]:
                task[key] = source[key]
    return tasks


class BoardColumn(QFrame):
    """One status column: a title with a count, and cards reused across updates.

    Signals: ``history_requested(task id)`` — from any of its cards.
    """

    history_requested = Signal(str)

    def __init__(self, status: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.status = status
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setAutoFillBackground(True)
        # columns share the width (a narrow board folds its empty ones, see TasksPanel)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setMinimumWidth(60)
        self.title = QLabel(self)
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self._cards: list[TaskCard] = []
        self._body = QWidget()
        self._body.setAutoFillBackground(False)
        self._cards_layout = QVBoxLayout(self._body)
        self._cards_layout.setContentsMargins(0, 0, 0, 0)
        self._cards_layout.setSpacing(6)
        self.placeholder = QLabel("No tasks", self._body)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setEnabled(False)
        self._cards_layout.addWidget(self.placeholder)
        self._cards_layout.addStretch(1)
        scroll = QScrollArea(self)
        scroll.setWidget(self._body)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # the column's tint shows through the scroll area and its body (cards keep their own)
        scroll.setObjectName("boardColumnScroll")
        scroll.setStyleSheet("#boardColumnScroll, #boardColumnScroll > QWidget, "
                             "#boardColumnScroll > QWidget > QWidget { background: transparent; }")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.setSpacing(6)
        layout.addWidget(self.title)
        layout.addWidget(scroll, 1)
        self._tasks: list[dict] = []
        self._tint()
        self.set_tasks([])

    def _tint(self) -> None:
        pal = self.palette()
        pal.setColor(QPalette.ColorRole.Window, tint(QGuiApplication.palette(), STATUS_HUES[self.status], 0.07))
        self.setPalette(pal)

    def changeEvent(self, event: QEvent) -> None:  # Qt override: a theme switch re-tints
        super().changeEvent(event)
        if theme_changed(self, event):
            self._tint()
            self.set_tasks(self._tasks)

    @property
    def cards(self) -> list[TaskCard]:
        """The visible cards, in order."""
        return [c for c in self._cards if not c.isHidden()]

    def set_tasks(self, tasks: list[dict]) -> None:
        """Show these tasks, reusing existing cards."""
        self._tasks = tasks
        while len(self._cards) < len(tasks):
            card = TaskCard(self._body)
            card.history_requested.connect(self.history_requested)
            self._cards_layout.insertWidget(len(self._cards), card)
            self._cards.append(card)
        for card, task in zip(self._cards, tasks, strict=False):
            card.set_task(task)
            card.setVisible(True)
        for card in self._cards[len(tasks):]:
            card.setVisible(False)
        self.placeholder.setVisible(not tasks)
        pal = self.palette()
        hue = accent(pal, STATUS_HUES[self.status]).name()
        muted = muted_text(pal).name()
        self.title.setText(f"<span style='color:{hue}'>●</span>&nbsp;<b>{STATUS_TITLES[self.status]}</b>"
                           f"&nbsp;&nbsp;<span style='color:{muted}'>{len(tasks)}</span>")


class ScoreBar(QWidget):
    """The goal and the cumulative score: checks passed/total and tasks done/total."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.goal = QLabel(self)
        self.goal.setTextFormat(Qt.TextFormat.PlainText)   # the agent's text, never markup
        self.goal.setWordWrap(True)
        font = self.goal.font()
        font.setPointSizeF(font.pointSizeF() * 1.25)
        font.setBold(True)
        self.goal.setFont(font)
        self.checks_bar = self._bar(22)
        self.tasks_bar = self._bar(14)
        self.checks_label = QLabel(self)
        self.tasks_label = QLabel(self)
        grid = QGridLayout()
        grid.setHorizontalSpacing(10)
        grid.setVerticalSpacing(4)
        grid.addWidget(self.checks_label, 0, 0)
        grid.addWidget(self.checks_bar, 0, 1)
        grid.addWidget(self.tasks_label, 1, 0)
        grid.addWidget(self.tasks_bar, 1, 1)
        grid.setColumnStretch(1, 1)
        self.history_button = QPushButton(icons.icon("recent"), "History\u2026", self)
        self.history_button.setToolTip("Every checkpoint of this run where its tasks changed (status, progress, "
                                       "review, checks); a card's own history: double-click it")
        grid.addWidget(self.history_button, 0, 2, 2, 1, Qt.AlignmentFlag.AlignVCenter)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.setSpacing(6)
        layout.addWidget(self.goal)
        layout.addLayout(grid)

    def _bar(self, height: int) -> QProgressBar:
        bar = QProgressBar(self)
        bar.setFixedHeight(height)
        bar.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        bar.setAlignment(Qt.AlignmentFlag.AlignCenter)
        return bar

    def set_score(self, goal: str, passed: int, checks: int, done: int, tasks: int) -> None:
        """Show the goal and counts."""
        self.goal.setText(visible(goal, lines=True))
        self.goal.setVisible(bool(goal))     # no goal: the bars lead (a "(no goal)" title said nothing)
        self._fill(self.checks_bar, passed, checks, f"{passed} / {checks} checks passed" if checks else "no checks",
                   "#1a7f37")
        self._fill(self.tasks_bar, done, tasks, f"{done} / {tasks} tasks done" if tasks else "no tasks", "#0969da")
        self.checks_label.setText("<b>Checks</b>")
        self.tasks_label.setText("Tasks")

    def _fill(self, bar: QProgressBar, value: int, total: int, text: str, hue: str) -> None:
        bar.setRange(0, max(total, 1))
        bar.setValue(value)
        bar.setFormat(text)
        pal = bar.palette()
        fill = accent(self.palette(), hue)
        pal.setColor(QPalette.ColorRole.Highlight, fill)
        pal.setColor(QPalette.ColorRole.HighlightedText, readable_on(fill))   # dark fills are light
        bar.setPalette(pal)


class TasksPanel(QWidget):
    """Task board at a checkpoint: ``show_snapshot(snapshot, run)`` (None clears).

    Fast enough to call on every timeline step: cards are updated in place.
    Signals: ``history_requested(task id)`` — a card's history, or every task's ("") from the
    score bar's History button.
    """

    history_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.score_bar = ScoreBar(self)
        self.columns = {status: BoardColumn(status, self) for status in TASK_STATUSES}
        for column in self.columns.values():
            column.history_requested.connect(self.history_requested)
        self.score_bar.history_button.clicked.connect(lambda: self.history_requested.emit(""))
        board = QWidget(self)
        row = QHBoxLayout(board)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(6)
        for column in self.columns.values():
            row.addWidget(column, 1)
        board_page = QWidget(self)
        page_layout = QVBoxLayout(board_page)
        page_layout.setContentsMargins(4, 4, 4, 4)
        page_layout.setSpacing(8)
        page_layout.addWidget(self.score_bar)
        self.live_note = QLabel(board_page)         # a LangGraph head shown as get_state shows it
        self.live_note.setObjectName("liveNote")
        self.live_note.setWordWrap(True)
        self.live_note.setTextFormat(Qt.TextFormat.RichText)
        self.live_note.hide()
        page_layout.addWidget(self.live_note)
        self.empty_columns = QLabel(board_page)     # narrow: empty columns folded into one line
        self.empty_columns.setObjectName("emptyColumns")
        self.empty_columns.setWordWrap(True)
        self.empty_columns.setEnabled(False)
        self.empty_columns.hide()
        page_layout.addWidget(self.empty_columns)
        page_layout.addWidget(board, 1)
        self._stack = EmptyState.filling(self, board_page, NO_CHECKPOINT_TEXT)
        self.empty = self._stack.label
        self._shown: dict | None = None
        self._last: tuple[Snapshot | None, RunInfo | None] | None = None
        self.show_snapshot(None, None)

    @property
    def showing_board(self) -> bool:
        """True when the board (not the empty message) is shown."""
        return self._stack.showing_body

    def changeEvent(self, event: QEvent) -> None:  # Qt override: a theme switch redraws the bars
        super().changeEvent(event)
        if theme_changed(self, event) and self._last is not None:
            self._shown = None
            self.show_snapshot(*self._last)

    def show_snapshot(self, snapshot: Snapshot | None, run: RunInfo | None) -> None:
        """Show the task state of a snapshot (an empty-state message when it has none)."""
        self._last = (snapshot, run)
        if snapshot is None:
            self._show_empty(NO_CHECKPOINT_TEXT)
            return
        raw = snapshot.tasks
        if raw is None:
            self._show_empty(EMPTY_TEXT)
            return
        try:
            tasks = with_outputs(validate(raw), raw)
        except TaskStateError as err:
            self._show_empty(f"The task state of this checkpoint is malformed:\n{err}")
            return
        self._show_live_note(snapshot)
        if tasks == self._shown and self.showing_board:
            return
        self._shown = tasks
        self.setUpdatesEnabled(False)
        try:
            counts = score(tasks)
            self.score_bar.set_score(tasks["goal"], counts.checks_passed, counts.checks_total,
                                     counts.tasks_done, counts.tasks_total)
            for status, column in self.columns.items():
                column.set_tasks([t for t in tasks["tasks"] if t["status"] == status])
            self._fold_empty_columns()
            self._stack.show_body()
        finally:
            self.setUpdatesEnabled(True)

    def _show_live_note(self, snapshot: Snapshot) -> None:
        """The notes above the board: a LangGraph head whose finished tasks' pending writes are
        applied (the board then shows the step's finished tasks as done, as get_state does),
        and a checkpoint with damaged parts (a task whose write cannot be read still counts as
        finished: the write is there; what it holds is not)."""
        notes = [n for n in snapshot.meta.get("notes", []) if isinstance(n, str)] if snapshot.meta.get("live") else []
        shown = [n for n in notes if n.startswith(("pending writes applied", "not combined", "combined by your graph"))]
        problems = list(snapshot.problems)
        if not shown and not problems:
            self.live_note.hide()
            return
        muted = muted_text(self.palette()).name()
        lines, tips = [], []
        if shown:
            text = "<br>".join(html.escape(n.removeprefix("pending writes applied: ")) for n in shown)
            lines.append(f"{kind_chip(self.live_note, 'pending writes applied', '#bf8700')}&nbsp; "
                         f"<span style='color:{muted}'>{text}</span>")
            tips.extend(shown)
        if problems:
            what = ("what these tasks wrote" if any(p.startswith("pending write") for p in problems)
                    else "this checkpoint")
            lines.append(f"{kind_chip(self.live_note, damaged_label(problems), '#cf222e')}&nbsp; "
                         f"<span style='color:{muted}'>part of {what} cannot be read (the State tab lists each)</span>")
            tips.extend(f"damaged: {p}" for p in problems)
        self.live_note.setText("<br>".join(lines))
        self.live_note.setToolTip("\n\n".join(tips))
        self.live_note.show()

    def _fold_empty_columns(self) -> None:
        """Too narrow for every column at a readable width: show only columns with tasks."""
        narrow = self.width() < MIN_COLUMN_WIDTH * len(self.columns)
        empty = [c for c in self.columns.values() if not c.cards]
        if len(empty) == len(self.columns):
            narrow = False
        for column in self.columns.values():
            column.setVisible(not (narrow and column in empty))
        self.empty_columns.setVisible(narrow and bool(empty))
        self.empty_columns.setText("No tasks: " + ", ".join(STATUS_TITLES[c.status] for c in empty))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self.showing_board:
            self._fold_empty_columns()

    def _show_empty(self, text: str) -> None:
        self._shown = None
        self._stack.show_text(html.escape(text) if "<" in text else text)
