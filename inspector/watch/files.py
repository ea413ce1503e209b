"""A watchdog observer on a few files (a SQLite store and its -wal/-shm) with start/stop-and-join."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from watchdog.events import (FileCreatedEvent, FileDeletedEvent, FileModifiedEvent, FileMovedEvent,
                             FileSystemEvent, FileSystemEventHandler)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

log = logging.getLogger(__name__)

# Only events that mean "bytes changed". Opening or closing a file without writing (what a
# reader does) is ignored, otherwise our own reads would wake us up in a loop — closing too:
# SQLite's readers open -wal and -shm read-write, and inotify says IN_CLOSE_WRITE (watchdog's
# FileClosedEvent) for any file opened so, written or not; a write itself is IN_MODIFY.
WRITE_EVENTS = (FileModifiedEvent, FileCreatedEvent, FileDeletedEvent, FileMovedEvent)


def _observer_class() -> Callable[[], BaseObserver]:
    """watchdog's observer for this platform; on Linux one whose emitters stop without a race.

    watchdog 7.1's ``InotifyEmitter.on_thread_stop`` runs in the thread that calls ``stop()``:
    it drops the emitter's watch group (``_inotify = None``) while the emitter's own thread may
    be between its "keep running?" check and its read, or holding an event it has just read.
    That thread then finds no watch group and logs "InotifyEmitter.queue_events() called when
    the thread is inactive" — about 1 quit in 4 while a store is written. The cause is the
    dropped reference: closing the watch group is what unblocks the read and ends the loop, so
    ``_QuietStopEmitter`` closes it and keeps the reference until its thread has ended.
    """
    try:
        from watchdog.observers.inotify import InotifyEmitter, InotifyObserver
    except ImportError:   # not Linux: the platform's observer has no such race
        return Observer

    class _QuietStopEmitter(InotifyEmitter):
        def on_thread_stop(self) -> None:
            inotify = self._inotify
            if inotify is not None:
                # removes the watches and closes the queue read_event waits on (watchdog 6, which
                # google-adk pins, names it close(): 7 split it into deactivate() and close())
                stop = getattr(inotify, "deactivate", None) or getattr(inotify, "close")  # noqa: B009 (watchdog 6)
                stop()

    class _Observer(InotifyObserver):
        def __init__(self) -> None:
            super().__init__()
            self._emitter_class = _QuietStopEmitter

    return _Observer


OBSERVER = _observer_class()


class _Handler(FileSystemEventHandler):
    """Forwards write events on the watched names to a callback."""

    def __init__(self, names: set[str], on_change: Callable[[Path], None]) -> None:
        self.names = names
        self.on_change = on_change

    def on_any_event(self, event: FileSystemEvent) -> None:
        if not isinstance(event, WRITE_EVENTS):
            return
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            if raw and os.path.basename(os.fsdecode(raw)) in self.names:
                self.on_change(Path(os.fsdecode(raw)))
                return


class FileWatcher:
    """Calls ``on_change(path)`` (from a watchdog thread) when one of ``paths`` is written.

    The parent directories are watched (non-recursively) so that files created later, such
    as a SQLite ``-wal`` file, are seen too. ``stop()`` stops the observer and joins it.
    """

    def __init__(self, paths: Iterable[Path], on_change: Callable[[Path], None]) -> None:
        self.paths = [Path(p) for p in paths]
        self.on_change = on_change
        self._observer: BaseObserver | None = None
        self._lock = threading.Lock()

    @property
    def running(self) -> bool:
        """True between start() and stop()."""
        return self._observer is not None

    def start(self) -> None:
        """Start watching (idempotent)."""
        with self._lock:
            if self._observer is not None:
                return
            observer = OBSERVER()
            by_dir: dict[Path, set[str]] = {}
            for path in self.paths:
                by_dir.setdefault(path.parent, set()).add(path.name)
            for folder, names in by_dir.items():
                observer.schedule(_Handler(names, self.on_change), str(folder), recursive=False)
            observer.daemon = True
            observer.start()
            self._observer = observer

    def stop(self, timeout: float = 5.0) -> None:
        """Stop watching and join the observer thread (idempotent)."""
        with self._lock:
            observer, self._observer = self._observer, None
        if observer is None:
            return
        observer.stop()            # unschedules every emitter: each closes its queue, its thread ends
        observer.join(timeout)
        if observer.is_alive():  # pragma: no cover - watchdog normally stops within a second
            log.warning("the file watcher did not stop within %.1f s", timeout)
