"""The runs panel: filter bar, lineage tree of runs with status pills and progress, live refresh."""

from __future__ import annotations

import html

from PySide6.QtCore import QEvent, QItemSelectionModel, QModelIndex, QObject, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeyEvent
from PySide6.QtWidgets import (QAbstractItemView, QFrame, QHBoxLayout, QHeaderView, QLabel, QLineEdit,
                               QMenu, QToolButton, QTreeView, QVBoxLayout, QWidget)

from inspector.humanize import plural
from inspector.model import RUN_STATUSES, ChangeSet, RunInfo
from inspector.ui import icons, style
from inspector.ui.models.run_tree import (COL_AGENT, COL_CHECKPOINTS, COL_CHECKS, COL_ID, COL_NAME,
                                          COL_STATUS, COL_UPDATED, COLUMN_TITLES)
from inspector.ui.models.runs_filter import RunsFilterProxy
from inspector.ui.models.runs_model import ForkSeqRole, ProgressRole, RunRole, RunsModel, StatusRole
from inspector.ui.session import StoreSession
from inspector.ui.widgets.item_delegates import ProgressDelegate, RunNameDelegate, StatusPillDelegate
from inspector.ui.widgets.runs_columns import RunsColumnFit

REFRESH_MS = 30_000        # relative times and stuck diagnoses
OWNER_CHECK_MS = 2_000     # running runs whose owner process is gone (no store read)
SILENCE_SLACK_MS = 500     # after a heartbeat is due to be missed, before the run is asked again
FILTER_DELAY_MS = 150      # typing pause before filtering
NO_MATCH_TEXT = "No runs match the filter."
HIDDEN_TEXT = ("The selected run, \u201c{name}\u201d, is hidden by the filter (its timeline stays "
               "shown). <a href='clear'>Clear filter</a>")
EMPTY_STORE_TEXT = ("<p><b>This store has no runs yet.</b></p><p>Runs appear here, live, as soon as an agent "
                    "{writer}.</p><p>A store with sample runs to explore:<br><code>checkpoint-inspector demo</code></p>")
NATIVE_WRITER = "records into it with<br><code>inspector.record.Checkpointer</code>"
OTHER_WRITER = "writes its first checkpoint into it"
COLUMN_WIDTHS = {COL_STATUS: 90, COL_CHECKPOINTS: 56, COL_CHECKS: 78, COL_UPDATED: 76, COL_AGENT: 110, COL_ID: 110}


class RunsPanel(QWidget):
    """Every run of the open store; emits ``run_selected`` when the user picks one."""

    run_selected = Signal(object)   # RunInfo
    run_updated = Signal(object)    # newer RunInfo of the selected run (live)
    run_removed = Signal(str)       # the selected run's id: the store no longer has it

    def __init__(self, session: StoreSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.model = RunsModel(session, self)
        self.proxy = RunsFilterProxy(self)
        self.proxy.setSourceModel(self.model)
        self._selected_id: str | None = None
        self._reselect: str | None = None   # picked in a preview, selected again once the store is open
        self._removing = False              # rows of deleted runs going: no neighbour is picked
        self.run_menu: QMenu | None = None  # the window's Run menu, shown on a run's right-click
        self._collapsed: set[str] = set()   # runs whose forks the user folded away (kept across filters)
        self._build()
        self._filter_timer = QTimer(self, singleShot=True, interval=FILTER_DELAY_MS)
        self._filter_timer.timeout.connect(lambda: self.proxy.set_text(self.filter_edit.text()))
        self._refresh_timer = QTimer(self, interval=REFRESH_MS)
        self._refresh_timer.timeout.connect(self.refresh_running)
        self._owner_timer = QTimer(self, interval=OWNER_CHECK_MS)
        self._owner_timer.timeout.connect(self.model.check_owners)
        # a refresh when a running run's heartbeat will have stopped long enough to call it
        # stuck, sooner than the next REFRESH_MS (a hung agent showed 'running' for ~35 s)
        self._silence_timer = QTimer(self, singleShot=True)
        self._silence_timer.timeout.connect(self.refresh_running)
        self._wire()

    # -- construction ---------------------------------------------------------------
    _filtered_store: str | None = None

    def _build(self) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self._build_header())
        layout.addWidget(self._build_filter_bar())
        # the run shown on the right stays shown when a filter hides its row (no neighbour is
        # picked in its place, for every filter alike); this says so, and how to see it again
        self.hidden_note = style.mute(QLabel(self))
        self.hidden_note.setObjectName("hiddenRunNote")
        style.polish(self.hidden_note, "panel_header")
        self.hidden_note.setWordWrap(True)
        self.hidden_note.setContentsMargins(10, 4, 10, 4)
        self.hidden_note.setTextFormat(Qt.TextFormat.RichText)
        self.hidden_note.linkActivated.connect(lambda _link: self.clear_filters())
        self.hidden_note.hide()
        layout.addWidget(self.hidden_note)
        self.view = QTreeView(self)
        self.view.setObjectName("runsView")
        self.view.setFrameShape(QFrame.Shape.NoFrame)
        self.view.setModel(self.proxy)
        self.view.setUniformRowHeights(True)
        self.view.setSortingEnabled(True)
        self.view.sortByColumn(COL_UPDATED, Qt.SortOrder.DescendingOrder)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setIndentation(14)
        self.view.setExpandsOnDoubleClick(False)
        self.view.setItemDelegateForColumn(COL_NAME, RunNameDelegate(RunRole, ForkSeqRole, self.view))
        self.view.setItemDelegateForColumn(COL_STATUS, StatusPillDelegate(StatusRole, self.view))
        self.view.setItemDelegateForColumn(COL_CHECKS, ProgressDelegate(ProgressRole, self.view))
        header = self.view.header()
        style.polish(header, "header")
        header.setStretchLastSection(False)
        header.setSectionResizeMode(COL_NAME, QHeaderView.ResizeMode.Stretch)
        header.setMinimumSectionSize(40)
        for col, width in COLUMN_WIDTHS.items():
            header.resizeSection(col, width)
        header.setSectionHidden(COL_AGENT, True)
        header.setSectionHidden(COL_ID, True)
        header.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        header.customContextMenuRequested.connect(self._on_header_menu)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.view.customContextMenuRequested.connect(self._on_run_menu)
        layout.addWidget(self.view, 1)
        self.view.viewport().installEventFilter(self)
        self.column_fit = RunsColumnFit(self.view)
        self.empty_hint = style.mute(QLabel(NO_MATCH_TEXT, self.view.viewport()))
        self.empty_hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_hint.setWordWrap(True)
        self.empty_hint.setContentsMargins(24, 0, 24, 0)
        self.empty_hint.hide()

    def _build_header(self) -> QFrame:
        frame = QFrame(self)
        style.polish(frame, "panel_header")
        row = QHBoxLayout(frame)
        row.setContentsMargins(10, 6, 10, 6)
        title = style.bold(QLabel("Runs", frame))
        self.count_label = style.mute(QLabel("", frame))
        row.addWidget(title)
        row.addStretch(1)
        row.addWidget(self.count_label)
        return frame

    def _build_filter_bar(self) -> QWidget:
        bar = QWidget(self)
        style.polish(bar, "filter_bar")
        row = QHBoxLayout(bar)
        row.setContentsMargins(8, 6, 8, 6)
        row.setSpacing(4)
        self.filter_edit = QLineEdit(bar)
        self.filter_edit.setPlaceholderText("Filter by name, agent or id")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.addAction(icons.icon("search"), QLineEdit.ActionPosition.LeadingPosition)
        self.filter_edit.setToolTip("Down or Enter: into the matching runs; Esc: clear")
        self.filter_edit.installEventFilter(self)
        row.addWidget(self.filter_edit, 1)
        self.status_button = QToolButton(bar)
        self.status_button.setIcon(icons.icon("filter"))
        self.status_button.setText("Status")
        self.status_button.setToolTip("Show only runs with these statuses")
        self.status_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.status_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.status_menu = QMenu(self.status_button)
        self.status_actions: dict[str, QAction] = {}
        for status in RUN_STATUSES:
            action = self.status_menu.addAction(icons.status_icon(status), status)
            action.setCheckable(True)
            action.toggled.connect(self._on_status_toggled)
            self.status_actions[status] = action
        self.status_menu.addSeparator()
        self.status_menu.addAction("Show all statuses", lambda: self.set_status_filter(()))
        self.status_button.setMenu(self.status_menu)
        row.addWidget(self.status_button)
        self.forks_button = QToolButton(bar)
        self.forks_button.setIcon(icons.icon("branch"))
        self.forks_button.setCheckable(True)
        self.forks_button.setChecked(True)
        self.forks_button.setToolTip("Show forks under the run they came from")
        self.forks_button.toggled.connect(lambda on: self.proxy.set_hide_forks(not on))
        row.addWidget(self.forks_button)
        return bar

    def _wire(self) -> None:
        self.filter_edit.textChanged.connect(lambda _t: self._filter_timer.start())
        self.view.selectionModel().currentRowChanged.connect(self._on_current_changed)
        self.model.runs_loaded.connect(self._on_runs_loaded)
        self.proxy.rowsInserted.connect(self._expand_inserted)
        self.view.collapsed.connect(lambda index: self._note_folded(index, True))
        self.view.expanded.connect(lambda index: self._note_folded(index, False))
        self.model.modelReset.connect(self._on_model_reset)
        self.model.runs_updated.connect(self._on_runs_updated)
        self.model.runs_removing.connect(self._on_runs_removing)
        self.model.runs_removed.connect(self._on_runs_removed)
        self.model.annotated.connect(self._watch_silence)
        self.model.runs_updated.connect(self._watch_silence)
        for signal in (self.proxy.rowsInserted, self.proxy.rowsRemoved, self.proxy.modelReset,
                       self.proxy.layoutChanged):
            signal.connect(self._update_counts)
            signal.connect(self._follow_filter)
        self.session.opened.connect(lambda _info: self._on_store_opened())
        self.session.closed.connect(self._on_store_closed)

    # -- public API ---------------------------------------------------------------------
    def focus_filter(self) -> None:
        """Put the cursor in the filter box (Ctrl+F)."""
        self.filter_edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.filter_edit.selectAll()

    def set_text_filter(self, text: str) -> None:
        """Filter by text at once (no typing delay)."""
        self.filter_edit.setText(text)
        self._filter_timer.stop()
        self.proxy.set_text(text)

    def set_status_filter(self, statuses: tuple[str, ...] | list[str] | set[str]) -> None:
        """Show only these effective statuses (empty: all)."""
        for status, action in self.status_actions.items():
            action.blockSignals(True)
            action.setChecked(status in statuses)
            action.blockSignals(False)
        self._on_status_toggled()

    def set_show_forks(self, show: bool) -> None:
        """Show or hide forked runs."""
        self.forks_button.setChecked(show)

    def clear_filters(self) -> None:
        """Show every run again: no text, every status, forks."""
        self.set_text_filter("")
        self.set_status_filter(())
        self.set_show_forks(True)

    def selected_hidden(self) -> bool:
        """True when the selected run (still shown on the right) is hidden by the filter."""
        if not self._selected_id:
            return False
        source = self.model.run_index(self._selected_id)
        return source.isValid() and not self._passes(source)

    def _passes(self, source: QModelIndex) -> bool:
        """Whether the filter shows the source row (a run shows when it or a fork under it matches)."""
        if self.proxy.filterAcceptsRow(source.row(), source.parent()):
            return True
        return any(self._passes(self.model.index(r, 0, source)) for r in range(self.model.rowCount(source)))

    def current_run(self) -> RunInfo | None:
        """The selected run."""
        return self.model.run(self._selected_id) if self._selected_id else None

    def select_run(self, run_id: str, again: bool = False) -> bool:
        """Select a run by id; False if it is not listed (or filtered out). ``again``: emit
        ``run_selected`` even when it is the selected run (its timeline is read anew)."""
        source = self.model.run_index(run_id)
        index = self.proxy.mapFromSource(source)
        if not index.isValid():
            return False
        if again and run_id == self._selected_id:
            self._selected_id = None        # (so that the current row "changes" to it)
        self.view.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)
        self.view.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)
        if again and self._selected_id is None:     # the row was current already: no change signalled
            self._on_current_changed(self.view.currentIndex(), QModelIndex())
        return True

    def refresh_running(self) -> None:
        """Every ``REFRESH_MS``: relative times, and the runs whose status may have moved on
        (the selected one too when it crashed: its notice says how long ago)."""
        self.model.refresh_running(self._selected_id)

    def _watch_silence(self, *_args: object) -> None:
        import time

        due = self.model.next_silence(time.time())
        left = self._refresh_timer.remainingTime()
        if due is not None and (left < 0 or due * 1000 + SILENCE_SLACK_MS < left):
            self._silence_timer.start(int(due * 1000) + SILENCE_SLACK_MS)

    def apply_changes(self, changes: ChangeSet) -> None:
        """Merge a live change."""
        self.model.apply_changes(changes)

    def refresh(self) -> None:
        """Re-read every run (F5)."""
        self.model.reload()

    # -- slots ----------------------------------------------------------------------------
    def _on_store_opened(self) -> None:
        # after a preview its rows stay until the store's first page replaces them (no blank
        # flash), and a run picked meanwhile is selected again then, with the store open
        self._reselect = self._selected_id if self.model.previewing else None
        self._selected_id = None
        self._collapsed.clear()
        info = self.session.info
        url = info.url if info is not None else None
        if url != self._filtered_store:    # a filter belongs to the store it was typed for
            self._filtered_store = url
            if self.proxy.text or self.proxy.statuses:
                self.set_text_filter("")
                self.set_status_filter([])
        if not self.model.previewing:
            self.model.clear()
        self.model.reload()
        self._refresh_timer.start()
        self._owner_timer.start()
        self._show_hidden_note()

    def _on_store_closed(self) -> None:
        self._refresh_timer.stop()
        self._owner_timer.stop()
        self._silence_timer.stop()
        self._selected_id = None
        self.model.clear()
        self._show_hidden_note()

    def _on_current_changed(self, current: QModelIndex, previous: QModelIndex) -> None:
        if not current.isValid() or self._removing:   # (Qt moves the current row off a removed one)
            return  # filtered out: keep showing what was selected
        left = previous.data(RunRole) if previous.isValid() else None
        if left is not None and left.id == self._selected_id and self.selected_hidden():
            return  # Qt moves off the row a filter hides: that neighbour is not the user's choice
        run = current.data(RunRole)
        if run is not None and run.id != self._selected_id:
            self._selected_id = run.id
            self._show_hidden_note()
            self.run_selected.emit(run)

    def _expand_all(self) -> None:
        """Every run's forks shown, but those of the runs the user folded."""
        self.view.expandAll()
        for run_id in list(self._collapsed):
            index = self.proxy.mapFromSource(self.model.run_index(run_id))
            if index.isValid():
                self.view.collapse(index)

    def _on_model_reset(self) -> None:
        self._expand_all()
        if self._reselect and not self.model.previewing:
            run_id, self._reselect = self._reselect, None
            self.select_run(run_id)
        elif self._selected_id:
            self.select_run(self._selected_id)

    def _on_runs_loaded(self, _count: int) -> None:
        self._expand_all()
        self._update_counts()
        if self._selected_id and self.model.run(self._selected_id) is None:
            self._selected_id = None
        self._show_hidden_note()

    def _on_runs_removing(self, _run_ids: list[str]) -> None:
        self._removing = True

    def _on_runs_removed(self, run_ids: list[str]) -> None:
        self._removing = False
        if self._selected_id in run_ids:
            # the run shown was deleted: nothing is selected in its place (a neighbour shown
            # instead would read as the same run); the window says what happened
            gone, self._selected_id = self._selected_id, None
            self.view.selectionModel().clear()
            self._show_hidden_note()
            self.run_removed.emit(gone)

    def _on_runs_updated(self, run_ids: list[str]) -> None:
        self._update_counts()
        if self._selected_id in run_ids:
            run = self.model.run(self._selected_id)
            if run is not None:
                self.run_updated.emit(run)
                current = self.view.currentIndex().data(RunRole)
                if current is None or current.id != run.id:
                    self.select_run(run.id)   # a fork whose run was deleted: listed anew, still selected

    def _follow_filter(self, *_args: object) -> None:
        """After the filter changed (or a live run's status did): the selected run, when hidden,
        leaves no other row highlighted and the list says it is hidden; shown again, its row
        is selected again."""
        hidden = self._show_hidden_note()
        current = self.view.currentIndex().data(RunRole)
        if hidden and current is not None:
            self.view.selectionModel().clear()      # the row Qt moved to is not selected
        elif not hidden and self._selected_id and (current is None or current.id != self._selected_id) \
                and not self._removing and not self.model.previewing:
            self.select_run(self._selected_id)

    def _show_hidden_note(self) -> bool:
        """Say (above the list) that the selected run is hidden by the filter; True when it is."""
        run = self.current_run() if self.selected_hidden() else None
        self.hidden_note.setVisible(run is not None)
        if run is not None:
            self.hidden_note.setText(HIDDEN_TEXT.format(name=html.escape(run.name)))
        return run is not None

    def _expand_inserted(self, parent: QModelIndex, first: int, last: int) -> None:
        if parent.isValid():  # a new fork: show it under its run
            self.view.expand(parent)
        for row in range(first, last + 1):    # a run a filter showed again: its forks as they were
            index = self.proxy.index(row, 0, parent)
            run = index.data(RunRole)
            if self.proxy.hasChildren(index) and run is not None and run.id not in self._collapsed:
                self.view.expand(index)

    def _note_folded(self, index: QModelIndex, folded: bool) -> None:
        run = index.data(RunRole)
        if run is not None:
            (self._collapsed.add if folded else self._collapsed.discard)(run.id)

    def _on_status_toggled(self, *_args: object) -> None:
        chosen = [s for s, a in self.status_actions.items() if a.isChecked()]
        self.proxy.set_statuses(chosen)
        self.status_button.setText(f"Status ({len(chosen)})" if chosen else "Status")

    def _update_counts(self, *_args: object) -> None:
        total = len(self.model.tree)
        filtered = bool(self.proxy.text or self.proxy.statuses or self.proxy.hide_forks)
        shown = self._shown_runs() if filtered else total
        self.count_label.setText(f"{shown:,} of {plural(total, 'run')} shown" if filtered else plural(total, "run"))
        empty_store = total == 0 and self.model.loaded and self.session.store is not None
        self.empty_hint.setText(self._empty_store_text() if empty_store else NO_MATCH_TEXT)
        self.empty_hint.setVisible(empty_store or (total > 0 and shown == 0))
        self.empty_hint.resize(self.view.viewport().size())

    def _empty_store_text(self) -> str:
        """What an empty store's list says: that it is empty, and how runs get there."""
        info = self.session.info
        return EMPTY_STORE_TEXT.format(writer=NATIVE_WRITER if info is None or info.kind == "native" else OTHER_WRITER)

    def _shown_runs(self, parent: QModelIndex | None = None) -> int:
        """Runs the filtered list shows, forks under their runs included (same unit as the total)."""
        parent = parent if parent is not None else QModelIndex()
        rows = self.proxy.rowCount(parent)
        return rows + sum(self._shown_runs(self.proxy.index(r, 0, parent)) for r in range(rows)
                          if self.proxy.hasChildren(self.proxy.index(r, 0, parent)))

    def run_menu_at(self, pos: QPoint) -> QMenu | None:
        """The menu of the run under ``pos`` (the view's viewport): that run is selected first,
        so the window's Run menu (Fork…, Resume…, Task History…, Delete Run…) acts on it."""
        index = self.view.indexAt(pos)
        run = index.data(RunRole) if index.isValid() else None
        if run is None or self.run_menu is None:
            return None
        if run.id != self._selected_id:
            self.select_run(run.id)
        return self.run_menu

    def _on_run_menu(self, pos: QPoint) -> None:
        menu = self.run_menu_at(pos)
        if menu is not None:
            menu.exec(self.view.viewport().mapToGlobal(pos))

    def _on_header_menu(self, pos: QPoint) -> None:
        header = self.view.header()
        menu = QMenu(self)
        for col, title in enumerate(COLUMN_TITLES):
            if col == COL_NAME:
                continue
            action = menu.addAction(title)
            action.setCheckable(True)
            action.setChecked(not header.isSectionHidden(col))
            action.toggled.connect(lambda on, c=col: self._on_column_toggled(c, on))
        menu.popup(header.mapToGlobal(pos))

    def _on_column_toggled(self, column: int, shown: bool) -> None:
        self.column_fit.user_choice(column)     # the user's choice: never undone by the fit
        self.view.header().setSectionHidden(column, not shown)

    def _into_matches(self) -> None:
        """Down or Enter in the filter box: the filter now, the keyboard in the list, on the
        selected run when the filter shows it, else on the first match (selected)."""
        self._filter_timer.stop()
        self.proxy.set_text(self.filter_edit.text())
        if self.proxy.rowCount() == 0:
            return
        self.view.setFocus(Qt.FocusReason.OtherFocusReason)
        current = self.view.currentIndex()
        if not current.isValid() or self.selected_hidden():
            first = self.proxy.index(0, 0)
            self.view.selectionModel().setCurrentIndex(
                first, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)
        self.view.scrollTo(self.view.currentIndex())

    def _on_filter_key(self, event: QKeyEvent) -> bool:
        """The filter box's keys: True when one was used."""
        key = event.key()
        if key in (Qt.Key.Key_Down, Qt.Key.Key_Return, Qt.Key.Key_Enter) and not event.modifiers():
            self._into_matches()
            return True
        if key == Qt.Key.Key_Escape and self.filter_edit.text():
            self.set_text_filter("")
            return True
        return False

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # Qt override
        if watched is self.filter_edit and event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            return self._on_filter_key(event)
        if watched is self.view.viewport() and event.type() in (QEvent.Type.Enter, QEvent.Type.Leave):
            self.model.set_hold_order(event.type() == QEvent.Type.Enter)   # rows stay under the cursor
        return super().eventFilter(watched, event)

    def resizeEvent(self, event) -> None:  # Qt override
        super().resizeEvent(event)
        self.empty_hint.resize(self.view.viewport().size())
