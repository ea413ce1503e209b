"""A change cursor over a store: ``poll()`` says what changed since the last poll, or None;
``moved()`` says whether the store (its file, or its server database) is still the one opened."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from inspector.model import ChangeSet

if TYPE_CHECKING:
    from inspector.store.base import Store

GONE, REPLACED = "gone", "replaced"


def store_identity(store: Store) -> tuple | None:
    """What tells the open store from another put in its place (``Store.identity``): its
    file's device and inode, or a server database's and main table's object ids. None when
    nothing is there (or the store has no identity). A server store is asked: call it off the
    GUI thread."""
    return store.identity()


class ChangeTracker:
    """Keeps a store cursor; polls are serialized so two threads never reuse one cursor.

    ``identity`` is the store's ``store_identity`` when the cursor was taken (looked up
    now when not given; take it off the GUI thread, with the cursor).
    """

    def __init__(self, store: Store, cursor: Any = None, identity: tuple | None = None) -> None:
        self.store = store
        self._cursor = store.cursor() if cursor is None else cursor
        self.identity = store_identity(store) if identity is None else identity
        self._went = False      # the file was seen gone: whatever comes back at its path is another store
        self._lock = threading.Lock()

    @property
    def cursor(self) -> Any:
        """The position the next poll starts from."""
        return self._cursor

    def moved(self) -> str:
        """'' while the store is the one opened (or has no identity); ``GONE`` while no file
        is at its path (no such table in a server database); ``REPLACED`` once another is
        there (another inode or object id, or any store after it was seen gone: a new file
        may reuse the inode)."""
        if self.identity is None:
            return ""
        now = store_identity(self.store)
        if now is None:
            self._went = True
            return GONE
        return REPLACED if self._went or now != self.identity else ""

    def poll(self) -> ChangeSet | None:
        """The changes since the previous poll (advancing the cursor), None when nothing changed."""
        with self._lock:
            changes = self.store.changes_since(self._cursor)
            self._cursor = changes.cursor
        return None if changes.empty else changes
