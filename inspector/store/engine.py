"""Engine creation and the one boundary where driver errors become StoreErrors.

This is the clearly marked place for backend-specific SQL: SQLite pragmas and
transaction mode, PostgreSQL session settings, and the dialect's INSERT … ON CONFLICT.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
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
CHECKOUT_RETRIES = 40     # checkouts of a read connection tried while the store's files keep changing …
CHECKOUT_PAUSE_MAX = 0.05  # … pausing 1 ms, doubling, at most this long (about two seconds in all)


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
        engine = sa.create_engine("sqlite://", creator=creator, poolclass=_FollowingPool)

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


class _FollowingPool(sa.pool.QueuePool):
    """The read-only engine's pool: a checkout whose connection the files changed under is
    tried again, up to ``CHECKOUT_RETRIES`` times.

    SQLAlchemy replaces a connection its checkout listener refuses (the files changed since
    it opened) twice, then gives up ("This connection is closed"). A rollback-journal writer
    (Google ADK's) makes and deletes its ``-journal`` at every commit, and a WAL writer that
    closes its last connection deletes its ``-shm``: with commits a few milliseconds apart,
    two changes in a row were common (a read in five of a store being written failed)."""

    _sqla_logger_namespace = "sqlalchemy.pool.impl.QueuePool"   # logs where SQLAlchemy's pools log

    def connect(self) -> Any:
        pause = 0.001
        for attempt in range(CHECKOUT_RETRIES):
            try:
                return super().connect()
            except exc.InvalidRequestError:   # only the given-up checkout raises it here
                if attempt == CHECKOUT_RETRIES - 1:
                    raise
            time.sleep(pause)
            pause = min(pause * 2, CHECKOUT_PAUSE_MAX)
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises


def _postgres_engine(target: Target, readonly: bool) -> sa.Engine:
    import importlib.util
    if importlib.util.find_spec("psycopg") is None:
        raise StoreError(f"{target.display} is a PostgreSQL database, and reading one needs the psycopg driver: "
                         "install the package's postgres extra (pip install 'checkpoint-inspector[postgres]').")
    connect_args: dict[str, Any] = {"connect_timeout": 10}
    if not readonly:
        return sa.create_engine(target.url, connect_args=connect_args, pool_pre_ping=True,
                                pool_size=5, max_overflow=10)
    connect_args["options"] = "-c default_transaction_read_only=on"
    engine = sa.create_engine(target.url, connect_args=connect_args, pool_pre_ping=True,
                              pool_size=5, max_overflow=10, poolclass=_WatchedPool)

    @event.listens_for(engine, "before_cursor_execute")
    def _on_execute(conn, _cursor, _statement, _params, _context, _many) -> None:
        _WATCHDOG.arm(conn.connection.dbapi_connection)   # each statement (and its rows) waits anew

    @event.listens_for(engine, "invalidate")
    @event.listens_for(engine, "close")
    def _on_gone(dbapi_conn, *_args) -> None:
        _WATCHDOG.disarm(dbapi_conn)

    return engine


SERVER_WAIT_ENV = "CHECKPOINT_INSPECTOR_SERVER_WAIT"
SERVER_WAIT_S = 120.0


def server_wait() -> float:
    """Seconds a read waits for a PostgreSQL server's answer to one statement and its rows
    (``SERVER_WAIT_ENV``, else ``SERVER_WAIT_S``)."""
    try:
        wait = float(os.environ.get(SERVER_WAIT_ENV, "") or SERVER_WAIT_S)
    except ValueError:
        return SERVER_WAIT_S
    return wait if wait > 0 else SERVER_WAIT_S


class _Watchdog:
    """Stops the waits of read connections whose server does not answer in ``server_wait()``
    seconds, by shutting their socket down (the waiting call then fails at once, as on a
    dropped connection), from one thread that sleeps while nothing is due.

    ``connect_timeout`` bounds only connecting and ``statement_timeout`` is the server's
    own: a server that is frozen (stopped, swapping, a host cut off without a reset) would
    keep a read — a command, or a window's worker — waiting for as long as it stays so.
    The thread whose wait was stopped is marked, so that ``translate`` says why its
    connection failed."""

    def __init__(self) -> None:
        self._due: dict[int, tuple[float, Any, int]] = {}    # id(conn) → (deadline, conn, waiting thread)
        self._stopped: set[int] = set()                      # threads whose wait was stopped
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None

    def arm(self, conn: Any) -> None:
        """Give ``conn``, used by this thread, ``server_wait()`` seconds from now."""
        if conn is None:
            return
        me = threading.get_ident()
        with self._wake:
            self._due[id(conn)] = (time.monotonic() + server_wait(), conn, me)
            self._stopped.discard(me)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="server-wait-watchdog", daemon=True)
                self._thread.start()
            self._wake.notify()

    def disarm(self, conn: Any) -> None:
        """``conn`` waits no more (back in the pool, or closed)."""
        with self._wake:
            self._due.pop(id(conn), None)

    def take_stopped(self) -> bool:
        """Whether this thread's wait was stopped since it last armed a connection (once)."""
        me = threading.get_ident()
        with self._wake:
            if me not in self._stopped:
                return False
            self._stopped.discard(me)
            return True

    def _run(self) -> None:
        with self._wake:
            while True:
                now = time.monotonic()
                for key, (when, conn, waiter) in list(self._due.items()):
                    if when <= now:
                        del self._due[key]
                        if _shut_down(conn):
                            self._stopped.add(waiter)
                soonest = min((when for when, _, _ in self._due.values()), default=None)
                self._wake.wait(None if soonest is None else soonest - now)


def _shut_down(conn: Any) -> bool:
    """Shut a psycopg connection's socket down (its descriptor stays open: the connection
    still closes it); False when it is closed already."""
    import socket
    try:
        if conn.closed:
            return False
        fd = os.dup(conn.pgconn.socket)
    except Exception:       # closed meanwhile (psycopg raises its OperationalError)
        return False
    sock = socket.socket(fileno=fd)
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        return False
    finally:
        sock.close()
    return True


_WATCHDOG = _Watchdog()


class _WatchedPool(sa.pool.QueuePool):
    """A read engine's PostgreSQL pool: a connection is watched (``_Watchdog``) from when it
    leaves the pool — the pre-ping waits for the server too — until it is back."""

    _sqla_logger_namespace = "sqlalchemy.pool.impl.QueuePool"   # logs where SQLAlchemy's pools log

    def _do_get(self) -> Any:
        record = super()._do_get()
        _WATCHDOG.arm(record.dbapi_connection)
        return record

    def _do_return_conn(self, record: Any) -> None:
        _WATCHDOG.disarm(record.dbapi_connection)
        super()._do_return_conn(record)


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
    kind = error_kind(err)
    if _WATCHDOG.take_stopped() and kind == "unreachable":
        return StoreError(f"The database at {display} did not answer for {server_wait():g} s; it may be overloaded "
                          f"or hung (set {SERVER_WAIT_ENV} to wait longer).")
    return dberrors.sentence(kind, _driver_error(err), display)


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


def check_writable(engine: sa.Engine, display: str, table: str) -> None:
    """StoreError (the read-only sentence) when this PostgreSQL role cannot change ``table``:
    its transactions are read-only (the role ``init --readonly-role`` makes) or it lacks the
    privilege. Asked before a maintenance write says what it is about to do; a SQLite file
    says so at its first write."""
    if engine.dialect.name != "postgresql":
        return
    with guard(display), engine.connect() as conn:
        read_only, allowed = conn.execute(sa.text(
            "SELECT current_setting('transaction_read_only') = 'on', "
            "has_table_privilege(CAST(:table AS text), 'INSERT') AND has_table_privilege(CAST(:table AS text), 'DELETE')"),
            {"table": table}).one()
    if read_only:
        raise StoreError(f"{display} is read-only here: your database role may only read.")
    if not allowed:
        raise StoreError(f"{display} is read-only here: your database role may not change {table}.")


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
