"""``open_reader``: a store opened only to read, as the read commands open it.

A native SQLite store is read with the standard library's ``sqlite3``
(``native.reads.SqliteNativeReader``), so a fresh ``runs``, ``checkpoints``, ``show`` or
``diff`` never imports SQLAlchemy (about 0.15 s of each); every other store, and every
error, comes from ``open_store`` as before.
"""

from __future__ import annotations

import os

from inspector.errors import StoreError
from inspector.store.base import Store


def open_reader(target: str | os.PathLike) -> Store:
    """Open the store at ``target`` read-only (what ``open_store(target)`` opens, the same
    data and the same errors); never writes."""
    text = os.fspath(target)
    if "://" not in text:
        from inspector.store import sqlite_ro
        from inspector.store.native.reads import open_sqlite_reader
        from inspector.store.target import path_target

        try:
            tgt = path_target(text)
            sqlite_ro.check_sqlite_file(tgt)
            found = open_sqlite_reader(tgt)
        except StoreError:      # not a SQLite file (a folder an adapter reads?), or an error:
            found = None        # open_store decides, and says it as it always has
        if found is not None:
            return found
    from inspector.store.opening import open_store
    return open_store(target, readonly=True)
