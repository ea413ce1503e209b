"""diff_checkpoints on real stores: hashed native diff, task changes, three-way forks, LangGraph."""

from __future__ import annotations

import threading

import pytest

from inspector.diff import (ADDED, CHANGED, DiffCancelled, TextDelta, apply, checkpoint_change,
                            diff_checkpoints, diff_values, keeps_pieces, to_json)
from inspector.errors import StoreError
from inspector.store import open_store

from .conftest import Lineage


def test_adjacent_checkpoints(lineage_master: Lineage) -> None:
    run = lineage_master.original
    with open_store(lineage_master.path) as store:
        assert keeps_pieces(store)
        result = diff_checkpoints(store, f"{run}:2", f"{run}:3")
        old, new = store.load(f"{run}:2"), store.load(f"{run}:3")
    assert result.ancestor == result.a and result.three_way is None
    paths = [(c.op, c.display_path) for c in result.changes]
    assert (ADDED, "messages[3]") in paths and (CHANGED, "step") in paths and (CHANGED, "draft") in paths
    draft = next(c for c in result.changes if c.display_path == "draft")
    assert isinstance(draft.detail, TextDelta) and draft.detail.unit == "line" and draft.detail.added == 3
    assert apply(old.state, result.changes) == new.state
    assert result.changes == diff_values(old.state, new.state)
    kinds = {(c.task_id, c.kind) for c in result.task_changes}
    assert {("draft", "status"), ("draft", "progress"), ("draft", "check")} <= kinds
    assert result.summary == "1 task done, checks 3/4 → 4/4 · state: +1 msg, 2 changed"


def test_far_apart_checkpoints_summary_and_regression(lineage_master: Lineage) -> None:
    run = lineage_master.original
    with open_store(lineage_master.path) as store:
        result = diff_checkpoints(store, f"{run}:0", f"{run}:-1")
    assert result.b.seq == 5
    assert result.summary == ("2 tasks done, review approved on 'draft', checks 1/4 → 3/4, "
                              "1 regression · state: +5 msgs, 3 changed")
    with open_store(lineage_master.path) as store:
        regressed = diff_checkpoints(store, f"{run}:4", f"{run}:5")
    assert "1 regression" in regressed.summary
    (flip,) = [c for c in regressed.task_changes if c.regression]
    assert (flip.task_id, flip.name, flip.old, flip.new) == ("draft", "sources", True, False)


def test_equal_checkpoints_read_no_piece(lineage_master: Lineage) -> None:
    with open_store(lineage_master.path) as store:
        source = store.get_checkpoint(f"{lineage_master.original}:2")
        result = diff_checkpoints(store, source, source)
        assert result.empty and result.summary == "no changes" and result.stats["pieces_read"] == 0
        same_state = diff_checkpoints(store, f"{lineage_master.fork}:0", f"{lineage_master.fork_of_fork}:0")
    assert same_state.changes == () and same_state.stats["pieces_read"] <= 4   # only task pieces
    assert [(c.task_id, c.kind, c.new) for c in same_state.task_changes] == [("draft", "status", "blocked")]


def test_fork_against_original_is_three_way(lineage_master: Lineage) -> None:
    with open_store(lineage_master.path) as store:
        result = diff_checkpoints(store, f"{lineage_master.original}:5", f"{lineage_master.fork}:0")
        ancestor_state = store.load(f"{lineage_master.original}:2").state
        head = store.load(f"{lineage_master.original}:5").state
        forked = store.load(f"{lineage_master.fork}:0").state
    assert (result.ancestor.run_id, result.ancestor.seq) == (lineage_master.original, 2)
    three = result.three_way
    assert three is not None and three.ancestor == result.ancestor
    assert apply(ancestor_state, three.to_a) == head
    assert apply(ancestor_state, three.to_b) == forked
    assert three.both_changed == (("messages", 3),)
    assert ("plan",) in {c.path for c in three.to_b} - {c.path for c in three.to_a}
    assert apply(head, result.changes) == forked
    data = to_json(result)
    assert data["ancestor"]["seq"] == 2 and data["three_way"]["both_changed"]


def test_cancel_from_another_thread_stops_the_diff(lineage_master: Lineage) -> None:
    stop = threading.Event()
    stop.set()
    with open_store(lineage_master.path) as store, pytest.raises(DiffCancelled):
        diff_checkpoints(store, f"{lineage_master.original}:0", f"{lineage_master.original}:5",
                         cancel=stop.is_set)


def test_progress_reports_the_stages(lineage_master: Lineage) -> None:
    stages: list[str] = []
    with open_store(lineage_master.path) as store:
        diff_checkpoints(store, f"{lineage_master.original}:0", f"{lineage_master.fork}:0",
                         progress=lambda stage, done: stages.append(stage))
    assert "tasks" in stages and "ancestor" in stages


def test_bad_reference_is_a_store_error(lineage_master: Lineage) -> None:
    with open_store(lineage_master.path) as store, pytest.raises(StoreError):
        diff_checkpoints(store, f"{lineage_master.original}:0", f"{lineage_master.original}:99")


def test_timeline_label_for_adjacent_checkpoints(lineage_master: Lineage) -> None:
    run = lineage_master.original
    with open_store(lineage_master.path) as store:
        label = checkpoint_change(store, store.get_checkpoint(f"{run}:2"), store.get_checkpoint(f"{run}:3"))
    assert label.startswith("+1 msg · draft → done")


def test_langgraph_checkpoints_are_diffed_as_plain_values(tmp_path) -> None:
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, StateGraph
    from typing_extensions import TypedDict

    class State(TypedDict):
        messages: list
        plan: str

    def talk(state: State) -> dict:
        return {"messages": state["messages"] + [f"reply {len(state['messages'])}"], "plan": "answer"}

    builder = StateGraph(State)
    builder.add_node("talk", talk)
    builder.add_edge(START, "talk")
    builder.add_edge("talk", END)
    path = tmp_path / "lg.db"
    conn = sqlite3.connect(str(path), check_same_thread=False)
    try:
        graph = builder.compile(checkpointer=SqliteSaver(conn))
        graph.invoke({"messages": [f"m{i}" for i in range(30)], "plan": "think"},
                     {"configurable": {"thread_id": "chat"}})
    finally:
        conn.close()
    with open_store(path) as store:
        assert not keeps_pieces(store)
        result = diff_checkpoints(store, "chat:0", "chat:-1")
        old, new = store.load("chat:0"), store.load("chat:-1")
    assert apply(old.state, result.changes) == new.state
    assert result.changes and result.ancestor is not None and result.ancestor.id == result.a.id


def test_a_langgraph_channel_only_one_side_holds_counts_as_changed(corpus_sqlite) -> None:
    """A branch channel LangGraph clears (``branch:to:…`` present, then gone) is a change of its
    own channels, though its stored value was None."""
    from inspector.diff import diff_checkpoints
    with open_store(corpus_sqlite) as store:
        infos = [i for i in store.list_checkpoints("agent-1") if not i.lane]
        found = 0
        for old, new in zip(infos, infos[1:]):
            a, b = (store.load(i.id).meta.get("control_channels") or {} for i in (old, new))
            differs = sorted(k for k in a.keys() | b.keys() if (k in a) != (k in b) or a.get(k) != b.get(k))
            result = diff_checkpoints(store, old, new)
            if not result.changes and differs:
                assert list(result.hidden) == differs, (old.seq, new.seq)
                found += 1
    assert found      # the thread has such a step (the todo middleware's branch, cleared)


def test_a_state_holding_an_earlier_state_diffs(tmp_path) -> None:
    """An agent that keeps its last state in its state ("prev"): the new state's value is the
    very piece the other side's root is, whose list and map chunks the diff had read as items
    of its own; expanding the change walked into them and raised KeyError (found by fuzzing)."""
    from inspector.cli import main
    from inspector.diff.checkpoints import diff_checkpoints
    from inspector.record import Checkpointer
    s0 = {"messages": [{"role": "user", "content": f"msg {i} " * 5} for i in range(300)],
          "index": {f"key{i}": f"value {i}" for i in range(1500)}, "n": 0}
    s1 = {"messages": s0["messages"] + [{"role": "assistant", "content": "reply"}],
          "index": {**s0["index"], "key7": "changed"}, "n": 1, "prev": s0}
    path = tmp_path / "prev.db"
    with Checkpointer(path, name="prev") as cp:
        cp.save(s0)
        cp.save(s1)
    with open_store(path) as store:
        result = diff_checkpoints(store, f"{cp.run_id}:0", f"{cp.run_id}:1")
    by_path = {c.path: c for c in result.changes}
    assert by_path[("prev",)].op == ADDED and by_path[("prev",)].new == s0
    assert by_path[("index", "key7")].new == "changed" and by_path[("n",)].new == 1
    assert main(["diff", str(path), f"{cp.run_id}:0", f"{cp.run_id}:1", "--json"]) == 0
