"""Background runner: store I/O in a QThreadPool, results delivered on the GUI thread.

A task is a plain callable run off the GUI thread. Its result (or error) comes back through
a queued signal and is handed to the callbacks on the GUI thread. Tasks submitted with the
same ``key`` supersede each other: only the newest one's result is delivered (generation
tokens), so a slow stale load never overwrites a newer view.
"""

from __future__ import annotations

import itertools
import logging
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from inspector.errors import StoreError, TaskStateError

log = logging.getLogger(__name__)

OnDone = Callable[[Any], None]
OnError = Callable[[str], None]


def describe_error(exc: BaseException) -> str:
    """One sentence for the user: the StoreError text, or a short note for a bug."""
    if isinstance(exc, (StoreError, TaskStateError)):
        return str(exc)
    return f"Unexpected error ({type(exc).__name__}: {exc}); details are in the log."


@dataclass
class _Pending:
    key: str | None
    generation: int
    on_done: OnDone | None
    on_error: OnError | None


class _Job(QRunnable):
    """Runs one callable and reports through the runner's signal (never raises)."""

    def __init__(self, task_id: int, fn: Callable[[], Any], report: Callable[[int, bool, Any], None]) -> None:
        super().__init__()
        self.setAutoDelete(True)
        self.task_id = task_id
        self.fn = fn
        self.report = report

    def run(self) -> None:
        try:
            result = self.fn()
        except Exception as exc:  # every failure must reach the GUI as a message
            if not isinstance(exc, (StoreError, TaskStateError)):
                log.error("background task failed:\n%s", traceback.format_exc())
            self.report(self.task_id, False, exc)
        else:
            self.report(self.task_id, True, result)


class TaskRunner(QObject):
    """Runs callables in a private thread pool; see the module docstring."""

    failed = Signal(str)          # an error no callback handled (one sentence)
    active_changed = Signal(int)  # how many tasks are queued or running
    _finished = Signal(int, bool, object)

    def __init__(self, parent: QObject | None = None, max_threads: int = 4) -> None:
        super().__init__(parent)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(max_threads)
        self._pool.setExpiryTimeout(10_000)
        self._ids = itertools.count(1)
        self._generations: dict[str, int] = {}
        self._pending: dict[int, _Pending] = {}
        self._closed = False
        self._finished.connect(self._on_finished)

    # -- public API -------------------------------------------------------------
    def run(self, fn: Callable[[], Any], on_done: OnDone | None = None,
            on_error: OnError | None = None, *, key: str | None = None) -> int:
        """Run ``fn()`` off the GUI thread; call ``on_done(result)`` or ``on_error(message)`` after.

        With a ``key``, this task supersedes every earlier task with the same key.
        """
        if self._closed:
            return 0
        task_id = next(self._ids)
        generation = 0
        if key is not None:
            generation = self._generations.get(key, 0) + 1
            self._generations[key] = generation
        self._pending[task_id] = _Pending(key, generation, on_done, on_error)
        self._pool.start(_Job(task_id, fn, self._finished.emit))
        self.active_changed.emit(len(self._pending))
        return task_id

    def cancel(self, key: str) -> None:
        """Drop the result of any task with ``key`` that has not reported yet."""
        self._generations[key] = self._generations.get(key, 0) + 1

    def is_current(self, key: str, generation: int) -> bool:
        """True when no newer task with ``key`` was submitted after ``generation``."""
        return self._generations.get(key, 0) == generation

    @property
    def active(self) -> int:
        """Tasks submitted whose results have not been delivered yet."""
        return len(self._pending)

    def wait(self, msecs: int = 10_000) -> bool:
        """Block until the pool is idle (for shutdown and tests); True if it became idle."""
        return self._pool.waitForDone(msecs)

    def shutdown(self) -> None:
        """Drop every pending result and wait for running tasks to return."""
        self._closed = True
        for key in list(self._generations):
            self.cancel(key)
        self._pool.clear()
        self._pool.waitForDone(30_000)
        self._pending.clear()

    # -- delivery (GUI thread) -----------------------------------------------------
    def _on_finished(self, task_id: int, ok: bool, payload: Any) -> None:
        pending = self._pending.pop(task_id, None)
        self.active_changed.emit(len(self._pending))
        if pending is None or self._closed:
            return
        if pending.key is not None and not self.is_current(pending.key, pending.generation):
            return
        if ok:
            if pending.on_done is not None:
                pending.on_done(payload)
            return
        message = describe_error(payload)
        if pending.on_error is not None:
            pending.on_error(message)
        else:
            self.failed.emit(message)
