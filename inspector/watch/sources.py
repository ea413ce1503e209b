"""Change sources: what tells a watcher that a store may have changed (file events or a hook)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Protocol

from inspector.store.base import Store
from inspector.watch.files import FileWatcher

log = logging.getLogger(__name__)


class ChangeSource(Protocol):
    """Something that calls back (from any thread) when the store may have changed."""

    def start(self) -> None:
        """Begin delivering callbacks."""

    def stop(self) -> None:
        """Stop delivering callbacks and release threads (joins them)."""


class _ListenSource:
    """Adapts a store's own ``listen(callback) -> stop`` hook (e.g. PostgreSQL LISTEN/NOTIFY)."""

    def __init__(self, store: Store, on_change: Callable[[], None]) -> None:
        self.store = store
        self.on_change = on_change
        self._stop: Callable[[], None] | None = None

    def start(self) -> None:
        if self._stop is None:
            handle = self.store.listen(self.on_change)  # type: ignore[attr-defined]
            self._stop = handle.stop if hasattr(handle, "stop") else handle

    def stop(self) -> None:
        stop, self._stop = self._stop, None
        if callable(stop):
            stop()


def open_change_source(store: Store, on_change: Callable[[], None]) -> ChangeSource | None:
    """The best change source for ``store`` (not started), or None when it must be polled.

    A store may offer ``listen(callback)`` returning a stop callable (or an object with
    ``stop()``); otherwise its ``watch_paths()`` are watched with watchdog.
    """
    if callable(getattr(store, "listen", None)):
        return _ListenSource(store, on_change)
    paths = store.watch_paths()
    if paths:
        return FileWatcher(paths, lambda _path: on_change())
    return None
