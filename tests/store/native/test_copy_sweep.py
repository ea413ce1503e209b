"""A store read from a private copy (its -wal without -shm): the copy goes with the process,
and one left by a process that ended without its exit handlers (killed, or ``os._exit``) is
removed by the next process that makes a copy, never one of a process still running."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.record import Checkpointer
from inspector.store import sqlite_ro
from tests.hostile.corpus import _killed_writer as killed_writer

READ = """
import os, sys
from inspector.store import open_store
with open_store(sys.argv[1]) as store:
    print(len(store.list_runs()), flush=True)
    if sys.argv[2] == "die":
        os._exit(0)          # as a killed process: no exit handler runs
    if sys.argv[2] == "wait":
        sys.stdin.readline()
"""


@pytest.fixture
def unshared(tmp_path: Path) -> Path:
    work = tmp_path / "w"
    work.mkdir()
    path = work / "store.db"
    with Checkpointer(path, name="clean") as cp:
        cp.save({"n": 1})
    killed_writer(work)                  # checkpoints in the -wal
    copied = tmp_path / "store.db"
    for suffix in ("", "-wal"):          # copied without its -shm: read from a private copy
        shutil.copyfile(f"{path}{suffix}", f"{copied}{suffix}")
    return copied


def _copies(tmp: Path) -> list[str]:
    return sorted(p.name for p in tmp.glob(f"{sqlite_ro.COPY_PREFIX}*"))


def _read(store: Path, tmp: Path, how: str, **kw) -> subprocess.Popen:
    env = {**os.environ, "TMPDIR": str(tmp)}
    return subprocess.Popen([sys.executable, "-c", READ, str(store), how], env=env, text=True,
                            stdout=subprocess.PIPE, stdin=subprocess.PIPE, **kw)


def test_a_copy_left_by_a_dead_reader_is_swept_by_the_next_one(unshared: Path, tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    done = _read(unshared, tmp, "close")
    assert done.communicate(timeout=120)[0].strip() == "2" and done.returncode == 0
    assert _copies(tmp) == []                            # a clean exit removes its copy
    dead = _read(unshared, tmp, "die")
    assert dead.communicate(timeout=120)[0].strip() == "2"
    left = _copies(tmp)
    assert len(left) == 1 and left[0].startswith(f"{sqlite_ro.COPY_PREFIX}{dead.pid}-")
    waiting = _read(unshared, tmp, "wait")               # the next reader, kept running
    try:
        assert waiting.stdout.readline().strip() == "2"
        now = _copies(tmp)
        assert len(now) == 1 and now[0].startswith(f"{sqlite_ro.COPY_PREFIX}{waiting.pid}-")
        # a third reader does not take the copy of the one still running
        third = _read(unshared, tmp, "die")
        third.communicate(timeout=120)
        assert any(name.startswith(f"{sqlite_ro.COPY_PREFIX}{waiting.pid}-") for name in _copies(tmp))
    finally:
        waiting.communicate("\n", timeout=120)
    assert sqlite_ro.sweep_copies(tmp) == 1              # the third's, dead now
    assert _copies(tmp) == []


def test_the_sweep_keeps_what_is_not_a_dead_readers_copy(tmp_path: Path) -> None:
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True)
    dead_pid = int(gone.stdout)
    mine = tmp_path / f"{sqlite_ro.COPY_PREFIX}{os.getpid()}-a"
    dead = tmp_path / f"{sqlite_ro.COPY_PREFIX}{dead_pid}-b"
    other = tmp_path / "checkpoint-inspector-bench"
    odd = tmp_path / f"{sqlite_ro.COPY_PREFIX}x-c"
    target = tmp_path / "elsewhere"
    for folder in (mine, dead, other, odd, target):
        folder.mkdir()
        (folder / "store.db").write_bytes(b"x")
    link = tmp_path / f"{sqlite_ro.COPY_PREFIX}{dead_pid}-d"
    link.symlink_to(target)
    assert sqlite_ro.sweep_copies(tmp_path) == 1
    assert not dead.exists()
    assert all(p.exists() for p in (mine, other, odd, link, target / "store.db"))
