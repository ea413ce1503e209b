"""``delete``: whole runs of a native store go (a dry run first), with what stops it — a running
run, a pinned checkpoint, forks made from it; an InspectorSaver thread goes whole, as
LangGraph's own ``delete_thread`` would, and LangGraph reads what is left."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.errors import RunNotFoundError, StoreError
from inspector.record import Checkpointer
from inspector.retention.delete import apply_delete, plan_delete
from inspector.store import open_store
from tests.conftest import store_files_digest
from tests.retention.stores import built_store, chat  # noqa: F401  (a fixture)
from tests.retention.test_native_prune import integrity


def _states(path: Path) -> dict:
    """Every checkpoint's state and task state, by id."""
    with open_store(path) as store:
        return {i.id: (s.state, s.tasks) for r in store.list_runs() for i in store.list_checkpoints(r.id)
                for s in [store.load(i.id)]}


def test_a_dry_run_lists_and_changes_nothing(built_store, capsys) -> None:
    path, ids = built_store
    before = store_files_digest(path)
    assert main(["delete", str(path), ids["short"]]) == 0
    out = capsys.readouterr().out
    assert ids["short"] in out and "Would delete 1 run (30 checkpoints) and 0 unreferenced pieces: " in out
    assert "of content). Dry run: nothing was changed" in out      # its content is the long run's too
    assert store_files_digest(path) == before


def test_deleting_removes_the_run_its_checkpoints_and_pieces_and_nothing_else(built_store, capsys) -> None:
    path, ids = built_store
    before = _states(path)
    with open_store(path) as reader:
        cursor = reader.cursor()
        doomed = {i.id for i in reader.list_checkpoints(ids["short"])}
        assert main(["delete", str(path), "short chat", "--apply"]) == 0
        assert "Deleted 1 run (30 checkpoints); collected " in capsys.readouterr().out
        assert reader.changes_since(cursor).removed              # a live window sees it go
        with pytest.raises(RunNotFoundError):
            reader.get_run(ids["short"])
    after = _states(path)
    assert set(after) == set(before) - doomed
    assert all(after[k] == before[k] for k in after)          # every other checkpoint reads as before
    found = integrity(path)                                   # no piece left that nothing reaches
    assert found["reachable"] == found["pieces"]


def test_what_stops_a_delete(built_store, tmp_path: Path, capsys) -> None:
    path, ids = built_store
    # forks made from a run: named too, or the run stays
    assert main(["delete", str(path), ids["long"], "--apply"]) == 2
    err = capsys.readouterr().err
    assert "forked from 'long chat'" in err and ids["fork"] in err and err.count("\n") == 1
    plan = plan_delete(path, [ids["long"], ids["fork"]])
    assert not plan.blockers and plan.checkpoints == 60 + 1 and {r.id for r in plan.runs} == {ids["long"], ids["fork"]}
    # a pinned checkpoint (the short run's #5, pinned by build's caller below)
    assert main(["pin", str(path), "short chat:5"]) == 0
    capsys.readouterr()
    assert main(["delete", str(path), ids["short"]]) == 2       # the dry run: the same sentence
    err = capsys.readouterr().err
    assert "Cannot delete 1 run: " in err and "has 1 pinned checkpoint; unpin it first" in err
    assert err.count("\n") == 1
    with pytest.raises(StoreError, match="pinned checkpoint"):
        apply_delete(path, [ids["short"]])
    # a run whose program is still writing to it (this process, beating)
    live = tmp_path / "live.db"
    with Checkpointer(live, name="still going") as cp:
        chat(cp, 3)
        assert main(["delete", str(live), cp.run_id, "--apply"]) == 2
        assert "is running; stop it first" in capsys.readouterr().err
        before = store_files_digest(live)
    assert main(["delete", str(live), "still going", "--apply"]) == 0      # finished: it may go
    assert before != store_files_digest(live)
    # not this project's store: one sentence
    lg = tmp_path / "lg.db"
    sqlite3.connect(lg).executescript("CREATE TABLE checkpoints (thread_id TEXT, checkpoint_ns TEXT, "
                                      "checkpoint_id TEXT, parent_checkpoint_id TEXT, type TEXT, checkpoint BLOB, "
                                      "metadata BLOB, PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id));"
                                      "CREATE TABLE writes (thread_id TEXT, checkpoint_ns TEXT, checkpoint_id TEXT, "
                                      "task_id TEXT, idx INTEGER, channel TEXT, type TEXT, value BLOB, "
                                      "PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx));")
    capsys.readouterr()
    assert main(["delete", str(lg), "anything", "--apply"]) == 2       # a LangGraph database: allowed only
    err = capsys.readouterr().err
    assert "--langgraph-write" in err and err.count("\n") == 1
    agents = tmp_path / "agents.db"         # a store of a framework that deletes its own sessions
    shutil.copy(Path(__file__).parents[1] / "frameworks" / "stores" / "agents_sqlite.db", agents)
    before = store_files_digest(agents)
    assert main(["delete", str(agents), "anything", "--apply"]) == 2
    err = capsys.readouterr().err
    assert "openai-agents store" in err and "deletes its own sessions" in err and err.count("\n") == 1
    assert store_files_digest(agents) == before


def test_an_inspector_saver_thread_goes_whole_and_langgraph_reads_the_rest(tmp_path: Path, capsys) -> None:
    from tests.lgcorpus import subgraph

    from inspector.record.langgraph import InspectorSaver

    path = tmp_path / "ours.db"
    with InspectorSaver.from_conn_string(str(path)) as saver:
        configs = subgraph.run(saver)
    threads = [c["configurable"]["thread_id"] for c in configs]
    with open_store(path) as store:
        lanes = [r for r in store.list_runs() if r.labels["langgraph"]["thread_id"] == threads[0]]
    assert len(lanes) >= 2                                    # the thread and its subgraph's lane
    sub = next(r for r in lanes if r.labels["langgraph"]["checkpoint_ns"])
    assert main(["delete", str(path), sub.id, "--json"]) == 0   # naming one lane plans the whole thread
    doc = json.loads(capsys.readouterr().out)
    assert doc["threads"] == [threads[0]] and {r["run"] for r in doc["runs"]} == {r.id for r in lanes}
    assert main(["delete", str(path), sub.id, "--apply"]) == 0
    with InspectorSaver.from_conn_string(str(path)) as saver:
        assert saver.get_tuple({"configurable": {"thread_id": threads[0]}}) is None
        assert list(saver.list({"configurable": {"thread_id": threads[0]}})) == []
        kept = saver.get_tuple({"configurable": {"thread_id": threads[1]}})
        assert kept is not None and kept.checkpoint["channel_values"]
    found = integrity(path)
    assert found["reachable"] == found["pieces"]


def test_a_crashed_run_may_go_and_reads_as_crashed(demo_store: Path, capsys) -> None:
    with open_store(demo_store) as store:
        crashed = next(r for r in store.list_runs() if "river" in r.name)
    assert crashed.status == "running"           # as written: its process was killed
    assert main(["delete", str(demo_store), crashed.id]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith(crashed.id))
    assert row.split()[-2] == "crashed"          # as runs shows it
    assert main(["delete", str(demo_store), crashed.id, "--apply"]) == 0
    with open_store(demo_store) as store:
        assert crashed.id not in {r.id for r in store.list_runs()}


def test_deleting_on_both_backends(store_url: str) -> None:
    kept, dropped = (_recorded(store_url, name, steps) for name, steps in (("keep", 6), ("drop", 9)))
    with open_store(store_url) as store:
        before = {i.id: store.load(i.id).state for i in store.list_checkpoints(kept)}
        cursor = store.cursor()
    plan = apply_delete(store_url, ["drop"])
    assert plan.applied and plan.checkpoints == 9 and [r.id for r in plan.runs] == [dropped] and plan.pieces > 0
    with open_store(store_url) as store:
        assert [r.id for r in store.list_runs()] == [kept]
        assert {i.id: store.load(i.id).state for i in store.list_checkpoints(kept)} == before
        assert store.changes_since(cursor).removed


def _recorded(target: str, name: str, steps: int) -> str:
    """A completed chat run of ``steps`` checkpoints; its id."""
    with Checkpointer(target, name=name) as cp:
        chat(cp, steps)
        return cp.run_id
