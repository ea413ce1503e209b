"""Start-up in two phases: paint the runs list first, build what is not visible yet after it.

The window's first paint waits only for what it shows (runs, timeline shell, menus).
Panels behind a tab, the live watcher's imports and the run actions' process machinery
are set up by callbacks given to ``Startup.later``, which run once the first paint that
matters has happened: the runs list painted with rows, the welcome page painted, or the
store failed to open; a fallback timer covers anything else (e.g. a store still opening).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QWidget

FALLBACK_MS = 1500


class PaintWatch(QObject):
    """Calls ``callback`` once, right after the first paint of ``widget`` for which ``ready()`` holds."""

    def __init__(self, widget: QWidget, ready: Callable[[], bool], callback: Callable[[], None]) -> None:
        super().__init__(widget)
        self.widget, self.ready, self.callback = widget, ready, callback
        widget.installEventFilter(self)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # Qt's name
        if event.type() == QEvent.Type.Paint and self.ready():
            self.widget.removeEventFilter(self)
            QTimer.singleShot(0, self.callback)  # after this paint has finished
        return False


class Startup(QObject):
    """The second phase of a window's start-up (see the module docstring)."""

    def __init__(self, parent: QObject, fallback_ms: int = FALLBACK_MS) -> None:
        super().__init__(parent)
        self.finished = False
        self._pending: list[Callable[[], None]] = []
        self._fallback = QTimer(self, singleShot=True, interval=fallback_ms)
        self._fallback.timeout.connect(self.finish)

    def later(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` after the first paint (at once if that has happened)."""
        if self.finished:
            callback()
        else:
            self._pending.append(callback)

    def watch(self, widget: QWidget, ready: Callable[[], bool]) -> None:
        """Finish after the first paint of ``widget`` for which ``ready()`` holds."""
        PaintWatch(widget, ready, self.finish)

    def arm(self) -> None:
        """Start the fallback timer (call when the window is shown)."""
        if not self.finished:
            self._fallback.start()

    def finish(self) -> None:
        """Run every pending callback once, in the order given."""
        if self.finished:
            return
        self.finished = True
        self._fallback.stop()
        pending, self._pending = self._pending, []
        for callback in pending:
            callback()
