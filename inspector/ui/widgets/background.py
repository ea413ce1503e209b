"""Background jobs for the detail panels: run a callable in the thread pool, deliver only the latest.

Each panel owns a ``LatestJob``; submitting a new job supersedes the running one (its
``cancelled()`` turns True and its result is dropped), so a slow format of an old snapshot
can never overwrite a newer one. Results reach the GUI thread through one long-lived
dispatcher object, so a worker never touches a widget that may already be gone.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, QRunnable, QThreadPool, Signal, Slot

from inspector.diff import DiffCancelled
from inspector.ui import refguard

log = logging.getLogger(__name__)
PROGRESS_INTERVAL = 0.05   # seconds between two progress reports reaching the GUI


class JobCancelled(Exception):
    """Raised by ``JobContext.check()`` when a newer job superseded this one."""


class _Dispatcher(QObject):
    """Lives in the GUI thread; runs closures posted from workers."""

    posted = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self.posted.connect(self._on_posted)

    @Slot(object)
    def _on_posted(self, fn: Callable[[], None]) -> None:
        fn()


_dispatcher: _Dispatcher | None = None


def _post(fn: Callable[[], None]) -> None:
    assert _dispatcher is not None
    _dispatcher.posted.emit(fn)


def _ensure_dispatcher() -> None:
    global _dispatcher
    refguard.install()
    if _dispatcher is None or not shiboken6.isValid(_dispatcher):
        _dispatcher = _Dispatcher()
        app = QCoreApplication.instance()
        if app is not None:
            _dispatcher.moveToThread(app.thread())


class JobContext:
    """Handed to a job: ``cancelled()`` polls supersession, ``progress()`` reports to the GUI."""

    def __init__(self, owner: LatestJob, token: int) -> None:
        self._owner = owner
        self.token = token
        self._last_progress = 0.0

    def cancelled(self) -> bool:
        """True once a newer job was submitted (or the owner was cancelled)."""
        return self._owner._token != self.token

    def check(self) -> None:
        """Raise JobCancelled when superseded (call between steps of long work)."""
        if self.cancelled():
            raise JobCancelled()

    def progress(self, done: int, total: int = 0, text: str = "") -> None:
        """Report progress (at most every 50 ms); delivered to ``progressed`` if still current."""
        now = time.monotonic()
        if now - self._last_progress < PROGRESS_INTERVAL:
            return
        self._last_progress = now
        owner, token = self._owner, self.token
        _post(lambda: owner._deliver_progress(token, done, total, text))


class _Runnable(QRunnable):
    def __init__(self, fn: Callable[[JobContext], Any], ctx: JobContext) -> None:
        super().__init__()
        self._fn, self._ctx = fn, ctx

    def run(self) -> None:
        owner, token = self._ctx._owner, self._ctx.token
        if self._ctx.cancelled():
            return
        try:
            result = self._fn(self._ctx)
        except (JobCancelled, DiffCancelled, InterruptedError):
            return   # superseded: nobody waits for this result
        except Exception as err:  # delivered to the GUI, which shows or logs it
            error = err   # Python unbinds ``err`` when the except block ends, before the lambda runs
            _post(lambda: owner._deliver(token, error, failed=True))
            return
        _post(lambda: owner._deliver(token, result, failed=False))


class LatestJob(QObject):
    """Runs jobs off the GUI thread; only the most recently submitted job's outcome is emitted.

    Signals: ``finished(result)``, ``failed(exception)``, ``progressed(done, total, text)``,
    ``busy_changed(bool)``.
    """

    finished = Signal(object)
    failed = Signal(object)
    progressed = Signal(int, int, str)
    busy_changed = Signal(bool)

    _counter = itertools.count(1)
    _lock = threading.Lock()

    def __init__(self, parent: QObject | None = None, pool: QThreadPool | None = None) -> None:
        super().__init__(parent)
        _ensure_dispatcher()
        self._pool = pool or QThreadPool.globalInstance()
        self._token = 0
        self._busy = False

    @property
    def busy(self) -> bool:
        """True while the latest job has not delivered."""
        return self._busy

    def submit(self, fn: Callable[[JobContext], Any]) -> int:
        """Start ``fn(ctx)`` in the pool, superseding any earlier job; returns its token."""
        with LatestJob._lock:
            self._token = next(LatestJob._counter)
        token = self._token
        self._set_busy(True)
        self._pool.start(_Runnable(fn, JobContext(self, token)))
        return token

    def cancel(self) -> None:
        """Drop whatever is running (its result will be ignored)."""
        with LatestJob._lock:
            self._token = next(LatestJob._counter)
        self._set_busy(False)

    def _set_busy(self, busy: bool) -> None:
        if busy != self._busy:
            self._busy = busy
            self.busy_changed.emit(busy)

    def _alive(self, token: int) -> bool:
        return shiboken6.isValid(self) and token == self._token

    def _deliver(self, token: int, value: Any, *, failed: bool) -> None:
        if not self._alive(token):
            return
        self._set_busy(False)
        if failed:
            log.debug("background job failed", exc_info=value)
            self.failed.emit(value)
        else:
            self.finished.emit(value)

    def _deliver_progress(self, token: int, done: int, total: int, text: str) -> None:
        if self._alive(token):
            self.progressed.emit(done, total, text)
