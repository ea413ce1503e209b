"""The open store of a window: opening off-thread, switching, watching, closing."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal

from inspector.model import StoreInfo
from inspector.store.base import Store
from inspector.ui.tasks import TaskRunner
from inspector.ui.watch_bridge import WatchBridge

log = logging.getLogger(__name__)


def _open(target: str) -> tuple[Store, Any, tuple | None]:
    from inspector.store import open_store   # SQLAlchemy loads here, in the worker

    from inspector.resume.graph_channels import attach
    from inspector.watch import store_identity

    store = open_store(target, readonly=True)
    try:
        attach(store)       # channel kinds from the store's graph (its runner; cached), else inferred
        identity = store_identity(store)     # before the cursor: a store replaced meanwhile is seen
        return store, store.cursor(), identity
    except BaseException:
        store.close()
        raise


class StoreSession(QObject):
    """Holds one read-only store, the task runner all its I/O goes through, and its watcher.

    Opening happens in the thread pool; if it fails, the previous store stays open and
    ``open_failed`` carries one sentence. ``generation`` changes with every store switch so
    late results for an old store can be recognised and dropped.

    When the watcher finds the store's file replaced on disk (a store rebuilt at the same
    path), the store is opened again as a fresh open would (``replaced`` first); when it
    finds the file gone, ``gone`` says so and ``is_gone`` stays True until a store is open
    again.
    """

    opening = Signal(str)        # target being opened
    previewed = Signal(object)   # what open(preview=…) found before the store is open
    opened = Signal(object)      # StoreInfo
    open_failed = Signal(str)    # one sentence
    closed = Signal()
    changed = Signal(object)     # ChangeSet from the watcher
    written = Signal()           # the store was written (``changed`` or not; see WatchBridge.written)
    replaced = Signal(str)       # the open store's file was replaced on disk (its display): opening it again
    gone = Signal(str)           # the open store's file is no longer there (its display)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.runner = TaskRunner(self)
        self.bridge = WatchBridge(self.runner, self)
        self.bridge.changed.connect(self.changed)
        self.bridge.written.connect(self.written)
        self.bridge.moved.connect(self._on_bridge_moved)
        self.store: Store | None = None
        self.generation = 0
        self._request = 0
        self._answered = 0
        self._held: int | None = None   # the request whose open waits for release() after a preview
        self.opening_target = ""                     # what open() was last given
        self.open_started = 0.0
        self.is_gone = False                         # the open store's file was deleted under it

    @property
    def busy_opening(self) -> bool:
        """True while an open request has not answered yet."""
        return self._answered < self._request

    @property
    def info(self) -> StoreInfo | None:
        """What is open, or None."""
        return self.store.info if self.store is not None else None

    def open(self, target: str, *, preview: Callable[[str], Any] | None = None) -> None:
        """Open ``target`` (path or URL) in the background; see the class docstring.

        ``preview(target)``, when given, runs first in the worker: a quick look that does
        not open the store (or None). A result is sent as ``previewed`` and the real open
        then waits for ``release()`` (the window calls it after its first paint).
        """
        self._request += 1
        request = self._request
        self._held = None
        self.opening_target = target
        self.open_started = time.time()
        self.opening.emit(target)
        if preview is not None:
            self.runner.run(lambda: preview(target), lambda found: self._on_previewed(request, target, found),
                            lambda _message: self._start_open(request, target))
            return
        self._start_open(request, target)

    def release(self) -> None:
        """Start the open that a preview held back (nothing when none waits)."""
        held, self._held = self._held, None
        if held is not None and held == self._request:
            self._start_open(held, self.opening_target)

    def _start_open(self, request: int, target: str) -> None:
        self.runner.run(lambda: _open(target), lambda result: self._on_opened(request, result),
                        lambda message: self._on_open_failed(request, message))

    def close(self) -> None:
        """Close the current store (the window shows its welcome page)."""
        self._request += 1
        self._held = None
        self._answered = self._request
        if self.store is None:
            return
        self.bridge.detach()
        old, self.store = self.store, None
        self.generation += 1
        self.is_gone = False
        old.close()
        self.closed.emit()

    def shutdown(self) -> None:
        """Stop watching, wait for background tasks and close the store (window closing)."""
        self.bridge.detach()
        self.runner.shutdown()
        if self.store is not None:
            self.store.close()
            self.store = None

    def is_current(self, generation: int) -> bool:
        """True while the store open at ``generation`` is still the current one."""
        return generation == self.generation and self.store is not None

    # -- callbacks ------------------------------------------------------------------
    def _on_previewed(self, request: int, target: str, found: Any) -> None:
        if request != self._request:
            return
        if found is None:
            self._start_open(request, target)
            return
        self._held = request
        self.previewed.emit(found)

    def _on_bridge_moved(self, what: str) -> None:
        info = self.info
        if info is None:
            return
        if what == "gone":
            self.is_gone = True
            self.gone.emit(info.display)
        elif not self.busy_opening:      # (a rebuild writes on: the next poll asks again if this open fails)
            self.replaced.emit(info.display)
            self.open(info.url if info.backend != "sqlite" else info.display)

    def _on_opened(self, request: int, result: tuple[Store, Any, tuple | None]) -> None:
        store, cursor, identity = result
        self._answered = max(self._answered, request)
        if request != self._request:  # a newer open or a close superseded this one
            store.close()
            return
        self.bridge.detach()
        old, self.store = self.store, store
        self.generation += 1
        self.is_gone = False
        if old is not None:
            old.close()
        if store.info.capabilities.live.available:   # an adapter without live updates is not watched
            self.bridge.attach(store, cursor, identity)
        self.opened.emit(store.info)

    def _on_open_failed(self, request: int, message: str) -> None:
        self._answered = max(self._answered, request)
        if request == self._request:
            self.open_failed.emit(message)
