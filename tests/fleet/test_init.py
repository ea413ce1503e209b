"""``checkpoint-inspector init``: explicit, idempotent schema creation and a read-only role."""

from __future__ import annotations

import sqlite3
import time
import uuid
from pathlib import Path
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from inspector.cli import main
from inspector.errors import StoreError
from inspector.record import Checkpointer
from inspector.store import open_store
from inspector.store.native import FORMAT_VERSION
from inspector.watch.pg_listen import make_pg_watcher
from tests.pg_plugin import PgServer


def tables_and_meta(url: str) -> tuple[set[str], list]:
    """Table names and the ci_meta rows of a database."""
    engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
    try:
        names = set(sa.inspect(engine).get_table_names())
        with engine.connect() as conn:
            rows = sorted(conn.exec_driver_sql("SELECT key, value FROM ci_meta"))
        return names, rows
    finally:
        engine.dispose()


@pytest.fixture
def viewer(pg_server: PgServer, pg_url: str) -> Iterator[str]:
    """A unique role name, removed (with its grants) after the test."""
    name = f"viewer_{uuid.uuid4().hex[:8]}"
    yield name
    engine = sa.create_engine(pg_url, isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)
    with engine.connect() as conn:
        if conn.exec_driver_sql(f"SELECT 1 FROM pg_roles WHERE rolname = '{name}'").first():
            conn.exec_driver_sql(f'DROP OWNED BY "{name}"')
    engine.dispose()
    pg_server.admin(f'DROP ROLE IF EXISTS "{name}"')


def test_init_is_idempotent(store_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", store_url]) == 0
    url = store_url if "://" in store_url else f"sqlite:///{store_url}"
    first = tables_and_meta(url)
    assert {"ci_meta", "ci_runs", "ci_checkpoints", "ci_blobs"} <= first[0]
    assert main(["init", store_url, "--json"]) == 0
    assert tables_and_meta(url) == first
    assert f'"format_version": {FORMAT_VERSION}' in capsys.readouterr().out
    with open_store(store_url) as store:
        assert store.info.kind == "native" and store.list_runs() == []


def test_init_refuses_a_foreign_database(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE people (name TEXT)")
    assert main(["init", str(path)]) == 2
    assert "another kind of database" in capsys.readouterr().err


def test_readonly_role_on_sqlite_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", str(tmp_path / "s.db"), "--readonly-role", "viewer"]) == 2
    assert "only on PostgreSQL" in capsys.readouterr().err
    assert not (tmp_path / "s.db").exists()


@pytest.mark.postgres
def test_readonly_role_can_browse_but_not_write(pg_url: str, viewer: str, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("VIEWER_PW", "s3cret'pw")
    assert main(["init", pg_url, "--readonly-role", viewer, "--readonly-password-env", "VIEWER_PW"]) == 0
    out = capsys.readouterr().out
    assert f"Read-only role {viewer} created" in out and "s3cret" not in out
    assert main(["init", pg_url, "--readonly-role", viewer]) == 0
    assert f"Read-only role {viewer} updated" in capsys.readouterr().out

    with Checkpointer(pg_url, name="agent on another machine") as cp:
        cp.save({"step": 1})
    viewer_url = sa.engine.make_url(pg_url).set(username=viewer, password="s3cret'pw").render_as_string(
        hide_password=False)
    with open_store(viewer_url) as store:
        assert [r.id for r in store.list_runs()] == [cp.run_id]
        assert store.load(f"{cp.run_id}:0").state == {"step": 1}
        # even without the engine's read-only option
        with pytest.raises(sa.exc.DBAPIError, match="read-only|permission denied"), store.engine.begin() as conn:
            conn.exec_driver_sql("SET TRANSACTION READ WRITE")
            conn.exec_driver_sql("DELETE FROM ci_blobs")
        got = []
        watcher = make_pg_watcher(store, got.append)
        assert watcher is not None
        watcher.start()
        try:
            deadline = time.monotonic() + 20
            while watcher.state != "listening" and time.monotonic() < deadline:
                time.sleep(0.05)
            assert watcher.state == "listening"
        finally:
            watcher.stop()
    with pytest.raises(StoreError):
        Checkpointer(viewer_url, name="must not write")
    assert main(["runs", viewer_url]) == 0
    assert cp.run_id in capsys.readouterr().out
    # tables a writer makes after the role was granted (the first pin makes the pins table)
    # are readable too: the checkpoints listing reads the pins
    assert main(["pin", pg_url, f"{cp.run_id}:0"]) == 0
    capsys.readouterr()
    assert main(["checkpoints", viewer_url, cp.run_id]) == 0
    with open_store(viewer_url) as store:
        assert [c.pinned for c in store.list_checkpoints(cp.run_id)] == [True]
    assert main(["info", viewer_url]) == 0
    out = capsys.readouterr().out
    assert "· read-only for you · 1 run\n" in out and "fork: no — the store is read-only for you (your database role may only read)" in out
    assert main(["info", pg_url]) == 0
    assert "· writable by you ·" in capsys.readouterr().out
