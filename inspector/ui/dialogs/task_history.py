"""Task History: every checkpoint of a run where a task (or any task) changed, and how; and
Value History, the same window for one value of the state ("when did budget.total change?").

"Did the reviewer ever approve task 4?" in one window: one row per checkpoint where the task
state changed (its step and time), the changes under it (status, progress, review with the
reviewer, checks; a regression in red). Choosing a row selects that checkpoint in the
timeline, so its board, state and diff are one click away. The history is read in the
background (``inspector.diff.history``); the window stays usable while it loads.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QCloseEvent
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QLabel, QTreeWidget, QTreeWidgetItem, QVBoxLayout,
                               QWidget)

from inspector.diff.history import TaskEvent, ValueEvent, task_history, value_history
from inspector.diff.model import REMOVED, Change, TaskChange, format_path
from inspector.humanize import plural
from inspector.model import RunInfo
from inspector.ui import icons
from inspector.ui.formatting import clock_time, full_time, step_label, visible, visible_html
from inspector.ui.models.change_list_model import describe_change, short_repr
from inspector.ui.session import StoreSession
from inspector.ui.tasks import LatestJob, describe_error
from inspector.ui.widgets.palette import accent

SEQ_ROLE = Qt.ItemDataRole.UserRole + 1
TIP_CHARS = 600     # characters of a value shown in a change's tooltip
FILL_EVENTS = 500   # checkpoints put in the list per turn of the event loop (a long history's
                    # 33,000 took 1.6 s at once: the window froze meanwhile)


class TaskHistoryDialog(QDialog):
    """The history of task ``task_id`` (every task for None) in ``run``, or with ``path``, of
    the value at that path of its state (Value History).

    Signals: ``checkpoint_chosen(run id, seq)`` — a row was clicked or activated.
    """

    checkpoint_chosen = Signal(str, int)

    def __init__(self, session: StoreSession, run: RunInfo, task_id: str | None,
                 parent: QWidget | None = None, *, path: tuple | None = None) -> None:
        super().__init__(parent)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.run, self.task_id, self.path = run, task_id, path
        self.events: list[TaskEvent] | list[ValueEvent] | None = None
        self.filled = False     # every event is in the list
        if path is not None:
            self.setWindowTitle(f"Value History \u2014 {run.name}")
            heading = f"How <code>{visible_html(format_path(path))}</code> of {visible_html(run.name)} changed"
        else:
            what = f"task {task_id!r}" if task_id else "tasks"
            self.setWindowTitle(f"Task History \u2014 {run.name}")
            heading = f"How the {visible_html(what)} of {visible_html(run.name)} changed"
        self.heading = QLabel(f"<b>{heading}</b>", self)
        self.heading.setTextFormat(Qt.TextFormat.RichText)
        self.heading.setWordWrap(True)
        self.status = QLabel(self)
        self.status.setWordWrap(True)
        self.tree = QTreeWidget(self)
        self.tree.setColumnCount(2)
        self.tree.setHeaderLabels(["Checkpoint / change", "Time"])
        self.tree.setRootIsDecorated(True)
        self.tree.setUniformRowHeights(True)
        self.tree.itemClicked.connect(self._on_chosen)
        self.tree.itemActivated.connect(self._on_chosen)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.close)
        self.refresh_button = buttons.addButton("Refresh", QDialogButtonBox.ButtonRole.ActionRole)
        self.refresh_button.setToolTip("Read the history again (a live run has gone on since)")
        self.refresh_button.clicked.connect(self.refresh)
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addWidget(self.status)
        layout.addWidget(self.tree, 1)
        layout.addWidget(buttons)
        self.resize(640, 480)
        self.session = session
        self.job = LatestJob(self)
        self.job.finished.connect(self._show)
        self.job.failed.connect(self._failed)
        self.job.progressed.connect(self._progressed)
        self.refresh()

    def refresh(self) -> None:
        """Read the history (again) in the background."""
        store, run_id, task_id, path = self.session.store, self.run.id, self.task_id, self.path
        if store is None:
            return
        self.events = None
        self.filled = False
        self.tree.clear()
        self.status.setText("Reading the run's checkpoints\u2026")
        if path is not None:
            self.job.submit(lambda ctx: value_history(store, run_id, path, cancel=ctx.cancelled,
                                                      progress=lambda done, total: ctx.progress(done, total)))
            return
        self.job.submit(lambda ctx: task_history(store, run_id, task_id, cancel=ctx.cancelled,
                                                 progress=lambda done, total: ctx.progress(done, total)))

    def closeEvent(self, event: QCloseEvent) -> None:  # Qt override: a long read stops with the window
        self.job.cancel()
        super().closeEvent(event)

    def _progressed(self, done: int, total: int, _text: str) -> None:
        self.status.setText(f"Reading checkpoint {done:,} of {plural(total, 'checkpoint')}\u2026")

    def _show(self, events: list[TaskEvent] | list[ValueEvent]) -> None:
        self.events = events
        changed = any(e.changes for e in events)
        if not changed:
            if self.path is not None:
                self.status.setText(f"{format_path(self.path)} is not in this run's state at any checkpoint.")
            else:
                self.status.setText("This run has no task state at any checkpoint." if self.task_id is None else
                                    f"Task {self.task_id!r} never appears in this run's task state.")
            if not events:
                self.filled = True
                return
        title = next((c.title for e in events for c in e.changes if isinstance(c, TaskChange) and c.title), "")
        if self.task_id and title and title != self.task_id:
            self.heading.setText(f"<b>How task \u201c{visible_html(title)}\u201d ({visible_html(self.task_id)}) of "
                                 f"{visible_html(self.run.name)} changed</b>")
        count = sum(len(e.changes) for e in events)
        unread = sum(1 for e in events if e.problem)
        damaged = f" {plural(unread, 'damaged checkpoint')} could not be read." if unread else ""
        if changed:
            self.status.setText(f"Changed at {plural(len(events) - unread, 'checkpoint')} ({plural(count, 'change')})."
                                f"{damaged} Click one to show it in the timeline.")
        self._fill(events, 0)

    def _fill(self, events: list[TaskEvent] | list[ValueEvent], start: int) -> None:
        """Put ``events[start:]`` in the list, ``FILL_EVENTS`` at a time, the rest on later
        turns of the event loop (the window stays responsive); ``filled`` once all are."""
        if self.events is not events:       # read again meanwhile: those go in instead
            return
        red = QBrush(accent(self.palette(), "#cf222e"))
        self.tree.setUpdatesEnabled(False)
        items: list[QTreeWidgetItem] = []
        for event in events[start:start + FILL_EVENTS]:
            info = event.checkpoint
            item = QTreeWidgetItem([f"#{info.seq}  {step_label(info.kind, info.name)}",
                                    clock_time(info.created)])
            item.setIcon(0, icons.kind_icon(info.kind))
            item.setToolTip(1, full_time(info.created))
            item.setData(0, SEQ_ROLE, info.seq)
            for change in event.changes:
                child = QTreeWidgetItem([self._describe(change), ""])
                child.setData(0, SEQ_ROLE, info.seq)
                child.setToolTip(0, visible(change.describe() if isinstance(change, TaskChange)
                                            else _value_tip(change), lines=True))
                if getattr(change, "regression", False):
                    child.setForeground(0, red)
                item.addChild(child)
            if event.problem:
                child = QTreeWidgetItem([visible(f"damaged: {event.problem}"), ""])
                child.setData(0, SEQ_ROLE, info.seq)
                child.setToolTip(0, visible(event.problem))
                child.setForeground(0, red)
                item.addChild(child)
            items.append(item)
        self.tree.addTopLevelItems(items)
        for item in items:
            item.setExpanded(True)
        if start == 0:
            self.tree.resizeColumnToContents(1)
            self.tree.header().setStretchLastSection(False)
            self.tree.header().setSectionResizeMode(0, self.tree.header().ResizeMode.Stretch)
        self.tree.setUpdatesEnabled(True)
        if start + FILL_EVENTS < len(events):
            QTimer.singleShot(0, self, lambda: self._fill(events, start + FILL_EVENTS))
        else:
            self.filled = True

    def _describe(self, change: TaskChange | Change) -> str:
        """A change's line (a value's in JSON, as the State tab shows it); with one task shown,
        without naming it again on every line."""
        if not isinstance(change, TaskChange):
            return visible(describe_change(change))
        text = change.describe()
        if self.task_id is not None and change.kind in ("added", "removed"):
            return f"+ added as {change.new}" if change.kind == "added" else f"- removed (was {change.old})"
        if self.task_id is not None and change.task_id == self.task_id:
            who = (f"task {change.task_id} {change.title!r}" if change.title != change.task_id
                   else f"task {change.task_id!r}")
            text = text.replace(f" {who}: ", " ", 1).replace(f" {who} ", " ", 1)
        return visible(text)

    def _failed(self, error: BaseException) -> None:
        self.status.setText(f"The history could not be read: {describe_error(error)}")

    def _on_chosen(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        seq = item.data(0, SEQ_ROLE)
        if isinstance(seq, int):
            self.checkpoint_chosen.emit(self.run.id, seq)


def _value_tip(change: Change) -> str:
    """A value change's line, then the value it became (or was, when removed), longer (a text
    as it reads, any other value as compact JSON)."""
    value = change.old if change.op == REMOVED else change.new
    text = value if isinstance(value, str) else short_repr(value, TIP_CHARS)
    if len(text) > TIP_CHARS:
        text = text[:TIP_CHARS] + "\u2026"
    return f"{describe_change(change)}\n\n{'was' if change.op == REMOVED else 'now'}:\n{text}"
