"""Tasks, Checks, heads and step names of LangGraph threads against LangGraph itself, on every
kind of store the inspector reads them from: a ``SqliteSaver`` database, that database imported
into a native store (``checkpoint-inspector import``), and a native store ``InspectorSaver``
wrote. Each is compared, for every checkpoint of the thread, with what ``get_state_history``
(and, for the head, ``get_state()``) of the graph on that very store reports.

* ``update_state`` stores its writes on the checkpoint it was applied to; they are no task of
  that checkpoint's step (LangGraph lists the step's tasks not run), unless the update was made
  as a node the step was to run (it then takes that task's id, and the task shows finished).
* The head shows the pending writes applied, as ``get_state()`` does, whoever stored it.
* ``durability="exit"`` saves no writes: a step is named from its own body, its change the
  channels that moved since its parent.
"""

from __future__ import annotations

import contextlib
import operator
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, Send, StateUpdate, interrupt
from typing_extensions import TypedDict

from inspector.cli import main
from inspector.record.langgraph import InspectorSaver
from inspector.store import open_store

from .expected import display

THREAD = "t"
KINDS = ("sqlite", "imported", "inspector")


# -- the graphs ------------------------------------------------------------------------------------
class Chain(TypedDict):
    hist: Annotated[list, operator.add]
    value: int


def build_chain(saver: Any) -> Any:
    """act → finish, paused before finish (a human edits the state there)."""
    g = StateGraph(Chain)
    g.add_node("act", lambda s: {"hist": ["act"], "value": 1})
    g.add_node("finish", lambda s: {"hist": ["finish"]})
    g.add_edge(START, "act")
    g.add_edge("act", "finish")
    g.add_edge("finish", END)
    return g.compile(checkpointer=saver, interrupt_before=["finish"])


class Approvals(TypedDict):
    items: list
    approved: Annotated[list, operator.add]


def _review(state: dict) -> dict:
    return {"approved": [f"{state['item']}={interrupt({'approve': state['item']})}"]}


def build_approvals(saver: Any) -> Any:
    """A Send per item to ``review``, each asking a question."""
    g = StateGraph(Approvals)
    g.add_node("plan", lambda s: {"approved": []})
    g.add_node("review", _review)
    g.add_node("publish", lambda s: {"approved": ["published"]})
    g.add_edge(START, "plan")
    g.add_conditional_edges("plan", lambda s: [Send("review", {"item": i}) for i in s["items"]], ["review"])
    g.add_edge("review", "publish")
    return g.compile(checkpointer=saver)


class Log(TypedDict):
    log: Annotated[list, operator.add]
    n: int


def _boom(state: dict) -> dict:
    raise ValueError("boom: the tool failed")


def build_failing(saver: Any) -> Any:
    """start → ok and boom in one step: ok finishes, boom raises."""
    g = StateGraph(Log)
    g.add_node("start", lambda s: {"log": ["start"]})
    g.add_node("ok", lambda s: {"log": ["ok"], "n": 7})
    g.add_node("boom", _boom)
    g.add_edge(START, "start")
    g.add_edge("start", "ok")
    g.add_edge("start", "boom")
    return g.compile(checkpointer=saver)


def build_three(saver: Any) -> Any:
    """first → second → third."""
    g = StateGraph(Log)
    g.add_node("first", lambda s: {"n": s["n"] + 1, "log": ["first"]})
    g.add_node("second", lambda s: {"n": s["n"] * 3, "log": ["second"]})
    g.add_node("third", lambda s: {"n": s["n"] - 2})
    g.add_edge(START, "first")
    g.add_edge("first", "second")
    g.add_edge("second", "third")
    return g.compile(checkpointer=saver)


def cfg(checkpoint_id: str | None = None) -> dict:
    conf = {"thread_id": THREAD}
    return {"configurable": conf if checkpoint_id is None else {**conf, "checkpoint_id": checkpoint_id}}


# -- the three stores --------------------------------------------------------------------------------
@contextlib.contextmanager
def written(kind: str, tmp_path: Path, build: Callable[[Any], Any],
            drive: Callable[[Any], None]) -> Iterator[tuple[Path, Any]]:
    """(the store the inspector opens, the graph on it, for LangGraph's own view) of a thread
    ``drive`` made."""
    if kind == "inspector":
        path = tmp_path / "ins.db"
        with InspectorSaver.from_conn_string(str(path)) as saver:
            graph = build(saver)
            drive(graph)
            yield path, graph
        return
    source = tmp_path / "lg.db"
    with contextlib.closing(sqlite3.connect(source, check_same_thread=False)) as conn:
        graph = build(SqliteSaver(conn))
        drive(graph)
        if kind == "imported":
            path = tmp_path / "imported.db"
            assert main(["import", str(source), str(path), "--apply"]) == 0
            yield path, graph
        else:
            yield source, graph


def _status(task: Any) -> str:
    if task.error is not None:
        return "errored"
    if task.result is not None:
        return "finished"
    return "interrupted" if task.interrupts else "pending"


def langgraph_view(graph: Any) -> dict[tuple[str, str], dict]:
    """LangGraph's view of every checkpoint of the thread by (namespace, id): each namespace's
    ``get_state_history``, its latest as ``get_state()`` shows it."""
    found = {}
    for ns in sorted({t.config["configurable"]["checkpoint_ns"] for t in graph.checkpointer.list(cfg())}):
        config = {"configurable": {"thread_id": THREAD, "checkpoint_ns": ns}}
        for n, snap in enumerate(graph.get_state_history(config)):
            if n == 0:
                snap = graph.get_state(config)
            tasks = sorted((t.id, t.name, _status(t)) for t in snap.tasks)
            nodes = [t for t in tasks if not t[1].startswith("__")]
            found[(ns, snap.config["configurable"]["checkpoint_id"])] = {
                "tasks": tasks, "next": sorted(snap.next),
                "checks": (sum(t[2] == "finished" for t in nodes), len(nodes)),
                "values": display(snap.values), "waiting": sorted(repr(i.value) for i in snap.interrupts),
                "latest": n == 0}
    return found


def inspector_view(path: Path) -> dict[tuple[str, str], dict]:
    """The inspector's view of the thread's checkpoints by (namespace, LangGraph id): what its
    listing (Checks, name, change), its snapshots (tasks, next, state, interrupts waiting) and
    its runs list (the Checks of a thread, or of a native store's lane, on its latest) say."""
    store = open_store(str(path))
    try:
        found: dict[tuple[str, str], dict] = {}
        for run in store.list_runs():
            mine = []
            for info in store.list_checkpoints(run.id):
                snap = store.load(info.id)
                key = (snap.meta["checkpoint_ns"], snap.meta["checkpoint_id"])
                mine.append(key)
                found[key] = {
                    "tasks": sorted((t["task_id"], t["node"], t["status"]) for t in snap.meta["tasks"]),
                    "next": sorted(snap.meta["next"]),
                    "listed": (info.checks_passed, info.checks_total),
                    "loaded": (snap.info.checks_passed, snap.info.checks_total),
                    "values": snap.state, "name": info.name, "change": info.change,
                    "waiting": sorted(repr(i["value"]) for i in snap.meta["interrupts"] if i.get("pending"))}
            lane = {ns for ns, _ in mine}
            ns = lane.pop() if len(lane) == 1 else ""
            found[(ns, max(cid for n, cid in mine if n == ns))]["run"] = (run.checks_passed, run.checks_total)
        return found
    finally:
        store.close()


def differences(want: dict[tuple[str, str], dict], got: dict[tuple[str, str], dict]) -> list[str]:
    """Where the inspector's view differs from LangGraph's, checkpoint by checkpoint."""
    problems = [f"checkpoints: LangGraph {sorted(want)} != inspector {sorted(got)}"] if set(want) != set(got) else []
    for key in sorted(set(want) & set(got)):
        w, g = want[key], got[key]
        fields = ["tasks", "next"] + (["values", "waiting"] if w["latest"] else [])
        problems += [f"{key} {k}: LangGraph {w[k]!r} != inspector {g[k]!r}" for k in fields if w[k] != g[k]]
        problems += [f"{key} {k} checks: LangGraph {w['checks']} != inspector {g[k]}"
                     for k in ("listed", "loaded", "run") if k in g and g[k] != w["checks"]]
    return problems


def compare(kind: str, tmp_path: Path, build: Callable[[Any], Any],
            drive: Callable[[Any], None]) -> dict[tuple[str, str], dict]:
    """The inspector's view of the thread on store ``kind``, checked against LangGraph's."""
    with written(kind, tmp_path, build, drive) as (path, graph):
        want = langgraph_view(graph)
    got = inspector_view(path)
    problems = differences(want, got)
    assert not problems, "\n".join(problems)
    return got


# -- 1. an update's writes are no task ---------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("as_node", [None, "act", "finish"])
def test_an_update_is_no_task_of_the_checkpoint_it_was_applied_to(kind: str, as_node: str | None,
                                                                  tmp_path: Path) -> None:
    """Paused before ``finish``, the state is edited (as the node that ran last, or named, or as
    ``finish`` itself: then ``finish`` counts as run, with the update's writes)."""
    def drive(graph: Any) -> None:
        graph.invoke({"hist": [], "value": 0}, cfg())
        graph.update_state(cfg(), {"value": 100}, as_node=as_node)

    got = compare(kind, tmp_path, build_chain, drive)
    paused = next(v for v in got.values() if v["name"] == "act")
    assert [(node, status) for _, node, status in paused["tasks"]] == \
        [("finish", "finished" if as_node == "finish" else "pending")]


@pytest.mark.parametrize("kind", KINDS)
def test_updates_of_one_superstep_and_a_copy_are_no_tasks(kind: str, tmp_path: Path) -> None:
    """Two updates applied together, then a ``__copy__`` of the step before and an update of
    the copy: every checkpoint's tasks (and ids) are LangGraph's."""
    def drive(graph: Any) -> None:
        graph.invoke({"hist": [], "value": 0}, cfg())
        graph.bulk_update_state(cfg(), [[StateUpdate({"value": 2}, "act"), StateUpdate({"hist": ["x"]}, "act")]])
        paused = next(s for s in graph.get_state_history(cfg()) if s.metadata["source"] == "loop" and s.next)
        copy = graph.update_state(paused.config, None, as_node="__copy__")
        graph.update_state(copy, {"value": 3}, as_node="act")

    compare(kind, tmp_path, build_chain, drive)


# -- 2. the head as get_state() shows it -------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
def test_the_head_of_a_partly_answered_send_shows_its_answers(kind: str, tmp_path: Path) -> None:
    """Two of three Send reviews answered: their writes are applied, one review is next, one
    question waits."""
    def drive(graph: Any) -> None:
        graph.invoke({"items": ["a", "b", "c"], "approved": []}, cfg())
        ids = {i.value["approve"]: i.id for i in graph.get_state(cfg()).interrupts}
        graph.invoke(Command(resume={ids["a"]: "yes", ids["b"]: "no"}), cfg())

    got = compare(kind, tmp_path, build_approvals, drive)
    head = next(v for v in got.values() if v["next"] == ["review"])
    assert head["values"]["approved"] == ["a=yes", "b=no"] and head["waiting"] == [repr({"approve": "c"})]


@pytest.mark.parametrize("kind", KINDS)
def test_the_head_of_a_failed_step_shows_the_finished_sibling(kind: str, tmp_path: Path) -> None:
    """``ok`` finished beside the failed ``boom``: its writes are applied, ``boom`` alone is next
    (``log`` is proven a reducer by the thread: ``start``'s write was added to the input's)."""
    def drive(graph: Any) -> None:
        with pytest.raises(ValueError):
            graph.invoke({"log": ["begin"], "n": 0}, cfg())

    got = compare(kind, tmp_path, build_failing, drive)
    head = next(v for v in got.values() if v["next"] == ["boom"])
    assert head["values"] == {"log": ["begin", "start", "ok"], "n": 7}


# -- L1. durability="exit" -------------------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
def test_steps_saved_without_writes_are_named_from_their_bodies(kind: str, tmp_path: Path) -> None:
    """``durability="exit"`` saves each run's last checkpoint only, with no writes: it is named by
    the node that ran last, and its change lists the channels that moved since its parent."""
    def drive(graph: Any) -> None:
        graph.invoke({"n": 1, "log": []}, cfg(), durability="exit")
        graph.invoke({"n": 5, "log": ["x"]}, cfg(), durability="exit")

    with written(kind, tmp_path, build_three, drive) as (path, graph):
        history = list(reversed(list(graph.get_state_history(cfg()))))
    got = inspector_view(path)
    assert len(history) == 2
    first, second = (got[("", s.config["configurable"]["checkpoint_id"])] for s in history)
    # the first: what its last step (third) wrote; the second: what moved since the first
    assert (first["name"], first["change"]) == ("third", "n")
    moved = sorted(k for k in history[1].values if history[1].values[k] != history[0].values.get(k))
    assert moved == ["log", "n"] and (second["name"], second["change"]) == ("third", "log, n")


# -- L4. a subgraph lane Command.PARENT left -------------------------------------------------------
class Handoff(TypedDict):
    msgs: Annotated[list, operator.add]
    handoff: str


def _hand_off(state: dict) -> Command:
    return Command(graph=Command.PARENT, goto="other", update={"msgs": ["from-sub"], "handoff": "sub->other"})


def build_handoff(saver: Any) -> Any:
    """A subgraph whose only node hands over to the parent's ``other`` (``Command.PARENT``)."""
    sub = StateGraph(Handoff)
    sub.add_node("agent", _hand_off)
    sub.add_edge(START, "agent")
    g = StateGraph(Handoff)
    g.add_node("first", lambda s: Command(goto="sub", update={"msgs": ["first"]}))
    g.add_node("sub", sub.compile(), destinations=("other",))
    g.add_node("other", lambda s: {"msgs": ["other"]})
    g.add_edge(START, "first")
    g.add_edge("other", END)
    return g.compile(checkpointer=saver)


@pytest.mark.parametrize("kind", KINDS)
def test_a_lane_left_by_command_parent_counts_its_node_not_run(kind: str, tmp_path: Path) -> None:
    """The subgraph lane's last checkpoint has ``agent`` next, never run in the lane (its
    ``Command.PARENT`` went to the parent): Checks 0/1 on its row, in its snapshot and (a native
    store's lane) in the runs list."""
    got = compare(kind, tmp_path, build_handoff, lambda graph: graph.invoke({"msgs": [], "handoff": ""}, cfg()))
    lane = [v for (ns, _), v in got.items() if ns and v["next"] == ["agent"]]
    assert len(lane) == 1 and lane[0]["listed"] == (0, 1)


# -- L2. reducers never written, on every store ----------------------------------------------------
class Fan(TypedDict):
    log: Annotated[list, operator.add]
    tags: Annotated[set, operator.or_]


def build_fan(saver: Any) -> Any:
    """start → b and c in one step, both writing ``log`` and ``tags`` (what proves them reducers)."""
    g = StateGraph(Fan)
    g.add_node("start", lambda s: {"log": ["start"]})
    g.add_node("b", lambda s: {"log": ["b"], "tags": {"b"}})
    g.add_node("c", lambda s: {"log": ["c"], "tags": {"c"}})
    g.add_edge(START, "start")
    g.add_edge("start", "b")
    g.add_edge("start", "c")
    return g.compile(checkpointer=saver)


@pytest.mark.parametrize("kind", KINDS)
def test_reducers_never_written_show_empty_with_the_note_on_every_store(kind: str, tmp_path: Path) -> None:
    """The input checkpoint holds neither reducer: LangGraph shows ``[]`` and ``set()``; so does
    the inspector, saying they are inferred, whichever store holds the thread."""
    with written(kind, tmp_path, build_fan, lambda graph: graph.invoke({}, cfg())) as (path, graph):
        history = list(graph.get_state_history(cfg()))
    store = open_store(str(path))
    try:
        run = next(r for r in store.list_runs() if r.name == THREAD)
        snaps = {(s := store.load(i.id)).meta["checkpoint_id"]: s for i in store.list_checkpoints(run.id)}
    finally:
        store.close()
    assert [s.config["configurable"]["checkpoint_id"] for s in history] == sorted(snaps, reverse=True)
    for want in history:
        assert snaps[want.config["configurable"]["checkpoint_id"]].state == display(want.values)
    first = snaps[history[-1].config["configurable"]["checkpoint_id"]]
    assert first.state == {"log": [], "tags": {"__type__": "builtins.set", "value": []}}
    assert first.meta["channel_kinds"] == "inferred"
    assert any(n.startswith("log, tags: shown empty as inferred reducers") for n in first.meta["notes"])
