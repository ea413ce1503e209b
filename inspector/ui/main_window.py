"""The main window: builds the panels, menus and status bar and wires their signals (no behaviour)."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import shiboken6
from PySide6.QtCore import QByteArray, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDropEvent, QGuiApplication, QShowEvent
from PySide6.QtWidgets import (QApplication, QDialog, QDockWidget, QFileDialog, QInputDialog, QLineEdit,
                               QMainWindow, QMenu, QStackedWidget, QVBoxLayout, QWidget)

from inspector.humanize import plural
from inspector.model import ChangeSet, CheckpointInfo, RunInfo, StoreInfo
from inspector.ui.availability import BUILDING_DEMO, NO_STORE, set_available
from inspector.ui.formatting import visible
from inspector.ui import help as help_windows
from inspector.ui import icons, refguard, settings, style
from inspector.ui.actions import build_actions
from inspector.ui.models.run_tree import RunsLoad, preview_load
from inspector.ui.models.timeline_model import UNREADABLE_TIP
from inspector.ui.run_actions import install_run_actions
from inspector.ui.session import StoreSession
from inspector.ui.storage_actions import install_storage
from inspector.ui.startup import Startup
from inspector.ui.style import ThinSplitter, polish
from inspector.ui.widgets.status_bar import ElidingStatusBar
from inspector.ui.widgets.keep_visible import KeepCurrentVisible
from inspector.ui.widgets.banner import Banner
from inspector.ui.widgets.detail_tabs import DetailTabs
from inspector.ui.widgets.run_notice import RunNotice
from inspector.ui.widgets.runs_panel import RunsPanel
from inspector.ui.widgets.store_status import StoreStatus, describe
from inspector.ui.widgets.timeline_panel import TimelinePanel
from inspector.ui.widgets.welcome import WelcomePage

APP_NAME = "Checkpoint Inspector"
RUNS_MIN_WIDTH, RUNS_MAX_WIDTH = 420, 600   # the runs list's first width (names readable, details room)
TIMELINE_HEIGHT = 300   # the timeline's first height at most: the details (the diff, the board) get the rest
STORE_FILTER = "Checkpoint stores (*.db *.sqlite *.sqlite3 *.ckpt);;All files (*)"


class MainWindow(QMainWindow):
    """Runs on the left, the timeline in the centre, detail tabs below it.

    Extension points for other features: ``add_dock()``, ``add_run_action()``, the
    ``run_changed`` / ``checkpoint_changed`` signals and ``current_run()`` /
    ``current_checkpoint()`` / ``selected_checkpoints()``.
    """

    run_changed = Signal(object)          # RunInfo | None
    checkpoint_changed = Signal(object)   # CheckpointInfo | None

    def __init__(self, *, session: StoreSession | None = None, restore_settings: bool = True,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        refguard.install()  # PySide6 6.12 on Python 3.11: see inspector.ui.refguard
        self.setWindowIcon(icons.app_icon())
        self.setAcceptDrops(True)
        self.session = session or StoreSession()
        self.session.setParent(self)
        self.help_dialog: QDialog | None = None
        self.task_history: QDialog | None = None    # the Task History window (one at a time)
        self.startup = Startup(self)   # what is not visible yet is built after the first paint
        self.runs_panel = RunsPanel(self.session)
        self.timeline_panel = TimelinePanel(self.session)
        for view in (self.runs_panel.view, self.timeline_panel.view):   # a notice appearing keeps rows in sight
            KeepCurrentVisible(view)
        self.details = DetailTabs(self.session, startup=self.startup)
        self.banner = Banner()
        self.run_notice = RunNotice()
        self.welcome = WelcomePage()
        self.store_status = StoreStatus()
        self._build_layout()
        self.menu_actions = build_actions(self)
        self.setStatusBar(ElidingStatusBar(self))     # long messages end in "…", whole in the tooltip
        self.statusBar().addPermanentWidget(self.store_status)
        polish(self.statusBar(), "status_bar")
        self._wire()
        self._persist = restore_settings
        self._check_theme(style.current_mode())
        if restore_settings:
            self._restore_settings()
        self.welcome.set_recent(settings.recent_stores())
        self._update_title(None)
        self._enable_store_actions(False)
        self.run_actions = install_run_actions(self)   # Fork…, Resume…, Console dock
        self.storage = install_storage(self)           # View ▸ Storage: charts and Prune…
        self.runs_panel.run_menu = self.menu_actions.run_menu   # a run's right-click
        self.timeline_panel.run_menu = self.menu_actions.run_menu   # a checkpoint's right-click
        runs = self.runs_panel
        self.startup.watch(runs.view.viewport(), lambda: runs.proxy.rowCount() > 0 or runs.model.loaded)
        self.startup.watch(self.welcome, lambda: not self.session.busy_opening)
        self.session.open_failed.connect(lambda _m: self.startup.finish())

    # -- construction ---------------------------------------------------------------------
    def _build_layout(self) -> None:
        self.right_splitter = ThinSplitter(Qt.Orientation.Vertical)
        self.right_splitter.setObjectName("rightSplitter")
        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.setSpacing(0)
        top_layout.addWidget(self.run_notice)
        top_layout.addWidget(self.timeline_panel, 1)
        self.right_splitter.addWidget(top)
        self.right_splitter.addWidget(self.details)
        self.right_splitter.setStretchFactor(0, 1)   # a taller window gives most of its rows to the
        self.right_splitter.setStretchFactor(1, 2)   # details (the diff, the board), not to the timeline
        self.right_splitter.setSizes([400, 420])
        self.main_splitter = ThinSplitter(Qt.Orientation.Horizontal)
        self.main_splitter.setObjectName("mainSplitter")
        self.main_splitter.addWidget(self.runs_panel)
        self.main_splitter.addWidget(self.right_splitter)
        self.main_splitter.setStretchFactor(1, 1)
        self.main_splitter.setSizes([500, 900])
        for splitter in (self.main_splitter, self.right_splitter):
            splitter.setChildrenCollapsible(False)
            splitter.setHandleWidth(1)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.welcome)
        self.stack.addWidget(self.main_splitter)
        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.banner)
        layout.addWidget(self.stack, 1)
        self.stack.currentChanged.connect(self._size_splitters_soon)
        self.setCentralWidget(central)

    def _wire(self) -> None:
        act, session = self.menu_actions, self.session
        act.open.triggered.connect(self.choose_file)
        act.open_url.triggered.connect(self.choose_url)
        act.build_demo.triggered.connect(self.build_demo)
        act.close_store.triggered.connect(session.close)
        act.quit.triggered.connect(self.close)
        act.refresh.triggered.connect(self.refresh)
        act.live.toggled.connect(self._on_live_toggled)
        act.find.triggered.connect(self.runs_panel.focus_filter)
        act.show_forks.toggled.connect(self.runs_panel.set_show_forks)
        self.runs_panel.forks_button.toggled.connect(act.show_forks.setChecked)
        act.focus_runs.triggered.connect(lambda: self.runs_panel.view.setFocus())
        act.focus_timeline.triggered.connect(lambda: self.timeline_panel.view.setFocus())
        for index, action in enumerate(act.go_to_tabs):   # (in the tabs' order)
            action.triggered.connect(partial(self.go_to_tab, action.data()))
            self.details.tabs.setTabToolTip(index, action.toolTip())
        act.copy_ref.triggered.connect(self._copy_reference)
        act.task_history.triggered.connect(lambda: self.open_task_history(""))
        act.about.triggered.connect(lambda: self._show_help(help_windows.about_dialog(self)))
        act.usage.triggered.connect(lambda: self._show_help(help_windows.usage_dialog(self)))
        act.shortcuts.triggered.connect(
            lambda: self._show_help(help_windows.shortcuts_dialog(self, self._all_actions())))
        act.theme_group.triggered.connect(lambda action: self.set_theme(action.data()))
        act.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        self.welcome.open_requested.connect(self.choose_file)
        self.welcome.open_url_requested.connect(self.choose_url)
        self.welcome.build_demo_requested.connect(self.build_demo)
        self.welcome.recent_chosen.connect(self.open_store)
        session.opening.connect(lambda target: self.statusBar().showMessage(f"Opening {target} \u2026"))
        session.previewed.connect(self._on_store_previewed)
        session.opened.connect(self._on_store_opened)
        session.open_failed.connect(self._on_open_failed)
        session.closed.connect(self._on_store_closed)
        session.changed.connect(self._on_store_changed)
        session.replaced.connect(self._on_store_replaced)
        session.gone.connect(self._on_store_gone)
        self.runs_panel.model.runs_loaded.connect(self._follow_replaced)
        session.runner.failed.connect(self.show_error)
        session.bridge.failed.connect(self._on_watch_failed)
        session.bridge.recovered.connect(self._on_watch_recovered)
        self.runs_panel.run_selected.connect(self._on_run_selected)
        self.runs_panel.run_updated.connect(self._on_run_updated)
        self.runs_panel.run_removed.connect(self._on_run_removed)
        self.runs_panel.model.runs_updated.connect(lambda _ids: self._refresh_forks())
        self.runs_panel.model.annotated.connect(self._refresh_forks)
        self.timeline_panel.checkpoint_selected.connect(self._on_checkpoint_selected)
        self.timeline_panel.checkpoints_selected.connect(self._on_checkpoints_selected)
        self.timeline_panel.checkpoint_updated.connect(self.checkpoint_changed)     # (a pin made elsewhere)
        self.timeline_panel.place_lost.connect(lambda text: self.banner.show_message(text, "warning"))
        self.details.task_history_requested.connect(self.open_task_history)
        self.details.value_history_requested.connect(self.open_value_history)
        self.details.notice.connect(lambda text: self.banner.show_message(text, "warning"))

    # -- extension points --------------------------------------------------------------------
    def add_dock(self, widget: QWidget, title: str, area: Qt.DockWidgetArea = Qt.DockWidgetArea.BottomDockWidgetArea,
                 name: str | None = None, in_panels: bool = True) -> QDockWidget:
        """Add a dock (e.g. the Console); its toggle goes in View ▸ Panels (unless the caller puts
        it elsewhere: ``in_panels`` False) and its place is remembered."""
        dock = QDockWidget(title, self)
        dock.setObjectName(name or f"dock-{title.lower().replace(' ', '-')}")
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        self.restoreDockWidget(dock)
        if in_panels:
            self.menu_actions.panels_menu.addAction(dock.toggleViewAction())
        return dock

    def add_run_action(self, action: QAction, toolbar: bool = True) -> None:
        """Add an action (fork, resume…) to the Run menu and the toolbar's Run section."""
        self.menu_actions.run_menu.addAction(action)
        if toolbar:
            self.menu_actions.toolbar.addAction(action)

    def current_run(self) -> RunInfo | None:
        """The selected run."""
        return self.runs_panel.current_run()

    def current_checkpoint(self) -> CheckpointInfo | None:
        """The checkpoint shown in the detail tabs."""
        return self.timeline_panel.current_checkpoint()

    def selected_checkpoints(self) -> list[CheckpointInfo]:
        """Every selected checkpoint in the timeline, by seq."""
        return self.timeline_panel.selected_checkpoints()

    # -- commands --------------------------------------------------------------------------------
    def go_to_tab(self, key: str) -> None:
        """View ▸ Go to State/Tasks/Metadata/Diff: that tab in front, the keyboard focus in it
        (once a panel built just now is shown)."""
        self.details.set_tab(key)
        QTimer.singleShot(0, self, self._focus_tab)

    def _focus_tab(self) -> None:
        """The focus on the first thing in the visible tab that takes it (else its tab bar)."""
        page = self.details.tabs.currentWidget()
        widget = page.nextInFocusChain()
        while widget is not page and widget is not None:
            if page.isAncestorOf(widget) and widget.isVisible() and widget.isEnabled() \
                    and widget.focusPolicy() & Qt.FocusPolicy.TabFocus:
                widget.setFocus(Qt.FocusReason.ShortcutFocusReason)
                return
            widget = widget.nextInFocusChain()
        self.details.tabs.tabBar().setFocus(Qt.FocusReason.ShortcutFocusReason)

    def open_store(self, target: str, *, preview: bool = False) -> None:
        """Open a store (path or SQLAlchemy URL) in the background; failures show in the banner.

        ``preview``: paint a native SQLite store's most recent runs first, read without
        SQLAlchemy, and open the store right after that paint (the app's start-up)."""
        self.session.open(str(target), preview=preview_load if preview else None)

    def choose_file(self) -> None:
        """File ▸ Open: pick a store file."""
        info = self.session.info
        start = str(Path(info.display).parent) if info and info.backend == "sqlite" else ""
        path, _ = QFileDialog.getOpenFileName(self, "Open Checkpoint Store", start, STORE_FILTER)
        if path:
            self.open_store(path)

    def choose_url(self) -> None:
        """File ▸ Open URL: type a SQLAlchemy URL (postgresql://… or sqlite:///…)."""
        url, ok = QInputDialog.getText(self, "Open Store by URL", "SQLAlchemy URL (postgresql://user@host/db, sqlite:///path):",
                                       QLineEdit.EchoMode.Normal, "postgresql://")
        if ok and url.strip():
            self.open_store(url.strip())

    def build_demo(self) -> None:
        """Run the demo agent into the default demo store, then open it."""
        from inspector.demo.build import build_demo_store, default_store_path

        path = default_store_path()
        if self.session.info is not None and Path(self.session.info.display) == path:
            self.session.close()
        self._demo_built = path        # its hung agent goes with the window (``closeEvent``)
        set_available(self.menu_actions.build_demo, False, BUILDING_DEMO)
        self.welcome.set_busy("Building the demo store: running the demo agent \u2026")
        self.show_error("Building the demo store: running the demo agent a few times \u2026", "info")
        self.session.runner.run(lambda: build_demo_store(path, log=lambda _line: None),
                                self._on_demo_built, self._on_demo_failed)

    def refresh(self) -> None:
        """Re-read runs and pick up changes now (F5)."""
        if self.session.store is None:
            return
        if self.session.is_gone:     # nothing to read: say why rather than fail to open it
            self.show_error(self._gone_text(self.session.store.info.display), "warning")
            return
        self.runs_panel.refresh()
        self.session.bridge.poll_now()
        self.timeline_panel.reread_pins()     # (a pin changes no row the poll reports)
        self.statusBar().showMessage("Refreshed", 2000)

    def show_error(self, message: str, level: str = "error") -> None:
        """Show a message in the banner and the status bar."""
        self.banner.show_message(message, level)
        self.statusBar().showMessage(message, 10_000)

    # -- slots --------------------------------------------------------------------------------------
    def _on_store_opened(self, info: StoreInfo) -> None:
        if self.banner.level == "error":
            self.banner.dismiss()
        if self._persist:
            target = info.url if info.backend != "sqlite" else info.display
            self.welcome.set_recent(settings.remember_store(target))
        self.stack.setCurrentWidget(self.main_splitter)
        self.timeline_panel.show_run(None)
        self.details.show_checkpoint(None, None)
        self.store_status.set_store(info)
        self._enable_store_actions(True)
        self._on_live_toggled(self.menu_actions.live.isChecked())
        self._update_title(info)
        self.statusBar().showMessage(f"Opened {info.display}", 4000)
        self.run_changed.emit(None)

    def _on_store_previewed(self, load: RunsLoad) -> None:
        """The most recent runs, read before the store opened: show them, open it after the paint."""
        self.stack.setCurrentWidget(self.main_splitter)
        self.store_status.set_opening(self.session.opening_target)
        self.runs_panel.model.show_preview(load)
        self.startup.later(self.session.release)

    def _on_open_failed(self, message: str) -> None:
        if self.session.store is None and self.runs_panel.model.previewing:
            self.runs_panel.model.clear()      # runs of a store that did not open: not shown
            self.stack.setCurrentWidget(self.welcome)
        self.show_error(message)

    def _on_store_closed(self) -> None:
        self.stack.setCurrentWidget(self.welcome)
        self.timeline_panel.show_run(None)
        self.store_status.set_store(None)
        self._enable_store_actions(False)
        self._update_title(None)
        self.run_changed.emit(None)

    def _on_store_changed(self, changes: ChangeSet) -> None:
        self.runs_panel.apply_changes(changes)
        self.timeline_panel.apply_changes(changes)

    def _on_watch_failed(self, message: str) -> None:
        """A poll for changes failed: the banner says why, the live badge that nothing updates."""
        self.store_status.set_unreachable(message)
        self.show_error(message, "warning")

    def _on_watch_recovered(self) -> None:
        """A poll succeeded after failing: the failure's banner gives way to a notice that fades
        (one the user dismissed or another message stays as it is); the badge says live again."""
        failure, info = self.store_status.unreachable, self.session.info
        self.store_status.set_reachable()
        if info is None:
            return
        text = (f"Reconnected to {info.display}" if self._server() else f"{info.display} can be read again") \
            + ": live updates go on."
        if failure and self.banner.message == failure:
            self.banner.show_message(text, "info")
        self.statusBar().showMessage(text, 5000)

    def _on_run_selected(self, run: RunInfo, keep: bool = False) -> None:
        self.timeline_panel.show_run(run, keep=keep)      # (keep: it selects the checkpoint kept itself)
        self._refresh_forks()
        self.details.show_checkpoint(None, run)
        if run.checkpoint_count and not keep:
            self.timeline_panel.select_seq(-1)     # its head: the state it is in now (followed live)
        self.run_changed.emit(run)
        self._update_copy_ref()

    def _on_run_updated(self, run: RunInfo) -> None:
        shown = self.timeline_panel.model.run
        if shown is not None and shown.id == run.id and run.checkpoint_count < shown.checkpoint_count:
            # checkpoints of the run shown were deleted (a prune, a LangGraph fork deleted):
            # rows are gone and a native run's are numbered anew, so it is shown afresh
            self._on_run_selected(run, keep=True)
            diff = self.details.panels.get("diff")
            if diff is not None and hasattr(diff, "recheck_base"):
                diff.recheck_base()     # a base held for comparison may have gone, or be numbered anew
            fewer = shown.checkpoint_count - run.checkpoint_count
            self.statusBar().showMessage(
                f"{plural(fewer, 'checkpoint')} of “{run.name}” {'was' if fewer == 1 else 'were'} deleted "
                "from the store: its timeline was read again.", 10_000)
            return
        self.timeline_panel.update_run(run)
        self.details.update_run(run)

    def _on_run_removed(self, run_id: str) -> None:
        shown = self.timeline_panel.model.run
        if shown is None or shown.id != run_id:
            return
        self.timeline_panel.show_run(None)
        self.details.show_checkpoint(None, None)
        self.run_changed.emit(None)
        self._update_copy_ref()
        if run_id in self.storage.deleting:
            return      # this window's own delete: its status line says what went
        self.show_error(f"The run “{shown.name}” is no longer in the store: it was deleted (a prune, or "
                        "the program that wrote it).", "info")

    def open_task_history(self, task_id: str = "") -> QDialog | None:
        """The Task History window of the shown run: where task ``task_id`` (every task for
        "") changed; choosing an entry selects that checkpoint in the timeline."""
        return self._open_history(task_id or None, None)

    def open_value_history(self, path: tuple) -> QDialog | None:
        """The Value History window of the shown run: where the value at ``path`` of its state
        changed; choosing an entry selects that checkpoint in the timeline."""
        return self._open_history(None, tuple(path))

    def _open_history(self, task_id: str | None, path: tuple | None) -> QDialog | None:
        run, store = self.timeline_panel.model.run, self.session.store
        if run is None or store is None:
            return None
        from inspector.ui.dialogs.task_history import TaskHistoryDialog
        if self.task_history is not None and shiboken6.isValid(self.task_history):
            self.task_history.close()       # (one history window at a time; it deletes itself on close)
        dialog = self.task_history = TaskHistoryDialog(self.session, run, task_id, self, path=path)
        dialog.checkpoint_chosen.connect(self._on_history_chosen)
        dialog.show()
        return dialog

    def _on_history_chosen(self, run_id: str, seq: int) -> None:
        if self.timeline_panel.model.run is None or self.timeline_panel.model.run.id != run_id:
            self.runs_panel.select_run(run_id)
        self.timeline_panel.select_seq(seq)

    def _refresh_forks(self) -> None:
        run = self.timeline_panel.model.run
        if run is not None:
            self.timeline_panel.set_forks(self.runs_panel.model.forks_of(run.id))

    def _on_checkpoint_selected(self, info: CheckpointInfo | None) -> None:
        self.details.show_checkpoint(info, self.timeline_panel.model.run)
        if info is None:
            self._explain_unreadable()
        self.checkpoint_changed.emit(info)
        self._update_copy_ref()

    def _explain_unreadable(self) -> None:
        """The current row is one a damaged store cannot give: the details say so (as the
        row's tooltip does), not that nothing is selected."""
        index = self.timeline_panel.view.currentIndex()
        model = self.timeline_panel.model
        if not index.isValid() or not model.unreadable(index.row()):
            return
        seq = model.hole_seq(index.row())
        name = f"#{seq}" if seq is not None else "this checkpoint"
        why = UNREADABLE_TIP[0].lower() + UNREADABLE_TIP[1:]
        self.details.show_message(f"Checkpoint {name} cannot be read: {why}", model.run)

    # -- a store's file replaced or deleted under the window ---------------------------------------
    _follow: tuple[str, str, int] | None = None   # (store, run id, seq) shown when the store's file was replaced

    def _on_store_replaced(self, display: str) -> None:
        """Another file is at the store's path (a store rebuilt): the session opens it again as
        a fresh open would; the run shown is selected again if the new store has it."""
        run, info = self.timeline_panel.model.run, self.current_checkpoint()
        self._follow = (display, run.id if run is not None else "", info.seq if info is not None else -1)
        if self.banner.message == self._gone_text(display):
            self.banner.dismiss()
        self.statusBar().showMessage(f"{display} was replaced {self._where()}: reading the new store …")

    def _follow_replaced(self, count: int) -> None:
        follow, self._follow = self._follow, None
        info = self.session.info
        if follow is None or info is None or info.display != follow[0]:
            return
        _display, run_id, seq = follow
        run = self.runs_panel.model.run(run_id) if run_id else None
        note = f"{info.display} was replaced {self._where()} and read again: {plural(count, 'run')}"
        if run is not None and self.runs_panel.select_run(run_id):
            if 0 <= seq < run.checkpoint_count:
                self.timeline_panel.select_seq(seq)
            note += f"; “{run.name}” is still selected."
        elif run_id:
            note += "; the run that was selected is not in it."
        self.statusBar().showMessage(note, 15_000)

    def _on_store_gone(self, display: str) -> None:
        """The store's file is no longer there: nothing selected can be read any more."""
        self.store_status.set_gone()
        info = self.current_checkpoint()
        if info is not None:
            self.details.show_checkpoint(info, self.timeline_panel.model.run)   # says it cannot be read
        self.show_error(self._gone_text(display), "warning")

    def _server(self) -> bool:
        info = self.session.info
        return info is not None and info.backend != "sqlite"

    def _where(self) -> str:
        return "in its database (its tables were made again)" if self._server() else "on disk"

    def _gone_text(self, display: str) -> str:
        if self._server():
            return (f"The store {display} is no longer there (its tables were dropped): the runs listed were "
                    "read before. A store made again in that database is opened again.")
        return (f"The store {display} is no longer there (deleted or moved): the runs listed were read "
                "before. A store put back at that path is opened again.")

    def _on_checkpoints_selected(self, infos: list[CheckpointInfo]) -> None:
        pair_selected = getattr(self.details.panels.get("diff"), "set_pair_selected", None)   # (once built)
        if pair_selected is not None:
            pair_selected(len(infos) == 2)
        self.details.show_selection(infos, self.timeline_panel.model.run)

    def _on_live_toggled(self, live: bool) -> None:
        self.session.bridge.set_live(live)
        self.store_status.set_live(live, self.session.bridge.watching)

    def _on_demo_built(self, path: Path) -> None:
        set_available(self.menu_actions.build_demo, True)
        self.welcome.set_busy(None)
        self.open_store(str(path))

    def _on_demo_failed(self, message: str) -> None:
        set_available(self.menu_actions.build_demo, True)
        self.welcome.set_busy(None)
        self.show_error(f"The demo store could not be built: {message}")

    def _fill_recent_menu(self) -> None:
        menu = self.menu_actions.recent_menu
        menu.clear()
        for target in settings.recent_stores():
            menu.addAction(target, partial(self.open_store, target))
        if menu.isEmpty():
            set_available(menu.addAction("No recent stores"), False,
                          "stores you open are listed here; open one with File ▸ Open Store….")
        else:
            menu.addSeparator()
            menu.addAction("Clear Recent Stores", self._clear_recent)

    def _clear_recent(self) -> None:
        settings.forget_recent()
        self.welcome.set_recent([])

    def _copy_reference(self) -> None:
        info = self.current_checkpoint()
        if info is not None:
            QGuiApplication.clipboard().setText(f"{info.run_id}:{info.seq}")
            self.statusBar().showMessage(f"Copied {info.run_id}:{info.seq}", 3000)

    def _show_help(self, dialog: QDialog) -> None:
        old, self.help_dialog = self.help_dialog, dialog
        if old is not None:
            old.close()
            old.deleteLater()
        dialog.show()

    def _all_actions(self) -> list[QAction]:
        found: list[QAction] = []
        for menu in self.menuBar().findChildren(QMenu):
            found += [a for a in menu.actions() if not a.isSeparator()]
        return found

    def set_theme(self, mode: str) -> None:
        """View ▸ Theme: light, dark or the system's; applied now and remembered."""
        app = QApplication.instance()
        if isinstance(app, QApplication):
            style.apply_theme(app, mode)
        for action in self.menu_actions.theme_group.actions():
            action.setChecked(action.data() == mode)
        if self._persist:
            settings.settings().setValue("theme", mode)
        self.update()

    _splitters_sized = False

    def _size_splitters_soon(self, *_args: object) -> None:
        """Once, when the panels are first on screen: after that layout has given them their width."""
        if not self._splitters_sized and self.isVisible() and self.stack.currentWidget() is self.main_splitter:
            self._splitters_sized = True
            QTimer.singleShot(0, self._size_splitters)

    def _size_splitters(self) -> None:
        """First show without remembered sizes: the runs list gets what its names need, not a fixed share."""
        if self._persist and settings.settings().value("window/main_splitter") is not None:
            return
        width = sum(self.main_splitter.sizes()) or self.width()
        share = int(width * 0.45)      # below ~930 px the details need the room more than names do
        runs = min(RUNS_MAX_WIDTH, share if width < RUNS_MIN_WIDTH / 0.45 else max(RUNS_MIN_WIDTH, share))
        self.main_splitter.setSizes([runs, max(1, width - runs)])
        height = sum(self.right_splitter.sizes())
        if height > 0:   # the details get the larger share: the diff and the task board need rows
            # (up to a height for some rows: more would be empty rows of a short run, not the diff's)
            pane = self.right_splitter.widget(0)
            least = pane.minimumSizeHint().height() if pane is not None else 0
            top = max(least, min(height * 2 // 5, TIMELINE_HEIGHT))
            self.right_splitter.setSizes([top, height - top])

    def _check_theme(self, mode: str) -> None:
        for action in self.menu_actions.theme_group.actions():
            action.setChecked(action.data() == mode)

    def _enable_store_actions(self, enabled: bool) -> None:
        for action in (self.menu_actions.refresh, self.menu_actions.close_store, self.menu_actions.find,
                       self.menu_actions.focus_runs, self.menu_actions.focus_timeline, *self.menu_actions.go_to_tabs):
            set_available(action, enabled, NO_STORE)
        self._update_copy_ref()

    def _update_copy_ref(self) -> None:
        store, checkpoint = self.session.info is not None, self.current_checkpoint() is not None
        set_available(self.menu_actions.copy_ref, store and checkpoint,
                      "select a checkpoint in the timeline first." if store else NO_STORE)
        set_available(self.menu_actions.task_history, store and self.timeline_panel.model.run is not None,
                      "select a run first." if store else NO_STORE)

    def _update_title(self, info: StoreInfo | None) -> None:
        if info is None:
            self.setWindowTitle(APP_NAME)
            return
        name = Path(info.display).name if info.backend == "sqlite" else info.display
        self.setWindowTitle(f"{visible(name)} ({describe(info)}) \u2014 {APP_NAME}")

    # -- drag and drop -------------------------------------------------------------------------------
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        urls = event.mimeData().urls() if event.mimeData().hasUrls() else []
        if urls and urls[0].isLocalFile():
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        urls = event.mimeData().urls()
        if urls and urls[0].isLocalFile():
            event.acceptProposedAction()
            self.open_store(urls[0].toLocalFile())

    # -- settings --------------------------------------------------------------------------------------
    def _restore_settings(self) -> None:
        s = settings.settings()
        for key, restore in (("window/geometry", self.restoreGeometry), ("window/state", self.restoreState),
                             ("window/main_splitter", self.main_splitter.restoreState),
                             ("window/right_splitter", self.right_splitter.restoreState),
                             ("runs/header", self.runs_panel.view.header().restoreState),
                             ("timeline/header", self.timeline_panel.view.horizontalHeader().restoreState)):
            value = s.value(key)
            if isinstance(value, QByteArray):
                restore(value)
        live = s.value("live", True)
        self.menu_actions.live.setChecked(live not in (False, "false", "0"))
        forks = s.value("runs/show_forks", None)
        if forks is not None:
            self.menu_actions.show_forks.setChecked(forks not in (False, "false", "0"))
        tab = s.value("details/tab", "")
        if tab:
            self.details.set_tab(str(tab), build=False)

    def save_settings(self) -> None:
        """Remember geometry, splitters, column layouts, live, Show Forks and the tab."""
        s = settings.settings()
        s.setValue("window/geometry", self.saveGeometry())
        s.setValue("window/state", self.saveState())
        s.setValue("window/main_splitter", self.main_splitter.saveState())
        s.setValue("window/right_splitter", self.right_splitter.saveState())
        s.setValue("runs/header", self.runs_panel.view.header().saveState())
        s.setValue("timeline/header", self.timeline_panel.view.horizontalHeader().saveState())
        s.setValue("live", self.menu_actions.live.isChecked())
        s.setValue("runs/show_forks", self.menu_actions.show_forks.isChecked())
        s.setValue("details/tab", self.details.current_tab())

    def showEvent(self, event: QShowEvent) -> None:  # Qt override
        super().showEvent(event)
        self._size_splitters_soon()
        self.startup.arm()

    _demo_built: Path | None = None     # the demo store Build Demo Store made

    def closeEvent(self, event: QCloseEvent) -> None:
        if self._persist:
            self.save_settings()
        self.session.shutdown()
        if self._demo_built is not None:    # the demo agent hung on purpose would live 15 minutes on
            from inspector.demo.build import stop_agents_of
            stop_agents_of(self._demo_built.resolve())
        super().closeEvent(event)
