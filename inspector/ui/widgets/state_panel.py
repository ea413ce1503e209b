"""The State tab: checkpoint header, then the state as Tree | Conversation | Raw JSON, with find."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QButtonGroup, QHBoxLayout, QLabel, QSizePolicy, QStackedWidget,
                               QToolButton, QVBoxLayout, QWidget)

from inspector.lazy import is_lazy, materialize
from inspector.model import RunInfo, Snapshot
from inspector.ui.tasks import LatestJob
from inspector.ui.widgets.checkpoint_header import CheckpointHeader
from inspector.ui.widgets.conversation_view import ConversationView
from inspector.ui.widgets.empty_state import EmptyState
from inspector.ui.widgets.find_bar import FindBar
from inspector.ui.widgets.json_view import JsonView
from inspector.ui.widgets.state_tree_view import StateTreeView

MODES = ("Tree", "Conversation", "Raw JSON")
NO_CHECKPOINT_TEXT = "No checkpoint selected: pick one in the timeline to see its state"
TREE, CONVERSATION, RAW = range(3)


class StatePanel(QWidget):
    """Shows a snapshot's state. ``show_snapshot(snapshot, run)``; ``set_mode(TREE|CONVERSATION|RAW)``.

    The Conversation and Raw pages are built lazily (only when shown), off the GUI thread.
    Signals: ``mode_changed(int)``; ``value_history_requested(path)`` (a value's context menu).
    """

    mode_changed = Signal(int)
    value_history_requested = Signal(object)   # a value's path (tuple): its Value History

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._snapshot: Snapshot | None = None
        self._stale = {CONVERSATION: False, RAW: False}
        self.header = CheckpointHeader(self)
        self.tree_view = StateTreeView(self)
        self.conversation = ConversationView(self)
        self.raw = JsonView(self)
        self.find_bar = FindBar(self, "Find in state")
        self.find_bar.install_shortcut(self)
        self._stack = QStackedWidget(self)
        for page in (self.tree_view, self.conversation, self.raw):
            self._stack.addWidget(page)
        self._whole_job = LatestJob(self)    # a state read on demand, read whole for Raw / Conversation
        self._whole_job.finished.connect(self._on_whole_read)
        self._whole_job.failed.connect(self._on_whole_failed)
        self._reading = False
        self._searching = False
        self._buttons = QButtonGroup(self)
        self._buttons.setExclusive(True)
        body = QWidget(self)
        layout = QVBoxLayout(body)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(4)
        layout.addWidget(self.header)
        layout.addLayout(self._toolbar())
        layout.addWidget(self._stack, 1)
        # without a checkpoint, a sentence instead of an empty tree, toolbar and detail pane
        self._pages = EmptyState.filling(self, body, NO_CHECKPOINT_TEXT)
        self.empty = self._pages.label
        self._wire()
        self.set_mode(TREE)

    def _toolbar(self) -> QHBoxLayout:
        row = QHBoxLayout()
        row.setSpacing(0)
        for mode, title in enumerate(MODES):
            button = QToolButton(self)
            button.setText(title)
            button.setCheckable(True)
            button.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
            self._buttons.addButton(button, mode)
            row.addWidget(button)
        row.addSpacing(12)
        self._busy = QLabel("", self)
        self._busy.setEnabled(False)
        row.addWidget(self._busy)
        row.addStretch(1)
        row.addWidget(self.find_bar, 0)
        return row

    def _wire(self) -> None:
        self._buttons.idClicked.connect(self.set_mode)
        self.find_bar.search_changed.connect(self._on_find_bar_search_changed)
        self.find_bar.step_requested.connect(self._on_find_bar_step_requested)
        self.tree_view.match_changed.connect(self.find_bar.set_result)
        self.tree_view.value_history_requested.connect(self.value_history_requested)
        self.raw.match_changed.connect(self.find_bar.set_result)
        self.conversation.reveal_requested.connect(self._on_conversation_reveal_requested)
        self.raw.text_ready.connect(self._on_raw_text_ready)
        self.conversation.conversation_ready.connect(self._on_conversation_ready)
        self.tree_view.searching.connect(self._on_tree_view_searching)

    # -- public API ----------------------------------------------------------------
    def show_snapshot(self, snapshot: Snapshot | None, run: RunInfo | None) -> None:
        """Show a snapshot's state (None clears everything)."""
        self._snapshot = snapshot
        self._pages.show_body(snapshot is not None)
        self._whole_job.cancel()
        self._reading = False
        live = snapshot.meta.get("live") if snapshot else None
        note = next((n for n in snapshot.meta.get("notes", []) if n.startswith("pending writes applied")), "") \
            if snapshot and live else ""
        inferred = next((n for n in snapshot.meta.get("notes", []) if "as inferred reducers" in n), "") \
            if snapshot and snapshot.meta.get("channel_kinds") == "inferred" else ""
        self.header.show_checkpoint(snapshot.info if snapshot else None, run, note, inferred,
                                    snapshot.problems if snapshot else ())
        state: Any = snapshot.state if snapshot else {}
        self.tree_view.set_value(state)
        self._stale = {CONVERSATION: True, RAW: True}
        if snapshot is None:
            self.raw.clear_value()
            self.conversation.show_state(None)
            self._stale = {CONVERSATION: False, RAW: False}
        self._refresh_current()

    @property
    def mode(self) -> int:
        """The page shown: TREE, CONVERSATION or RAW."""
        return self._stack.currentIndex()

    def set_mode(self, mode: int) -> None:
        """Switch between Tree, Conversation and Raw JSON."""
        self._buttons.button(mode).setChecked(True)
        if mode == self._stack.currentIndex() and self._stack.currentWidget() is not None and \
                not self._stale.get(mode, False):
            return
        self._stack.setCurrentIndex(mode)
        self._refresh_current()
        self.find_bar.set_result(-1, 0)
        if self.find_bar.text():
            self._search_current(self.find_bar.text())
        self.mode_changed.emit(mode)

    def _refresh_current(self) -> None:
        mode = self.mode
        if not self._stale.get(mode):
            self._update_busy()
            return
        self._stale[mode] = False
        state = self._snapshot.state if self._snapshot else None
        if is_lazy(state):      # a big state read on demand: built whole in a worker first
            self._reading = True
            self._whole_job.submit(lambda ctx: (mode, materialize(state)))
        else:
            self._show_whole(mode, state)
        self._update_busy()

    def _show_whole(self, mode: int, state: Any) -> None:
        if mode == RAW:
            self.raw.set_value(state)
        elif mode == CONVERSATION:
            self.conversation.show_state(state)

    def _on_whole_read(self, result: tuple[int, Any]) -> None:
        self._reading = False
        mode, state = result
        self._show_whole(mode, state)
        self._update_busy()

    def _on_whole_failed(self, err: object) -> None:
        self._reading = False
        self._busy.setText(f"Could not read the whole state: {err}")

    def _on_tree_view_searching(self, busy: bool) -> None:
        self._searching = busy
        self._update_busy()

    def _update_busy(self) -> None:
        if self._reading and self.mode != TREE:
            self._busy.setText("Reading the whole state…")
            return
        if self._searching and self.mode == TREE:
            self._busy.setText("Reading the whole state to search…")
            return
        busy = self.raw.busy if self.mode == RAW else False
        self._busy.setText("Formatting…" if busy else "")

    # -- find ----------------------------------------------------------------------
    def _on_find_bar_search_changed(self, text: str) -> None:
        """A new find text: the other modes drop their marks (they search it when shown),
        the mode shown searches it."""
        for mode in (TREE, RAW, CONVERSATION):
            if mode != self.mode or not text:
                self._clear_marks(mode)
        self.find_bar.set_result(-1, 0)
        if text:
            self._search_current(text)

    def _clear_marks(self, mode: int) -> None:
        if mode == TREE:
            self.tree_view.search("")
        elif mode == RAW:
            self.raw.find_text("")
        else:
            self.conversation.find_text("")

    def _search_current(self, text: str) -> None:
        if self.mode == TREE:
            self.tree_view.search(text)
        elif self.mode == RAW:
            self.raw.find_text(text, restart=True)
        else:
            index, count = self.conversation.find_text(text)
            self.find_bar.set_result(index, count)

    def _on_find_bar_step_requested(self, backwards: bool) -> None:
        text = self.find_bar.text()
        if self.mode == TREE:
            self.tree_view.step(backwards)
        elif self.mode == RAW:
            self.raw.find_text(text, backwards=backwards)
        else:
            index, count = self.conversation.find_text(text, backwards=backwards)
            self.find_bar.set_result(index, count)

    def _on_conversation_ready(self, _count: int) -> None:
        self._update_busy()
        if self.mode == CONVERSATION and self.find_bar.text():     # a new conversation: search it too
            self._search_current(self.find_bar.text())

    def _on_raw_text_ready(self) -> None:
        self._update_busy()
        if self.mode == RAW and self.find_bar.text():
            self.raw.find_text(self.find_bar.text(), restart=True)

    def _on_conversation_reveal_requested(self, path: tuple) -> None:
        self.set_mode(TREE)
        self.tree_view.select_path(path)
