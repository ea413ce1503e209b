"""A store copied with its -wal but without -shm, too big to copy privately (over 1 GiB: a
sparse log here): it is read without its log, untouched, and both the CLI (one stderr line)
and the GUI's status chips say that the log's checkpoints are not shown and why."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.record import Checkpointer
from inspector.store import open_store, sqlite_ro
from tests.hostile.corpus import _killed_writer as killed_writer


@pytest.fixture(scope="module")
def big_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("wal")
    path = work / "store.db"
    with Checkpointer(path, name="clean") as cp:     # closed cleanly: in the database file
        for n in range(3):
            cp.save({"n": n})
    killed_writer(work)                               # run "killed": its checkpoints in the -wal
    copied = tmp_path_factory.mktemp("copied") / "store.db"
    for suffix in ("", "-wal"):          # copied without its -shm
        shutil.copyfile(f"{path}{suffix}", f"{copied}{suffix}")
    os.truncate(f"{copied}-wal", sqlite_ro.COPY_MAX + (64 << 20))   # sparse: 1.06 GiB, no disk used
    return copied


def _listing(path: Path) -> dict:
    return {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in path.parent.iterdir()}


def test_the_cli_lists_what_the_database_holds_and_says_the_log_is_not_read(big_log: Path) -> None:
    before = _listing(big_log)
    runs = subprocess.run([sys.executable, "-m", "inspector", "runs", "--json", str(big_log)],
                          capture_output=True, text=True, timeout=120)
    assert runs.returncode == 0, runs.stderr
    assert [r["name"] for r in json.loads(runs.stdout)] == ["clean"]     # the log's run is not shown
    lines = runs.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("checkpoint-inspector: note: ")
    assert "checkpoints committed in the log are not shown" in lines[0] and "live updates are off" in lines[0]
    assert "over 1 GiB" in lines[0]
    assert _listing(big_log) == before


def test_the_gui_status_shows_the_log_is_not_read(big_log: Path, qtbot) -> None:
    from inspector.ui.widgets.store_status import StoreStatus

    with open_store(big_log) as store:
        assert "not shown" in store.info.notice
        status = StoreStatus()
        qtbot.addWidget(status)
        status.set_store(store.info)
        assert status.notice_chip.text() == "log not read"
        assert "not shown" in status.notice_chip.toolTip()
        status.resize(1024, 24)
        status.grab().save(str(big_log.parent / "status.png"))


def test_a_small_log_without_shm_is_still_read_from_a_copy(big_log: Path, tmp_path: Path) -> None:
    small = tmp_path / "store.db"
    shutil.copyfile(big_log, small)
    with open(f"{big_log}-wal", "rb") as src, open(f"{small}-wal", "wb") as dst:
        dst.write(src.read(8 << 20))         # the log's real frames, not the sparse tail
    with open_store(small) as store:
        assert "private copy" in store.info.notice
        assert sorted(r.name for r in store.list_runs()) == ["clean", "killed"]


def test_a_reader_following_writers_runs_a_query_again_after_a_momentary_refusal(tmp_path) -> None:
    """With writers at work a ``readonly_shm`` reader is sometimes refused a plain SELECT
    ("attempt to write a readonly database") while the log's index is rewritten; the fleet test
    (eight writers, a live reader) hit it about once in 60 runs. Such a connection's cursors run
    the query again; any other error, a connection that does not follow writers, or a refusal
    that lasts, is raised as before."""
    import sqlite3

    import pytest

    from inspector.store import sqlite_ro

    class Conn:
        def __init__(self, mode: str) -> None:
            self.ci_signature = (mode,)

    def refused(times: int, error: str = "attempt to write a readonly database"):
        left = [times]

        def call(sql: str) -> str:
            if left[0]:
                left[0] -= 1
                raise sqlite3.OperationalError(error)
            return f"rows of {sql}"
        return call
    assert sqlite_ro.retrying(Conn(sqlite_ro.SHARED), refused(3), "SELECT 1") == "rows of SELECT 1"
    for conn, call in ((Conn(sqlite_ro.IMMUTABLE), refused(1)),                       # not following writers
                       (Conn(sqlite_ro.SHARED), refused(1, "database disk image is malformed")),
                       (Conn(sqlite_ro.SHARED), refused(sqlite_ro.READONLY_RETRIES + 1))):   # it lasts
        with pytest.raises(sqlite3.OperationalError):
            sqlite_ro.retrying(conn, call, "SELECT 1")
    # the store's own read connections (SQLAlchemy's and the read pool's) use such cursors
    from inspector.record import Checkpointer
    from inspector.store import open_store
    with Checkpointer(tmp_path / "live.db", name="r", heartbeat=3600) as cp:
        cp.save({"x": 1})
        with open_store(tmp_path / "live.db") as store:
            engine = store._sa_engine()
            with engine.connect() as conn:
                raw = conn.connection.dbapi_connection
                assert isinstance(raw.cursor(), sqlite_ro._ReadCursor) and raw.ci_signature[0] == sqlite_ro.SHARED
