"""The Storage dock (View ▸ Storage) and its Prune… dialog, Pin Checkpoint and Delete Run…,
added to the main window."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QWidget

from inspector.ui.availability import NO_STORE, set_available
from inspector.ui.run_actions import ask_confirmation

# The Storage dock's first height: a share of the height it and the central area (timeline and
# detail tabs) split, never so much that the central area keeps less than CENTRAL_KEEP (about
# three timeline rows and five rows of the state tree), and never less than its header and the
# charts' titles (the charts scroll)
STORAGE_SHARE = 0.4
CENTRAL_KEEP = 470
STORAGE_MIN_HEIGHT = 120

if TYPE_CHECKING:
    from inspector.model import CheckpointInfo, RunInfo, StoreInfo
    from inspector.retention.delete import DeletePlan
    from inspector.ui.main_window import MainWindow
    from inspector.ui.widgets.storage_view import StorageView


class StorageActions:
    """Owns the Storage dock of one main window and opens the prune dialog from it."""

    def __init__(self, window: MainWindow) -> None:
        self.window = window
        self.view: StorageView | None = None   # built when first shown: pyqtgraph stays out of start-up
        self.deleting: set[str] = set()   # runs this window is deleting (the watcher may see them go first)
        self.dock = window.add_dock(QWidget(), "Storage", Qt.DockWidgetArea.BottomDockWidgetArea, name="dock-storage",
                                    in_panels=False)     # View ▸ Storage, once
        self.dock.hide()
        self.dock.visibilityChanged.connect(self._on_visibility)
        self.toggle: QAction = self.dock.toggleViewAction()
        self.toggle.setText("&Storage")
        self.toggle.setShortcut(QKeySequence("Ctrl+Shift+U"))
        self.toggle.setStatusTip("Where the store's bytes go, by run, checkpoint and field; prune old checkpoints")
        window.menu_actions.view_menu.addAction(self.toggle)
        self.pin = QAction("&Pin Checkpoint", window)
        self.pin.setCheckable(True)
        self.pin.setToolTip("Pin the selected checkpoint: pinned checkpoints are never removed by prune")
        set_available(self.pin, False, NO_STORE)
        self.pin.triggered.connect(self._on_pin_triggered)
        window.add_run_action(self.pin, toolbar=False)
        self.delete = QAction("&Delete Run\u2026", window)
        self.delete.setToolTip("Delete the selected run and its checkpoints from the store (asks first)")
        set_available(self.delete, False, NO_STORE)
        self.delete.triggered.connect(self.delete_run)
        # Delete in the runs list (only there: the key edits text elsewhere); it asks first
        self.delete.setShortcut(QKeySequence(QKeySequence.StandardKey.Delete))
        self.delete.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        window.runs_panel.view.addAction(self.delete)
        window.menu_actions.run_menu.addSeparator()      # the one action that removes data, apart
        window.add_run_action(self.delete, toolbar=False)
        self.confirm = ask_confirmation      # (tests answer for the user)
        window.checkpoint_changed.connect(self._on_checkpoint_changed)
        window.run_changed.connect(lambda _run: self._on_checkpoint_changed(window.current_checkpoint()))

    def ensure_view(self) -> StorageView:
        """The Storage view, built on first use."""
        if self.view is None:
            from inspector.ui.widgets.storage_view import StorageView

            view = StorageView(self.window.session)
            view.prune_requested.connect(self.open_prune)
            self.window.run_changed.connect(view.set_run)
            self.dock.setWidget(view)
            self.view = view
            self.window.resizeDocks([self.dock], [self.first_height()], Qt.Orientation.Vertical)
            if self.window.session.store is not None:
                view.store_opened(self.window.current_run())     # the run selected now: its charts
        return self.view

    def first_height(self) -> int:
        """The dock's height when it first opens: charts need room, but on a small window the
        timeline and the state stay usable (at 1024x700 the charts scroll; at 1920x1200 two
        rows of them show whole)."""
        central = self.window.centralWidget()
        shared = (central.height() if central is not None else self.window.height()) + \
            (self.dock.height() if self.dock.isVisible() else 0)
        return max(STORAGE_MIN_HEIGHT, min(int(shared * STORAGE_SHARE), shared - CENTRAL_KEEP))

    def _on_visibility(self, visible: bool) -> None:
        if visible:
            self.ensure_view()

    def _on_checkpoint_changed(self, info: CheckpointInfo | None) -> None:
        store = self.window.session.info
        if store is None:
            set_available(self.pin, False, NO_STORE)
        elif store.kind == "langgraph":
            set_available(self.pin, False, "pins are kept by Checkpoint Inspector stores; a LangGraph database has "
                                           "no place for them (its prune keeps checkpoints by count and age).")
        elif store.kind != "native":
            set_available(self.pin, False, f"pins are kept by Checkpoint Inspector stores; this is {_a(store)} "
                                           "store, where prune does not apply.")
        else:
            set_available(self.pin, info is not None, "select a checkpoint in the timeline first.")
        self.pin.setChecked(bool(info is not None and info.pinned))
        if store is None:
            set_available(self.delete, False, NO_STORE)
        elif store.kind not in ("native", "langgraph"):
            set_available(self.delete, False, f"runs are deleted from Checkpoint Inspector stores and LangGraph "
                                              f"databases; this is {_a(store)} store, which deletes its own sessions.")
        else:
            set_available(self.delete, self.window.current_run() is not None, "select a run first.")

    def delete_run(self) -> None:
        """Delete the selected run: what would go is read first (in the background), then asked
        about; what stops it (running, pinned, forked from) is said instead."""
        from inspector.retention.delete import plan_delete
        from inspector.resume.status import still_working
        from inspector.ui.dialogs.prune_dialog import target_of

        run, store = self.window.current_run(), self.window.session.info
        if run is None or store is None:
            return
        target = target_of(store)
        self.window.session.runner.run(lambda: plan_delete(target, [run.id], alive=still_working),
                                       lambda plan: self._confirm_delete(target, plan),
                                       self.window.show_error, key="delete-run")

    def _confirm_delete(self, target: str, plan: DeletePlan) -> None:
        from inspector.humanize import plural

        if plan.blockers:
            self.window.show_error(" ".join(plan.blockers), "warning")
            return
        its = "its" if len(plan.runs) == 1 else "their"
        if plan.langgraph:
            sqlite = self.window.session.info is not None and self.window.session.info.backend == "sqlite"
            text = (f"Delete LangGraph thread {_names(plan.runs)}, {its} {plural(plan.checkpoints, 'checkpoint')} "
                    f"and pending writes from this LangGraph database, as LangGraph's delete_thread does?\n\n"
                    + ("A backup copy of the file is made first, next to it." if sqlite else "This cannot be undone."))
        else:
            lanes = (f"\n\nIt is LangGraph thread {', '.join(repr(t) for t in plan.threads)} (written by "
                     f"InspectorSaver): all {plural(len(plan.runs), 'lane')} of it go.") if plan.threads else ""
            text = (f"Delete {_names(plan.runs)} and {its} {plural(plan.checkpoints, 'checkpoint')} from the "
                    f"store?{lanes}\n\nThe pieces of state no other checkpoint uses are removed too. "
                    "This cannot be undone.")
        if not self.confirm(self.window, "Delete Run", text):
            return
        from inspector.retention.delete import apply_delete
        from inspector.resume.status import still_working

        refs, unlock = [r.id for r in plan.runs], plan.langgraph     # (the user just allowed it)
        self.deleting = set(refs)
        self.window.session.runner.run(lambda: apply_delete(target, refs, alive=still_working, langgraph_write=unlock),
                                       self._on_deleted, self._on_delete_failed, key="delete-run")

    def _on_delete_failed(self, message: str) -> None:
        self.deleting = set()
        self.window.show_error(message)

    def _on_deleted(self, plan: DeletePlan) -> None:
        from inspector.humanize import fmt_size, plural

        self.deleting = set()
        self.window.store_status.note_write()
        shown = self.window.timeline_panel.model.run
        if shown is not None and shown.id in {r.id for r in plan.runs}:
            self.window.timeline_panel.show_run(None)     # gone: the status bar says so, not the banner
            self.window.details.show_checkpoint(None, None)
            self.window.run_changed.emit(None)
        self.window.refresh()
        if self.view is not None:
            self.view.refresh()
        if plan.langgraph:
            # (a backup beside the database is named by its file name: the status bar is short)
            store = self.window.session.info
            backup = Path(plan.backup) if plan.backup else None
            beside = backup is not None and store is not None and backup.parent == Path(store.display).parent
            said = (f"Deleted thread {_names(plan.runs)} ({plural(plan.checkpoints, 'checkpoint')})"
                    + (f"; backup: {backup.name if beside else backup}" if backup is not None else "."))
        else:
            said = (f"Deleted {_names(plan.runs)}: {plural(plan.checkpoints, 'checkpoint')}, and "
                    f"{plural(plan.pieces, 'piece')} of state no other checkpoint used ({fmt_size(plan.content_bytes)}).")
        self.window.statusBar().showMessage(said, 15_000)
        if plan.notes:      # what was left undone: a warning that stays until closed
            self.window.banner.show_message(" ".join(plan.notes), "warning")

    def _on_pin_triggered(self, pinned: bool) -> None:
        """Pin or unpin the current checkpoint (a write, in the background), then reload the timeline."""
        from inspector.retention.pins import set_pin
        from inspector.ui.dialogs.prune_dialog import target_of

        info, store = self.window.current_checkpoint(), self.window.session.info
        if info is None or store is None:
            return
        target, ref, row = target_of(store), info.id, info.seq
        self.window.session.runner.run(lambda: set_pin(target, ref, pinned),
                                       lambda _result: self._on_pinned(row, pinned),
                                       self._on_pin_failed, key="pin")

    def _on_pinned(self, row: int, pinned: bool) -> None:
        self.window.store_status.note_write()
        panel = self.window.timeline_panel
        panel.show_run(panel.model.run)
        panel.select_row(row, center=True)
        self.window.statusBar().showMessage("Pinned: prune will keep this checkpoint" if pinned
                                            else "Unpinned", 4000)

    def _on_pin_failed(self, message: str) -> None:
        self.pin.setChecked(not self.pin.isChecked())
        self.window.show_error(message)

    def open_prune(self) -> None:
        """The Prune… dialog for the open store (and the selected run)."""
        from inspector.ui.dialogs.prune_dialog import PruneDialog

        info = self.window.session.info
        if info is None:
            return
        run = self.window.current_run()
        dialog = PruneDialog(info, self.window.session.runner, run.id if run else None, self.window,
                             run_name=run.name if run else None)
        def pruned(_plan: object) -> None:
            self.window.store_status.note_write()
            self.window.refresh()
            self.ensure_view().refresh()
        dialog.pruned.connect(pruned)
        dialog.show()
        self.dialog = dialog


def _names(runs: tuple[RunInfo, ...]) -> str:
    """The first runs' names, quoted, for a sentence."""
    return ", ".join(f"\u201c{r.name}\u201d" for r in runs[:3]) + (" \u2026" if len(runs) > 3 else "")


def install_storage(window: MainWindow) -> StorageActions:
    """Add View ▸ Storage (a dock with the charts) and its Prune… dialog to ``window``."""
    return StorageActions(window)


def _a(store: StoreInfo) -> str:
    """'a CrewAI', 'an OpenAI Agents': the store's kind as people name it, with its article."""
    name = store.label or store.kind
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"
