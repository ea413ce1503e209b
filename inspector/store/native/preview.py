"""A first look at a native SQLite store with the standard library, before SQLAlchemy loads.

The desktop app paints the most recent runs from this preview while the real store opens
in the background (importing SQLAlchemy takes longer than the whole preview). The preview
only ever reads, through SQLite in read-only mode, and gives up silently on anything it
does not expect: a URL, a LangGraph database, a newer format, a locked or damaged file. The
real open then decides what the store is and reports any problem in one sentence.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from inspector.errors import StoreError
from inspector.model import RunInfo
from inspector.store import sqlite_ro
from inspector.store.native import FORMAT_VERSION
from inspector.store.native.rows import row_type, run_from_row

BUSY_TIMEOUT_S = 0.2   # a preview is worth a short wait at most


def preview_runs(target: str, limit: int) -> list[RunInfo] | None:
    """The ``limit`` most recently updated runs of the native SQLite store at path ``target``
    (in ``list_runs`` order), or None when there is no quick answer."""
    if "://" in target:
        return None
    path = Path(target).expanduser()
    try:
        if not path.is_file() or not path.stat().st_size:
            return None
    except OSError:
        return None
    uri, _ = sqlite_ro.readonly_uri(path.resolve())
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S)
    except sqlite3.Error:
        return None
    conn.text_factory = sqlite_ro.decode_text
    try:
        version = conn.execute("SELECT value FROM ci_meta WHERE key = 'format_version'").fetchone()
        if version is None or not str(version[0]).isdigit() or int(version[0]) > FORMAT_VERSION:
            return None
        cursor = conn.execute("SELECT * FROM ci_runs ORDER BY updated DESC, id LIMIT ?", (limit,))
        make = row_type(tuple(d[0] for d in cursor.description))._make
        return [run_from_row(make(values)) for values in cursor.fetchall()]
    except (sqlite3.Error, StoreError, ValueError, TypeError):
        return None
    finally:
        conn.close()
