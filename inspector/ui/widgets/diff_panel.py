"""The Diff tab: two checkpoints compared, semantically, structurally and as text.

By default the shown checkpoint against its parent; or against a pinned/chosen base, or a
pair from the timeline. Shows the summary, task changes, the structural change list and a
side-by-side text diff.
"""

from __future__ import annotations

from typing import TYPE_CHECKING


from PySide6.QtCore import QEvent, QItemSelection, QModelIndex, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import (QActionGroup, QFontDatabase, QFontMetrics, QGuiApplication, QResizeEvent, QShowEvent,
                           QTextOption)
from PySide6.QtWidgets import (QAbstractItemView, QSizePolicy, QHBoxLayout, QHeaderView, QLabel,
                               QLineEdit, QMenu, QPlainTextEdit, QProgressBar, QSplitter, QStyle, QTableView, QToolButton,
                               QVBoxLayout, QWidget)

from inspector.diff.grouping import ItemRange
from inspector.humanize import plural
from inspector.diff.model import format_path
from inspector.ui import icons
from inspector.ui.availability import set_available
from inspector.ui.formatting import elide_middle, visible, visible_html
from inspector.diff import REMOVED, DiffResult
from inspector.errors import CheckpointNotFoundError, StoreError
from inspector.model import CheckpointInfo, RunInfo, Snapshot
from inspector.store.base import Store
from inspector.ui.models.change_list_model import CHANGE_ROLE, OP, PATH, ChangeListModel
from inspector.ui.models.change_rows import ChangeRowsProxy
from inspector.ui.tasks import LatestJob
from inspector.ui.widgets.change_detail import ChangeDetail
from inspector.ui.widgets.checkpoint_header import kind_chip
from inspector.ui.widgets.diff_jobs import DiffRequest, SideTexts, filter_rows, path_key, run_diff, run_text
from inspector.ui.widgets.diff_summary_view import DiffSummaryView
from inspector.ui.widgets.elided_label import ElidedRichLabel

if TYPE_CHECKING:   # the picker loads on first use
    from inspector.ui.widgets.checkpoint_picker import CheckpointPicker
from inspector.ui.widgets.palette import is_dark, muted_text, theme_changed
from inspector.ui.widgets.side_by_side import NO_TITLE, SideBySideView, Title

RUN_CHARS = 32   # another run's name on the Compare button is shortened in the middle beyond this
NARROW = 760     # a bar narrower than this shortens the Compare button's run name and the hunk count
NARROW_RUN_CHARS = 16
LIST_ROWS = 5   # change rows the list gets before the texts take the rest
MIN_LIST_ROWS = 4   # change rows the list keeps however short the tab
SIDES_MIN_LINES = 5   # the text diff's least height, in lines (its title, three lines of text, a scroll bar)
REWRAP_MS = 250  # a resize settles this long before a long string's lines are cut again
FILTER_MS = 200  # typing pauses this long before a long change list is filtered (in a worker)
SYNC_ROWS = 2000  # a change list this short is filtered at once, on the GUI thread (a few ms)
WIDTH_ROWS = 200  # the path column is as wide as the longest path of this many first rows
PARENT, PINNED, PAIR = "parent", "pinned", "pair"
STAGES = {"loading": "Loading…", "diffing": "Comparing…", "tasks": "Comparing tasks…",
          "ancestor": "Finding the common ancestor…", "text": "Formatting the text diff…"}

NOT_A_FORK = ("the selected run is not a fork; select a fork (listed under its original run) to "
              "compare it with where it started.")


def _held_base(store: Store, base: CheckpointInfo) -> CheckpointInfo | None:
    """Worker: the held base's row read again, or None when it is no longer in the store."""
    try:
        return store.get_checkpoint(base.id)
    except CheckpointNotFoundError:
        return None


class ChangeTable(QTableView):
    """The change list: rows of fixed height; Home/End go to the first/last change (not column)."""

    def moveCursor(self, action: QAbstractItemView.CursorAction, modifiers: Qt.KeyboardModifier) -> QModelIndex:  # Qt override
        model = self.model()
        if model is not None and model.rowCount() and action in (
                QAbstractItemView.CursorAction.MoveHome, QAbstractItemView.CursorAction.MoveEnd):
            row = 0 if action == QAbstractItemView.CursorAction.MoveHome else model.rowCount() - 1
            return model.index(row, max(0, self.currentIndex().column()))
        return super().moveCursor(action, modifiers)


class DiffPanel(QWidget):
    """Compare two checkpoints. ``set_store``; ``show_snapshot`` (against its parent or the pinned
    base); ``compare(store, a, b)`` for an explicit pair; ``pin(info)``/``use_parent()``.

    Signals: ``pair_changed(object, object)`` with the compared CheckpointInfos (old, new) and
    ``diff_ready(object)`` with the DiffResult, both when a diff arrives; ``text_ready()`` when
    the side-by-side text is shown; ``value_history_requested(path)`` from a change's menu.
    """

    pair_changed = Signal(object, object)
    diff_ready = Signal(object)
    text_ready = Signal()
    value_history_requested = Signal(object)   # a changed value's path (tuple): its Value History
    base_lost = Signal(str)     # the held base is no longer in the store: the sentence saying so

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._store: Store | None = None
        self._snapshot: Snapshot | None = None
        self._run: RunInfo | None = None
        self._run_names: dict[str, str] = {}     # run id → name, of the runs shown or compared
        self._mode = PARENT
        self._pinned: CheckpointInfo | None = None
        self._two_selected = False     # the timeline selects two checkpoints: their pair is compared
        self.picker: CheckpointPicker | None = None
        self._request: DiffRequest | None = None
        self._wrapped_at: int | None = None     # columns a long string's lines were cut at
        self._rewrap = QTimer(self, singleShot=True, interval=REWRAP_MS)
        self._rewrap.timeout.connect(self._on_rewrap_timeout)
        # after a theme switch, once every child has its new palette (the panel hears of it first)
        self._restyle_timer = QTimer(self, singleShot=True, interval=0)
        self._restyle_timer.timeout.connect(self._restyle)
        self._keep_place = False     # the text comes again only for new colours: the reader stays put
        self._hunk_texts = ("", "", "")    # the hunk label's words, whole and short, and its tip
        self._result: DiffResult | None = None
        self._pending_path: tuple | None = None
        self._user_sized = False
        self._diff_job = LatestJob(self)
        self._text_job = LatestJob(self)
        self._choose_job = LatestJob(self)
        self._filter_job = LatestJob(self)
        self._base_job = LatestJob(self)      # is a held base still in the store? (after a failed diff)
        self._base_failure: BaseException | None = None
        self._filter_timer = QTimer(self, singleShot=True, interval=FILTER_MS)
        self._filter_timer.timeout.connect(self._apply_filter)
        self._filter_cache: dict = {}      # the shown diff's rows' paths, for the filter job
        self._select_first = False     # the filtered rows of a new diff: select the first
        self._build()
        self._wire()
        self.show_snapshot(None, None)

    # -- construction --------------------------------------------------------------------
    def _build(self) -> None:
        self.base_button = QToolButton(self)
        self.base_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.base_button.setMenu(self._base_menu())
        # the text ends in its own "▾"; Qt's small menu arrow beside it read as a second one
        self.base_button.setStyleSheet("QToolButton::menu-indicator { image: none; width: 0; }")
        self.target = ElidedRichLabel(self)
        self.progress = QProgressBar(self)
        self.progress.setRange(0, 0)
        self.progress.setMaximumWidth(120)
        self.progress.setMaximumHeight(14)
        self.progress.setTextVisible(False)
        self.stage = QLabel(self)
        self.stage.setEnabled(False)
        self.summary = DiffSummaryView(self)
        self.model = ChangeListModel(self)
        self.proxy = ChangeRowsProxy(self)
        self.proxy.setSourceModel(self.model)
        self.filter = QLineEdit(self)
        self.filter.setPlaceholderText("Filter changes by path")
        self.filter.setClearButtonEnabled(True)
        self.changes = self._make_change_view()
        self.detail = ChangeDetail(self)
        for view in (self.detail.old, self.detail.new):   # side by side in a small window: a value
            view.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)   # wraps, never cut
            view.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.sides = SideBySideView(self)
        self.prev_hunk = self._tool(QStyle.StandardPixmap.SP_ArrowUp, "Previous difference in the text")
        self.next_hunk = self._tool(QStyle.StandardPixmap.SP_ArrowDown, "Next difference in the text")
        self._layout()

    def _tool(self, icon: QStyle.StandardPixmap, tip: str) -> QToolButton:
        button = QToolButton(self)
        button.setIcon(self.style().standardIcon(icon))
        button.setToolTip(tip)
        button.setAutoRaise(True)
        return button

    def _base_menu(self) -> QMenu:
        menu = QMenu(self)
        menu.setToolTipsVisible(True)
        group = QActionGroup(self)
        self.parent_action = menu.addAction("Parent checkpoint", self.use_parent)
        # (not "pin": Run ▸ Pin Checkpoint keeps a checkpoint from being pruned)
        self.pin_action = menu.addAction("Compare Everything with This Checkpoint", self.pin_current)
        self.pin_action.setToolTip("Every checkpoint you select is compared with this one, until "
                                   "Parent checkpoint is chosen again")
        for action in (self.parent_action, self.pin_action):
            action.setCheckable(True)
            group.addAction(action)
        self.parent_action.setChecked(True)
        menu.addSeparator()
        self.choose_action = menu.addAction("Choose a Checkpoint\u2026", self._on_choose_triggered)
        self.choose_action.setShortcut("Ctrl+B")
        self.origin_action = menu.addAction("Compare with the Fork's Origin", self.compare_with_origin)
        self.same_step_action = menu.addAction("Compare with the Original at the Same Step",
                                               self.compare_with_original_step)
        for action in (self.origin_action, self.same_step_action):
            set_available(action, False, NOT_A_FORK)
        menu.addAction("Swap sides", self.swap)
        return menu

    def _make_change_view(self) -> ChangeTable:
        # A table, not a tree: a tree lays out every row (a second per 60,000 changes, on
        # the GUI thread); a table of fixed-height rows asks only the rows it shows.
        view = ChangeTable(self)
        view.setModel(self.proxy)
        view.setAlternatingRowColors(True)
        view.setShowGrid(False)
        view.setWordWrap(False)
        view.setTabKeyNavigation(False)   # Tab leaves for the next pane; arrows move between rows
        view.setCornerButtonEnabled(False)
        view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        # a long change is cut with "…" (whole in its tooltip): a scroll bar would take a row
        view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        rows = view.verticalHeader()
        rows.hide()
        rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        mono = QFontMetrics(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))   # (the path column's)
        rows.setDefaultSectionSize(max(mono.height(), self.fontMetrics().height()) + 4)
        header = view.horizontalHeader()
        header.setHighlightSections(False)
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        header.setStretchLastSection(True)
        header.setSectionResizeMode(OP, QHeaderView.ResizeMode.Fixed)
        header.resizeSection(OP, 28)
        header.setSectionResizeMode(PATH, QHeaderView.ResizeMode.Interactive)
        header.resizeSection(PATH, 220)
        view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        view.customContextMenuRequested.connect(self._on_change_context_menu)
        return view

    def _on_change_context_menu(self, pos: QPoint) -> None:
        menu = self.change_menu(self.changes.indexAt(pos))
        if menu is not None:
            menu.exec(self.changes.viewport().mapToGlobal(pos))

    def change_menu(self, index: QModelIndex) -> QMenu | None:
        """A change row's menu: the Value History of the value it changed (of a list, for a
        range of items), copy its path."""
        change = index.data(CHANGE_ROLE) if index.isValid() else None
        if change is None:
            return None
        path = tuple(change.parent if isinstance(change, ItemRange) else change.path)
        menu = QMenu(self)
        menu.addAction(icons.icon("recent"), f"Value History of {format_path(path)}\u2026",
                       lambda: self.value_history_requested.emit(path)).setToolTip(
            "Every checkpoint of the shown run where this value changed")
        menu.addAction("Copy path", lambda: QGuiApplication.clipboard().setText(format_path(path)))
        return menu

    def _layout(self) -> None:
        self.hunk_label = QLabel(self)
        self.hunk_label.setEnabled(False)
        bar = QHBoxLayout()
        bar.setSpacing(6)
        for widget, stretch in ((QLabel("Compare", self), 0), (self.base_button, 0), (QLabel("→", self), 0),
                                (self.target, 1), (self.stage, 0), (self.progress, 0),
                                (self.hunk_label, 0), (self.prev_hunk, 0), (self.next_hunk, 0)):
            bar.addWidget(widget, stretch)
        # a narrow window shortens the target (whole in its tooltip) and clips the stage, never widens
        self.stage.setSizePolicy(QSizePolicy.Policy.Ignored, self.stage.sizePolicy().verticalPolicy())
        list_pane = QWidget(self)
        list_layout = QVBoxLayout(list_pane)
        list_layout.setContentsMargins(0, 0, 0, 0)
        list_layout.setSpacing(2)
        list_layout.addWidget(self.filter)
        list_layout.addWidget(self.changes, 1)
        self.change_panes = changes = QSplitter(Qt.Orientation.Horizontal, self)
        changes.addWidget(list_pane)
        changes.addWidget(self.detail)
        changes.setStretchFactor(0, 3)
        changes.setStretchFactor(1, 2)
        # One vertical splitter, so a short window can trade the summary for the text diff.
        self.splitter = QSplitter(Qt.Orientation.Vertical, self)
        self.splitter.setChildrenCollapsible(False)
        # a short tab (a small window, the Console open) keeps rows of changes before lines of text
        line = self.fontMetrics().lineSpacing()
        self.sides.setMinimumHeight(SIDES_MIN_LINES * line)
        self.changes.setMinimumHeight(self.changes.horizontalHeader().sizeHint().height()
                                      + MIN_LIST_ROWS * self.changes.verticalHeader().defaultSectionSize()
                                      + 2 * self.changes.frameWidth())
        for pane, stretch in ((self.summary, 0), (changes, 2), (self.sides, 3)):
            self.splitter.addWidget(pane)
            self.splitter.setStretchFactor(self.splitter.indexOf(pane), stretch)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(4)
        layout.addLayout(bar)
        layout.addWidget(self.splitter, 1)

    def _wire(self) -> None:
        self._diff_job.finished.connect(self._on_diff_finished)
        self._diff_job.failed.connect(self._on_diff_failed)
        self._base_job.finished.connect(self._on_base_checked)
        self._base_job.failed.connect(lambda _err: self._on_job_failed(self._base_failure or _err))
        self._diff_job.progressed.connect(self._on_job_progressed)
        self._text_job.finished.connect(self._on_text_finished)
        self._text_job.failed.connect(self._on_job_failed)
        self._text_job.progressed.connect(self._on_job_progressed)
        self._choose_job.finished.connect(self.pin)
        self._choose_job.failed.connect(self._on_job_failed)
        self._filter_job.finished.connect(self._on_filter_finished)
        self._filter_job.failed.connect(self._on_job_failed)
        self.filter.textChanged.connect(self._on_filter_text_changed)
        self.changes.selectionModel().selectionChanged.connect(self._on_changes_selection_changed)
        self.prev_hunk.clicked.connect(lambda: self.sides.step_hunk(True))
        self.next_hunk.clicked.connect(lambda: self.sides.step_hunk(False))
        self.sides.hunk_changed.connect(self._on_sides_hunk_changed)
        self.splitter.splitterMoved.connect(self._on_splitter_moved)

    # -- public API ----------------------------------------------------------------------
    def set_store(self, store: Store | None) -> None:
        """The store to load the other snapshot from (None forgets it)."""
        if store is not self._store:   # another store: nothing of the old one may stay pinned
            self._store = store
            self._run_names.clear()
            self._pinned = None
            self._mode = PARENT
            self.parent_action.setChecked(True)
            self._cancel()
            self._snapshot = None
            self._show_idle("Select a checkpoint to compare it with its parent.")

    def show_snapshot(self, snapshot: Snapshot | None, run: RunInfo | None) -> None:
        """Compare a snapshot with its parent, or with the held base when one is held."""
        self._snapshot, self._run = snapshot, run
        if run is not None:
            self._run_names[run.id] = run.name
        forked = run is not None and run.parent_run is not None and snapshot is not None
        for action in (self.origin_action, self.same_step_action):
            set_available(action, forked, NOT_A_FORK if snapshot is not None or run is not None
                          else "select a checkpoint of a fork first.")
        if self._mode == PAIR and self._two_selected and snapshot is not None:
            return      # the current one of the two selected arrived: their pair stays compared
        if self._mode == PAIR:
            self._mode = PINNED if self._pinned is not None else PARENT
        if snapshot is None or self._store is None:
            self._cancel()
            self._show_idle("Select a checkpoint to compare it with its parent." if snapshot is None
                            else "No store to load the other checkpoint from.")
            return
        info = snapshot.info
        if self._mode == PINNED and self._pinned is not None:
            base: CheckpointInfo | int | str = self._pinned
        elif info.parent_id is None:
            self._cancel()
            self._show_idle(f"#{info.seq} is the first checkpoint of its run: nothing to compare with.",
                            target=info)
            return
        else:
            base = info.parent_id
        self._start(DiffRequest(self._store, base, info, (snapshot,)))

    def compare(self, store: Store, a: CheckpointInfo, b: CheckpointInfo) -> None:
        """Compare two chosen checkpoints (a = old, b = new), e.g. two selected in the timeline."""
        self.set_store(store)
        self._mode = PAIR
        known = (self._snapshot,) if self._snapshot is not None else ()
        self._start(DiffRequest(store, a, b, known))

    def show_pair(self, a: Snapshot, b: Snapshot, run: RunInfo | None = None) -> None:
        """Compare two loaded snapshots of the current store (a = old, b = new)."""
        if self._store is None:
            self._show_idle("No store to compare in.")
            return
        self._mode = PAIR
        self._two_selected = True     # (a pair comes from two selected; a panel built after their selection)
        self._start(DiffRequest(self._store, a.info, b.info, (a, b)))

    def set_pair_selected(self, selected: bool) -> None:
        """Whether the timeline selects two checkpoints now. Their pair arrives through
        ``show_pair``, before or after the current one's snapshot: while two are selected that
        snapshot leaves the pair compared; once they are not, the shown checkpoint is compared
        with its parent (or the held base) again, even when it stayed the current one."""
        self._two_selected = selected
        if not selected and self._mode == PAIR:
            self.show_snapshot(self._snapshot, self._run)

    def pin(self, info: CheckpointInfo) -> None:
        """Use ``info`` as the base for every following snapshot until ``use_parent``."""
        self._pinned = info
        self._mode = PINNED
        self.pin_action.setChecked(True)
        self.show_snapshot(self._snapshot, self._run)

    def pin_current(self) -> None:
        """Pin the shown checkpoint as the base."""
        if self._snapshot is not None:
            self.pin(self._snapshot.info)
        else:
            self.parent_action.setChecked(True)

    def use_parent(self) -> None:
        """Go back to comparing each snapshot with its parent."""
        self._pinned = None
        self._mode = PARENT
        self.parent_action.setChecked(True)
        self.show_snapshot(self._snapshot, self._run)

    def swap(self) -> None:
        """Swap old and new."""
        if self._request is not None and self._store is not None:
            request = self._request
            self._mode = PAIR
            self._start(DiffRequest(request.store, request.b, request.a, request.known))

    @property
    def result(self) -> DiffResult | None:
        """The last DiffResult shown."""
        return self._result

    @property
    def busy(self) -> bool:
        """True while a comparison or its text diff is running, or a typed filter is not applied yet."""
        return self._diff_job.busy or self._text_job.busy or self._filter_job.busy or self._filter_timer.isActive()

    def select_change(self, row: int) -> None:
        """Select a change in the (filtered) list."""
        index = self.proxy.index(row, 0)
        self.changes.setCurrentIndex(index)

    # -- running -------------------------------------------------------------------------
    def _show_body(self, shown: bool) -> None:
        """The change list, its detail and the text diff are shown only with a comparison
        (running or done); without one the panel is its sentence alone, not empty panes."""
        for pane in (self.change_panes, self.sides):
            pane.setVisible(shown)
        for tool in (self.prev_hunk, self.next_hunk, self.hunk_label):
            tool.setVisible(shown)
        self.summary.set_alone(not shown)

    def _start(self, request: DiffRequest) -> None:
        request.names.update(self._run_names)     # (the job reads the names of the others)
        self._show_body(True)
        self._request, self._result, self._pending_path = request, None, None
        self._wrapped_at = None
        self._text_job.cancel()
        self._stop_filtering()
        self._diff_job.submit(lambda ctx: run_diff(request, ctx))
        self.model.set_changes(())
        self.detail.show_change(None)
        self.sides.clear("Comparing…")
        self.sides.set_titles(NO_TITLE, NO_TITLE)    # (the last pair's "old #830 / new #831" stayed)
        self._set_hunk_text("", "")                  # (… and its "3 differing blocks")
        self.summary.show_message("Comparing…")
        self._update_bar()

    def _cancel(self) -> None:
        self._diff_job.cancel()
        self._text_job.cancel()
        self._stop_filtering()
        self._request = None

    def _show_idle(self, text: str, target: CheckpointInfo | None = None) -> None:
        self._result = None
        self.model.set_changes(())
        self.detail.show_change(None)
        self.sides.clear("")
        self.sides.set_titles(NO_TITLE, NO_TITLE)
        self.summary.show_message(text)
        self._show_body(False)
        self._update_bar(target)

    def _update_bar(self, target: CheckpointInfo | None = None) -> None:
        busy = self._diff_job.busy or self._text_job.busy    # (filtering is too quick to show)
        self.progress.setVisible(busy)
        self.stage.setVisible(busy)
        if not busy:
            self.stage.setText("")
        request = self._request
        label = {PARENT: "parent", PINNED: "base", PAIR: "selected"}[self._mode]
        a = self._result.a if self._result else (request.a if request else None)
        b = self._result.b if self._result else (request.b if request else target)
        base = self._describe(a, short=True) if isinstance(a, CheckpointInfo) else ""   # (a bare id: not yet read)
        self.base_button.setText((f"{visible(base)} ({label})" if base else label) + "  ▾")
        self.base_button.setToolTip(self._describe_plain(a) if isinstance(a, CheckpointInfo) else "")
        if isinstance(b, CheckpointInfo):
            self.target.set_parts(self._lead(b), visible(b.name), self._describe_plain(b))
        else:
            text = self._describe(b)
            self.target.set_parts("", text, text)

    def _describe(self, info: CheckpointInfo | int | str | None, short: bool = False) -> str:
        if not isinstance(info, CheckpointInfo):   # a bare id, until its checkpoint is read (a LangGraph id is long)
            return f"checkpoint {elide_middle(str(info), 24)}" if info is not None else ""
        if short:
            return self._where(info, short)
        return f"{self._lead(info)} {visible_html(info.name)}"

    def _where(self, info: CheckpointInfo, short: bool = False) -> str:
        same_run = self._snapshot is not None and self._snapshot.info.run_id == info.run_id
        return f"#{info.seq}" if same_run else f"{self._run_label(info.run_id, short)} #{info.seq}"

    def _lead(self, info: CheckpointInfo) -> str:
        """Rich text of where a checkpoint is (bold) and its kind (a chip)."""
        return f"<b>{visible_html(self._where(info))}</b> {kind_chip(self.target, info.kind)}"

    def _describe_plain(self, info: CheckpointInfo) -> str:
        return f"{self._where(info)} {info.kind} {visible(info.name)}"

    def _run_label(self, run_id: str, short: bool) -> str:
        """Another run's name (its id until the name is read; with the id when the name is the
        shown run's too), shortened in the middle for the Compare button."""
        name = self._run_names.get(run_id)
        chars = NARROW_RUN_CHARS if self.width() < NARROW else RUN_CHARS
        if not name:
            return elide_middle(run_id, chars) if short else run_id
        label = elide_middle(name, chars) if short else name
        if self._run is not None and run_id != self._run.id and name == self._run.name:
            label += f" ({run_id})"
        return label

    def _on_job_progressed(self, _done: int, _total: int, stage: str) -> None:
        self.stage.setText(STAGES.get(stage, stage))

    def _on_diff_failed(self, err: BaseException) -> None:
        """A diff that failed while a base is held: the base may have been pruned or deleted by
        another process since it was chosen (a native run's checkpoints are numbered anew then,
        and "#3 (base)" would name another one): its row is read again off the GUI thread
        before the failure is shown."""
        pinned, store = self._pinned, self._store
        if self._mode == PINNED and pinned is not None and store is not None and isinstance(err, StoreError):
            self._base_failure = err
            self._base_job.submit(lambda _ctx: _held_base(store, pinned))
            return
        self._on_job_failed(err)

    def recheck_base(self) -> None:
        """Checkpoints were deleted from the store (a prune or a delete, here or elsewhere): a
        held base is read again off the GUI thread — gone, the snapshot is compared with its
        parent again and the window is told; renumbered, its new number is shown."""
        pinned, store = self._pinned, self._store
        if self._mode == PINNED and pinned is not None and store is not None:
            self._base_failure = None
            self._base_job.submit(lambda _ctx: _held_base(store, pinned))

    def _on_base_checked(self, found: CheckpointInfo | None) -> None:
        """The held base read again (after a failed diff, or ``recheck_base``)."""
        gone, err = self._pinned, self._base_failure
        self._base_failure = None
        if gone is None or self._mode != PINNED or found is not None:
            if err is not None:         # the diff failed for another reason: say it
                self._on_job_failed(err)
            elif found is not None and gone is not None and found.seq != gone.seq and found.id == gone.id:
                self._pinned = found    # numbered anew by a prune: "#4 (base)", not the old #18
                self._update_bar()
            return
        self.use_parent()
        self.base_lost.emit(f"The base held for comparison, {self._where(gone, short=True)}, is no longer in the "
                            "store (pruned or deleted): each checkpoint is compared with its parent again.")

    def _on_job_failed(self, err: BaseException) -> None:
        self._update_bar()
        self.summary.show_message(str(err) or type(err).__name__, error=True)
        self.sides.clear("")
        self._show_body(False)

    def _on_diff_finished(self, result: DiffResult) -> None:
        self._result = result
        if self._request is not None:
            self._run_names.update(self._request.names)
        request = self._request
        if request is not None:   # the text first, so a selected change can wait for it
            self._submit_text(request, result)
            self.sides.clear(STAGES["text"])
        self.summary.show_result(result)
        self._fit_summary()
        self.model.set_changes(result.changes, is_dark(self.palette()))
        self._fit_path_column()
        self._show_side_titles(result)
        self._update_bar()
        self.stage.setText(STAGES["text"])
        if self.filter.text():     # (a filter of the last diff stays: the new rows are filtered)
            self._select_first = True
            self._apply_filter()
        elif self.proxy.rowCount():
            self.select_change(0)
        self.pair_changed.emit(result.a, result.b)
        self.diff_ready.emit(result)

    def _fit_path_column(self) -> None:
        """The path column as wide as the longest of the first rows' paths (not every row's:
        a list of 60,000 changes would be measured on the GUI thread), within its bounds."""
        font = self.model.index(0, PATH).data(Qt.ItemDataRole.FontRole)
        metrics = QFontMetrics(font) if font is not None else self.changes.fontMetrics()
        rows = min(self.model.rowCount(), WIDTH_ROWS)
        widest = max((metrics.horizontalAdvance(self.model.index(r, PATH).data() or "") for r in range(rows)),
                     default=0)
        room = max(120, self.changes.viewport().width() * 9 // 20)   # the change's words keep the rest
        self.changes.setColumnWidth(PATH, max(60, min(widest + 24, 320, room)))

    # -- the filter ------------------------------------------------------------------------
    def _on_filter_text_changed(self, _text: str) -> None:
        """A short list is filtered at once; a long one once typing pauses, in a worker."""
        if self.model.rowCount() <= SYNC_ROWS:
            self._filter_timer.stop()
            self._apply_filter()
        else:
            self._filter_timer.start()

    def _apply_filter(self) -> None:
        """Show the changes whose path holds the filter's text (a long list: in a worker)."""
        needle = self.filter.text()
        result = self._result
        self._filter_job.cancel()
        if not needle or result is None:
            self._show_rows(None)
        elif self.model.rowCount() <= SYNC_ROWS:
            key = needle.casefold()
            self._show_rows([r for r in range(self.model.rowCount()) if key in path_key(self.model.change(r))])
        else:
            cache = self._filter_cache
            self._filter_job.submit(lambda ctx: filter_rows(result.changes, needle, cache, ctx))

    def _on_filter_finished(self, rows: list[int]) -> None:
        self._show_rows(rows)     # (a new comparison cancels the job: these are the shown list's rows)

    def _show_rows(self, rows: list[int] | None) -> None:
        """Show these rows of the change list (None: all), the selected change kept selected
        when it is among them."""
        current = self.proxy.mapToSource(self.changes.currentIndex())
        if rows is None:
            self.proxy.show_all()
        else:
            self.proxy.show_rows(rows)
        again = self.proxy.mapFromSource(current) if current.isValid() else QModelIndex()
        if again.isValid():
            self.changes.setCurrentIndex(again)
        elif self._select_first and self.proxy.rowCount():
            self.select_change(0)
        else:
            self.detail.show_change(None)
        self._select_first = False

    def _stop_filtering(self) -> None:
        """A new comparison: the last one's filter job and its rows' paths are of no use."""
        self._filter_timer.stop()
        self._filter_job.cancel()
        self._filter_cache = {}
        self._select_first = False

    def _show_side_titles(self, result: DiffResult) -> None:
        self.sides.set_titles(self._side_title("old", result.a), self._side_title("new", result.b))

    def _side_title(self, side: str, info: CheckpointInfo | None) -> Title:
        if info is None:
            return NO_TITLE
        muted = muted_text(self.palette()).name()
        return (f"<span style='color:{muted}'>{side}</span> {self._lead(info)}", visible(info.name),
                f"{side} {self._describe_plain(info)}")

    def changeEvent(self, event: QEvent) -> None:  # Qt override
        super().changeEvent(event)
        if theme_changed(self, event):
            self._restyle_timer.start()

    def _restyle(self) -> None:
        """The theme switched: what was drawn in the old palette's colours is drawn again (the
        op glyphs, the kind chips, the text's highlight and tints), where the reader was."""
        self.model.set_dark(is_dark(self.palette()))
        self._update_bar()
        result, request = self._result, self._request
        if result is None or request is None:
            return     # a comparison still running takes the new colours when it is done
        self._show_side_titles(result)
        self._keep_place = not self._text_job.busy
        self._submit_text(request, result)

    def _fit_summary(self) -> None:
        """Give the summary pane the height it needs, unless the user has sized the panes."""
        if self._user_sized:
            return
        sizes = self.splitter.sizes()
        total = sum(sizes)
        if total <= 0:
            return
        wanted = min(self.summary.wanted_height(self.splitter.width()), total // 3)
        rest = total - wanted
        rows = self.filter.sizeHint().height() + self.changes.horizontalHeader().height() + \
            LIST_ROWS * self.changes.verticalHeader().defaultSectionSize()
        listed = max(rest * 2 // 5, min(rest * 3 // 5, rows))   # a short window still lists a few changes
        self.splitter.setSizes([wanted, listed, rest - listed])

    def _on_splitter_moved(self, _pos: int, _index: int) -> None:
        self._user_sized = True

    def _submit_text(self, request: DiffRequest, result: DiffResult) -> None:
        colors, dark, wrap = self.sides.tag_colors(), is_dark(self.palette()), self.sides.text_columns()
        self._text_job.submit(lambda ctx: run_text(request, result, colors, dark, ctx, wrap))

    def resizeEvent(self, event: QResizeEvent) -> None:  # Qt override
        super().resizeEvent(event)
        self._check_wrap()
        if (event.oldSize().width() < NARROW) != (self.width() < NARROW):   # the bar's words change
            self._set_hunk_text(*self._hunk_texts)
            self._update_bar()

    def showEvent(self, event: QShowEvent) -> None:  # Qt override
        super().showEvent(event)
        self._check_wrap()

    def _check_wrap(self) -> None:
        """Cut a long string's lines again (soon) when the view got much wider or narrower."""
        if self._wrapped_at is not None:
            columns = self.sides.text_columns()
            if abs(columns - self._wrapped_at) > max(8, self._wrapped_at // 8):
                self._rewrap.start()

    def _on_rewrap_timeout(self) -> None:
        if self._wrapped_at is not None and self._request is not None and self._result is not None \
                and not self.busy:
            self._wrapped_at = None
            self._submit_text(self._request, self._result)

    def _on_text_finished(self, prepared: SideTexts) -> None:
        aligned, left, right, note, self._wrapped_at = prepared
        keep, self._keep_place = self._keep_place, False
        count = len(aligned.hunks)
        if count:
            self._set_hunk_text(plural(count, "differing block"), plural(count, "block"))
        else:
            self._set_no_hunk_text()
        self.sides.set_prepared(aligned, left, right, keep_place=keep)
        self.sides.set_note(note)
        self._update_bar()
        if self._pending_path is not None:
            self.sides.scroll_to_path(*self._pending_path)
            self._pending_path = None
        elif aligned.hunks and not keep:
            self.sides.step_hunk()
        self.text_ready.emit()

    def _on_sides_hunk_changed(self, index: int, count: int) -> None:
        if count:
            self._set_hunk_text(f"difference {index + 1} of {count}", f"{index + 1} of {count}")
        else:
            self._set_no_hunk_text()

    def _set_no_hunk_text(self) -> None:
        """The texts show no difference: equal states, or a change their JSON cannot show
        (then never "equal": the state did change)."""
        if self._result is not None and self._result.changes:
            self._set_hunk_text("no difference in the text", "same text",
                                "The states differ in what their JSON text cannot show: the change list has each change.")
        else:
            self._set_hunk_text("texts are equal", "equal")

    def _set_hunk_text(self, text: str, short: str, tip: str = "") -> None:
        """Where the text diff is, in full, or ``short`` in a narrow bar (the full in its
        tooltip, with ``tip`` when there is one)."""
        self._hunk_texts = (text, short, tip)
        narrow = self.width() < NARROW
        self.hunk_label.setText(short if narrow else text)
        self.hunk_label.setToolTip("\n".join(t for t in (text if narrow else "", tip) if t))

    def _on_changes_selection_changed(self, _sel: QItemSelection, _desel: QItemSelection) -> None:
        index = self.changes.currentIndex()
        change = index.data(CHANGE_ROLE) if index.isValid() else None
        self.detail.show_change(change)
        if change is None:
            return
        target = (change.path, change.op == REMOVED)
        if self._text_job.busy:
            self._pending_path = target
        else:
            self.sides.scroll_to_path(*target)

    def _on_choose_triggered(self) -> None:
        self.open_picker()

    def open_picker(self) -> CheckpointPicker | None:
        """Compare ▾ Choose a Checkpoint…: search any run's checkpoints; the pick becomes the base."""
        if self._store is None:
            return None
        from inspector.ui.widgets.checkpoint_picker import CheckpointPicker

        picker = CheckpointPicker(self._store, self._run, self)
        picker.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        picker.chosen.connect(self.pin)
        self.picker = picker
        picker.open()
        return picker

    def compare_with_origin(self) -> None:
        """Pin the checkpoint the shown fork was made from."""
        run = self._run
        if run is None or run.parent_checkpoint is None or self._store is None:
            return
        store, ref = self._store, run.parent_checkpoint
        self._choose_job.submit(lambda _ctx: store.get_checkpoint(ref))

    def compare_with_original_step(self) -> None:
        """Pin the original run's checkpoint at the shown checkpoint's step (origin seq + seq in the fork)."""
        run, snap, store = self._run, self._snapshot, self._store
        if run is None or run.parent_checkpoint is None or run.parent_run is None or snap is None or store is None:
            return
        seq, ref, parent = snap.info.seq, run.parent_checkpoint, run.parent_run

        def find(_ctx: object) -> CheckpointInfo:
            origin = store.get_checkpoint(ref)
            head = store.get_run(parent).head_seq
            return store.get_checkpoint(f"{origin.run_id}:{min(origin.seq + seq, head)}")
        self._choose_job.submit(find)

    def choose_base(self, ref: str) -> None:
        """Pin the checkpoint named by ``ref`` (``#5``/``5`` in the shown run, ``RUN:SEQ``, or an id)."""
        store = self._store
        if store is None:
            return
        run_id = self._snapshot.info.run_id if self._snapshot else None
        text = ref.lstrip("#")
        if run_id and text.lstrip("-").isdigit() and (ref.startswith("#") or ":" not in ref):
            text = f"{run_id}:{text}"
        self._choose_job.submit(lambda _ctx: store.get_checkpoint(text))



