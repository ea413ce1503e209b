"""Change sources: what tells a watcher that a store may have changed (file events or a hook)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from inspector.watch.files import FileWatcher

if TYPE_CHECKING:   # the watcher sits beside the store layer: it takes any object with its interface
    from inspector.store.base import Store

log = logging.getLogger(__name__)


class ChangeSource(Protocol):
    """Something that calls back (from any thread) when the store may have changed."""

    def start(self) -> None:
        """Begin delivering callbacks."""

    def stop(self) -> None:
        """Stop delivering callbacks and release threads (joins them)."""


class _ListenSource:
    """Adapts a ``listen(callback) -> stop`` hook: a store's own, or PostgreSQL LISTEN/NOTIFY."""

    def __init__(self, listen: Callable[[Callable[[], None]], object], on_change: Callable[[], None]) -> None:
        self.listen = listen
        self.on_change = on_change
        self._stop: Callable[[], None] | None = None

    def start(self) -> None:
        if self._stop is None:
            handle = self.listen(self.on_change)
            stop = getattr(handle, "stop", handle)
            self._stop = stop if callable(stop) else None

    def stop(self) -> None:
        stop, self._stop = self._stop, None
        if callable(stop):
            stop()


def open_change_source(store: Store, on_change: Callable[[], None]) -> ChangeSource | None:
    """The best change source for ``store`` (not started), or None when it must be polled.

    A native PostgreSQL store is listened to with LISTEN/NOTIFY (``pg_listen``); another store
    may offer its own ``listen(callback)`` returning a stop callable (or an object with
    ``stop()``); otherwise its ``watch_paths()`` are watched with watchdog.
    """
    if store.info.backend == "postgresql" and store.info.kind == "native":
        from inspector.watch.pg_listen import listen_to_store   # psycopg loads only for PostgreSQL

        return _ListenSource(lambda callback: listen_to_store(store, callback), on_change)
    listen = getattr(store, "listen", None)
    if callable(listen):
        return _ListenSource(listen, on_change)
    paths = store.watch_paths()
    if paths:
        return FileWatcher(paths, lambda _path: on_change())
    return None
