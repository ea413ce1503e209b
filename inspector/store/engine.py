"""Engine creation and the one boundary where driver errors become StoreErrors.

This is the clearly marked place for backend-specific SQL: SQLite pragmas and
transaction mode, PostgreSQL session settings, and the dialect's INSERT … ON CONFLICT.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from operator import itemgetter
from typing import Any
from collections.abc import Callable, Iterator

import sqlalchemy as sa
from sqlalchemy import event, exc

from inspector.errors import StoreError
from inspector.store import dberrors, sqlite_ro
from inspector.store.sqlite_ro import check_sqlite_file  # noqa: F401  (re-exported)
from inspector.store.target import Target, path_target, sqlite_target

BUSY_TIMEOUT_MS = sqlite_ro.BUSY_TIMEOUT_MS
READONLY_RETRY_S = 5.0    # how long a new write connection waits out a reader's hold on a killed writer's log


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
            return sqlite_target(url.database or "", text)
        if backend == "postgresql":
            if url.drivername == "postgresql":
                url = url.set(drivername="postgresql+psycopg")
            return Target(url.render_as_string(hide_password=False),
                          url.render_as_string(hide_password=True), "postgresql")
        raise StoreError(f"Unsupported database URL scheme {url.drivername!r}; use a SQLite path or postgresql://.")
    return path_target(text)


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

        def creator() -> sqlite3.Connection:
            return sqlite_ro.connect(path, copies, factory=_ReadConnection)

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

        @event.listens_for(engine, "do_connect")
        def _do_connect(_dialect, _record, cargs, cparams) -> sqlite3.Connection:
            return connect_writable(path, lambda: sqlite3.connect(*cargs, **cparams))

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


def connect_writable(path: os.PathLike, connect: Callable[[], sqlite3.Connection]) -> sqlite3.Connection:
    """A write connection (``connect()``) that can write.

    The first connection after a writer was killed recovers the writer's log, and SQLite
    refuses that while a reader opened with a read-only ``-shm`` is open ("attempt to write
    a readonly database" at the first write) — and the connection stays unable to write
    after the reader has gone. Such readers (this app's, another inspector's) close within
    a query, so a writable store's connection whose first write lock is refused that way is
    replaced by a fresh one until that succeeds, for up to ``READONLY_RETRY_S``; a store that
    really is read-only here (file, ``-shm`` or directory not writable) is left to fail as
    it always did, with its one sentence.
    """
    deadline = time.monotonic() + READONLY_RETRY_S
    pause = 0.005
    while True:
        conn = connect()
        if not _recovery_refused(conn, os.fspath(path)) or time.monotonic() >= deadline:
            return conn
        conn.close()
        time.sleep(pause)
        pause = min(pause * 2, 0.1)


def _recovery_refused(conn: sqlite3.Connection, path: str) -> bool:
    """True when this fresh connection's write lock is refused as read-only on files it may write."""
    if not os.path.exists(path + "-wal"):
        return False          # no log: nothing to recover
    if not (sqlite_ro.may_write(path) and (not os.path.exists(path + "-shm") or os.access(path + "-shm", os.W_OK))):
        return False          # read-only here for good: the write says so
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as err:
        return (getattr(err, "sqlite_errorcode", 0) & 0xFF) == dberrors.SQLITE_READONLY
    conn.execute("ROLLBACK")
    return False


class _ReadConnection(sqlite_ro.ReadConnection):
    """A read-only connection of the engine's pool (``sqlite_ro.connect``)."""


def _postgres_engine(target: Target, readonly: bool) -> sa.Engine:
    import importlib.util
    if importlib.util.find_spec("psycopg") is None:
        raise StoreError(f"{target.display} is a PostgreSQL database, and reading one needs the psycopg driver: "
                         "install the package's postgres extra (pip install 'checkpoint-inspector[postgres]').")
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


def _driver_error(err: BaseException) -> BaseException:
    """The DB-API exception under SQLAlchemy's wrapper (or ``err`` itself)."""
    orig = getattr(err, "orig", None)
    return orig if isinstance(orig, BaseException) else err


def error_kind(err: BaseException) -> str | None:
    """What a driver error says about the store (``dberrors.driver_kind``), SQLAlchemy's
    disconnects and pool timeouts being 'unreachable'."""
    if isinstance(err, (exc.DisconnectionError, exc.TimeoutError)):
        return "unreachable"
    return dberrors.driver_kind(_driver_error(err))


def translate(err: BaseException, display: str) -> StoreError:
    """A driver exception as a one-sentence StoreError (the one place driver errors are classified)."""
    return dberrors.sentence(error_kind(err), _driver_error(err), display)


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
    except Exception as err:
        # a driver's own error, from a raw cursor the hot paths use (SQLAlchemy wraps the rest)
        if dberrors.is_driver_error(err):
            raise translate(err, display) from err
        raise


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


def is_readonly_error(err: BaseException | None) -> bool:
    """True for SQLite's "attempt to write a readonly database" (any SQLITE_READONLY code),
    through StoreError and SQLAlchemy wrappers. A writer that starts on a killed writer's log
    while a read-only reader (``readonly_shm``) has it open gets it: SQLite cannot recover the
    log then, and the writer's connection stays refused until it is replaced."""
    for _ in range(6):
        if err is None:
            return False
        if isinstance(err, exc.DBAPIError):
            err = err.orig
            continue
        if isinstance(err, sqlite3.OperationalError):
            return str(getattr(err, "sqlite_errorname", "")).startswith("SQLITE_READONLY") or \
                "readonly database" in str(err)
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
        # positional drivers: the values in order in one C call (a 1-tuple for one name)
        self._order: Callable[[dict], Any] | None = None
        if self.positional and self.names:
            names = self.names
            self._order = itemgetter(*names) if len(names) > 1 else (lambda v: (v[names[0]],))

    def params(self, values: dict) -> Any:
        """Parameters in the driver's style (defaults of literal binds filled in)."""
        merged = {**self.defaults, **values} if self.defaults else values
        if self.positional:
            return self._order(merged) if self._order is not None else ()
        return merged


def begin_write_sql(dialect_name: str) -> str | None:
    """The statement that opens a write transaction on a raw connection (None: implicit)."""
    return "BEGIN IMMEDIATE" if dialect_name == "sqlite" else None


def begin_read_sql(dialect_name: str) -> str | None:
    """The statement that opens a transaction that only reads (SQLite: no write lock taken)."""
    return "BEGIN" if dialect_name == "sqlite" else None


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
