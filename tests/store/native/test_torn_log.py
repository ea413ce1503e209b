"""A store copied with its -wal and -shm while its writer ran, the -wal torn (here: random
bytes, as a mutation fuzzer made it): SQLite's read-only reader of the -shm retried for ten
seconds and said "locking protocol", twice per command. The log holds nothing SQLite can read,
so the store is read from its database file alone, at once, untouched, and says so."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.record import Checkpointer
from inspector.store import dberrors, open_store, sqlite_ro


@pytest.fixture(scope="module")
def torn(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = tmp_path_factory.mktemp("src") / "src.db"
    with Checkpointer(src, name="base", agent="a") as cp:
        cp.save({"n": 1}, kind="tool", name="s")
    writer = sqlite3.connect(src)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute("UPDATE ci_runs SET name = 'renamed'")      # committed in the log only
    writer.commit()
    copied = tmp_path_factory.mktemp("copied") / "native.db"
    for suffix in ("", "-wal", "-shm"):                        # copied while the writer runs
        shutil.copyfile(f"{src}{suffix}", f"{copied}{suffix}")
    writer.close()
    wal = Path(f"{copied}-wal")
    wal.write_bytes(os.urandom(wal.stat().st_size))            # the copy's log torn
    return copied


def _files(path: Path) -> dict:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in path.parent.iterdir()}


def test_the_cli_reads_the_database_and_says_the_log_does_not_match_its_shm(torn: Path) -> None:
    before = _files(torn)
    runs = subprocess.run([sys.executable, "-m", "inspector", "runs", "--json", str(torn)],
                          capture_output=True, text=True, timeout=120)
    assert runs.returncode == 0, runs.stderr
    assert [r["name"] for r in json.loads(runs.stdout)] == ["base"]     # the torn log's rename is gone
    lines = runs.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("checkpoint-inspector: note: ")
    assert "does not match the -shm" in lines[0] and ".backup DST" in lines[0]
    assert _files(torn) == before


def test_the_store_and_the_gui_status_say_the_log_is_not_read(torn: Path, qtbot) -> None:
    from inspector.ui.widgets.store_status import StoreStatus

    before = _files(torn)
    with open_store(torn) as store:
        assert store.info.notice == sqlite_ro.GARBLED_NOTICE
        assert [r.name for r in store.list_runs()] == ["base"]
        status = StoreStatus()
        qtbot.addWidget(status)
        status.set_store(store.info)
        assert status.notice_chip.text() == "log not read"
    assert _files(torn) == before


def test_a_log_that_is_read_keeps_the_shared_mode(torn: Path, tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    with Checkpointer(path, name="live") as cp:
        cp.save({"n": 1})
        assert sqlite_ro.mode_of(path) == sqlite_ro.SHARED     # a writer's own log is no torn one
        with open_store(path) as store:
            assert store.info.notice == ""
            assert [r.name for r in store.list_runs()] == ["live"]


def test_locking_protocol_reads_as_a_sentence_that_says_what_to_do(torn: Path) -> None:
    """What SQLite itself says of that store (after its ten seconds), should it ever say it."""
    conn = sqlite3.connect(f"file:{torn}?mode=ro&readonly_shm=1", uri=True)
    with pytest.raises(sqlite3.OperationalError) as caught:
        conn.execute("SELECT 1 FROM sqlite_master").fetchall()
    conn.close()
    found = str(dberrors.translate_driver(caught.value, str(torn)))
    assert "-wal) does not match its index file (-shm)" in found and ".backup DST" in found
    assert "locking protocol" not in found
