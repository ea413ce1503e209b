"""CrewAI checkpoints written by crewai 1.15: the JSON provider's folders and the SQLite provider's table."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from inspector.resume.frameworks import plan
from inspector.store import open_store
from inspector.store.frameworks import jsonb


@pytest.mark.parametrize("name,fork_parent", [("crewai_json", "main:0"), ("crewai_checkpoints.db", "main:0")])
def test_branches_are_runs_and_the_fork_points_at_its_source(store_copy, name: str, fork_parent: str) -> None:
    with open_store(store_copy(name)) as store:
        assert store.info.kind == "crewai"
        main, fork = store.get_run("main"), store.get_run("retry-outline")
        assert main.checkpoint_count == 3 and main.status == "completed"
        assert fork.parent_run == "main" and fork.parent_checkpoint == fork_parent and fork.status == "forked"
        names = [c.name for c in store.list_checkpoints("main")]
        assert names == ["research", "outline", "draft"]
        first = store.load("main:0")
        board = {t["title"]: t for t in first.tasks["tasks"]}
        assert [board[t]["status"] for t in ("research", "outline", "draft")] == ["done", "pending", "pending"]
        assert board["research"]["output"].startswith("Result") and board["research"]["agent"] == "Researcher"
        assert first.info.tasks_done == 1 and first.info.tasks_total == 3
        head = store.load("main:-1")
        assert all(t["status"] == "done" for t in head.tasks["tasks"])
        assert head.state["inputs"] in ({"topic": "tides"}, {"topic": "glaciers"})
        assert head.state["messages"][0]["role"] == "system"
        assert head.meta["trigger"] == "task_completed" and head.meta["crewai_version"] == "1.15.30"


def test_fork_and_resume_plans_use_crewai_in_the_users_environment(store_copy) -> None:
    path = store_copy("crewai_json")
    with open_store(path) as store:
        fork = plan(store, "main:0", "fork", python="/opt/venv/bin/python", cwd="/tmp", branch="try-2")
        assert fork.argv[:3] == ("/opt/venv/bin/python", fork.argv[1], "fork")
        assert fork.argv[1].endswith("crewai_runner.py")
        restore = fork.argv[fork.argv.index("--restore-from") + 1]
        assert Path(restore).is_file() and json.loads(Path(restore).read_text())["parent_id"] is None
        assert fork.argv[-2:] == ("--branch", "try-2") and "default LLM" in fork.describe()
        head = plan(store, "main:-1", "resume", cwd="/tmp")
        assert head.action == "resume" and "resume" in head.argv
        middle = plan(store, "main:1", "resume", cwd="/tmp")
        assert "fork" in middle.argv and "not the head" in middle.describe()


def test_sqlite_rows_are_jsonb_decoded_without_sqlite_json(store_copy) -> None:
    path = store_copy("crewai_checkpoints.db")
    conn = sqlite3.connect(path)
    first, blob = conn.execute("SELECT id, data FROM checkpoints ORDER BY rowid LIMIT 1").fetchone()
    conn.close()
    assert jsonb.looks_like_jsonb(blob)
    assert jsonb.decode(blob)["crewai_version"] == "1.15.30"
    with pytest.raises(jsonb.JsonbError):
        jsonb.decode(blob[:-7])
    with open_store(path) as store:
        argv = plan(store, "main:0", "fork", cwd="/tmp").argv
        assert argv[argv.index("--restore-from") + 1] == f"{path}#{first}"
        assert argv[argv.index("--provider") + 1] == "sqlite"


@pytest.mark.parametrize("damage, marker", [
    ("substr(data, 1, 500)", "damaged JSONB"),
    # a number where the snapshot belongs (found by putting one in every column of the
    # framework stores): runs, info and stuck once failed on len() of it
    ("3000000000", "where JSON text belongs"),
], ids=["truncated", "a-number"])
def test_damaged_snapshot_is_opaque_not_a_crash(store_copy, damage: str, marker: str) -> None:
    path = store_copy("crewai_checkpoints.db")
    store_copy.modified = True
    conn = sqlite3.connect(path)
    conn.execute(f"UPDATE checkpoints SET data = {damage} WHERE rowid = 2")
    conn.commit()
    conn.close()
    with open_store(path) as store:
        states = [json.dumps(store.load(c.id).state) for r in store.list_runs() for c in store.list_checkpoints(r.id)]
        assert sum(marker in s for s in states) == 1


def test_a_snapshot_written_into_a_branch_folder_wakes_the_listener(store_copy) -> None:
    import shutil
    import threading

    path = store_copy("crewai_json")
    store_copy.modified = True
    woke = threading.Event()
    with open_store(path) as store:
        cursor = store.cursor()
        stop = store.listen(woke.set)
        try:
            source = sorted((path / "main").glob("*.json"))[0]
            (path / "again").mkdir()
            shutil.copy(source, path / "again" / "20991231T000000_deadbeef_p-none.json")
            assert woke.wait(10)
        finally:
            stop()
        changes = store.changes_since(cursor)
        assert "again" in changes.run_ids or "main~2" in changes.run_ids
        assert len(changes.new_checkpoints) == 1


def test_the_runner_in_an_environment_without_crewai_says_so(store_copy, tmp_path: Path) -> None:
    import subprocess
    import sys

    from inspector.resume.launch import spawn

    with open_store(store_copy("crewai_json")) as store:
        launch = plan(store, "main:0", "fork", python=sys.executable, cwd=str(tmp_path)).launch()
    proc = spawn(launch, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 3 and b"crewai is not installed in this Python" in err
    assert b"Traceback" not in err


def test_python_and_cwd_given_once_are_remembered_for_the_store(store_copy, tmp_path: Path, monkeypatch) -> None:
    from inspector.resume.frameworks import remember

    monkeypatch.setenv("CHECKPOINT_INSPECTOR_CONFIG_DIR", str(tmp_path / "config"))
    with open_store(store_copy("crewai_json")) as store:
        assert plan(store, "main:0", "fork").cwd != str(tmp_path)
        saved = remember(store.info.url, "/opt/crew-env/bin/python", str(tmp_path))
        assert saved is not None and saved.is_file()
        again = plan(store, "main:0", "fork")   # what the GUI does: no options, the saved defaults
        assert again.argv[0] == "/opt/crew-env/bin/python" and again.cwd == str(tmp_path)
