"""A change cursor over a store: ``poll()`` says what changed since the last poll, or None;
``moved()`` says whether the store's file is still the one that was opened."""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Any

from inspector.model import ChangeSet

if TYPE_CHECKING:
    from inspector.store.base import Store

GONE, REPLACED = "gone", "replaced"


def file_identity(store: Store) -> tuple[int, int] | None:
    """The device and inode of the store's file (None for a server store, or when no file is
    at its path). Another file put at the path (a store rebuilt, a copy moved over it) has
    another inode; a cursor taken on the old file means nothing in the new one."""
    path = store.target_path
    if path is None:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


class ChangeTracker:
    """Keeps a store cursor; polls are serialized so two threads never reuse one cursor.

    ``identity`` is the store file's ``file_identity`` when the cursor was taken (looked up
    now when not given; take it off the GUI thread, with the cursor).
    """

    def __init__(self, store: Store, cursor: Any = None, identity: tuple[int, int] | None = None) -> None:
        self.store = store
        self._cursor = store.cursor() if cursor is None else cursor
        self.identity = file_identity(store) if identity is None else identity
        self._went = False      # the file was seen gone: whatever comes back at its path is another store
        self._lock = threading.Lock()

    @property
    def cursor(self) -> Any:
        """The position the next poll starts from."""
        return self._cursor

    def moved(self) -> str:
        """'' while the store's file is the one opened (or the store has no file); ``GONE``
        while no file is at its path; ``REPLACED`` once another file is there (another
        inode, or any file after the path was seen empty: a new file may reuse the inode)."""
        if self.identity is None:
            return ""
        now = file_identity(self.store)
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
