"""Render the loaded main window to a PNG without a display, then quit (``--screenshot``)."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QThreadPool, QTimer
from PySide6.QtWidgets import QApplication

from inspector.ui.main_window import MainWindow
from inspector.ui.tasks import outcomes_in_flight
from inspector.ui.selection import SelectionRequest

TIMEOUT_MS = 60_000
SETTLE_CHECK_MS = 20


class ScreenshotDriver(QObject):
    """Opens the store, waits (by signals) for the data asked for, grabs the window, exits."""

    def __init__(self, window: MainWindow, path: Path, select: str | None, tab: str | None) -> None:
        super().__init__(window)
        self.window = window
        self.path = Path(path)
        self.tab = tab
        self.request = SelectionRequest(window, select, self)
        self.request.done.connect(self._settle)
        self.request.failed.connect(self._fail)
        window.session.open_failed.connect(self._fail)
        window.session.runner.failed.connect(self._fail)
        self._timeout = QTimer(self, singleShot=True, interval=TIMEOUT_MS)
        self._timeout.timeout.connect(lambda: self._fail("Timed out waiting for the store to load."))
        self._settle_timer = QTimer(self, singleShot=True, interval=SETTLE_CHECK_MS)
        self._settle_timer.timeout.connect(self._settle)

    def start(self) -> None:
        """Wait for the store the session is opening (or capture the welcome page if none)."""
        if self.tab:
            self.window.details.set_tab(self.tab)
        self._timeout.start()
        if self.window.session.store is None and not self.window.session.busy_opening:
            QTimer.singleShot(0, self._capture)

    def _settle(self) -> None:
        # panels may format what they were given in their own background jobs: wait until
        # every pool is idle so the picture shows the finished panels
        if self._busy():
            self._settle_timer.start()
            return
        QTimer.singleShot(0, self._capture)

    def _busy(self) -> bool:
        return bool(self.window.session.runner.active or QThreadPool.globalInstance().activeThreadCount()
                    or outcomes_in_flight() or self.window.details.loading is not None)   # (its delay too)

    def _capture(self) -> None:
        if self._busy():  # painting may have asked for more (fork points, panel jobs)
            self._settle_timer.start()
            return
        self._timeout.stop()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            self._fail(f"Cannot write the screenshot to {self.path}: {err.strerror or err}.")
            return
        # texts set by the last finished job have asked for a new layout, which Qt posts: lay out
        # now, or the picture shows labels at their old widths (a short label cut to a letter)
        QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
        if not self.window.grab().save(str(self.path)):
            self._fail(f"Cannot write the screenshot to {self.path}.")
            return
        QApplication.exit(0)

    def _fail(self, message: str) -> None:
        self._timeout.stop()
        print(f"checkpoint-inspector: {message}", file=sys.stderr)
        QApplication.exit(2)
