"""The timeline panel: a run's checkpoints (lazy table), keyboard navigation and a scrubber."""

from __future__ import annotations

from functools import partial

from PySide6.QtCore import QEvent, QItemSelection, QItemSelectionModel, QModelIndex, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QFontMetrics, QIcon
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QSlider,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from inspector.humanize import plural
from inspector.model import CHECKPOINT_KINDS, ChangeSet, CheckpointInfo, RunInfo
from inspector.store.base import Store
from inspector.store.branches import Branch, lane_name
from inspector.ui import icons, style
from inspector.ui.formatting import visible
from inspector.ui.models.timeline_model import (
    COL_CHANGE,
    COL_CHECKS,
    COL_DELTA,
    COL_FORKS,
    COL_GAP,
    COL_KIND,
    COL_NAME,
    COL_SEQ,
    COL_SIZE,
    COL_TIME,
    LaneRole,
    ProgressRole,
    TimelineModel,
)
from inspector.ui.session import StoreSession
from inspector.ui.widgets.item_delegates import LaneDelegate, ProgressDelegate

COLUMN_WIDTHS = {COL_SEQ: 56, COL_KIND: 74, COL_NAME: 140, COL_TIME: 70, COL_GAP: 66, COL_SIZE: 64,
                 COL_DELTA: 66, COL_CHECKS: 90, COL_FORKS: 50}
ROW_HEIGHT = 26
TEXT_WIDTHS = (110, 200, 110)   # name column: least, most; change column: least (it takes the rest)
KIND_ICON_WIDTH, SQUEEZED_MIN = 34, 48
DROP_ORDER = (COL_GAP, COL_FORKS, COL_TIME)   # hidden in this order when the view is too narrow
# the widest gaps ``fmt_gap`` writes, in each of its units (and the column's title)
GAP_SAMPLES = ("Gap", "+999 ms", "+59.9 s", "+59 min 59 s", "+99 h 59 min")


def fixed_widths(metrics, mono) -> dict[int, int]:
    """Each number-like column's width from what it shows (and its title)."""
    digits = QFontMetrics(mono)
    pad = 18
    return {COL_SEQ: max(digits.horizontalAdvance("9999"), metrics.horizontalAdvance("#")) + pad,
            COL_KIND: 16 + 6 + _widest(metrics, CHECKPOINT_KINDS) + pad,   # icon, space, the longest kind
            COL_TIME: metrics.horizontalAdvance("88-88 88:88") + pad,   # other days: "11-27 04:23"
            COL_GAP: _widest(metrics, GAP_SAMPLES) + pad,
            COL_SIZE: max(digits.horizontalAdvance("99.9 KB"), metrics.horizontalAdvance("Size")) + pad,
            COL_DELTA: max(digits.horizontalAdvance("+99.9 KB"), metrics.horizontalAdvance("Δ Size")) + pad,
            COL_CHECKS: 76,
            COL_FORKS: metrics.horizontalAdvance("Forks") + pad}


def _locate(store: Store, wanted: int | str, earlier: list[int | str],
            batch: int = 100) -> dict[int | str, CheckpointInfo]:
    """Checkpoint ``wanted`` as the store has it now (renumbered by a prune), else the first
    of ``earlier`` (nearest first) still there; read in batches that stop at the first found
    (a store without a batch read asks for each id alone). Worker thread."""
    found = store.checkpoints_by_id([wanted])
    for start in range(0, len(earlier), batch):
        if found:
            break
        found = store.checkpoints_by_id(earlier[start:start + batch])
    return found


def _widest(metrics: QFontMetrics, texts: tuple[str, ...]) -> int:
    """The width of the widest of ``texts``."""
    return max(metrics.horizontalAdvance(text) for text in texts)


class TimelineView(QTableView):
    """A table where Home/End go to the first/last checkpoint (not the first/last column)."""

    def moveCursor(self, action: QAbstractItemView.CursorAction, modifiers: Qt.KeyboardModifier) -> QModelIndex:
        model = self.model()
        if model is not None and model.rowCount() and action in (
                QAbstractItemView.CursorAction.MoveHome, QAbstractItemView.CursorAction.MoveEnd):
            row = 0 if action == QAbstractItemView.CursorAction.MoveHome else model.rowCount() - 1
            column = max(0, self.currentIndex().column())
            return model.index(row, column)
        return super().moveCursor(action, modifiers)


class TimelinePanel(QWidget):
    """Shows one run's checkpoints; emits the current checkpoint and the multi-selection."""

    checkpoint_selected = Signal(object)    # CheckpointInfo of the current row
    checkpoints_selected = Signal(list)     # every selected (loaded) CheckpointInfo, by seq
    # the current checkpoint read again in place (its pin, made or removed elsewhere): what
    # follows it (the Pin action's check) updates; its state is the same, nothing reloads
    checkpoint_updated = Signal(object)
    # the checkpoint shown was deleted (a prune elsewhere) while its run was read again: one
    # sentence saying so and which checkpoint is shown instead (for the window's banner)
    place_lost = Signal(str)

    def __init__(self, session: StoreSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.model = TimelineModel(session, self)
        self._pending_row: int | None = None
        self._pending_seq: int | None = None     # asked for before the run's branches were known
        self._follow_head = False
        self._head_wait: int | None = None   # following the head: the row kept current until the head's row loads
        self._branch_menu: QMenu | None = None
        self._at_bottom = False
        self._keeping = 0       # counts show_run(keep=True): a late look-up of an older one is dropped
        self._build()
        self._wire()
        self._show_run_header(None)

    # -- construction ------------------------------------------------------------------
    def _build(self) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self._build_header())
        self.view = TimelineView(self)
        self.view.setObjectName("timelineView")
        self.view.setFrameShape(QFrame.Shape.NoFrame)
        self.view.setModel(self.model)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.view.setTabKeyNavigation(False)   # Tab leaves for the next pane; arrows move between rows
        self.view.setShowGrid(False)
        self.view.setWordWrap(False)
        self.view.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.view.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.view.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        vheader = self.view.verticalHeader()
        vheader.hide()
        vheader.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        vheader.setDefaultSectionSize(ROW_HEIGHT)
        header = self.view.horizontalHeader()
        style.polish(header, "header")
        header.setHighlightSections(False)
        header.setMinimumSectionSize(36)
        for col, width in COLUMN_WIDTHS.items():
            header.resizeSection(col, width)
        header.setStretchLastSection(False)   # fit_columns gives the change column the rest
        self.view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._fit_timer = QTimer(self, singleShot=True, interval=0)
        self._fit_timer.timeout.connect(self.fit_columns)
        self.view.viewport().installEventFilter(self)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.view.customContextMenuRequested.connect(self._on_run_menu)
        self.run_menu: QMenu | None = None    # the window's Run menu, shown on a checkpoint's right-click
        self.view.setItemDelegateForColumn(COL_CHECKS, ProgressDelegate(ProgressRole, self.view))
        self.view.setItemDelegateForColumn(COL_NAME, LaneDelegate(LaneRole, self.view))
        layout.addWidget(self.view, 1)
        layout.addWidget(self._build_scrubber())
        self.empty_hint = style.mute(QLabel("Select a run to see its checkpoints.", self.view.viewport()))
        self.empty_hint.setAlignment(Qt.AlignmentFlag.AlignCenter)

    def _build_header(self) -> QFrame:
        frame = QFrame(self)
        style.polish(frame, "panel_header")
        row = QHBoxLayout(frame)
        row.setContentsMargins(10, 6, 10, 6)
        title = style.bold(QLabel("Timeline", frame))
        self.run_label = style.mute(QLabel("", frame))
        self.run_label.setTextFormat(Qt.TextFormat.PlainText)   # a run's name is the agent's text, never markup
        self.run_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.count_label = style.mute(QLabel("", frame))
        self.branch_box = QComboBox(frame)
        self.branch_box.setObjectName("branchSelector")
        self.branch_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.branch_box.setMinimumContentsLength(18)
        self.branch_box.setToolTip("The thread's branches (update_state, forks and replays start one): "
                                   "the timeline shows one at a time")
        self.branch_box.setAccessibleName("Branch")
        self.branch_box.hide()
        row.addWidget(title)
        row.addSpacing(8)
        row.addWidget(self.run_label, 1)
        row.addWidget(self.branch_box)
        row.addSpacing(6)
        row.addWidget(self.count_label)
        return frame

    def _build_scrubber(self) -> QWidget:
        bar = QFrame(self)
        style.polish(bar, "scrubber")
        row = QHBoxLayout(bar)
        row.setContentsMargins(10, 4, 10, 4)
        self.scrubber = QSlider(Qt.Orientation.Horizontal, bar)
        self.scrubber.setToolTip("Scrub through the run's checkpoints")
        self.scrubber.setRange(0, 0)
        self.scrubber.setEnabled(False)
        self.position_label = style.mute(QLabel("", bar))
        self.position_label.setMinimumWidth(110)
        self.position_label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        row.addWidget(self.scrubber, 1)
        row.addWidget(self.position_label)
        return bar

    def _wire(self) -> None:
        selection = self.view.selectionModel()
        selection.currentRowChanged.connect(self._on_current_row_changed)
        selection.selectionChanged.connect(self._on_selection_changed)
        self.scrubber.valueChanged.connect(self._on_scrubbed)
        self.model.page_loaded.connect(self._on_page_loaded)
        self.model.rows_unreadable.connect(self._on_rows_unreadable)
        self.model.modelReset.connect(self._sync_scrubber_range)
        self.model.rowsInserted.connect(self._sync_scrubber_range)
        self.model.rowsAboutToBeInserted.connect(self._on_rows_about_to_be_inserted)
        self.model.rows_appended.connect(self._on_rows_appended)
        self.model.branches_changed.connect(self._on_branches_changed)
        self.model.pins_changed.connect(self._on_pins_changed)
        self.session.written.connect(self.model.reread_pins)    # a pin made elsewhere writes only its pin
        self.branch_box.activated.connect(self._on_branch_box_activated)

    # -- public API ------------------------------------------------------------------------
    def show_run(self, run: RunInfo | None, keep: bool = False) -> None:
        """Show ``run``'s timeline (placeholders at once, rows as their pages load).

        ``keep``: the run shown, read again after some of its checkpoints were deleted (a
        prune by another process): its rows are numbered anew, so the checkpoint that was
        current is found again by its id and selected at its new #seq; when it was deleted
        itself, its nearest kept ancestor (else the head) is selected and ``place_lost``
        says so. Without a checkpoint current the head is selected."""
        shown, current = self.model.run, self.current_checkpoint()
        earlier = self._earlier_ids() if keep else []
        self._pending_row = None
        self._pending_seq = None
        self._head_wait = None
        self.model.set_run(run)
        self._show_run_header(run)
        self.view.scrollToTop()
        if not keep or run is None or not run.checkpoint_count or self.model.store_gone:
            return
        store = self.session.store
        if current is None or shown is None or shown.id != run.id or store is None:
            self.select_seq(-1)
            return
        self._keeping += 1
        asked = self._keeping
        self.session.runner.run(partial(_locate, store, current.id, earlier),
                                lambda found: self._on_kept(asked, run, current, earlier, found),
                                lambda _why: self._on_kept(asked, run, current, earlier, {}))

    def _earlier_ids(self, limit: int = 2000) -> list[int | str]:
        """Ids of the loaded rows before the current one, nearest first (its ancestors on the
        branch shown: where to go when it is deleted)."""
        index = self.view.currentIndex()
        if not index.isValid():
            return []
        found = (self.model.checkpoint(row) for row in range(index.row() - 1, max(-1, index.row() - 1 - limit), -1))
        return [info.id for info in found if info is not None]

    def _on_kept(self, asked: int, run: RunInfo, current: CheckpointInfo, earlier: list[int | str],
                 found: dict[int | str, CheckpointInfo]) -> None:
        """Where the checkpoint that was current went (``found``: the ids still there, at
        their new #seq): selected there, else at its nearest kept ancestor, else the head."""
        if asked != self._keeping or self.model.run is None or self.model.run.id != run.id:
            return      # another run (or another read of this one) since
        if self.view.currentIndex().isValid():
            return      # the user chose a row meanwhile
        kept = found.get(current.id)
        if kept is not None:
            self.select_seq(kept.seq)
            return
        ancestor = next((found[i] for i in earlier if i in found), None)
        name = visible(run.name)
        if ancestor is not None:
            self.select_seq(ancestor.seq)
            instead = f"its nearest kept ancestor, now #{ancestor.seq}, is shown instead"
        else:
            self.select_seq(-1)
            instead = "the run's head is shown instead"
        self.place_lost.emit(f"Checkpoint #{current.seq} of “{name}” is no longer in the store (pruned or "
                             f"deleted): {instead}.")

    def update_run(self, run: RunInfo) -> None:
        """A newer RunInfo of the shown run arrived (live)."""
        self.model.update_run(run)
        self._show_count()

    def set_forks(self, forks: list[RunInfo]) -> None:
        """Runs forked from the shown run (fork markers)."""
        self.model.set_forks(forks)

    def apply_changes(self, changes: ChangeSet) -> None:
        """Append live checkpoints of the shown run; a view left at the head follows the new head."""
        self.model.apply_changes(changes)
        if self._head_wait is not None:     # the head's row may have been filled in, not added
            self._follow_to_head(request=False)
        self._show_count()

    def _on_rows_about_to_be_inserted(self, *_args: object) -> None:
        current = self.view.currentIndex()
        at = self.model.rowCount() - 1 if self._head_wait is None else self._head_wait
        self._follow_head = current.isValid() and current.row() == at and \
            len(self.view.selectionModel().selectedRows()) <= 1
        bar = self.view.verticalScrollBar()
        self._at_bottom = bar.value() >= bar.maximum() and not current.isValid() and self.model.rowCount() > 0

    def _on_rows_appended(self, _count: int) -> None:
        if self._follow_head:
            self._follow_to_head()
        elif self._at_bottom:
            self.view.scrollToBottom()
        self._show_count()

    def _follow_to_head(self, request: bool = True) -> None:
        """Select the head's row once it is loaded; until then the row followed before stays
        current (its page is asked for): rows a newer RunInfo added come before their
        checkpoints, and a head followed onto a placeholder would show no checkpoint."""
        last = self.model.rowCount() - 1
        if last < 0:
            return
        if self.model.is_loaded(last):
            self._head_wait = None
            self.select_row(last)
            return
        current = self.view.currentIndex()
        self._head_wait = current.row() if current.isValid() else None
        if self._head_wait is None:      # nothing current to keep: the head's row, loading
            self.select_row(last)
        elif request:
            self.model.request_row(last)

    def run_menu_at(self, pos: QPoint) -> QMenu | None:
        """The menu of the checkpoint under ``pos`` (the view's viewport): its row is selected
        first (two rows selected for a diff stay so), so the window's Run menu (Copy
        Checkpoint Reference, Fork…, Resume…, Pin Checkpoint…) acts on it."""
        index = self.view.indexAt(pos)
        if not index.isValid() or self.run_menu is None:
            return None
        if not self.view.selectionModel().isRowSelected(index.row(), QModelIndex()) or \
                len(self.view.selectionModel().selectedRows()) < 2:
            self.select_row(index.row())
        return self.run_menu

    def _on_run_menu(self, pos: QPoint) -> None:
        menu = self.run_menu_at(pos)
        if menu is not None:
            menu.exec(self.view.viewport().mapToGlobal(pos))

    def select_row(self, row: int, center: bool = False) -> None:
        """Make ``row`` the current and only selected row and scroll it into view."""
        if not 0 <= row < self.model.rowCount():
            return
        index = self.model.index(row, max(0, self.view.currentIndex().column()))
        self.view.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)
        hint = QAbstractItemView.ScrollHint.PositionAtCenter if center else QAbstractItemView.ScrollHint.EnsureVisible
        self.view.scrollTo(index, hint)

    def select_seq(self, seq: int) -> None:
        """Select checkpoint ``seq``, centred in the view, switching to a branch that holds it
        when the shown one does not; a negative seq counts back over the shown branch's
        main-graph checkpoints (-1: its head)."""
        if self.model.topology_loading:
            self._pending_seq = seq
            return
        self._pending_seq = None
        row = self.model.row_of_seq(seq) if seq >= 0 else self._row_from_end(seq)
        if row is None and seq >= 0:
            through = self.model.branches_from(seq)
            if through:
                self.model.set_branch(through[0])
                row = self.model.row_of_seq(seq)
        if row is not None:
            self.select_row(row, center=True)

    def _row_from_end(self, seq: int) -> int | None:
        rows = self.model.root_rows() if self.model.branch is not None else []
        if rows:
            return rows[seq] if -len(rows) <= seq else None
        row = self.model.rowCount() + seq
        return row if row >= 0 else None

    def select_checkpoint(self, info: CheckpointInfo) -> None:
        """Select ``info`` when it is of the shown run (its branch is shown first)."""
        if self.model.run is not None and info.run_id == self.model.run.id:
            self.select_seq(info.seq)

    def switch_branch(self, index: int, at_seq: int | None = None) -> None:
        """Show branch ``index``; select the checkpoint after ``at_seq`` on it (a divergence
        marker), else the current checkpoint when the branch holds it, else its first own one."""
        current = self.current_checkpoint()
        self.model.set_branch(index)
        branch = self.model.branch
        if branch is None:
            return
        row = None
        if at_seq is not None and (at := self.model.row_of_seq(at_seq)) is not None:
            row = min(at + 1, self.model.rowCount() - 1)
        elif current is not None and branch.contains(current.seq):
            row = self.model.row_of_seq(current.seq)
        elif branch.fork_seq is not None and (at := self.model.row_of_seq(branch.fork_seq)) is not None:
            row = min(at + 1, self.model.rowCount() - 1)
        if row is not None:
            self.select_row(row, center=True)

    def _on_branch_box_activated(self, index: int) -> None:
        if index != self.model.branch_index:
            self.switch_branch(index)

    def _on_branches_changed(self) -> None:
        box, branches = self.branch_box, self.model.branches
        box.blockSignals(True)
        box.clear()
        for i, branch in enumerate(branches):
            box.addItem(icons.icon("kind-fork") if not branch.main else QIcon(), branch.label)
            box.setItemData(i, self._branch_tip(branch), Qt.ItemDataRole.ToolTipRole)
        box.setCurrentIndex(self.model.branch_index if branches else -1)
        box.blockSignals(False)
        box.setVisible(len(branches) > 1)
        self._show_count()
        if self._pending_seq is not None and not self.model.topology_loading:
            self.select_seq(self._pending_seq)

    @staticmethod
    def _branch_tip(branch: Branch) -> str:
        if branch.main:
            return (f"The thread's head #{branch.head_seq} and its ancestry "
                    "(what LangGraph's get_state shows)")
        if branch.lane:
            return (f"A fork inside the subgraph {lane_name(branch.lane)}: leaves its newest line at "
                    f"#{branch.fork_seq} by {branch.source}; its head is #{branch.head_seq}")
        return (f"Leaves the head branch at #{branch.fork_seq} by {branch.source}; "
                f"its head is #{branch.head_seq}")

    def branch_menu(self, seq: int) -> QMenu | None:
        """The menu a divergence marker opens: one branch per child of checkpoint ``seq``."""
        through = self.model.branch_choices(seq)
        if len(through) < 2:
            return None
        menu = QMenu(self)
        menu.setToolTipsVisible(True)
        for i in through:
            action = menu.addAction(self.model.branches[i].label)
            action.setCheckable(True)
            action.setChecked(i == self.model.branch_index)
            action.setToolTip(self._branch_tip(self.model.branches[i]))
            action.triggered.connect(lambda _checked=False, i=i: self.switch_branch(i, at_seq=seq))
        self._branch_menu = menu
        return menu

    def current_checkpoint(self) -> CheckpointInfo | None:
        """The checkpoint of the current row, if loaded."""
        index = self.view.currentIndex()
        return self.model.checkpoint(index.row()) if index.isValid() else None

    def selected_checkpoints(self) -> list[CheckpointInfo]:
        """Every selected checkpoint that is loaded, in seq order."""
        rows = sorted({i.row() for i in self.view.selectionModel().selectedRows()})
        return [c for c in (self.model.checkpoint(r) for r in rows) if c is not None]

    # -- slots ------------------------------------------------------------------------------
    def _on_current_row_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if self._head_wait is not None and current.row() != self._head_wait:
            self._head_wait = None       # another row chosen: the head is no longer followed
        if not current.isValid():
            return
        row = current.row()
        self._sync_scrubber(row)
        info = self.model.checkpoint(row)
        if info is None and self.model.unreadable(row):
            self._pending_row = None
            self.checkpoint_selected.emit(None)     # nothing to show: the row says why
            return
        if info is None:
            self._pending_row = row
            self.model.request_row(row)
            return
        self._pending_row = None
        self._sync_scrubber(row)     # now with the checkpoint's seq
        self.checkpoint_selected.emit(info)

    def _on_pins_changed(self, rows: list[int]) -> None:
        """Pins read again changed loaded rows: the current one's new info goes out (the Pin
        action's check follows a pin made elsewhere)."""
        current = self.view.currentIndex()
        if current.isValid() and current.row() in rows:
            info = self.model.checkpoint(current.row())
            if info is not None:
                self.checkpoint_updated.emit(info)

    def reread_pins(self) -> None:
        """Read the shown run's pins again (View ▸ Refresh)."""
        self.model.reread_pins()

    def _on_selection_changed(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        self.checkpoints_selected.emit(self.selected_checkpoints())

    def _on_page_loaded(self, first: int, last: int) -> None:
        if self._head_wait is not None and first <= self.model.rowCount() - 1 <= last:
            self._follow_to_head(request=False)
        row = self._pending_row
        if row is not None and first <= row <= last:
            self._pending_row = None
            info = self.model.checkpoint(row)
            if info is not None:
                self._sync_scrubber(row)
                self.checkpoint_selected.emit(info)
                if len(self.view.selectionModel().selectedRows()) > 1:
                    self.checkpoints_selected.emit(self.selected_checkpoints())

    def _on_rows_unreadable(self, first: int, last: int) -> None:
        """Rows a damaged store cannot give: a run opened on its head when that is one of
        them opens on the last checkpoint before them; another row waiting for them shows
        nothing (the row says why)."""
        if self._head_wait is not None and first <= self.model.rowCount() - 1 <= last:
            self._head_wait = None       # the head cannot be read: the row followed stays current
        row = self._pending_row
        if row is None or not first <= row <= last:
            return
        self._pending_row = None
        if row == self.model.rowCount() - 1 and first > 0 and len(self.view.selectionModel().selectedRows()) <= 1:
            self.select_row(first - 1)
        else:
            self.checkpoint_selected.emit(None)

    def _on_scrubbed(self, value: int) -> None:
        if value != self.view.currentIndex().row():
            self.select_row(value)

    def _sync_scrubber(self, row: int) -> None:
        self.scrubber.blockSignals(True)
        self.scrubber.setValue(row)
        self.scrubber.blockSignals(False)
        count = self.model.rowCount()
        info = self.model.checkpoint(row) if count else None
        seq = f"#{info.seq}" if info is not None else f"row {row + 1:,}"
        self.position_label.setText(f"{seq} \u00b7 {row + 1:,} of {count:,}" if count else "")

    def _sync_scrubber_range(self, *_args: object) -> None:
        count = self.model.rowCount()
        self.scrubber.blockSignals(True)
        self.scrubber.setRange(0, max(0, count - 1))
        self.scrubber.setPageStep(max(1, min(100, count // 20)))
        self.scrubber.blockSignals(False)
        self.scrubber.setEnabled(count > 1)
        current = self.view.currentIndex()
        self._sync_scrubber(current.row() if current.isValid() else 0)
        if not current.isValid():
            self.position_label.setText(plural(count, "checkpoint") if count else "")
        self._show_count()

    def _show_run_header(self, run: RunInfo | None) -> None:
        self.run_label.setText(visible(run.name) if run else "")
        self.run_label.setToolTip(f"{visible(run.name)}\n{run.id}" if run else "")
        self.empty_hint.setText("Its checkpoints cannot be read: the store is no longer there."
                                if self.model.store_gone else "Select a run to see its checkpoints.")
        self.empty_hint.setVisible(run is None or self.model.store_gone)
        self.empty_hint.resize(self.view.viewport().size())
        self._show_count()

    def _show_count(self) -> None:
        count, branches = self.model.rowCount(), len(self.model.branches)
        total = max(self.model.branch_total, branches)
        if self.model.store_gone and self.model.run is not None:
            count = self.model.run.checkpoint_count      # (as listed before the store went; none are shown)
        text = plural(count, "checkpoint") if self.model.run is not None else ""
        if branches > 1:
            text = f"{branches} branches" if total <= branches else f"newest {branches:,} of {total:,} branches"
        self.count_label.setText(text)
        tip = f"{plural(count, 'checkpoint')} on the branch shown" if branches > 1 else ""
        if total > branches:
            tip += (f"\nThe thread has {total:,} branches; the selector offers the newest {branches:,} "
                    "(the older ones are not listed).")
        self.count_label.setToolTip(tip)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.empty_hint.resize(self.view.viewport().size())

    def eventFilter(self, watched, event) -> bool:  # Qt override
        if watched is self.view.viewport() and event.type() == QEvent.Type.Resize:
            self._fit_timer.start()   # after the resize settles (a scroll bar may come or go)
        if watched is self.view.viewport() and event.type() == QEvent.Type.MouseButtonRelease \
                and event.button() == Qt.MouseButton.LeftButton:
            self._on_view_clicked_at(event.position().toPoint())
        return super().eventFilter(watched, event)

    def _on_view_clicked_at(self, pos: QPoint) -> None:
        """A click on a divergence marker ("2 branches ▾") opens the branch menu."""
        index = self.view.indexAt(pos)
        info = self.model.checkpoint(index.row()) if index.isValid() and index.column() == COL_CHANGE else None
        marker = self.model.branch_marker(info.seq) if info is not None else ""
        reach = self.view.fontMetrics().horizontalAdvance(marker) + 16
        if info is not None and marker and pos.x() - self.view.visualRect(index).left() <= reach:
            menu = self.branch_menu(info.seq)
            if menu is not None:
                menu.popup(self.view.viewport().mapToGlobal(pos))

    def fit_columns(self) -> None:
        """Fit the columns to the view's width: numbers at their content width, the name and change
        columns share the rest; when narrow, Gap, Forks, then Time are hidden (never a sideways scroll)."""
        header, width = self.view.horizontalHeader(), self.view.viewport().width()
        if width <= 0:
            return
        least = header.minimumSectionSize()
        fixed = {c: max(w, least) for c, w in fixed_widths(self.view.fontMetrics(), style.mono_font()).items()}
        name_min, name_max, change_min = TEXT_WIDTHS
        hidden: set[int] = set()
        for col in (None, *DROP_ORDER):
            if col is not None:
                hidden.add(col)
            used = sum(w for c, w in fixed.items() if c not in hidden)
            if used + name_min + change_min <= width:
                break
        compact = used + name_min + change_min > width
        if compact:   # narrower still: the kind as its icon only
            used -= fixed[COL_KIND] - max(KIND_ICON_WIDTH, least)
            fixed[COL_KIND] = max(KIND_ICON_WIDTH, least)
        self.model.set_compact_kind(compact)
        for col in range(header.count()):
            header.setSectionHidden(col, col in hidden)
        for col, w in fixed.items():
            if col not in hidden:
                header.resizeSection(col, w)
        spare = width - used - name_min - change_min
        if spare >= 0:
            name = name_min + min(name_max - name_min, spare // 4)   # the change column says more
        else:   # the text columns share what is left and elide
            name = max(SQUEEZED_MIN, (width - used) // 2)
        header.resizeSection(COL_NAME, name)
        header.resizeSection(COL_CHANGE, max(SQUEEZED_MIN, width - used - name))
