"""Opening a SQLite file to read without changing any file (no SQLAlchemy: the preview and the
read commands use it).

SQLite's ``mode=ro`` is not enough: a reader of a WAL database creates ``-wal`` and ``-shm``
when they are missing (and leaves them), and rewrites ``-shm`` on every read. A read-only
connection here is therefore chosen from the files beside the database, at connect time:

* ``-shm`` present (a writer is at work, or one was killed and left its log): ``mode=ro`` with
  ``readonly_shm=1``. SQLite then maps the shared memory read-only, and when no writer keeps
  it current it rebuilds the index of the log in private memory: every committed
  checkpoint of a killed writer's log is read, and no byte of any file changes.
* no ``-shm`` and no ``-wal`` (a clean store): ``immutable=1``. Nothing is created and no
  lock is taken; when a writer starts later its ``-shm`` appears and ``mode_of`` no longer
  matches, so the engine replaces such connections (``engine._sqlite_engine``).
* a ``-wal`` with content but no ``-shm`` (a store copied with its log): no writer can be at
  work (it would have made ``-shm``), and SQLite cannot read the log without creating
  ``-shm``. The database and its log are copied to a private temporary directory and read
  there (up to ``COPY_MAX`` bytes; a bigger one is read ``immutable=1``, without the log);
  the store's notice says so.
* a ``-journal`` with content and no log (a rollback-journal database — the frameworks' —
  whose writer is inside a transaction, or was killed there: a *hot* journal): pages of the
  unfinished transaction may be in the database file already, which any SQLite client rolls
  back before reading, and which an ``immutable=1`` read would show as committed. The
  database and its journal are copied the same way, and the copy is opened writable so that
  SQLite rolls the unfinished transaction back there; the store's notice says so.
* ``-shm`` present but a ``-wal`` whose header is not one SQLite writes (a torn copy of a live
  store, or a damaged log): with no writer at hand, SQLite rebuilds the log's index, finds no
  log, and then retries for ten seconds ("locking protocol") because the log's header does not
  name the log it found. Such a log holds nothing SQLite would read, with or without a writer,
  so the database is read ``immutable=1`` without it; the store's notice says so. (A writer
  never leaves such a header: it writes a log's header whole before any frame.)
"""

from __future__ import annotations

import _thread
import os
import sqlite3
import time
import urllib.parse
from pathlib import Path
from typing import Any

from inspector.errors import NotAStoreError, StoreError
from inspector.store import dberrors

BUSY_TIMEOUT_MS = 10_000
SHARED = "shared"         # readonly_shm: follows writers
IMMUTABLE = "immutable"   # a clean store, read as a snapshot until a writer appears
LOG_UNREAD = "log-unread"  # a -wal without -shm: its newest writes cannot be read untouched
JOURNAL = "journal"       # a rollback journal with content: a transaction to roll back first
GARBLED = "log-garbled"    # a -shm with a -wal that is not a log: read without them
COPIED = (LOG_UNREAD, JOURNAL)   # the modes read from a private copy


def may_write(path: str | os.PathLike) -> bool:
    """Whether this user may write the SQLite file at ``path``: it and its folder (where SQLite
    keeps its journal)."""
    return os.access(path, os.W_OK) and os.access(os.path.dirname(os.fspath(path)) or ".", os.W_OK)


def sidecars(path: Path) -> tuple[Path, Path]:
    """The ``-wal`` and ``-shm`` files of a database."""
    return path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")


def journal_of(path: Path) -> Path:
    """A rollback-journal database's ``-journal`` file."""
    return path.with_name(path.name + "-journal")


def mode_of(path: Path) -> str:
    """How a read-only connection to ``path`` must open it now (see the module docstring)."""
    wal, shm = sidecars(path)
    if shm.exists():
        return GARBLED if _garbled(wal) else SHARED
    if _has_content(wal):
        return LOG_UNREAD
    return JOURNAL if _has_content(journal_of(path)) else IMMUTABLE


def _has_content(path: Path) -> bool:
    try:
        return path.stat().st_size > 0
    except OSError:
        return False


WAL_MAGIC = (0x377F0682, 0x377F0683)
WAL_VERSION = 3007000


def _garbled(wal: Path) -> bool:
    """Whether ``wal`` holds a header (32 bytes or more) that is not a write-ahead log's: a
    magic number, version or page size SQLite never writes. Read with plain I/O: SQLite locks
    the database and its ``-shm``, never the ``-wal`` (closing a descriptor of a locked file
    would drop this process's locks on it)."""
    try:
        with open(wal, "rb") as f:
            head = f.read(32)
    except OSError:
        return False
    if len(head) < 32:
        return False
    magic, version, size = (int.from_bytes(head[i:i + 4], "big") for i in (0, 4, 8))
    return magic not in WAL_MAGIC or version != WAL_VERSION or not 512 <= size <= 65536 or size & (size - 1) != 0


def uri_for(path: Path, mode: str) -> str:
    """The ``file:`` URI of a read-only connection in ``mode``."""
    quoted = urllib.parse.quote(os.fspath(path))
    if mode == SHARED:
        return f"file:{quoted}?mode=ro&readonly_shm=1"
    return f"file:{quoted}?mode=ro&immutable=1"


def readonly_uri(path: Path) -> tuple[str, str]:
    """(URI, mode) of a connection that reads ``path`` as it is now without writing."""
    mode = mode_of(path)
    return uri_for(path, mode), mode


def _identity(path: Path, changed: bool = False) -> tuple | None:
    """A file's inode, size and modification time; with ``changed``, its inode change time
    too. That moves at every write as well, and unlike the modification time nobody can put
    it back (a copy tool or a restore that keeps the old time leaves a rewrite of the same
    size with the same time). Only the database's counts: SQLite running as root gives its
    ``-wal`` and ``-shm`` their database's owner at every open, which moves theirs."""
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns) if changed else (st.st_ino, st.st_size, st.st_mtime_ns)


def signature(path: Path) -> tuple:
    """What a read-only connection to ``path`` was opened against: when it changes, the
    connection must be replaced. An immutable connection trusts its page cache, so it is
    good only while the database file is unchanged; a shared one only while its ``-shm`` is
    the same file (a writer that ends deletes it, the next one makes a new one). Only the
    ``-shm``'s inode counts, not its size or time, which every commit changes: shared
    connections are closed after each use anyway, and busy writers must not make every
    checkout look like a new file (three in a row failed a read)."""
    mode = mode_of(path)
    if mode == SHARED:
        shm = _identity(sidecars(path)[1])
        return (mode, shm[0] if shm is not None else None)
    return (mode, _identity(path, changed=True), _identity(_sidecar(path, mode)))


def _sidecar(path: Path, mode: str) -> Path:
    """The file besides the database that a connection in ``mode`` reads with it (its log,
    or its rollback journal)."""
    return journal_of(path) if mode == JOURNAL else sidecars(path)[0]


SETTLED_NS = 3_000_000_000   # a file's time this far in the past moves at its next write


def change_key(path: Path) -> tuple | None:
    """A key of the database as it is committed now, from the files' metadata alone (a few
    ``stat`` calls), or None when the files cannot tell: equal keys mean that nothing was
    committed between the two looks, by any connection of any process.

    A commit writes the ``-wal`` (WAL mode) or the database (rollback journal), and the
    kernel then sets the file's time to the clock, in steps of its tick (of up to 2 s on
    some file systems). A file whose time is ``SETTLED_NS`` or more in the past therefore
    gets another time at its next write, whatever its size (a log SQLite starts again from
    its beginning keeps its size); a file written more recently than that (a store being
    written) gives None.

    The files are never opened here: closing a descriptor of a SQLite file drops every POSIX
    lock this process holds on it, those of its own SQLite connections too (a writer's lock
    on the shared memory, in a process that also reads)."""
    wal, shm = sidecars(path)
    found = _identity(path, changed=True), _identity(wal), _identity(shm)
    if found[0] is None:
        return None
    settled = time.time_ns() - SETTLED_NS
    if any(ident is not None and ident[2] > settled for ident in found):
        return None
    return (mode_of(path), *found)


COPY_MAX = 1 << 30
COPY_PREFIX = "checkpoint-inspector-copy-"


def sweep_copies(folder: Path | None = None) -> int:
    """Remove the private copies left by processes that are gone (killed, or ended without
    running their exit handlers), so that a copy of a store (up to ``COPY_MAX`` bytes) does not
    outlive the process that read it; returns how many went. A copy's folder is named after
    its process id; one whose process still runs (or reuses the id) is kept."""
    import shutil
    import tempfile

    import psutil

    removed = 0
    try:
        found = list(Path(folder or tempfile.gettempdir()).glob(f"{COPY_PREFIX}*-*"))
    except OSError:
        return 0
    for old in found:
        pid = old.name[len(COPY_PREFIX):].split("-", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid() or psutil.pid_exists(int(pid)):
            continue
        try:
            if old.is_symlink() or not old.is_dir() or old.stat().st_uid != getattr(os, "getuid", lambda: 0)():
                continue       # not a folder this user made
        except OSError:
            continue
        shutil.rmtree(old, ignore_errors=True)
        removed += not old.exists()
    return removed


def private_copy_uri(path: Path, signature: tuple, copies: dict) -> str | None:
    """The URI of a private copy of ``path`` and its ``-wal`` or ``-journal`` as they are
    (made once per ``signature``; kept in ``copies``, removed when that dict goes), or None
    when the two are bigger than ``COPY_MAX`` or cannot be copied. A copy with a journal is
    opened writable: SQLite rolls the journal's transaction back in the copy."""
    mode = signature[0]
    if signature not in copies:
        import shutil
        import tempfile

        beside = _sidecar(path, mode)
        try:
            if too_big_to_copy(path, mode):
                return None
            sweep_copies()
            folder = tempfile.TemporaryDirectory(prefix=f"{COPY_PREFIX}{os.getpid()}-")
            shutil.copyfile(path, Path(folder.name) / path.name)
            shutil.copyfile(beside, Path(folder.name) / beside.name)
        except OSError:
            return None
        copies.clear()          # an older copy is no longer what the files hold
        copies[signature] = folder
    copy = Path(copies[signature].name) / path.name
    return f"file:{urllib.parse.quote(os.fspath(copy))}" + ("" if mode == JOURNAL else "?mode=ro")


COPY_NOTICE = ("The store's write-ahead log has no -shm file, so it is read from a private copy "
               "without changing any of its files; live updates resume when a writer opens it.")
JOURNAL_NOTICE = ("The store has a rollback journal (a writer is inside a transaction, or was killed in one), so "
                  "it is read from a private copy where SQLite rolls that transaction back, without changing any "
                  "of its files.")
GARBLED_NOTICE = ("The store's write-ahead log is not a log SQLite can read (it does not match the -shm index "
                  "beside it, as happens when a live store is copied file by file), so the store is read from its "
                  "database file alone, without changing any of its files: checkpoints committed only in that log "
                  "are not shown. Copy a live store with sqlite3 SRC \".backup DST\".")
SKIPPED_NOTICE = ("The store's write-ahead log has no -shm file and the store is over {limit} GiB, too big to "
                  "copy, so it is read without its log: checkpoints committed in the log are not shown and "
                  "live updates are off until a writer opens the store.")


JOURNAL_SKIPPED = ("The store has a rollback journal (a writer is inside a transaction, or was killed in one) and "
                   "is over {limit} GiB, too big to copy, so it is read as it is: what that transaction wrote "
                   "already may show although it was never committed.")


def too_big_to_copy(path: Path, mode: str) -> bool:
    """True when a store and the ``-wal`` or ``-journal`` a ``mode`` connection reads with it
    are over ``COPY_MAX`` bytes (read without it)."""
    try:
        return path.stat().st_size + _sidecar(path, mode).stat().st_size > COPY_MAX
    except OSError:
        return False


def notice_for(mode: str, path: Path | None = None) -> str:
    """What the user should know about a store read in ``mode`` ('' when nothing); with the
    store's ``path``, a log too big to copy says that its checkpoints are not shown."""
    if mode in COPIED:
        if path is not None and too_big_to_copy(path, mode):
            return (SKIPPED_NOTICE if mode == LOG_UNREAD else JOURNAL_SKIPPED).format(limit=COPY_MAX >> 30)
        return COPY_NOTICE if mode == LOG_UNREAD else JOURNAL_NOTICE
    return GARBLED_NOTICE if mode == GARBLED else ""


class DamagedText(str):
    """Text a database returned that was not valid UTF-8 (shown with replacement characters)."""


def decode_text(raw: bytes) -> str:
    """The ``text_factory`` of read connections: invalid UTF-8 in one row must not stop a
    whole listing, so it becomes a DamagedText that the row reports as damage."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return DamagedText(raw.decode("utf-8", "replace"))


OPEN_RETRIES = 40       # opening tried (10 ms apart) while a writer makes and deletes the files beside it
READONLY_RETRIES = 30   # a query a shared read-only connection retries after a transient refusal …
READONLY_PAUSE_MAX = 0.05   # … pausing 1 ms, doubling, at most this long (about a second in all)


def transient_refusal(conn: Any, err: BaseException) -> bool:
    """Whether ``err`` is SQLite's "attempt to write a readonly database" on a connection that
    follows writers (``readonly_shm``): with writers at work such a reader is sometimes refused
    a plain SELECT for a moment, while the log's index is being rewritten; it reads a moment
    later. (Seen about once in 60 runs of eight writers and a live reader.)"""
    return (isinstance(err, sqlite3.OperationalError) and "readonly database" in str(err)
            and getattr(conn, "ci_signature", ("",))[0] == SHARED)


def undecodable(err: UnicodeDecodeError) -> sqlite3.DatabaseError:
    """SQLite's error for a file whose schema holds text that is not UTF-8: the standard
    library raises UnicodeDecodeError when the message SQLite gives (which quotes that text)
    cannot be decoded. As SQLITE_CORRUPT, so that it reads as a corrupt store."""
    found = sqlite3.DatabaseError(f"its schema holds text that is not UTF-8 ({err.reason})")
    found.sqlite_errorcode = 11            # SQLITE_CORRUPT
    found.sqlite_errorname = "SQLITE_CORRUPT"
    return found


def retrying(conn: Any, call: Any, *args: Any) -> Any:
    """``call(*args)``, again after a transient refusal (``transient_refusal``), up to
    ``READONLY_RETRIES`` times; any other error, or the last refusal, is raised."""
    pause = 0.001
    for attempt in range(READONLY_RETRIES + 1):
        try:
            return call(*args)
        except UnicodeDecodeError as err:
            raise undecodable(err) from err
        except sqlite3.OperationalError as err:
            if attempt == READONLY_RETRIES or not transient_refusal(conn, err):
                raise
        time.sleep(pause)
        pause = min(pause * 2, READONLY_PAUSE_MAX)
    raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises


class _ReadCursor(sqlite3.Cursor):
    """A read connection's cursor: a query refused for a moment is run again (``retrying``)."""

    def execute(self, *args: Any) -> Any:
        return retrying(self.connection, super().execute, *args)

    def executemany(self, *args: Any) -> Any:
        return retrying(self.connection, super().executemany, *args)


class ReadConnection(sqlite3.Connection):
    """A read-only connection that remembers how it opened the file (its ``signature``); its
    cursors retry a query refused for a moment while writers work (``_ReadCursor``)."""

    ci_signature: tuple = ()

    def cursor(self, factory: Any = _ReadCursor) -> Any:
        return super().cursor(factory)


def _open(path: Path, copies: dict, factory: type[ReadConnection]) -> ReadConnection:
    signature_now = signature(path)
    uri = uri_for(path, signature_now[0])
    if signature_now[0] in COPIED:
        uri = private_copy_uri(path, signature_now, copies) or uri
    conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000,
                           check_same_thread=False, factory=factory)
    conn.ci_signature = signature_now
    try:
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()   # opens the files now
    except UnicodeDecodeError as err:
        conn.close()
        raise undecodable(err) from err
    except sqlite3.Error:
        conn.close()
        raise
    return conn


def connect(path: Path, copies: dict[tuple, Any], factory: type[ReadConnection] = ReadConnection) -> ReadConnection:
    """A connection that reads ``path`` as it is now and cannot write (see the module
    docstring; ``copies`` keeps the private copies of a log without -shm). Autocommit mode:
    a reader issues its own BEGIN for a consistent view over several queries."""
    steady = 0
    for attempt in range(OPEN_RETRIES):    # a writer may come or go between looking and opening
        before = signature(path)
        try:
            conn = _open(path, copies, factory)
            break
        except sqlite3.OperationalError as err:
            # tried again while the files keep changing (a writer that opens and closes its
            # store at every save deletes its -wal and -shm each time: three tries 10 ms
            # apart all failed now and then), three times at most while they stay as they are
            # ("locking protocol" comes after SQLite's own ten seconds of retries: never again)
            steady = steady + 1 if signature(path) == before else 0
            if attempt == OPEN_RETRIES - 1 or steady == 3 or dberrors.driver_kind(err) == "protocol":
                raise
        time.sleep(0.01)
    conn.text_factory = decode_text   # one row's bad UTF-8 is that row's damage
    conn.isolation_level = None
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    return conn


class ReadPool:
    """Read-only connections (``connect``) to one SQLite file for a store's reader: a clean
    store's connection is kept while the files stay as they were (``signature``); one that
    shares a writer's ``-shm`` is closed after each use (as the read-only engine does: such
    a connection left open stops a new writer from recovering a killed writer's log)."""

    def __init__(self, path: Path, text_factory: Any = decode_text) -> None:
        self.path = path
        self.text_factory = text_factory
        self.copies: dict[tuple, Any] = {}
        self._idle: list[ReadConnection] = []
        self._lock = _thread.allocate_lock()   # threading.Lock() (a command line need not import threading)

    def checkout(self) -> ReadConnection:
        """A connection to use (one reading the files as they are now)."""
        with self._lock:
            while self._idle:
                conn = self._idle.pop()
                if conn.ci_signature == signature(self.path):
                    return conn
                conn.close()      # a writer started or ended since it opened: read the files anew
        conn = connect(self.path, self.copies)
        conn.text_factory = self.text_factory
        return conn

    def checkin(self, conn: ReadConnection, broken: bool = False) -> None:
        """Give back a connection (``broken``: an error happened on it; it is closed)."""
        if broken or conn.ci_signature[0] == SHARED:
            conn.close()
            return
        with self._lock:
            self._idle.append(conn)

    def close(self) -> None:
        """Close the kept connections and drop the private copies."""
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()
        self.copies.clear()


def table_columns(conn: sqlite3.Connection) -> dict[str, set[str]]:
    """Every table of the database with its column names (what ``engine.table_columns``
    gives, for kind detection), read with plain SQL."""
    names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                        "AND name NOT LIKE 'sqlite~_%' ESCAPE '~' ORDER BY name")]
    return {name: {r[0] for r in conn.execute("SELECT name FROM pragma_table_info(?)", (name,))} for name in names}


def check_sqlite_file(target: Any) -> None:
    """Refuse a missing path, a directory, an empty file or a file that is not SQLite
    (``target``: an ``inspector.store.target.Target`` of a SQLite file)."""
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
    for attempt in range(3):    # a writer may come or go (its -shm with it) between looking and opening
        uri, _ = readonly_uri(path)
        try:
            conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
        except sqlite3.Error as err:
            raise StoreError(f"Cannot read {path}: {err}.") from err
        try:
            conn.execute("PRAGMA schema_version").fetchone()
            return True
        except sqlite3.DatabaseError as err:
            kind = dberrors.driver_kind(err)
            if kind == "not-a-database":
                return False
            if kind == "locked":
                return True
            if kind == "cannot-open" and attempt < 2:
                time.sleep(0.01)
                continue
            raise dberrors.translate_driver(err, str(path)) from err
        finally:
            conn.close()
    raise AssertionError("unreachable")   # pragma: no cover - the last attempt returns or raises
