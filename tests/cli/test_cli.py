"""The headless CLI on real stores: output, JSON, and one-sentence errors with exit code 2."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.store import open_store
from tests.conftest import store_files_digest

CLI = [sys.executable, "-m", "inspector"]


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120)


def test_runs_checkpoints_show(demo_store: Path) -> None:
    before = store_files_digest(demo_store)
    runs = json.loads(_cli("runs", str(demo_store), "--json").stdout)
    with open_store(demo_store) as store:
        assert {r["id"] for r in runs} == {r.id for r in store.list_runs()}
        done = next(r for r in store.list_runs() if r.status == "completed" and r.labels.get("seed") == 1
                    and not r.parent_run)
        count = store.count_checkpoints(done.id)
    text = _cli("runs", str(demo_store)).stdout
    assert done.id in text and "completed" in text and "SCORE" in text
    cps = json.loads(_cli("checkpoints", str(demo_store), done.id, "--json").stdout)
    assert len(cps) == count and cps[0]["seq"] == 0
    shown = json.loads(_cli("show", str(demo_store), f"{done.id}:3", "--json").stdout)
    assert shown["checkpoint"]["seq"] == 3 and shown["state"]["step"] == 3
    assert shown["tasks"]["goal"].startswith("Write and publish")
    plain = _cli("show", str(demo_store), f"{done.id}:-1")
    assert plain.returncode == 0 and "tasks (" in plain.stdout and "state:" in plain.stdout
    assert store_files_digest(demo_store) == before


def _bad_inputs(tmp_path: Path) -> dict[str, Path]:
    random_bytes = tmp_path / "random.db"
    random_bytes.write_bytes(bytes(range(256)) * 64)
    foreign = tmp_path / "foreign.db"
    with sqlite3.connect(foreign) as conn:
        conn.execute("create table t (x)")
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    return {"missing": tmp_path / "missing.db", "directory": tmp_path, "random": random_bytes,
            "foreign": foreign, "empty": empty}


@pytest.mark.parametrize("kind", ["missing", "directory", "random", "foreign", "empty"])
def test_bad_store_one_sentence_exit_2(tmp_path: Path, kind: str) -> None:
    path = _bad_inputs(tmp_path)[kind]
    result = _cli("runs", str(path))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stderr.startswith("checkpoint-inspector: ")


def test_newer_format_and_corrupt_blob(demo_store: Path) -> None:
    with open_store(demo_store) as store:
        run = store.list_runs()[0]
        cp = store.get_checkpoint(f"{run.id}:0")
    with sqlite3.connect(demo_store) as conn:
        conn.execute("update ci_blobs set data = x'deadbeef', codec = 1 where hash = ?", (cp.state_hash,))
    corrupt = _cli("show", str(demo_store), f"{run.id}:0")
    assert corrupt.returncode == 2 and "Traceback" not in corrupt.stderr and "damaged" in corrupt.stderr
    with sqlite3.connect(demo_store) as conn:
        conn.execute("update ci_meta set value = '7' where key = 'format_version'")
    newer = _cli("runs", str(demo_store))
    assert newer.returncode == 2 and "newer" in newer.stderr


def test_bad_checkpoint_ref(demo_store: Path) -> None:
    result = _cli("show", str(demo_store), "nosuchrun:4")
    assert result.returncode == 2 and "no run 'nosuchrun'" in result.stderr.lower()


def test_python_dash_m_and_version() -> None:
    result = _cli("--version")
    assert result.returncode == 0 and "checkpoint-inspector" in result.stdout


def test_demo_without_a_display_says_so_before_building(tmp_path: Path) -> None:
    import os
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    result = subprocess.run([*CLI, "demo"], capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 2 and "--screenshot" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert not (tmp_path / "data").exists(), "nothing is built when nobody can watch"
