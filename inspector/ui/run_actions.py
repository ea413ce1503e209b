"""Fork…, Resume…, "Resume from Last Good Checkpoint" and the Console dock, added to the main window."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, cast

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QAction, QIcon, QKeySequence
from PySide6.QtWidgets import QAbstractItemView, QDialog, QMainWindow, QMessageBox

from inspector.model import ACTIVE_STATUSES, CheckpointInfo, RunInfo
from inspector.ui.availability import NO_STORE, set_available
from inspector.ui import icons
from inspector.ui.tasks import TaskRunner
from inspector.ui.widgets.console_dock import ConsoleDock

if TYPE_CHECKING:   # the resume machinery (processes, psutil) loads on first use, after the first paint
    from inspector.ui.dialogs.fork_dialog import ForkDialog
    from inspector.ui.dialogs.resume_dialog import ResumeDialog
    from inspector.ui.store_access import StoreAccess
    from inspector.resume.frameworks import FrameworkPlan
    from inspector.store.base import Store
    from inspector.ui.session import StoreSession


def ask_confirmation(parent, title: str, text: str) -> bool:
    """The real confirmation box (its module loads with the dialogs, after the first paint)."""
    from inspector.ui.dialogs.resume_dialog import ask_confirmation as ask
    return ask(parent, title, text)


CONSOLE_HEIGHT = 200
FORK_TIP = "Fork the selected checkpoint into a new run (optionally edited)"
RESUME_TIP = "Resume the selected run from the selected checkpoint"
GOOD_TIP = "Resume the selected run where its diagnosis suggests"
LG_SETTINGS_TIP = "The LangGraph graph, Python, working directory and trust of this store (apply at once)"
DIAGNOSIS_KEY = "run-actions:diagnosis"
WAITING_KEY = "run-actions:waiting"
MAX_QUESTION = 300     # characters of an interrupt value shown when it has no question text


def _last_good(access: StoreAccess, run_id: str) -> CheckpointInfo:
    from inspector.resume.stuck import last_good_checkpoint

    with access.read() as store:
        return last_good_checkpoint(store, run_id)


def _diagnosis(store: Store, run: RunInfo) -> str | None:
    from inspector.resume.stuck import diagnose

    diag = diagnose(store, run)
    return diag.describe() if diag is not None else None


def _waiting(store: Store, run_id: str) -> tuple[str, str]:
    """(run id, what the head of a LangGraph thread waits on: one line per pending interrupt,
    else the nodes it stopped before (a fork or an update not run yet); '' when neither)."""
    import json

    head = store.load(f"{run_id}:-1")
    lines = []
    for found in head.meta.get("interrupts", []):
        if not found.get("pending"):
            continue
        question = found.get("question")
        if not isinstance(question, str):
            question = json.dumps(found.get("value"), default=str)[:MAX_QUESTION]
        lines.append(f"waiting for an answer at interrupt() in node {found.get('node') or '?'}: {question}")
    nodes = [str(n) for n in head.meta.get("next") or ()]
    if not lines and nodes:
        what = "a fork the graph has not run yet" if head.info.kind in ("update", "fork") else "stopped"
        lines.append(f"{what}, before {', '.join(nodes)}; Resume\u2026 runs it through your graph")
    return run_id, "\n".join(lines)


class RunActionsHost(Protocol):
    """What the run actions use of the window they join (``MainWindow``, a ``QMainWindow``).

    Typed here so that this module needs nothing of ``main_window``, which installs it.
    """

    session: StoreSession
    menu_actions: Any       # the window's menus (``run_menu``, ``panels_menu``)
    details: Any            # the detail tabs
    runs_panel: Any
    timeline_panel: Any
    run_notice: Any
    store_status: Any
    run_changed: Any        # Signal(RunInfo | None)
    checkpoint_changed: Any  # Signal(CheckpointInfo | None)

    def current_run(self) -> RunInfo | None: ...

    def current_checkpoint(self) -> CheckpointInfo | None: ...

    def add_run_action(self, action: QAction, toolbar: bool = True) -> None: ...

    def show_error(self, message: str, level: str = "error") -> None: ...

    def refresh(self) -> None: ...


class RunActions(QObject):
    """Owns the fork/resume actions and the Console dock of one main window.

    ``confirm`` is the confirmation question (replaceable in tests; never the process).
    """

    def __init__(self, host: RunActionsHost) -> None:
        window = cast(QMainWindow, host)    # the host is a main window: the Qt parent of all here
        super().__init__(window)
        self.window, self.host = window, host
        self.confirm = ask_confirmation
        self.runner = TaskRunner(self)
        self.dialog: QDialog | None = None
        self.access: StoreAccess | None = None
        self.console = ConsoleDock(window, runner=self.runner)
        window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.console)
        self.console.hide()
        window.restoreDockWidget(self.console)
        host.menu_actions.panels_menu.addAction(self.console.toggleViewAction())
        self._console_sized = False
        self.console.visibilityChanged.connect(self._on_console_visibility_changed)
        self.fork = self._action("&Fork\u2026", icons.icon("branch"), "Ctrl+Shift+K", FORK_TIP)
        self.resume = self._action("&Resume\u2026", icons.kind_icon("resume"), "Ctrl+Shift+R", RESUME_TIP)
        self.resume_good = self._action("Resume from &Last Good Checkpoint", icons.kind_icon("resume"), None,
                                        GOOD_TIP)
        host.menu_actions.run_menu.addSeparator()
        host.add_run_action(self.fork)
        host.add_run_action(self.resume)
        host.add_run_action(self.resume_good, toolbar=False)
        self.lg_settings = self._action("LangGraph &Settings…", icons.icon("branch"), None, LG_SETTINGS_TIP)
        host.add_run_action(self.lg_settings, toolbar=False)
        self.lg_settings.triggered.connect(self.open_langgraph_settings)
        self._context_menu(host.runs_panel.view, [self.resume_good, self.resume, self.fork])
        self._context_menu(host.timeline_panel.view, [self.fork, self.resume])
        self.fork.triggered.connect(self.open_fork_dialog)
        self.resume.triggered.connect(self.open_resume_dialog)
        self.resume_good.triggered.connect(self.resume_last_good)
        self.console.follow_run.connect(self._on_console_follow_run)
        self.runner.failed.connect(host.show_error)
        host.run_changed.connect(self._update_enabled)
        host.run_changed.connect(self._diagnose)
        host.runs_panel.run_updated.connect(self._diagnose)
        host.details.tabs.currentChanged.connect(lambda _i: self._show_diagnosis(keep=True))
        host.run_notice.resume_requested.connect(self.resume_last_good)
        host.runs_panel.model.annotated.connect(lambda: self._show_diagnosis(keep=True))
        self._diagnosis: str | None = None
        self._waiting: tuple[str, str] = ("", "")     # (run id, what its LangGraph head waits on)
        host.checkpoint_changed.connect(self._update_enabled)
        host.session.opened.connect(self._on_store_changed)
        host.session.closed.connect(self._on_store_changed)
        window.installEventFilter(self)
        self._update_enabled()

    def _action(self, text: str, icon: QIcon, shortcut: str | None, tip: str) -> QAction:
        action = QAction(icon, text, self.window)
        if shortcut:
            action.setShortcut(QKeySequence(shortcut))
            action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        action.setToolTip(tip)
        action.setStatusTip(tip)
        return action

    @staticmethod
    def _context_menu(view: QAbstractItemView, actions: list[QAction]) -> None:
        if view.contextMenuPolicy() == Qt.ContextMenuPolicy.DefaultContextMenu:
            view.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        view.addActions(actions)

    # -- targets -----------------------------------------------------------------------
    @property
    def store_url(self) -> str | None:
        """URL of the open store when its adapter offers fork or resume (``StoreInfo.capabilities``)."""
        info = self.host.session.info
        if info is None or not (info.capabilities.fork.available or info.capabilities.resume.available):
            return None
        return info.url

    def _through_framework(self) -> bool:
        """True when fork/resume go through another framework's command (not native or LangGraph)."""
        info = self.host.session.info
        return info is not None and info.kind not in ("native", "langgraph")

    def store_access(self) -> StoreAccess | None:
        """Access to the open store: its session store for reads, one kept writer for writes."""
        url = self.store_url
        if url is None:
            return None
        if self.access is None or self.access.url != url or self.access.reader is not self.host.session.store:
            from inspector.ui.store_access import StoreAccess
            self._on_store_changed()
            self.access = StoreAccess(url, self.host.session.store, keep_writer=True)
            self.console.store_access = self.access
        return self.access

    def _on_store_changed(self, *_args: object) -> None:
        """The window opened another store or closed it: drop the kept writer."""
        if self.access is not None:
            old, self.access = self.access, None
            self.console.store_access = None
            self.runner.run(old.close)      # off the GUI thread; pending writes finish first

    def target(self) -> CheckpointInfo | str | None:
        """The selected checkpoint, else the head of the selected run."""
        run = self.host.current_run()
        cp = self.host.current_checkpoint()
        if cp is not None and (run is None or cp.run_id == run.id):
            return cp
        if run is not None:
            return f"{run.id}:-1"   # resolved to the head when the dialog loads
        return None

    def _update_enabled(self, *_args: object) -> None:
        info = self.host.session.info
        caps = info.capabilities if info is not None else None
        run = self.host.current_run()
        langgraph = info is not None and info.kind == "langgraph"
        # a LangGraph thread is resumable through its graph, which the Resume dialog asks for
        for action, cap in ((self.fork, caps.fork if caps else None), (self.resume, caps.resume if caps else None),
                            (self.resume_good, caps.resume if caps else None)):
            why = self._disabled_reason(action, cap, run, langgraph)
            set_available(action, not why, why)
        set_available(self.lg_settings, langgraph, "only for LangGraph databases; open one (File ▸ Open Store…).")

    def _disabled_reason(self, action: QAction, cap: object, run: RunInfo | None, langgraph: bool) -> str:
        """Why ``action`` is unavailable and what to do, in one sentence ('' when it is available)."""
        if self.host.session.info is None:
            return NO_STORE
        if cap is None or not getattr(cap, "available", True):
            return f"not available for this store: {getattr(cap, 'reason', '') or 'its adapter cannot do it'}"
        if self.target() is None or (action is self.resume_good and run is None):
            return "select a run (and a checkpoint) in the list first."
        if run is not None and self._read_only_run(run):
            return f"not available for this run: {(run.not_resumable_reason or 'it is read-only').rstrip('.')}."
        target = self.target()
        if langgraph and isinstance(target, CheckpointInfo) and action is not self.resume_good:
            from inspector.resume.langgraph import subgraph_refusal
            inside = subgraph_refusal(target.id)     # the sentence `fork` and `resume` give
            if inside:
                return inside
        if run is not None and not langgraph and "langgraph" in run.labels:   # (the check loads fork on demand)
            from inspector.resume.fork import lane_refusal
            refused = lane_refusal(run, action="fork" if action is self.fork else "resume")   # as the CLI says
            if refused:
                return refused
        if action is not self.fork and run is not None and not (run.resumable or langgraph):
            reason = run.not_resumable_reason or "its recorder marked it not resumable"
            return f"this run cannot be resumed ({reason.rstrip('.')}); fork it instead (Run ▸ Fork…)."
        return ""

    def _read_only_run(self, run: RunInfo) -> bool:
        """A run of a framework store that the store's fork and resume cannot take (a CrewAI
        flow's saved states beside crew checkpoints): its framework's command restores runs
        the store can resume, and this one it says it cannot, so forking it fails the same way."""
        info = self.host.session.info
        return (info is not None and self._through_framework() and info.capabilities.resume.available
                and not run.resumable)

    def open_langgraph_settings(self) -> QDialog | None:
        """LangGraph Settings…: graph, Python, working directory, trust; applied at once."""
        store = self.host.session.store
        info = self.host.session.info
        if store is None or info is None or info.kind != "langgraph":
            return None
        from inspector.ui.dialogs.langgraph_settings import LangGraphSettingsDialog
        dialog = LangGraphSettingsDialog(store, self.window)
        def kinds_read(path: str, problem: str | None) -> None:
            self.host.refresh()
            extra = f"; channel kinds are inferred: {problem}" if problem else ""
            self.window.statusBar().showMessage(f"LangGraph settings saved in {path} and applied{extra}", 8000)

        def applied(path: str) -> None:
            from inspector.resume.graph_channels import attach
            self.host.refresh()
            self._update_enabled()
            self.window.statusBar().showMessage(f"LangGraph settings saved in {path}; asking the graph for its "
                                                "channel kinds\u2026", 8000)
            self.host.session.runner.run(lambda: attach(store), lambda problem: kinds_read(path, problem),
                                         lambda message: kinds_read(path, message))
        dialog.applied.connect(applied)
        self._show(dialog)
        return dialog

    # -- commands ------------------------------------------------------------------------
    def open_fork_dialog(self) -> ForkDialog | None:
        """Fork…: edit and fork the target checkpoint; the new run is selected afterwards."""
        target, access = self.target(), self.store_access()
        if target is None or access is None:
            return None
        if self._through_framework():
            self.run_through_framework("fork", target)
            return None
        from inspector.ui.dialogs.fork_dialog import ForkDialog
        dialog = ForkDialog(access, target, self.window)
        dialog.forked.connect(lambda run: self._on_forked(run, dialog.fork_checkpoint))
        self._show(dialog)
        return dialog

    def open_resume_dialog(self, target: CheckpointInfo | str | None = None) -> ResumeDialog | None:
        """Resume…: review exactly what will run, confirm, watch it in the console."""
        target, access = target or self.target(), self.store_access()
        if target is None or access is None:
            return None
        if self._through_framework():
            self.run_through_framework("resume", target)
            return None
        from inspector.ui.dialogs.resume_dialog import ResumeDialog
        dialog = ResumeDialog(access, target, self.window, confirm=self.confirm)
        dialog.launch_ready.connect(self.console.start)
        dialog.launch_ready.connect(self._note_write)
        self._show(dialog)
        return dialog

    def run_through_framework(self, action: str, target: CheckpointInfo | str) -> None:
        """Fork or resume through the store's framework: plan off the GUI thread, show the exact
        command in the confirmation box, then run it in the Console dock."""
        store = self.host.session.store
        if store is None:
            return
        ref = target.id if isinstance(target, CheckpointInfo) else target

        def plan() -> FrameworkPlan:
            from inspector.resume.frameworks import plan as plan_framework
            return plan_framework(store, ref, action)

        self.runner.run(plan, lambda found: self._on_framework_planned(action, found), self.host.show_error)

    def _on_framework_planned(self, action: str, plan: FrameworkPlan) -> None:
        title = f"{action.capitalize()} through {plan.framework}"
        if not self.confirm(self.window, title, plan.describe()):
            return
        self.runner.run(plan.launch, self.console.start, self.host.show_error)

    def resume_last_good(self) -> None:
        """The Resume dialog, planned from the checkpoint the selected run's diagnosis suggests."""
        run, access = self.host.current_run(), self.store_access()
        if run is None or access is None:
            return
        if self._through_framework():
            self.run_through_framework("resume", f"{run.id}:-1")
            return
        self.runner.run(lambda: _last_good(access, run.id), self._on_last_good_found,
                        self.host.show_error, key="run-actions:last-good")

    def _on_last_good_found(self, checkpoint: CheckpointInfo) -> None:
        self.open_resume_dialog(checkpoint)

    def _show(self, dialog: QDialog) -> None:
        old, self.dialog = self.dialog, dialog
        if old is not None:
            old.close()
            old.deleteLater()
        dialog.open()

    # -- slots ---------------------------------------------------------------------------------
    def _note_write(self, *_args: object) -> None:
        self.host.store_status.note_write()

    def _on_forked(self, run: RunInfo, checkpoint: CheckpointInfo | None = None) -> None:
        """Show the fork: a new run once the runs list has it; a LangGraph fork is a new
        checkpoint of the thread (same run id), shown by reading that run's timeline again."""
        self._note_write()
        if checkpoint is None:
            self.window.statusBar().showMessage(f"Forked into run {run.id}", 5000)
            self._select_soon(run.id)
            return
        self.window.statusBar().showMessage(f"Forked: new checkpoint #{checkpoint.seq} of thread {run.name}", 5000)
        self.host.refresh()         # the thread's row (count, status) is read again
        if self.host.runs_panel.select_run(run.id, again=True):
            self.host.timeline_panel.select_seq(checkpoint.seq)   # its branch is shown once read

    def _diagnose(self, run: RunInfo | None) -> None:
        """Find the selected run's stuck diagnosis (off the GUI thread) for the Metadata tab."""
        self._ask_waiting(run)
        store = self.host.session.store
        if run is None or store is None or run.status not in ACTIVE_STATUSES:
            self.host.session.runner.cancel(DIAGNOSIS_KEY)
            self._show_diagnosis(None)
            return
        self.host.session.runner.run(lambda: _diagnosis(store, run), self._show_diagnosis,
                                       lambda _m: self._show_diagnosis(None), key=DIAGNOSIS_KEY)

    def _ask_waiting(self, run: RunInfo | None) -> None:
        """Find what an interrupted LangGraph thread waits on (off the GUI thread) for the banner
        (a native run says it in its ``last_error``; a thread has only its head's pending interrupts)."""
        store, info = self.host.session.store, self.host.session.info
        if run is None or store is None or info is None or info.kind != "langgraph" or run.status != "interrupted":
            self.host.session.runner.cancel(WAITING_KEY)
            self._waiting = ("", "")
            return
        if self._waiting[0] != run.id:
            self._waiting = ("", "")
        self.host.session.runner.run(lambda: _waiting(store, run.id), self._on_waiting,
                                     lambda _m: self._on_waiting((run.id, "")), key=WAITING_KEY)

    def _on_waiting(self, found: tuple[str, str]) -> None:
        self._waiting = found
        self._show_diagnosis(keep=True)

    def _show_diagnosis(self, text: str | None = None, *, keep: bool = False) -> None:
        if not keep:
            self._diagnosis = text
        run = self.host.current_run()
        status = self.host.runs_panel.model.status_of(run.id) if run is not None else ""
        waiting = self._waiting[1] if run is not None and self._waiting[0] == run.id else ""
        self.host.run_notice.show_run(run, status, self._diagnosis, waiting=waiting)
        panel = self.host.details.panels.get("metadata")   # built when its tab is first shown
        if panel is not None and hasattr(panel, "show_diagnosis"):
            panel.show_diagnosis(self._diagnosis)
        if panel is not None and hasattr(panel, "show_status"):
            model = self.host.runs_panel.model
            panel.show_status(run.id if run is not None else None,
                              model.effective_of(run.id) if run is not None else None)

    def _on_console_visibility_changed(self, visible: bool) -> None:
        if visible and not self._console_sized:  # first appearance: a modest strip, not half the window
            self._console_sized = True
            self.window.resizeDocks([self.console], [CONSOLE_HEIGHT], Qt.Orientation.Vertical)

    def _on_console_follow_run(self, run_id: str) -> None:
        self._select_soon(run_id)

    def _select_soon(self, run_id: str, attempts: int = 20) -> None:
        """Select a run as soon as the live runs list shows it (a fork appears a moment later)."""
        if self.host.runs_panel.select_run(run_id) or attempts <= 0:
            return
        self.host.refresh()
        QTimer.singleShot(250, lambda: self._select_soon(run_id, attempts - 1))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.window and event.type() == QEvent.Type.Close and self.console.running():
            answer = QMessageBox.question(
                self.window, "Resumed Processes Running",
                f"{len(self.console.running())} resumed agent process(es) started here are still running. "
                "Stop them and quit? (They can be resumed again later.)",
                QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, QMessageBox.StandardButton.No)
            if answer != QMessageBox.StandardButton.Yes:
                event.ignore()
                return True
            self.console.shutdown()
        if watched is self.window and event.type() == QEvent.Type.Close and self.access is not None:
            self.access.close()
            self.access = None
        return super().eventFilter(watched, event)


def install_run_actions(window: RunActionsHost) -> RunActions:
    """Add Fork…, Resume…, Resume from Last Good Checkpoint and the Console dock to ``window``."""
    return RunActions(window)
