"""The GUI's one background-job module: work in a thread pool, outcomes on the GUI thread.

A job is a callable run off the GUI thread. What it returns or raises comes back as an
``Outcome`` (like a finished future: the exception travels with it), through one dispatcher
object that lives on the GUI thread, so a worker never touches a widget. Stale outcomes are
dropped here, not by each caller: jobs submitted under the same key (``TaskRunner``) or to the
same ``LatestJob`` supersede each other by generation tokens, and only the newest job's outcome
is delivered; a superseded job sees ``ctx.cancelled()`` turn True.

* ``TaskRunner.run(fn, on_done, on_error, key=…)`` — store I/O of a window (a private pool);
  ``on_error`` gets one sentence for the user, ``TaskRunner.failed`` carries it when nobody asked.
* ``LatestJob`` — a panel's "format the newest value" job with ``finished``/``failed``/
  ``progressed``/``busy_changed`` signals and a ``JobContext`` for cancellation and progress.
"""

from __future__ import annotations

import itertools
import logging
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import shiboken6
from PySide6.QtCore import (
    QCoreApplication,
    QObject,
    QRunnable,
    QThreadPool,
    Signal,
    Slot,
)

from inspector.errors import StoreError, TaskStateError
from inspector.ui import refguard

log = logging.getLogger(__name__)

OnDone = Callable[[Any], object]     # what it returns is ignored
OnError = Callable[[str], None]
PROGRESS_INTERVAL = 0.05   # seconds between two progress reports reaching the GUI
_KNOWN_ERRORS = (StoreError, TaskStateError)


def describe_error(exc: BaseException) -> str:
    """One sentence for the user: the StoreError text, or a short note for a bug."""
    if isinstance(exc, _KNOWN_ERRORS):
        return str(exc)
    return f"Unexpected error ({type(exc).__name__}: {exc}); details are in the log."


class JobCancelled(Exception):
    """Raised by ``JobContext.check()`` when a newer job superseded this one."""


def _is_cancelled(exc: BaseException | None) -> bool:
    """Whether ``exc`` says the job stopped because it was superseded (nobody wants its result)."""
    if isinstance(exc, (JobCancelled, InterruptedError)):
        return True
    # The diff's own cancellation, without importing the diff package at start-up.
    model = sys.modules.get("inspector.diff.model")
    return model is not None and isinstance(exc, model.DiffCancelled)


@dataclass(frozen=True)
class Outcome:
    """What a finished job produced: its value, or the exception it raised (never both)."""

    value: Any = None
    error: BaseException | None = None

    @property
    def ok(self) -> bool:
        """True when the job returned normally."""
        return self.error is None

    @property
    def message(self) -> str:
        """The error as one sentence for the user ("" when the job succeeded)."""
        return "" if self.error is None else describe_error(self.error)

    def result(self) -> Any:
        """The value, or raise the job's exception (as ``Future.result()`` does)."""
        if self.error is not None:
            raise self.error
        return self.value


class _Sink(Protocol):
    def _deliver(self, token: int, outcome: Outcome) -> None: ...
    def _deliver_progress(self, token: int, done: int, total: int, text: str) -> None: ...
    def _is_current(self, token: int) -> bool: ...


# -- the dispatcher: the one way back to the GUI thread ----------------------------------------
class _Dispatcher(QObject):
    """Lives on the GUI thread; hands posted reports to their sink (if it still exists)."""

    posted = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self.posted.connect(self._on_posted)

    @Slot(object)
    def _on_posted(self, report: tuple) -> None:
        sink, token, payload = report
        if isinstance(payload, Outcome):
            try:
                if not (isinstance(sink, QObject) and not shiboken6.isValid(sink)):
                    sink._deliver(token, payload)
            finally:
                _count_in_flight(-1)
        elif not (isinstance(sink, QObject) and not shiboken6.isValid(sink)):
            sink._deliver_progress(token, *payload)


_in_flight = 0                      # outcomes posted by workers, not yet handled on the GUI thread
_in_flight_lock = threading.Lock()


def _count_in_flight(step: int) -> None:
    global _in_flight
    with _in_flight_lock:
        _in_flight += step


def outcomes_in_flight() -> int:
    """How many finished jobs' outcomes wait in the GUI thread's queue: a job that finished
    leaves the pool before its outcome is handled (screenshot mode waits for both)."""
    return _in_flight


_dispatcher: _Dispatcher | None = None
_dispatcher_lock = threading.Lock()


def _ensure_dispatcher() -> _Dispatcher:
    global _dispatcher
    refguard.install()
    with _dispatcher_lock:
        if _dispatcher is None or not shiboken6.isValid(_dispatcher):
            _dispatcher = _Dispatcher()
            app = QCoreApplication.instance()
            if app is not None:
                _dispatcher.moveToThread(app.thread())
        return _dispatcher


def _post(sink: _Sink, token: int, payload: Outcome | tuple[int, int, str]) -> None:
    # The report is data, not a closure: nothing here can lose a variable Python deletes
    # at the end of an ``except`` block before the GUI thread gets to it.
    dispatcher = _dispatcher
    if dispatcher is not None and shiboken6.isValid(dispatcher):
        outcome = isinstance(payload, Outcome)
        if outcome:
            _count_in_flight(1)
        try:
            dispatcher.posted.emit((sink, token, payload))
        except RuntimeError:      # deleted between the check and the emit (quitting)
            if outcome:
                _count_in_flight(-1)


class JobContext:
    """Handed to a job: ``cancelled()`` polls supersession, ``progress()`` reports to the GUI."""

    def __init__(self, sink: _Sink, token: int) -> None:
        self._sink = sink
        self.token = token
        self._last_progress = 0.0

    def cancelled(self) -> bool:
        """True once a newer job was submitted (or the job was cancelled)."""
        return not self._sink._is_current(self.token)

    def check(self) -> None:
        """Raise JobCancelled when superseded (call between steps of long work)."""
        if self.cancelled():
            raise JobCancelled()

    def progress(self, done: int, total: int = 0, text: str = "") -> None:
        """Report progress (at most every 50 ms); delivered to the sink if still current."""
        now = time.monotonic()
        if now - self._last_progress < PROGRESS_INTERVAL:
            return
        self._last_progress = now
        _post(self._sink, self.token, (done, total, text))


_OUT_OF_MEMORY = Outcome(error=StoreError(
    "There was not enough memory to finish this view; nothing was changed (close other views "
    "or windows, or lower the read budgets, and try again)."))


class _Job(QRunnable):
    """Runs one callable and posts its Outcome (never raises)."""

    def __init__(self, fn: Callable[..., Any], ctx: JobContext, with_context: bool) -> None:
        super().__init__()
        self.setAutoDelete(True)
        self._fn, self._ctx, self._with_context = fn, ctx, with_context

    def run(self) -> None:
        ctx = self._ctx
        try:
            if ctx.cancelled():
                outcome = Outcome(error=JobCancelled())
            else:
                outcome = _call(self._fn, ctx, self._with_context)
        except MemoryError:      # again, while reporting the job's own failure: it still ends
            outcome = _OUT_OF_MEMORY
        _post(ctx._sink, ctx.token, outcome)


def _call(fn: Callable[..., Any], ctx: JobContext, with_context: bool) -> Outcome:
    try:
        return Outcome(value=fn(ctx) if with_context else fn())
    except MemoryError:       # (made beforehand: reporting it must not need what ran out)
        return _OUT_OF_MEMORY
    except Exception as exc:  # every failure must reach the GUI as an Outcome
        if not isinstance(exc, _KNOWN_ERRORS) and not _is_cancelled(exc):
            log.error("background job failed:\n%s", traceback.format_exc())
        return Outcome(error=exc)


class _Generations:
    """Generation tokens per key: a newer token makes every older one stale."""

    _counter = itertools.count(1)
    _lock = threading.Lock()

    def __init__(self) -> None:
        self._current: dict[str | None, int] = {}

    def next(self, key: str | None) -> int:
        with _Generations._lock:
            token = next(_Generations._counter)
            if key is not None:
                self._current[key] = token
        return token

    def current(self, key: str | None, token: int) -> bool:
        return key is None or self._current.get(key) == token

    def current_keys(self) -> list[str | None]:
        return list(self._current)


# -- TaskRunner: a window's store I/O -------------------------------------------------------------
@dataclass
class _Pending:
    key: str | None
    on_outcome: Callable[[Outcome], None]


class TaskRunner(QObject):
    """Runs callables in a private thread pool; see the module docstring."""

    failed = Signal(str)          # an error no callback handled (one sentence)
    active_changed = Signal(int)  # how many tasks are queued or running

    def __init__(self, parent: QObject | None = None, max_threads: int = 4) -> None:
        super().__init__(parent)
        _ensure_dispatcher()
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(max_threads)
        self._pool.setExpiryTimeout(10_000)
        self._tokens = _Generations()
        self._pending: dict[int, _Pending] = {}
        self._closed = False

    # -- public API -------------------------------------------------------------
    def submit(self, fn: Callable[..., Any], on_outcome: Callable[[Outcome], None], *,
               key: str | None = None, with_context: bool = False) -> int:
        """Run ``fn()`` (or ``fn(ctx)``) off the GUI thread; ``on_outcome(Outcome)`` gets its result.

        With a ``key`` this job supersedes every earlier job with the same key: their outcomes
        are dropped and their ``ctx.cancelled()`` turns True. Returns the job's token (0 when
        the runner is shut down).
        """
        if self._closed:
            return 0
        token = self._tokens.next(key)
        self._pending[token] = _Pending(key, on_outcome)
        self._pool.start(_Job(fn, JobContext(self, token), with_context))
        self.active_changed.emit(len(self._pending))
        return token

    def run(self, fn: Callable[[], Any], on_done: OnDone | None = None,
            on_error: OnError | None = None, *, key: str | None = None) -> int:
        """Run ``fn()``; then ``on_done(result)``, or ``on_error(sentence)`` (else ``failed``)."""
        def deliver(outcome: Outcome) -> None:
            if outcome.ok:
                if on_done is not None:
                    on_done(outcome.value)
            elif on_error is not None:
                on_error(outcome.message)
            else:
                self.failed.emit(outcome.message)
        return self.submit(fn, deliver, key=key)

    def cancel(self, key: str) -> None:
        """Drop the outcome of any job with ``key`` that has not reported yet."""
        self._tokens.next(key)

    def is_current(self, key: str, token: int) -> bool:
        """True when no newer job with ``key`` was submitted after the one with ``token``."""
        return self._tokens.current(key, token)

    @property
    def active(self) -> int:
        """Jobs submitted whose outcomes have not been delivered yet."""
        return len(self._pending)

    def wait(self, msecs: int = 10_000) -> bool:
        """Block until the pool is idle (for shutdown and tests); True if it became idle."""
        return self._pool.waitForDone(msecs)

    def shutdown(self) -> None:
        """Drop every pending outcome and wait for running jobs to return."""
        self._closed = True
        for key in self._tokens.current_keys():
            if key is not None:
                self.cancel(key)
        self._pool.clear()
        self._pool.waitForDone(30_000)
        self._pending.clear()

    # -- delivery (GUI thread) ---------------------------------------------------
    def _is_current(self, token: int) -> bool:
        pending = self._pending.get(token)
        return not self._closed and pending is not None and self._tokens.current(pending.key, token)

    def _deliver(self, token: int, outcome: Outcome) -> None:
        current = self._is_current(token)
        pending = self._pending.pop(token, None)
        self.active_changed.emit(len(self._pending))
        if pending is None or not current or _is_cancelled(outcome.error):
            return
        pending.on_outcome(outcome)

    def _deliver_progress(self, token: int, done: int, total: int, text: str) -> None:
        """TaskRunner jobs report no progress to anyone (kept for the sink protocol)."""


# -- LatestJob: a panel's newest-only job -----------------------------------------------------------
class LatestJob(QObject):
    """Runs jobs ``fn(ctx)`` off the GUI thread; only the newest submitted job's outcome is emitted.

    Signals: ``finished(result)``, ``failed(exception)``, ``progressed(done, total, text)``,
    ``busy_changed(bool)``.
    """

    finished = Signal(object)
    failed = Signal(object)
    progressed = Signal(int, int, str)
    busy_changed = Signal(bool)

    def __init__(self, parent: QObject | None = None, pool: QThreadPool | None = None) -> None:
        super().__init__(parent)
        _ensure_dispatcher()
        self._pool = pool or QThreadPool.globalInstance()
        self._tokens = _Generations()
        self._token = 0
        self._busy = False

    @property
    def busy(self) -> bool:
        """True while the newest job has not delivered."""
        return self._busy

    def submit(self, fn: Callable[[JobContext], Any]) -> int:
        """Start ``fn(ctx)`` in the pool, superseding any earlier job; returns its token."""
        self._token = self._tokens.next(None)
        self._set_busy(True)
        self._pool.start(_Job(fn, JobContext(self, self._token), True))
        return self._token

    def cancel(self) -> None:
        """Drop whatever is running (its outcome will be ignored)."""
        self._token = self._tokens.next(None)
        self._set_busy(False)

    def _set_busy(self, busy: bool) -> None:
        if busy != self._busy:
            self._busy = busy
            self.busy_changed.emit(busy)

    def _is_current(self, token: int) -> bool:
        return token == self._token

    def _deliver(self, token: int, outcome: Outcome) -> None:
        if not self._is_current(token):
            return
        self._set_busy(False)
        if _is_cancelled(outcome.error):
            return
        if outcome.ok:
            self.finished.emit(outcome.value)
        else:
            log.debug("background job failed", exc_info=outcome.error)
            self.failed.emit(outcome.error)

    def _deliver_progress(self, token: int, done: int, total: int, text: str) -> None:
        if self._is_current(token):
            self.progressed.emit(done, total, text)
