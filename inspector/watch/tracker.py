"""A change cursor over a store: ``poll()`` says what changed since the last poll, or None."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from inspector.model import ChangeSet

if TYPE_CHECKING:
    from inspector.store.base import Store


class ChangeTracker:
    """Keeps a store cursor; polls are serialized so two threads never reuse one cursor."""

    def __init__(self, store: Store, cursor: Any = None) -> None:
        self.store = store
        self._cursor = store.cursor() if cursor is None else cursor
        self._lock = threading.Lock()

    @property
    def cursor(self) -> Any:
        """The position the next poll starts from."""
        return self._cursor

    def poll(self) -> ChangeSet | None:
        """The changes since the previous poll (advancing the cursor), None when nothing changed."""
        with self._lock:
            changes = self.store.changes_since(self._cursor)
            self._cursor = changes.cursor
        return None if changes.empty else changes
