"""What a database driver's error says about a store, as one sentence (no SQLAlchemy: the
read commands' SQLite path uses it; ``engine.translate`` adds SQLAlchemy's own errors)."""

from __future__ import annotations

import sqlite3

from inspector.errors import CorruptDataError, NotAStoreError, StoreError

# SQLite primary result codes (https://sqlite.org/rescode.html); extended codes carry the
# primary one in their low byte
SQLITE_PERM, SQLITE_BUSY, SQLITE_LOCKED, SQLITE_READONLY = 3, 5, 6, 8
SQLITE_CORRUPT, SQLITE_CANTOPEN, SQLITE_PROTOCOL, SQLITE_NOTADB = 11, 14, 15, 26
_SQLITE_KINDS = {SQLITE_NOTADB: "not-a-database", SQLITE_CORRUPT: "corrupt", SQLITE_BUSY: "locked",
                 SQLITE_LOCKED: "locked", SQLITE_CANTOPEN: "cannot-open", SQLITE_PERM: "cannot-open",
                 SQLITE_READONLY: "read-only", SQLITE_PROTOCOL: "protocol"}
# PostgreSQL SQLSTATEs (https://www.postgresql.org/docs/current/errcodes-appendix.html) by kind;
# class 08 (connection exception) is "unreachable" as a whole
_SQLSTATE_KINDS = {"57P01": "unreachable", "57P02": "unreachable", "57P03": "unreachable",
                   "25006": "read-only", "55P03": "locked", "XX001": "corrupt", "XX002": "corrupt"}


def is_driver_error(err: BaseException) -> bool:
    """Whether ``err`` is a DB-API error of the drivers stores are opened with (sqlite3,
    psycopg), known as ``driver_kind`` knows them."""
    return isinstance(err, sqlite3.Error) or _is_psycopg(err)


def _is_psycopg(err: BaseException) -> bool:
    return type(err).__module__.split(".")[0] == "psycopg"


def driver_kind(driver: BaseException) -> str | None:
    """The kind of a DB-API error from its code, never from its message: 'not-a-database',
    'corrupt', 'locked', 'cannot-open', 'read-only', 'unreachable', 'protocol' (SQLite gave up
    on a write-ahead log that does not match its -shm index), or None.

    SQLite errors carry their result code (``sqlite_errorcode``), psycopg's their SQLSTATE;
    a psycopg error without one never got an answer from a server."""
    code = getattr(driver, "sqlite_errorcode", None)
    if isinstance(code, int):
        return _SQLITE_KINDS.get(code & 0xFF)
    if _is_psycopg(driver):
        state = getattr(driver, "sqlstate", None)
        if state is None:   # (psycopg's ConnectionTimeout is an OperationalError too)
            names = {cls.__name__ for cls in type(driver).__mro__}
            return "unreachable" if names & {"OperationalError", "InterfaceError"} else None
        return "unreachable" if state.startswith("08") else _SQLSTATE_KINDS.get(state)
    return None


def sentence(kind: str | None, driver: BaseException, display: str) -> StoreError:
    """The StoreError (one sentence) for a driver error of ``kind`` on the store ``display``."""
    text = (str(driver).strip().splitlines() or [""])[0] or type(driver).__name__
    if kind == "not-a-database":
        return NotAStoreError(f"{display} is not a checkpoint store (not a readable SQLite database).")
    if kind == "corrupt":
        return CorruptDataError(f"{display} is corrupt: {text}.")
    if kind == "locked":
        return StoreError(f"{display} is locked by another process; try again in a moment.")
    if kind == "cannot-open":
        return StoreError(f"Cannot open {display}: {text}.")
    if kind == "read-only":
        return StoreError(f"{display} is read-only here: {text}.")
    if kind == "protocol":
        return StoreError(f"{display} cannot be read: its write-ahead log (-wal) does not match its index file "
                          "(-shm), as happens when a live store is copied file by file; open it while its writer "
                          "runs, delete the -shm of a copy, or copy the store with sqlite3 SRC \".backup DST\".")
    if kind == "unreachable":
        return StoreError(f"Cannot reach the database at {display}: {text}.")
    return StoreError(f"Database error on {display}: {text}.")


def translate_driver(err: BaseException, display: str) -> StoreError:
    """A DB-API exception (no SQLAlchemy wrapper) as a one-sentence StoreError."""
    return sentence(driver_kind(err), err, display)
