"""Qt bridge over ``inspector.watch``: debounced, off-thread change polls → ``changed(ChangeSet)``.

A change source (watchdog on the SQLite files, or a store's ``listen`` hook) pokes the
bridge from its own thread. The bridge waits ``DEBOUNCE_MS`` so a burst of writes costs one
poll, asks ``store.changes_since(cursor)`` in the thread pool, and emits only when the store
really changed. Stores without a change source are polled every ``FALLBACK_POLL_MS``.
Nothing ticks while a file-watched store is idle. Each poll first asks whether the store's
file is still the one opened (``ChangeTracker.moved``): a file deleted or replaced under the
window is reported as ``moved``, never read with a cursor of the old one. A server store
watched by ``listen`` is asked that every ``IDENTITY_POLL_MS`` too (its tables dropped and made
again send no notification).
"""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer, Signal

from inspector.model import ChangeSet
from inspector.store.base import Store
from inspector.ui.tasks import TaskRunner

if TYPE_CHECKING:   # watchdog loads when a store is first watched, not with the window
    from inspector.watch import ChangeSource, ChangeTracker

log = logging.getLogger(__name__)

DEBOUNCE_MS = 150
FALLBACK_POLL_MS = 2000
IDENTITY_POLL_MS = 5000


class WatchBridge(QObject):
    """Watches one store at a time while live is on; see the module docstring."""

    changed = Signal(object)   # ChangeSet (never empty)
    # the store was written, whether or not a listed run or checkpoint changed: a prune's piece
    # collection, a VACUUM or a WAL checkpoint changes the store's size and nothing ``changed``
    # reports (emitted after ``changed`` when both apply; what a size or a total follows)
    written = Signal()
    failed = Signal(str)       # a poll failed (emitted once per distinct message)
    recovered = Signal()       # a poll succeeded after ``failed``: the store answers again
    moved = Signal(str)        # the store's file is "gone" (once) or "replaced" (at each poll that finds it so)
    polled = Signal()          # a poll finished (changed or not); for tests and benchmarks
    _poked = Signal()

    def __init__(self, runner: TaskRunner, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.runner = runner
        self._tracker: ChangeTracker | None = None
        self._source: ChangeSource | None = None
        self._live = True
        self._in_flight = False
        self._again = False
        self._last_error = ""
        self._moved = ""              # what the last poll found of the store's file ('' when it is there)
        self._poked_since = False     # a change source poked since the last poll began
        self._debounce = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._debounce.timeout.connect(self._on_debounce)
        self._due = False             # a poll is owed when the throttle's timer ends
        self._fallback = QTimer(self, interval=FALLBACK_POLL_MS)
        self._fallback.timeout.connect(self._poll)
        self._identity = QTimer(self, interval=IDENTITY_POLL_MS)
        self._identity.timeout.connect(self._check_identity)
        self._poked.connect(self._on_poked)

    # -- public API -------------------------------------------------------------
    @property
    def live(self) -> bool:
        """Whether changes are being watched."""
        return self._live

    @property
    def watching(self) -> str:
        """How the store is watched: 'files', 'listen', 'poll' or '' (not watching)."""
        if self._tracker is None or not self._live:
            return ""
        if self._source is None:
            return "poll"
        from inspector.watch import FileWatcher

        return "files" if isinstance(self._source, FileWatcher) else "listen"

    def attach(self, store: Store, cursor: Any, identity: tuple | None = None) -> None:
        """Watch ``store`` from ``cursor`` and its ``identity`` (both taken off-thread
        when the store was opened; see ``inspector.watch.store_identity``)."""
        from inspector.watch import ChangeTracker, open_change_source

        self.detach()
        self._tracker = ChangeTracker(store, cursor, identity)
        self._source = open_change_source(store, self._poke_from_any_thread)
        if self._live:
            self._start()

    def detach(self) -> None:
        """Stop watching the current store (joins the watcher thread)."""
        self._stop()
        self._source = None
        self._tracker = None
        self._in_flight = False
        self._again = False
        self._poked_since = False
        self._last_error = ""
        self._moved = ""

    def set_live(self, live: bool) -> None:
        """Turn watching on or off; turning it on catches up at once."""
        if live == self._live:
            return
        self._live = live
        if self._tracker is None:
            return
        if live:
            self._start()
            self.poll_now()
        else:
            self._stop()

    def poll_now(self) -> None:
        """Ask the store for changes now (F5, or catching up after live was off)."""
        self._poll()

    # -- internals ----------------------------------------------------------------
    def _start(self) -> None:
        if self._source is not None:
            try:
                self._source.start()
            except Exception as exc:  # e.g. inotify limits; fall back to polling
                log.warning("cannot watch the store (%s); polling every %d ms", exc, FALLBACK_POLL_MS)
                self._source = None
        if self._source is None:
            self._fallback.start()
        elif self.watching == "listen" and self._tracker is not None and self._tracker.identity is not None:
            self._identity.start()

    def _stop(self) -> None:
        self._debounce.stop()
        self._due = False
        self._fallback.stop()
        self._identity.stop()
        if self._source is not None:
            self._source.stop()

    def _poke_from_any_thread(self) -> None:
        # the watcher's thread (a LISTEN connection still timing out on an unreachable server)
        # may outlive this bridge: a window that closed meanwhile is not an error
        with contextlib.suppress(RuntimeError):      # "Signal source has been deleted"
            self._poked.emit()

    def _on_poked(self) -> None:
        # throttle rather than restart: the first write after a quiet spell is read at once,
        # those that follow within DEBOUNCE_MS when its timer ends (a steady stream of writes
        # gets a poll every DEBOUNCE_MS instead of being postponed forever)
        if self._live and self._tracker is not None:
            self._poked_since = True
            if self._debounce.isActive():
                self._due = True
            else:
                self._debounce.start()
                self._poll()

    def _on_debounce(self) -> None:
        if self._due:
            self._due = False
            self._poll()

    def _poll(self) -> None:
        tracker = self._tracker
        if tracker is None:
            return
        if self._in_flight:
            self._again = True
            return
        self._in_flight = True
        poked, self._poked_since = self._poked_since, False
        self.runner.run(lambda: tracker.moved() or tracker.poll(),
                        lambda changes: self._on_polled(tracker, changes, poked),
                        lambda message: self._on_poll_failed(tracker, message))

    def _check_identity(self) -> None:
        tracker = self._tracker
        if tracker is None or self._in_flight:
            return
        self._in_flight = True
        self.runner.run(tracker.moved, lambda found: self._on_polled(tracker, found or None),
                        lambda message: self._on_poll_failed(tracker, message))

    def _on_polled(self, tracker: ChangeTracker, changes: ChangeSet | str | None, poked: bool = False) -> None:
        if tracker is not self._tracker:
            return
        self._finish_poll()
        if self._last_error:
            self._last_error = ""
            self.recovered.emit()
        if isinstance(changes, str):     # the file is gone or another: nothing to read with this cursor
            if changes != self._moved or changes == "replaced":
                self._moved = changes
                self.moved.emit(changes)
            self.polled.emit()
            return
        self._moved = ""
        if changes is not None:
            self.changed.emit(changes)
        if changes is not None or poked:
            self.written.emit()
        self.polled.emit()

    def _on_poll_failed(self, tracker: ChangeTracker, message: str) -> None:
        if tracker is not self._tracker:
            return
        self._finish_poll()
        if message != self._last_error:
            self._last_error = message
            self.failed.emit(message)
        self.polled.emit()

    def _finish_poll(self) -> None:
        self._in_flight = False
        if self._again:
            self._again = False
            if self._live:
                self._due = True
                if not self._debounce.isActive():
                    self._debounce.start()
