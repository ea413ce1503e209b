"""``open_reader``: a store opened only to read, as the read commands open it.

A native SQLite store (``native.reads.SqliteNativeReader``) and a LangGraph SqliteSaver file
(``LangGraphStore`` on ``sqlite_ro.ReadPool``) are read with the standard library's
``sqlite3``, so a fresh ``runs``, ``checkpoints``, ``show``, ``diff``, ``info`` or ``stuck``
never imports SQLAlchemy (about 0.15 s of each); every other store, and every error, comes
from ``open_store`` as before.
"""

from __future__ import annotations

import os
import sqlite3

from inspector.errors import StoreError
from inspector.model import replace
from inspector.store import dberrors
from inspector.store.base import Store
from inspector.store.target import Target


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
            found = open_sqlite_reader(tgt) or _open_langgraph(tgt)
        except StoreError:      # not a SQLite file (a folder an adapter reads?), or an error:
            found = None        # open_store decides, and says it as it always has
        if found is not None:
            return found
    from inspector.store.opening import open_store
    return open_store(target, readonly=True)


def _open_langgraph(target: Target) -> Store | None:
    """The LangGraph store at ``target`` (a SQLite file without the native tables), read on
    sqlite3 alone; None when its tables are not LangGraph's (``open_store`` tries the other
    adapters, in its order: after native, LangGraph is the first)."""
    from inspector.store import sqlite_ro
    from inspector.store.langgraph.schema import is_langgraph_schema

    assert target.path is not None
    pool = sqlite_ro.ReadPool(target.path)
    try:
        conn = pool.checkout()
        try:
            columns = sqlite_ro.table_columns(conn)
        finally:
            pool.checkin(conn)
        if not is_langgraph_schema(columns):
            pool.close()
            return None
        from inspector.store.langgraph import read_langgraph_sqlite
        store = read_langgraph_sqlite(target, pool, columns)
    except BaseException as err:
        pool.close()
        if isinstance(err, sqlite3.Error):
            raise dberrors.translate_driver(err, target.display) from err
        raise
    notice = sqlite_ro.notice_for(sqlite_ro.mode_of(target.path), target.path)
    if notice:
        store.info = replace(store.info, notice=notice)
    return store
