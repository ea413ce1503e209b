"""How the dialogs and the console reach a store: the window's open store, one writer per store.

Inside the main window, reads use the session's already-open read-only store (no second
engine, no second schema check) and writes use one writable store opened on the first
explicit action and kept until the window's store changes. Standalone dialogs (no
window) open a store per call.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

from inspector.store import open_store
from inspector.store.base import Store


class StoreAccess:
    """Read and write access to the store at ``url`` (thread-safe; used from workers)."""

    def __init__(self, url: str, reader: Store | None = None, *, keep_writer: bool = False) -> None:
        self.url = url
        self.reader = reader
        self.keep_writer = keep_writer
        self._writer: Store | None = None
        self._lock = threading.Lock()
        self.writes = 0          # explicit writes made through this access (fork, resume)

    @contextlib.contextmanager
    def read(self) -> Iterator[Store]:
        """A read-only store: the shared reader if any, else one opened for this call."""
        if self.reader is not None:
            yield self.reader
            return
        with open_store(self.url) as store:
            yield store

    @contextlib.contextmanager
    def write(self) -> Iterator[Store]:
        """A writable store (an explicit user action): the kept writer, or one for this call."""
        self.writes += 1
        if not self.keep_writer:
            with open_store(self.url, readonly=False) as store:
                yield store
            return
        with self._lock:
            if self._writer is None:
                self._writer = open_store(self.url, readonly=False)
            writer = self._writer
        yield writer

    def close(self) -> None:
        """Close the kept writer (the reader belongs to whoever gave it)."""
        with self._lock:
            writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()


def as_access(store: str | StoreAccess) -> StoreAccess:
    """A StoreAccess for a URL (opened per call) or the one given."""
    return store if isinstance(store, StoreAccess) else StoreAccess(store)
