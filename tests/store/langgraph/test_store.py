"""The adapter against the real langgraph package: runs, checkpoints, next nodes, tasks, lanes."""

from __future__ import annotations

import itertools

import pytest

from inspector.errors import StoreError
from inspector.store.langgraph.ids import parse_id
from inspector.taskstate import validate

from .lg_graphs import REVIEW_QUESTION, THREADS, config


def _lg_history(graph, thread_id):
    """Every checkpoint tuple of a thread (all namespaces), as SqliteSaver.list returns them."""
    return list(graph.checkpointer.list({"configurable": {"thread_id": thread_id}}))


def test_threads_are_runs_with_derived_status(lg_store):
    runs = {r.id: r for r in lg_store.list_runs()}
    assert set(runs) == set(THREADS)
    assert {k: r.status for k, r in runs.items()} == {
        "thread-A": "interrupted", "thread-B": "completed", "thread-C": "completed",
        "thread-D": "completed", "thread-E": "failed"}
    assert runs["thread-E"].last_error == "RuntimeError('execute failed on purpose')"
    assert all(r.agent == "langgraph" and r.name == r.id for r in runs.values())
    assert runs["thread-C"].tasks_done == runs["thread-C"].tasks_total == 2
    assert lg_store.count_runs() == 5
    assert lg_store.count_runs(statuses={"completed"}) == 3
    assert [r.id for r in lg_store.list_runs(text="read-a")] == ["thread-A"]
    assert lg_store.get_run("thread-A").status == "interrupted"
    updated = [r.updated for r in lg_store.list_runs()]
    assert updated == sorted(updated, reverse=True)


def test_unknown_thread_is_a_store_error(lg_store):
    with pytest.raises(StoreError, match="No thread"):
        lg_store.get_run("nope")
    with pytest.raises(StoreError):
        lg_store.get_checkpoint("nope:0")


@pytest.mark.parametrize("thread_id", sorted(THREADS))
def test_checkpoint_count_matches_sqlitesaver_list(lg_store, lg_graph, thread_id):
    history = _lg_history(lg_graph, thread_id)
    infos = lg_store.list_checkpoints(thread_id)
    assert len(infos) == len(history) == lg_store.count_checkpoints(thread_id)
    assert lg_store.get_run(thread_id).checkpoint_count == len(history)
    assert [c.seq for c in infos] == list(range(len(infos)))
    ours = {(parse_id(c.id).ns, parse_id(c.id).checkpoint_id) for c in infos}
    theirs = {(t.config["configurable"]["checkpoint_ns"], t.config["configurable"]["checkpoint_id"])
              for t in history}
    assert ours == theirs
    by_key = {(t.config["configurable"]["checkpoint_ns"], t.config["configurable"]["checkpoint_id"]): t
              for t in history}
    for info in infos:
        key = parse_id(info.id)
        tup = by_key[(key.ns, key.checkpoint_id)]
        assert info.kind == tup.metadata["source"]
        assert info.lane == key.ns


@pytest.mark.parametrize("thread_id", sorted(THREADS))
def test_next_tasks_and_interrupts_match_langgraph(lg_store, lg_graph, thread_id):
    for tup in _lg_history(lg_graph, thread_id):
        conf = tup.config["configurable"]
        expected = lg_graph.get_state(config(thread_id, conf["checkpoint_id"], conf["checkpoint_ns"]))
        ref = (f"{thread_id}@{conf['checkpoint_ns']}@{conf['checkpoint_id']}" if conf["checkpoint_ns"]
               else f"{thread_id}@{conf['checkpoint_id']}")
        snap = lg_store.load(ref)
        assert tuple(snap.meta["next"]) == expected.next, ref
        lg_status = {}
        for task in expected.tasks:
            lg_status[task.name] = ("finished" if task.result is not None else
                                    "errored" if task.error else
                                    "interrupted" if task.interrupts else "pending")
        assert {t["node"]: t["status"] for t in snap.meta["tasks"]} == lg_status, ref
        ours_with_ids = {t["task_id"] for t in snap.meta["tasks"] if t["task_id"]}
        assert ours_with_ids <= {t.id for t in expected.tasks}
        lg_interrupts = {i.id: i.value for t in expected.tasks for i in t.interrupts}
        assert {i["id"]: i["value"] for i in snap.meta["interrupts"]} == lg_interrupts
        assert snap.meta["step"] == tup.metadata["step"]
        assert snap.meta["ts"] == tup.checkpoint["ts"]
        assert abs(snap.info.created - _iso_time(tup.checkpoint["ts"])) < 0.01


def _iso_time(text: str) -> float:
    import datetime as dt
    return dt.datetime.fromisoformat(text).timestamp()


def test_interrupted_head_shows_the_question(lg_store):
    snap = lg_store.load("thread-A:-1")
    assert snap.meta["next"] == ["review"]
    (intr,) = snap.meta["interrupts"]
    assert intr["pending"] is True and intr["node"] == "review"
    assert intr["question"] == REVIEW_QUESTION
    (task,) = [t for t in snap.tasks["tasks"] if t["id"] == "node:review"]
    assert task["status"] == "blocked"
    assert task["review"] == {"status": "requested", "reviewer": None, "note": REVIEW_QUESTION}


def test_answered_interrupt_is_finished_and_not_pending(lg_store):
    infos = lg_store.list_checkpoints("thread-B")
    before_review = next(c for c in infos if c.lane == "" and c.name == "planner")
    snap = lg_store.load(before_review.id)
    (task,) = snap.meta["tasks"]
    assert task["node"] == "review" and task["status"] == "finished"
    assert [i["pending"] for i in snap.meta["interrupts"]] == [False]
    resume = [w for w in snap.meta["writes"] if w["channel"] == "__resume__"]
    assert {w["task_id"] for w in resume} >= {"00000000-0000-0000-0000-000000000000"}


def test_error_write_marks_the_task_errored(lg_store):
    snap = lg_store.load("thread-E:-1")
    (task,) = snap.meta["tasks"]
    assert (task["node"], task["status"]) == ("execute", "errored")
    assert snap.meta["errors"][0]["error"] == "RuntimeError('execute failed on purpose')"
    (node_task,) = [t for t in snap.tasks["tasks"] if t["id"] == "node:execute"]
    assert node_task["status"] == "failed"
    assert node_task["checks"][0]["passed"] is False
    assert snap.info.checks_total == 1 and snap.info.checks_passed == 0


def test_names_kinds_and_changes_come_from_parent_writes(lg_store):
    infos = lg_store.list_checkpoints("thread-C")
    root = [(c.kind, c.name) for c in infos if c.lane == ""]
    assert root == [("input", "input"), ("loop", "__start__"), ("loop", "prepare"),
                    ("loop", "planner"), ("loop", "execute")]
    sub = [(c.kind, c.name) for c in infos if c.lane]
    assert sub == [("input", "input"), ("loop", "__start__"), ("loop", "draft"), ("loop", "refine")]
    planner = next(c for c in infos if c.name == "planner")
    assert planner.change == "messages, plan, todos"
    assert all(c.size > 0 for c in infos)


def test_subgraph_lane_links_to_the_step_that_ran_it(lg_store):
    infos = lg_store.list_checkpoints("thread-A")
    lanes = {c.lane for c in infos}
    assert len(lanes) == 2
    sub = [c for c in infos if c.lane]
    assert sub[0].lane.startswith("planner:")
    task_id = sub[0].lane.split(":", 1)[1]
    by_id = {c.id: c for c in infos}
    start_step = by_id[sub[0].parent_id]
    assert start_step.lane == "" and start_step.name == "prepare"
    step_snap = lg_store.load(start_step.id)
    assert step_snap.meta["subgraphs"] == [{"lane": sub[0].lane, "node": "planner", "task_id": task_id}]
    assert [t["task_id"] for t in step_snap.meta["tasks"]] == [task_id]
    assert lg_store.load(sub[0].id).meta["parent_step"] == start_step.id
    # interleaved by time: the lane sits between the step that started it and the next root step
    seqs = [c.seq for c in sub]
    after = next(c for c in infos if c.lane == "" and c.seq > start_step.seq)
    assert start_step.seq < min(seqs) and max(seqs) < after.seq
    assert all(b.parent_id == a.id for a, b in itertools.pairwise(sub))


def test_update_state_fork_makes_a_branch(lg_store, lg_graph):
    infos = lg_store.list_checkpoints("thread-D")
    branched = [c for c in infos if c.branch_count]
    assert len(branched) == 1 and branched[0].branch_count == 1
    children = [c for c in infos if c.parent_id == branched[0].id]
    assert sorted(c.kind for c in children) == ["loop", "update"]
    update = next(c for c in children if c.kind == "update")
    assert update.name == "update"
    snap = lg_store.load(update.id)
    assert snap.state["priority"] == "low"
    assert snap.meta["next"] == ["execute"]
    head = lg_store.get_checkpoint("thread-D:-1")
    assert head.parent_id == update.id


def test_ids_round_trip_and_run_seq_refs(lg_store):
    infos = lg_store.list_checkpoints("thread-A")
    for info in infos:
        assert lg_store.get_checkpoint(info.id) == info
        assert lg_store.get_checkpoint(f"thread-A:{info.seq}") == info
        assert lg_store.load(info.id).info.id == info.id
    assert lg_store.get_checkpoint("thread-A:-1") == infos[-1]
    bare = parse_id(infos[2].id).checkpoint_id
    assert lg_store.get_checkpoint(bare) == infos[2]
    with pytest.raises(StoreError):
        lg_store.get_checkpoint(f"thread-A:{len(infos)}")
    with pytest.raises(StoreError):
        lg_store.get_checkpoint("thread-A@00000000-0000-0000-0000-00000000abcd")
    with pytest.raises(StoreError):
        lg_store.get_checkpoint(7)


def test_paging_gives_the_same_infos(lg_store):
    full = lg_store.list_checkpoints("thread-D")
    pages = []
    after = -1
    while page := lg_store.list_checkpoints("thread-D", after_seq=after, limit=3):
        pages += page
        after = page[-1].seq
    assert pages == full
    assert lg_store.checkpoints_at("thread-D", [0, 5]) == [full[0], full[5]]


def test_state_is_plain_json_with_messages_and_ext_types(lg_store):
    import json
    snap = lg_store.load("thread-C:-1")
    json.dumps(snap.state)  # JSON-able
    json.dumps(snap.meta)
    state = snap.state
    human, ai_plan, ai_done = state["messages"]
    assert human["__type__"] == "langchain_core.messages.human.HumanMessage"
    assert human["content"] == "Tidy the wiki" and human["type"] == "human"
    assert ai_done["__type__"] == "langchain_core.messages.ai.AIMessage"
    assert state["started"] == {"__type__": "datetime.datetime", "value": "2026-01-02T03:04:05+00:00"}
    assert state["tags"] == {"__type__": "builtins.set", "value": ["alpha", "beta"]}
    assert state["run_uid"] == {"__type__": "uuid.UUID", "value": "12345678-1234-5678-1234-567812345678"}
    assert state["stage"]["__type__"].endswith("lg_graphs.Stage") and state["stage"]["value"] == "done"
    assert state["note"]["text"] == "remember" and state["note"]["weight"] == 2
    assert not any(k.startswith(("branch:to:", "__")) for k in state)
    assert snap.meta["control_channels"] is not None
    assert snap.meta["channel_sizes"]["messages"] > 0


def test_control_channels_hidden_by_default_shown_on_request(lg_master):
    from .conftest import open_ro
    with open_ro(lg_master) as hidden, open_ro(lg_master, show_control=True) as shown:
        a = hidden.load("thread-A:-1")
        b = shown.load("thread-A:-1")
    assert "branch:to:review" not in a.state and "branch:to:review" in a.meta["control_channels"]
    assert "branch:to:review" in b.state


def test_task_state_maps_todos_and_goal(lg_store):
    snap = lg_store.load("thread-B:-1")
    assert validate(snap.tasks) == snap.tasks
    assert snap.tasks["goal"] == "Plan the offsite"
    todos = [t for t in snap.tasks["tasks"] if t["id"].startswith("todo-")]
    assert [(t["title"], t["status"]) for t in todos] == [("collect data", "done"), ("write report", "done")]
    assert (snap.info.tasks_done, snap.info.tasks_total) == (2, 2)
    mid = lg_store.load("thread-A:-1")
    statuses = [t["status"] for t in mid.tasks["tasks"] if t["id"].startswith("todo-")]
    assert statuses == ["in_progress", "pending"]


def test_custom_task_channel(lg_master):
    from .conftest import open_ro
    with open_ro(lg_master, task_channel="plan") as store:
        snap = store.load("thread-B:-1")
        assert not [t for t in snap.tasks["tasks"] if t["id"].startswith("todo-")]
        assert store.get_run("thread-B").tasks_total == 0


def test_listing_without_sqlite_json_functions_is_identical(lg_master):
    from inspector.store.langgraph.sqlite_reader import _LIST, _META_PLAIN

    from .conftest import open_ro
    with open_ro(lg_master) as json1, open_ro(lg_master) as plain:
        plain.reader._list_sql = _LIST.format(meta=_META_PLAIN)  # as on a SQLite without JSON1
        for thread in THREADS:
            assert plain.list_checkpoints(thread) == json1.list_checkpoints(thread)


def test_a_langgraph_database_gets_no_native_preview(lg_master):
    from inspector.store.native.preview import preview_runs

    assert preview_runs(str(lg_master), 10) is None   # the window then opens it the usual way
