"""The GUI thread owns the garbage collector: automatic collection off, collections on a timer.

CPython's collector is process-wide and runs in whichever thread happens to allocate. With
the thread pool decoding big states, automatic collections would rescan those trees again
and again (3-4x slower decoding), and a collection in a worker may finalize Qt objects off
the GUI thread. So the app turns automatic collection off once, on the GUI thread, and the
GUI thread collects every ``INTERVAL_MS`` with the collector's own thresholds: the young
generation when it is over its threshold, older ones as often as CPython would.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

INTERVAL_MS = 500


class MainThreadCollector(QObject):
    """Collects garbage on the thread it lives on (the GUI thread), on a timer."""

    def __init__(self, parent: QObject | None = None, interval_ms: int = INTERVAL_MS) -> None:
        super().__init__(parent)
        self._was_enabled = gc.isenabled()
        gc.disable()
        self.collections = 0
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.check)
        self._timer.start()

    def check(self) -> int:
        """Collect the oldest generation that is over its threshold; returns it (-1: none)."""
        t0, t1, t2 = gc.get_threshold()
        c0, c1, c2 = gc.get_count()
        generation = 2 if c2 > t2 else 1 if c1 > t1 else 0 if c0 > t0 else -1
        if generation >= 0:
            gc.collect(generation)
            self.collections += 1
        return generation

    def stop(self) -> None:
        """Stop collecting here and give the collector back to CPython."""
        self._timer.stop()
        if self._was_enabled:
            gc.enable()


_installed: MainThreadCollector | None = None


def install(app: QObject) -> MainThreadCollector:
    """Give the collector to the GUI thread for the life of ``app`` (idempotent)."""
    global _installed
    if _installed is None:
        _installed = MainThreadCollector(app)
        _installed.destroyed.connect(_forget)
    return _installed


def _forget(*_args: object) -> None:
    global _installed
    _installed = None
