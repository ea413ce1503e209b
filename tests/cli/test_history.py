"""``checkpoint-inspector history STORE RUN [--task ID] [--json]``: where a run's tasks changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.store import open_store
from tests.conftest import store_files_digest


def _run(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def _paused(path: Path):
    with open_store(path) as store:
        return next(r for r in store.list_runs() if r.status == "interrupted")


def test_history_of_one_task_names_each_checkpoint_and_change(demo_store: Path, capsys) -> None:
    run = _paused(demo_store)
    before = store_files_digest(demo_store)
    code, out, err = _run(capsys, "history", str(demo_store), run.name, "--task", "draft")
    assert code == 0 and not err
    lines = out.splitlines()
    assert lines[0].startswith(f"run {run.id} {run.name!r}: task 'draft' changed at ")
    assert "#0  input goal" in out and "+ task draft 'Draft the report' (pending)" in out
    assert "review requested → changes_requested by editor-bot" in out
    assert all("task draft" in line for line in lines if line.startswith("  "))   # only that task
    assert store_files_digest(demo_store) == before                               # a read changes nothing


def test_history_json_is_one_record_per_checkpoint(demo_store: Path, capsys) -> None:
    run = _paused(demo_store)
    code, out, _ = _run(capsys, "history", str(demo_store), run.id, "--json")
    records = json.loads(out)
    assert code == 0 and records and records[0]["checkpoint"] == f"{run.id}:0"
    assert [r["seq"] for r in records] == sorted(r["seq"] for r in records)
    review = [c for r in records for c in r["changes"] if c["kind"] == "review" and c["task"] == "draft"]
    assert review[-1]["new"] == "changes_requested" and review[-1]["reviewer"] == "editor-bot"


def test_an_unknown_task_or_run_is_one_sentence_and_exit_2(demo_store: Path, capsys) -> None:
    run = _paused(demo_store)
    for argv, words in ((("--task", "nope"), "has no task 'nope' at any checkpoint (its tasks: budget, draft"),
                        ((), None)):
        ref = run.id if words else "no-such-run"
        code, out, err = _run(capsys, "history", str(demo_store), ref, *argv)
        assert code == 2 and not out and err.count("\n") == 1 and "Traceback" not in err
        assert words is None or words in err


def test_a_run_without_task_state_says_so(tmp_path: Path, capsys) -> None:
    from inspector.record import Checkpointer
    store = tmp_path / "plain.db"
    with Checkpointer(store, name="no tasks", heartbeat=3600) as cp:
        cp.save({"step": 1})
        cp.save({"step": 2})
    code, out, _ = _run(capsys, "history", str(store), "no tasks")
    assert code == 0 and out == f"run {cp.run_id} 'no tasks' has no task state at any checkpoint\n"
    assert _run(capsys, "history", str(store), "no tasks", "--json")[1] == "[]\n"
