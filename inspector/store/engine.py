"""Engine creation and the one boundary where driver errors become StoreErrors.

This is the clearly marked place for backend-specific SQL: SQLite pragmas and
transaction mode, PostgreSQL session settings, and the dialect's INSERT … ON CONFLICT.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from collections.abc import Iterator

import sqlalchemy as sa
from sqlalchemy import event, exc

from inspector.errors import CorruptDataError, NotAStoreError, StoreError
from inspector.store import sqlite_ro

BUSY_TIMEOUT_MS = 10_000


@dataclass(frozen=True)
class Target:
    """A parsed store location: a SQLite path or a server URL."""

    url: str          # SQLAlchemy URL string
    display: str      # what the user sees
    backend: str      # "sqlite" | "postgresql"
    path: Path | None = None


def parse_target(target: str | os.PathLike) -> Target:
    """Turn a path or SQLAlchemy URL into a Target (no I/O but resolving the path);
    StoreError for a URL that does not parse or a path that cannot be resolved."""
    text = os.fspath(target)
    if "://" in text:
        try:
            url = sa.engine.make_url(text)
            backend = url.get_backend_name()
        except (ValueError, TypeError, exc.ArgumentError) as err:
            raise StoreError(f"{text!r} is not a database URL that can be opened ({err}).") from err
        if backend == "sqlite":
            return _sqlite_target(url.database or "", text)
        if backend == "postgresql":
            if url.drivername == "postgresql":
                url = url.set(drivername="postgresql+psycopg")
            return Target(url.render_as_string(hide_password=False),
                          url.render_as_string(hide_password=True), "postgresql")
        raise StoreError(f"Unsupported database URL scheme {url.drivername!r}; use a SQLite path or postgresql://.")
    local = _sqlite_target(text, None)
    return Target(f"sqlite:///{local.path}", str(local.path), "sqlite", local.path)


def _sqlite_target(text: str, url: str | None) -> Target:
    try:
        path = Path(text).expanduser().resolve()
    except (RuntimeError, OSError) as err:      # a symlink loop, an unreadable directory
        reason = "it is a loop of symbolic links" if isinstance(err, RuntimeError) else (err.strerror or str(err))
        raise StoreError(f"Cannot open {text}: {reason}.") from err
    return Target(url or f"sqlite:///{path}", str(Path(text)) if url else str(path), "sqlite", path)


def check_sqlite_file(target: Target) -> None:
    """Refuse a missing path, a directory, an empty file or a file that is not SQLite."""
    path = target.path
    assert path is not None
    if not path.exists():
        raise StoreError(f"No store at {path}: the file does not exist.")
    if path.is_dir():
        raise NotAStoreError(f"{path} is a directory, not a store file.")
    try:
        size = path.stat().st_size
        if not os.access(path, os.R_OK):
            raise PermissionError(13, "Permission denied")
    except OSError as err:
        raise StoreError(f"Cannot read {path}: {err.strerror or err}.") from err
    if not size:
        raise NotAStoreError(f"{path} is empty; it is not a checkpoint store.")
    if not _is_sqlite(path):
        raise NotAStoreError(f"{path} is not a checkpoint store (it is not a SQLite database).")


def _is_sqlite(path: Path) -> bool:
    """Ask SQLite itself whether ``path`` is a database (never open the file with plain I/O).

    Closing any descriptor of a file drops every POSIX lock this process holds on it, so
    reading the header with ``open()`` while this process has SQLite connections to the
    store silently released their locks: another process then checkpointed and deleted
    the WAL under them (lost writes, "malformed" reads). SQLite shares and defers its own
    descriptors per file, so a short SQLite connection is safe.
    """
    uri, _ = sqlite_ro.readonly_uri(path)
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
    except sqlite3.Error as err:
        raise StoreError(f"Cannot read {path}: {err}.") from err
    try:
        conn.execute("PRAGMA schema_version").fetchone()
        return True
    except sqlite3.DatabaseError as err:
        kind = error_kind(err)
        if kind == "not-a-database":
            return False
        if kind == "locked":
            return True
        raise translate(err, str(path)) from err
    finally:
        conn.close()


def make_engine(target: Target, *, readonly: bool) -> sa.Engine:
    """An engine for the target; read-only engines cannot write even by mistake."""
    if target.backend == "sqlite":
        return _sqlite_engine(target, readonly)
    return _postgres_engine(target, readonly)


def _sqlite_engine(target: Target, readonly: bool) -> sa.Engine:
    assert target.path is not None
    path = target.path
    if readonly:
        copies: dict[tuple, Any] = {}     # private copies of a -wal without -shm (see sqlite_ro)

        def connect() -> sqlite3.Connection:
            signature = sqlite_ro.signature(path)
            uri = sqlite_ro.uri_for(path, signature[0])
            if signature[0] == sqlite_ro.LOG_UNREAD:
                uri = sqlite_ro.private_copy_uri(path, signature, copies) or uri
            conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000,
                                   check_same_thread=False, factory=_ReadConnection)
            conn.ci_signature = signature
            try:
                conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()   # opens the files now
            except sqlite3.Error:
                conn.close()
                raise
            return conn

        def creator() -> sqlite3.Connection:
            for attempt in range(3):    # a writer may come or go between looking and opening
                try:
                    conn = connect()
                    break
                except sqlite3.OperationalError:
                    if attempt == 2:
                        raise
                    time.sleep(0.01)
            conn.text_factory = sqlite_ro.decode_text   # one row's bad UTF-8 is that row's damage
            return conn

        # the URL names no file (the creator opens it): without a pool class SQLAlchemy would
        # take it for a memory database and share one connection per thread, closing them
        # under other threads beyond five
        engine = sa.create_engine("sqlite://", creator=creator, poolclass=sa.pool.QueuePool)

        @event.listens_for(engine, "checkin")
        def _on_checkin(dbapi_conn, record) -> None:
            # a -shm read read-only stops a new writer from recovering a killed writer's log
            # ("attempt to write a readonly database") while this connection stays open: such
            # connections are closed after each use (immutable ones are kept)
            if dbapi_conn is not None and getattr(dbapi_conn, "ci_signature", ("",))[0] == sqlite_ro.SHARED:
                record.invalidate()

        @event.listens_for(engine, "checkout")
        def _on_checkout(dbapi_conn, _record, _proxy) -> None:
            # a writer started (or ended) since this connection opened: read the files anew
            # (a shared connection is never reused: closed at checkin, opened for this use)
            opened = getattr(dbapi_conn, "ci_signature", None)
            if opened is not None and opened[0] == sqlite_ro.SHARED:
                return
            if opened != sqlite_ro.signature(path):
                raise exc.DisconnectionError("the store's write-ahead log appeared or went away")
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        engine = sa.create_engine(f"sqlite:///{path}", connect_args={"timeout": BUSY_TIMEOUT_MS / 1000,
                                                                     "check_same_thread": False})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn, _record) -> None:
        dbapi_conn.isolation_level = None   # we issue BEGIN ourselves (below)
        cur = dbapi_conn.cursor()
        cur.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        if not readonly:
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn) -> None:
        # IMMEDIATE takes the write lock up front, so busy_timeout applies instead of
        # a deadlock error when a read transaction later wants to write.
        conn.exec_driver_sql("BEGIN" if readonly else "BEGIN IMMEDIATE")

    return engine


class _ReadConnection(sqlite3.Connection):
    """A read-only connection that remembers how it opened the file (``sqlite_ro`` modes)."""

    ci_signature: tuple = ()


def _postgres_engine(target: Target, readonly: bool) -> sa.Engine:
    connect_args: dict[str, Any] = {"connect_timeout": 10}
    if readonly:
        connect_args["options"] = "-c default_transaction_read_only=on"
    return sa.create_engine(target.url, connect_args=connect_args, pool_pre_ping=True,
                            pool_size=5, max_overflow=10)


def insert_ignore(table: sa.Table, dialect_name: str) -> sa.Insert:
    """INSERT … ON CONFLICT DO NOTHING for the engine's dialect."""
    if dialect_name == "sqlite":
        from sqlalchemy.dialects import sqlite
        return sqlite.insert(table).on_conflict_do_nothing()
    if dialect_name == "postgresql":
        from sqlalchemy.dialects import postgresql
        return postgresql.insert(table).on_conflict_do_nothing()
    raise StoreError(f"Unsupported database backend {dialect_name}.")  # pragma: no cover - two backends


# SQLite primary result codes (https://sqlite.org/rescode.html); extended codes carry the
# primary one in their low byte
SQLITE_PERM, SQLITE_BUSY, SQLITE_LOCKED, SQLITE_READONLY = 3, 5, 6, 8
SQLITE_CORRUPT, SQLITE_CANTOPEN, SQLITE_NOTADB = 11, 14, 26
_SQLITE_KINDS = {SQLITE_NOTADB: "not-a-database", SQLITE_CORRUPT: "corrupt", SQLITE_BUSY: "locked",
                 SQLITE_LOCKED: "locked", SQLITE_CANTOPEN: "cannot-open", SQLITE_PERM: "cannot-open",
                 SQLITE_READONLY: "read-only"}
# PostgreSQL SQLSTATEs (https://www.postgresql.org/docs/current/errcodes-appendix.html) by kind;
# class 08 (connection exception) is "unreachable" as a whole
_SQLSTATE_KINDS = {"57P01": "unreachable", "57P02": "unreachable", "57P03": "unreachable",
                   "25006": "read-only", "55P03": "locked", "XX001": "corrupt", "XX002": "corrupt"}


def _driver_error(err: BaseException) -> BaseException:
    """The DB-API exception under SQLAlchemy's wrapper (or ``err`` itself)."""
    orig = getattr(err, "orig", None)
    return orig if isinstance(orig, BaseException) else err


def error_kind(err: BaseException) -> str | None:
    """What a driver error says about the store, from its code, never from its message:
    'not-a-database', 'corrupt', 'locked', 'cannot-open', 'read-only', 'unreachable', or None.

    SQLite errors carry their result code (``sqlite_errorcode``), psycopg's their SQLSTATE;
    a psycopg error without one never got an answer from a server."""
    if isinstance(err, (exc.DisconnectionError, exc.TimeoutError)):
        return "unreachable"
    driver = _driver_error(err)
    code = getattr(driver, "sqlite_errorcode", None)
    if isinstance(code, int):
        return _SQLITE_KINDS.get(code & 0xFF)
    if type(driver).__module__.split(".")[0] == "psycopg":
        state = getattr(driver, "sqlstate", None)
        if state is None:
            return "unreachable" if type(driver).__name__ in ("OperationalError", "InterfaceError") else None
        return "unreachable" if state.startswith("08") else _SQLSTATE_KINDS.get(state)
    return None


def translate(err: BaseException, display: str) -> StoreError:
    """A driver exception as a one-sentence StoreError (the one place driver errors are classified)."""
    driver = _driver_error(err)
    text = (str(driver).strip().splitlines() or [""])[0] or type(driver).__name__
    kind = error_kind(err)
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
    if kind == "unreachable":
        return StoreError(f"Cannot reach the database at {display}: {text}.")
    return StoreError(f"Database error on {display}: {text}.")


@contextlib.contextmanager
def guard(display: str) -> Iterator[None]:
    """Translate SQLAlchemy/driver errors raised inside the block."""
    try:
        yield
    except StoreError:
        raise
    except (exc.DBAPIError, exc.OperationalError, exc.DatabaseError) as err:
        raise translate(err, display) from err
    except exc.SQLAlchemyError as err:
        raise translate(err, display) from err


# SQLSTATEs after which the same transaction may simply be tried again: the server is
# shutting down / restarting / refusing connections for now, or a serialization conflict.
TRANSIENT_SQLSTATES = {"57P01", "57P02", "57P03", "40001", "40P01", "53300"}


def is_transient(err: BaseException | None) -> bool:
    """True when a failed write may succeed if retried: the connection to the server was
    lost or refused, or the server is restarting (PostgreSQL). Follows ``__cause__`` links,
    so it sees through StoreError and SQLAlchemy wrappers to the driver's error."""
    for _ in range(6):
        if err is None:
            return False
        if isinstance(err, (exc.DisconnectionError, exc.TimeoutError)):
            return True
        if isinstance(err, exc.DBAPIError):
            if err.connection_invalidated:
                return True
            err = err.orig
            if err is None:
                return False
        if type(err).__module__.split(".")[0] == "psycopg":
            state = getattr(err, "sqlstate", None)
            if state is None:  # no answer from a server at all: connect failed or socket closed
                return type(err).__name__ in ("OperationalError", "InterfaceError")
            return state.startswith("08") or state in TRANSIENT_SQLSTATES
        err = err.__cause__
    return False


def table_columns(engine: sa.Engine, display: str) -> dict[str, set[str]]:
    """Every table of the database with its column names (for kind detection)."""
    with guard(display):
        insp = sa.inspect(engine)
        return {name: {c["name"] for c in insp.get_columns(name)} for name in insp.get_table_names()}


class CompiledStatement:
    """A Core statement compiled once for a dialect, run on a raw DB-API cursor.

    The recording hot path uses this: SQLAlchemy builds the SQL (so it stays portable),
    but per-execution overhead drops from ~100 µs to a few µs.
    """

    def __init__(self, stmt: sa.ClauseElement, dialect: sa.Dialect) -> None:
        from sqlalchemy.sql.compiler import SQLCompiler
        compiled = stmt.compile(dialect=dialect)
        assert isinstance(compiled, SQLCompiler)    # a DML / SELECT statement, never DDL
        self.compiled = compiled
        self.sql = self.compiled.string
        self.positional = bool(dialect.positional)
        self.names: list[str] = list(self.compiled.positiontup or []) if self.positional else []
        self.defaults = {name: bind.value for name, bind in self.compiled.binds.items()
                         if not bind.required and bind.value is not None}

    def params(self, values: dict) -> Any:
        """Parameters in the driver's style (defaults of literal binds filled in)."""
        merged = {**self.defaults, **values}
        if self.positional:
            return tuple(merged[name] for name in self.names)
        return merged


def begin_write_sql(dialect_name: str) -> str | None:
    """The statement that opens a write transaction on a raw connection (None: implicit)."""
    return "BEGIN IMMEDIATE" if dialect_name == "sqlite" else None


def vacuum(engine: sa.Engine, pg_tables: tuple[str, ...]) -> None:
    """Give free space back to the operating system, outside any transaction: SQLite VACUUM
    (with the WAL truncated before and after, since VACUUM in WAL mode rewrites through it);
    PostgreSQL VACUUM FULL of ``pg_tables``, which locks them while it runs."""
    raw = engine.raw_connection()
    try:
        if engine.dialect.name == "sqlite":
            cur = raw.cursor()         # the store's connections are in autocommit mode
            cur.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            cur.execute("VACUUM")
            cur.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            cur.close()
        else:
            driver = raw.driver_connection
            assert driver is not None
            driver.rollback()
            driver.autocommit = True
            try:
                driver.execute("VACUUM FULL " + ", ".join(pg_tables))
            finally:
                driver.autocommit = False
    finally:
        raw.close()
