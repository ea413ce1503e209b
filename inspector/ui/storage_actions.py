"""The Storage dock (View ▸ Storage) and its Prune… dialog, added to the main window."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QWidget

if TYPE_CHECKING:
    from inspector.ui.main_window import MainWindow
    from inspector.ui.widgets.storage_view import StorageView


class StorageActions:
    """Owns the Storage dock of one main window and opens the prune dialog from it."""

    def __init__(self, window: "MainWindow") -> None:
        self.window = window
        self.view: StorageView | None = None   # built when first shown: pyqtgraph stays out of start-up
        self.dock = window.add_dock(QWidget(), "Storage", Qt.DockWidgetArea.BottomDockWidgetArea, name="dock-storage")
        self.dock.hide()
        self.dock.visibilityChanged.connect(self._on_visibility)
        self.toggle: QAction = self.dock.toggleViewAction()
        self.toggle.setText("&Storage")
        self.toggle.setShortcut(QKeySequence("Ctrl+Shift+U"))
        self.toggle.setStatusTip("Where the store's bytes go, by run, checkpoint and field; prune old checkpoints")
        window.actions.view_menu.addAction(self.toggle)

    def ensure_view(self) -> "StorageView":
        """The Storage view, built on first use."""
        if self.view is None:
            from inspector.ui.widgets.storage_view import StorageView

            view = StorageView(self.window.session)
            view.prune_requested.connect(self.open_prune)
            self.window.run_changed.connect(view.set_run)
            view.set_run(self.window.current_run())
            self.dock.setWidget(view)
            self.view = view
            if self.window.session.store is not None:
                view.store_opened()
        return self.view

    def _on_visibility(self, visible: bool) -> None:
        if visible:
            self.ensure_view()

    def open_prune(self) -> None:
        """The Prune… dialog for the open store (and the selected run)."""
        from inspector.ui.dialogs.prune_dialog import PruneDialog

        info = self.window.session.info
        if info is None:
            return
        run = self.window.current_run()
        dialog = PruneDialog(info, self.window.session.runner, run.id if run else None, self.window)
        dialog.pruned.connect(lambda _plan: (self.window.refresh(), self.ensure_view().refresh()))
        dialog.show()
        self.dialog = dialog


def install_storage(window: "MainWindow") -> StorageActions:
    """Add View ▸ Storage (a dock with the charts) and its Prune… dialog to ``window``."""
    return StorageActions(window)
