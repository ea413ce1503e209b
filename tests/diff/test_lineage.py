"""Common ancestors: within a run, across forks (native), and across LangGraph branches."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TypedDict

import pytest

from inspector.diff import common_ancestor, describe_divergence
from inspector.diff.lineage import ancestry, segments
from inspector.store import open_store

from .conftest import Lineage


def ref(store, text: str):
    return store.get_checkpoint(text)


def test_within_one_run_the_earlier_checkpoint_is_the_ancestor(lineage_master: Lineage) -> None:
    with open_store(lineage_master.path) as store:
        a, b = ref(store, f"{lineage_master.original}:1"), ref(store, f"{lineage_master.original}:4")
        assert common_ancestor(store, a, b) == a
        assert common_ancestor(store, b, a) == a
        assert common_ancestor(store, b, b) == b
        assert describe_divergence(a, a, b) == f"{b.run_id}:4 descends from {a.run_id}:1."


def test_fork_against_its_original(lineage_master: Lineage) -> None:
    with open_store(lineage_master.path) as store:
        head = ref(store, f"{lineage_master.original}:5")
        forked = ref(store, f"{lineage_master.fork}:0")
        ancestor = common_ancestor(store, head, forked)
        assert (ancestor.run_id, ancestor.seq) == (lineage_master.original, 2)
        assert common_ancestor(store, forked, head) == ancestor
        assert describe_divergence(ancestor, head, forked) == (
            f"The branches diverged after {lineage_master.original}:2.")
        early = ref(store, f"{lineage_master.original}:1")
        assert common_ancestor(store, early, forked) == early      # the fork descends from :1


def test_fork_of_a_fork(lineage_master: Lineage) -> None:
    with open_store(lineage_master.path) as store:
        deep = ref(store, f"{lineage_master.fork_of_fork}:0")
        assert segments(store, deep) == [(lineage_master.fork_of_fork, 0), (lineage_master.fork, 0),
                                         (lineage_master.original, 2)]
        ancestor = common_ancestor(store, ref(store, f"{lineage_master.original}:4"), deep)
        assert (ancestor.run_id, ancestor.seq) == (lineage_master.original, 2)
        sibling = common_ancestor(store, ref(store, f"{lineage_master.fork}:0"), deep)
        assert (sibling.run_id, sibling.seq) == (lineage_master.fork, 0)


def test_unrelated_runs_share_no_ancestor(lineage_master: Lineage) -> None:
    with open_store(lineage_master.path) as store:
        a, b = ref(store, f"{lineage_master.other}:0"), ref(store, f"{lineage_master.fork}:0")
        assert common_ancestor(store, a, b) is None
        assert describe_divergence(None, a, b) == "The two checkpoints share no history."


# -- LangGraph: branches inside one thread -------------------------------------------------
class Count(TypedDict):
    n: int
    log: list


def _step(state: Count) -> dict:
    return {"n": state["n"] + 1, "log": state["log"] + [f"step {state['n']}"]}


@pytest.fixture(scope="module")
def langgraph_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real SqliteSaver database whose thread branches: update_state on an old checkpoint."""
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, StateGraph

    path = tmp_path_factory.mktemp("lg-diff") / "lg.db"
    builder = StateGraph(Count)
    builder.add_node("one", _step)
    builder.add_node("two", _step)
    builder.add_edge(START, "one")
    builder.add_edge("one", "two")
    builder.add_edge("two", END)
    conn = sqlite3.connect(str(path), check_same_thread=False)
    try:
        graph = builder.compile(checkpointer=SqliteSaver(conn))
        config = {"configurable": {"thread_id": "t1"}}
        graph.invoke({"n": 0, "log": []}, config)
        history = list(graph.get_state_history(config))
        before_two = next(s for s in history if s.next == ("two",))
        branch = graph.update_state(before_two.config, {"n": 100})
        graph.invoke(None, branch)
    finally:
        conn.close()
    return path


def test_langgraph_branches_meet_at_the_fork_point(langgraph_db: Path) -> None:
    with open_store(langgraph_db) as store:
        assert store.info.kind == "langgraph"
        checkpoints = store.list_checkpoints("t1")
        by_id = {c.id: c for c in checkpoints}
        children: dict = {}
        for c in checkpoints:
            children.setdefault(c.parent_id, []).append(c)
        fork_point = next(cid for cid, kids in children.items() if cid is not None and len(kids) == 2)
        leaves = [c for c in checkpoints if c.id not in children]
        assert len(leaves) == 2
        ancestor = common_ancestor(store, leaves[0], leaves[1])
        assert ancestor.id == fork_point == by_id[fork_point].id
        chain = ancestry(store, leaves[0])
        assert chain[0] == leaves[0] and chain[-1].parent_id is None
        assert common_ancestor(store, by_id[fork_point], leaves[1]).id == fork_point


def test_langgraph_a_step_and_its_parent_need_no_listing(langgraph_db: Path, monkeypatch) -> None:
    """The Diff tab compares a checkpoint with its parent: the parent is the ancestor, found
    without listing the thread (a second on a 50,000-checkpoint one); either order, and the
    answer the listing walk gives."""
    from inspector.diff.lineage import _graph_ancestor
    with open_store(langgraph_db) as store:
        checkpoints = store.list_checkpoints("t1")
        by_id = {c.id: c for c in checkpoints}
        pairs = [(by_id[c.parent_id], c) for c in checkpoints if c.parent_id in by_id]
        assert len(pairs) >= 5
        walked = [common_ancestor(store, a, b) for a, b in pairs]
        listed: list = []
        original = type(store).list_checkpoints
        monkeypatch.setattr(type(store), "list_checkpoints", lambda self, *a, **k: listed.append(a) or original(self, *a, **k))
        for (parent, child), before in zip(pairs, walked, strict=True):
            assert common_ancestor(store, parent, child) == parent == before
            assert common_ancestor(store, child, parent) == parent
        assert listed == []
        leaves = [c for c in checkpoints if c.id not in {x.parent_id for x in checkpoints}]
        assert _graph_ancestor(store, leaves[0], leaves[1]) is not None and listed    # others: walked
