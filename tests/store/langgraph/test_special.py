"""Static breakpoints (running vs interrupted) and DeltaChannel values rebuilt from writes."""

from __future__ import annotations

import sqlite3

from langgraph.checkpoint.sqlite import SqliteSaver

from .conftest import open_ro
from .lg_graphs import build_delta_graph, build_graph, config


def test_waiting_thread_is_running_when_recent_else_interrupted(tmp_path):
    db = tmp_path / "bp.db"
    conn = sqlite3.connect(str(db), check_same_thread=False)
    graph = build_graph(SqliteSaver(conn), interrupt_before=["execute"])
    from langchain_core.messages import HumanMessage
    graph.invoke({"messages": [HumanMessage(content="go")], "priority": "low"}, config("bp"))
    assert graph.get_state(config("bp")).next == ("execute",)
    conn.close()
    with open_ro(db) as recent, open_ro(db, running_window=0) as stale:
        assert recent.get_run("bp").status == "running"
        assert stale.get_run("bp").status == "interrupted"
        snap = recent.load("bp:-1")
        assert snap.meta["next"] == ["execute"]
        assert [(t["node"], t["status"]) for t in snap.meta["tasks"]] == [("execute", "pending")]


def test_delta_channel_values_are_rebuilt_and_flagged(tmp_path):
    db = tmp_path / "delta.db"
    conn = sqlite3.connect(str(db), check_same_thread=False)
    graph = build_delta_graph(SqliteSaver(conn))
    graph.invoke({"items": ["seed"], "n": 0}, config("d"))
    expected = {s.config["configurable"]["checkpoint_id"]: s.values.get("items", [])
                for s in graph.get_state_history(config("d"))}
    conn.close()
    with open_ro(db) as store:
        infos = store.list_checkpoints("d")
        assert len(infos) == len(expected) == 8
        snapshots, rebuilt = 0, 0
        for info in infos:
            snap = store.load(info.id)
            assert snap.state.get("items", []) == expected[snap.meta["checkpoint_id"]], info.seq
            if snap.meta["delta_snapshots"]:
                snapshots += 1
                assert not snap.meta["reconstructed"]
            if snap.meta["reconstructed"]:
                rebuilt += 1
                assert snap.meta["reconstructed"]["items"]["reconstructed"] is True
        assert snapshots == 2 and rebuilt == 6


def test_odd_thread_ids_work_as_runs_and_refs(tmp_path):
    from langchain_core.messages import HumanMessage
    db = tmp_path / "odd.db"
    odd = "user: 42@team %1"
    conn = sqlite3.connect(str(db), check_same_thread=False)
    graph = build_graph(SqliteSaver(conn))
    graph.invoke({"messages": [HumanMessage(content="x")], "priority": "low"}, config(odd))
    conn.close()
    with open_ro(db) as store:
        (run,) = store.list_runs()
        assert run.id == odd and run.status == "completed"
        infos = store.list_checkpoints(odd)
        for info in infos:
            assert store.get_checkpoint(info.id) == info
            assert store.get_checkpoint(f"{odd}:{info.seq}") == info
        assert store.load(f"{odd}:-1").state["priority"] == "low"
