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
