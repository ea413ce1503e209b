"""Driver errors are classified by SQLite result codes and PostgreSQL SQLSTATEs, never by words."""

from __future__ import annotations

import socket
import sqlite3
from pathlib import Path

import pytest
import sqlalchemy as sa

from inspector.errors import CorruptDataError, NotAStoreError, StoreError
from inspector.store.engine import error_kind, translate


def _raised(fn) -> BaseException:
    try:
        fn()
    except Exception as err:  # the driver's own exception is what we classify
        return err
    raise AssertionError("nothing was raised")


def test_sqlite_errors_by_result_code(tmp_path: Path) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is no database, just words: locked, busy, read-only" * 100)
    err = _raised(lambda: sqlite3.connect(junk).execute("PRAGMA schema_version").fetchone())
    assert error_kind(err) == "not-a-database"
    assert isinstance(translate(err, "junk.db"), NotAStoreError)

    db = tmp_path / "s.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE t (x)")
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        err = _raised(lambda: sqlite3.connect(db, timeout=0).execute("SELECT * FROM t").fetchall())
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert error_kind(err) == "locked"
    assert "locked by another process" in str(translate(err, "s.db"))

    ro = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    err = _raised(lambda: ro.execute("INSERT INTO t VALUES (1)"))
    ro.close()
    assert error_kind(err) == "read-only" and "is read-only here" in str(translate(err, "s.db"))


def test_a_message_with_the_old_words_is_not_misread(tmp_path: Path) -> None:
    """A constraint named 'locked_or_busy_or_readonly' used to read as a locked store."""
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'c.db'}")
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE t (x INTEGER CONSTRAINT locked_or_busy_or_readonly CHECK (x > 0))")
    with pytest.raises(sa.exc.IntegrityError) as caught, engine.begin() as conn:
        conn.exec_driver_sql("INSERT INTO t VALUES (-1)")
    engine.dispose()
    assert "locked" in str(caught.value)
    assert error_kind(caught.value) is None
    translated = translate(caught.value, "c.db")
    assert type(translated) is StoreError and str(translated).startswith("Database error on c.db:")


def test_a_corrupt_page_is_corrupt(tmp_path: Path) -> None:
    db = tmp_path / "bad.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE t (x)")
        conn.executemany("INSERT INTO t VALUES (?)", [("v" * 200,)] * 200)
    data = bytearray(db.read_bytes())
    page = 4096
    data[page + 8: page * 3] = b"\xff" * (page * 2 - 8)     # the table's pages, header kept
    db.write_bytes(bytes(data))
    err = _raised(lambda: sqlite3.connect(db).execute("SELECT count(*), max(length(x)) FROM t").fetchall())
    assert error_kind(err) == "corrupt" and isinstance(translate(err, "bad.db"), CorruptDataError)


@pytest.mark.postgres
def test_postgres_errors_by_sqlstate(pg_url: str) -> None:
    engine = sa.create_engine(pg_url)
    with engine.connect() as conn:
        conn.exec_driver_sql("SET default_transaction_read_only = on")
        conn.commit()
        with pytest.raises(sa.exc.DBAPIError) as caught:
            conn.exec_driver_sql("CREATE TABLE nope (x int)")
    engine.dispose()
    assert caught.value.orig.sqlstate == "25006"
    assert error_kind(caught.value) == "read-only"
    assert "is read-only here" in str(translate(caught.value, "pg"))


def test_postgres_without_a_server_is_unreachable() -> None:
    pytest.importorskip("psycopg")
    with socket.socket() as s:          # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    engine = sa.create_engine(f"postgresql+psycopg://nobody@127.0.0.1:{port}/none",
                              connect_args={"connect_timeout": 2})
    with pytest.raises(sa.exc.OperationalError) as caught:
        engine.connect()
    engine.dispose()
    assert error_kind(caught.value) == "unreachable"
    assert str(translate(caught.value, "pg")).startswith("Cannot reach the database at pg:")


def test_guard_translates_a_raw_cursors_driver_error(tmp_path: Path) -> None:
    """A hot path's raw DB-API cursor (not wrapped by SQLAlchemy) failing inside ``guard``
    gives the store's one sentence, as a wrapped error does: a prune plan streaming its
    candidates from a file whose pages are damaged once ended in sqlite3.DatabaseError."""
    from inspector.store.engine import guard
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is no database" * 100)
    with pytest.raises(NotAStoreError) as caught, guard("junk.db"):
        sqlite3.connect(junk).cursor().execute("PRAGMA schema_version").fetchone()
    assert "junk.db" in str(caught.value)
    with pytest.raises(ZeroDivisionError), guard("junk.db"):     # anything else passes through as it is
        _ = 1 / 0
