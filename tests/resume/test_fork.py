"""Fork: lineage, by-reference content, validated edits, and an untouched source run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector import cli
from inspector.errors import StoreError
from inspector.resume.edits import EditError
from inspector.resume.fork import fork, fork_with_edits, source_fingerprint
from inspector.store import open_store
from tests.resume.helpers import blob_count, copy_store, final_snapshot, raw_run_dump, run_agent


@pytest.fixture(scope="module")
def finished_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with one completed demo run (seed 1)."""
    store = tmp_path_factory.mktemp("fork") / "s.db"
    assert run_agent(store, "--seed", "1") == 0
    return store


@pytest.fixture
def store(finished_store: Path, tmp_path: Path) -> Path:
    """A private copy of ``finished_store``."""
    return copy_store(finished_store, tmp_path / "s.db")


def _source(store: Path):
    with open_store(store) as st:
        return st.list_runs()[0]


def test_fork_with_edit_resumed_to_a_different_outcome_leaves_source_byte_identical(
        store: Path, capsys) -> None:
    source = _source(store)
    before = raw_run_dump(store, source.id)
    assert cli.main(["fork", str(store), f"{source.id}:4", "--set", "approve_first=true",
                     "--reason", "skip the TODO marker"]) == 0
    child_id = capsys.readouterr().out.strip()
    with open_store(store) as st:
        child = st.get_run(child_id)
        head = st.load(f"{child_id}:0")
    assert (child.parent_run, child.status, child.fork_reason) == (source.id, "forked", "skip the TODO marker")
    assert child.parent_checkpoint == head.meta["source_checkpoint"]
    assert head.info.kind == "fork" and head.meta["edited"] == ["state"]
    assert head.state["approve_first"] is True and head.state["step"] == 4

    assert cli.main(["resume", str(store), f"{child_id}:-1", "--yes", "--wait"]) == 0
    assert "continue run " + child_id in capsys.readouterr().out
    done, original = final_snapshot(store, child_id), final_snapshot(store, source.id)
    assert done.info.kind == "final" and done.state["step"] == original.state["step"]
    assert "TODO" not in done.state["draft"] and "(Source: municipal pilot report.)" in original.state["draft"]
    assert done.state["draft"] != original.state["draft"]
    assert raw_run_dump(store, source.id) == before


def test_unedited_fork_shares_content_by_reference(store: Path) -> None:
    source = _source(store)
    pieces = blob_count(store)
    with open_store(store, readonly=False) as st:
        child = fork(st, f"{source.id}:10", reason="plain copy")
        same = fork(st, f"{source.id}:10", reason="same state", state=st.load(f"{source.id}:10").state)
        a, b = st.get_checkpoint(f"{source.id}:10"), st.get_checkpoint(f"{child.id}:0")
        assert (b.state_hash, b.tasks_hash) == (a.state_hash, a.tasks_hash)
        # the two forks are counted on their source checkpoint however it is read
        listed = {c.seq: c.branch_count for c in st.list_checkpoints(source.id)}
        assert listed[10] == a.branch_count == st.load(a.id).info.branch_count == 2
        assert sum(listed.values()) == 2 and b.branch_count == 0
        assert st.load(f"{same.id}:0").meta["edited"] == []        # an equal "edit" is no edit
    assert blob_count(store) == pieces


def test_edited_fork_stores_only_changed_pieces(store: Path) -> None:
    source = _source(store)
    with open_store(store, readonly=False) as st:
        big = st.load(f"{source.id}:-1").state
        pieces_before = blob_count(store)
        outcome = fork_with_edits(st, f"{source.id}:-1", reason="bigger budget",
                                  assignments=["budget.total=123"])
        edited = st.load(outcome.checkpoint_id).state
        assert outcome.run.parent_run == source.id and outcome.notes == ()
    assert edited["budget"]["total"] == 123 and edited["draft"] == big["draft"]
    assert blob_count(store) - pieces_before <= 2     # the root (and at most one changed child)


def test_task_state_edit_and_files(store: Path, tmp_path: Path, capsys) -> None:
    source = _source(store)
    with open_store(store) as st:
        snap = st.load(f"{source.id}:4")
    state_file = tmp_path / "state.json"
    state_file.write_text(json.dumps(dict(snap.state, topic="tidal energy")))
    tasks_file = tmp_path / "tasks.json"
    tasks_file.write_text(json.dumps(snap.tasks))
    assert cli.main(["fork", str(store), f"{source.id}:4", "--state-file", str(state_file),
                     "--tasks-file", str(tasks_file), "--set", "budget={\"total\": 1}",
                     "--set-task", "tasks[1].status=\"blocked\"", "--reason", "files"]) == 0
    child_id = capsys.readouterr().out.strip()
    with open_store(store) as st:
        head = st.load(f"{child_id}:0")
    assert head.state["topic"] == "tidal energy" and head.state["budget"] == {"total": 1}
    assert head.tasks["tasks"][1]["status"] == "blocked" and head.meta["edited"] == ["state", "tasks"]
    assert "blocked" in head.info.change


@pytest.mark.parametrize("args, message", [
    (["--set", "budget.total=12x"], "is not valid JSON"),
    (["--set", "messages[99].content=\"x\""], "out of range"),
    (["--set", "nothing.here=1"], "does not exist"),
    (["--set", "no-equals-sign"], "has no '='"),
    (["--set-task", "tasks[0].status=\"finished\""], "is not one of"),
    (["--set-task", "tasks[0].progress=2"], "outside 0..1"),
])
def test_invalid_edits_are_refused_with_the_reason(store: Path, capsys, args: list, message: str) -> None:
    source = _source(store)
    before = raw_run_dump(store, source.id)
    assert cli.main(["fork", str(store), f"{source.id}:4", *args, "--reason", "bad"]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and err.count("\n") == 1
    with open_store(store) as st:
        assert len(st.list_runs()) == 1                     # nothing was created
    assert raw_run_dump(store, source.id) == before


def test_fork_refusals(store: Path) -> None:
    source = _source(store)
    with open_store(store, readonly=False) as st:
        with pytest.raises(EditError, match="needs a reason"):
            fork(st, f"{source.id}:3", reason="  ")
        with pytest.raises(EditError, match="not a JSON value"):
            fork(st, f"{source.id}:3", reason="x", state={"a": {1, 2}})
        with pytest.raises(StoreError, match="no checkpoint"):
            fork(st, f"{source.id}:999", reason="x")
    with open_store(store) as ro, pytest.raises(StoreError, match="read-only"):
        fork(ro, f"{source.id}:3", reason="x")


def test_source_fingerprint_covers_content(store: Path) -> None:
    source = _source(store)
    with open_store(store, readonly=False) as st:
        whole, upto = source_fingerprint(st, source.id), source_fingerprint(st, source.id, 5)
        fork(st, f"{source.id}:5", reason="x")
        assert source_fingerprint(st, source.id) == whole and source_fingerprint(st, source.id, 5) == upto
        assert upto != whole and source_fingerprint(st, source.id, 4) != upto
