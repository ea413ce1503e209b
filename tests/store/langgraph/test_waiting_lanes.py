"""A LangGraph thread waiting at ``interrupt()`` in a native store (written by ``InspectorSaver``
or imported) says so as the same thread in LangGraph's ``SqliteSaver`` file does: its Change
column (``waiting: …``), ``show``, and the run's reason (the window's banner). LangGraph's own
``get_state`` on the saver is the oracle for what waits."""

from __future__ import annotations

import operator
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, StateGraph
from langgraph.types import Command, interrupt

from inspector.cli import main
from inspector.record.langgraph import InspectorSaver
from inspector.store import open_store
from inspector.store.native.lanes import LaneStore

QUESTION = "Approve the plan?"
CFG: Any = {"configurable": {"thread_id": "thread-1"}}
FIRST = {"n": 0, "log": []}


class State(TypedDict, total=False):
    n: int
    log: Annotated[list, operator.add]
    answer: str


def _step(state: State) -> dict:
    return {"n": state["n"] + 1, "log": [f"step {state['n'] + 1}"]}


def _ask(state: State) -> dict:
    answer = interrupt(QUESTION)
    return {"answer": answer, "log": [f"answer {answer}"]}


def build(saver: Any) -> Any:
    """step → step → ask (waits at interrupt()) → end."""
    graph = StateGraph(State)
    graph.add_node("step", _step)
    graph.add_node("ask", _ask)
    graph.add_edge(START, "step")
    graph.add_conditional_edges("step", lambda s: "ask" if s["n"] >= 2 else "step", ["step", "ask"])
    return graph.compile(checkpointer=saver)


def _timeline(path: Path, run: str | None = None) -> list[tuple[str, str]]:
    """(name, change) of each checkpoint of the thread (its run in a native store)."""
    with open_store(path) as store:
        run_id = run or store.list_runs()[0].id
        return [(c.name, c.change) for c in store.list_checkpoints(run_id)]


def _run(path: Path) -> Any:
    with open_store(path) as store:
        return store.list_runs()[0]


@pytest.fixture
def waiting(tmp_path: Path) -> Iterator[tuple[Path, Path, Any]]:
    """(SqliteSaver file, InspectorSaver store, LangGraph's get_state on the latter) of the
    same thread, waiting at the interrupt."""
    theirs, ours = tmp_path / "lg.db", tmp_path / "ours.db"
    with SqliteSaver.from_conn_string(str(theirs)) as saver:
        build(saver).invoke(FIRST, CFG)
    with InspectorSaver.from_conn_string(str(ours)) as saver:
        graph = build(saver)
        graph.invoke(FIRST, CFG)
        state = graph.get_state(CFG)
    yield theirs, ours, state


def test_a_waiting_thread_says_what_it_asks_as_in_langgraphs_own_file(waiting, capsys) -> None:
    theirs, ours, state = waiting
    assert state.next == ("ask",) and [i.value for t in state.tasks for i in t.interrupts] == [QUESTION]
    expected = _timeline(theirs, "thread-1")
    assert expected[-1][1].startswith(f"waiting: {QUESTION} \u00b7 ")
    assert _timeline(ours) == expected
    run = _run(ours)
    assert run.status == "interrupted"
    first, how = run.last_error.splitlines()
    assert first == f"waiting for an answer at interrupt() in node ask: {QUESTION}"
    assert "graph.invoke(Command(resume=" in how and "'thread-1'" in how
    with open_store(ours) as store:       # what it shows agrees with LangGraph's get_state
        head = store.load(f"{run.id}:-1")
    asks = [(i["node"], i["question"]) for i in head.meta["interrupts"] if i["pending"]]
    assert asks == [(t.name, i.value) for t in state.tasks for i in t.interrupts]
    assert head.meta["next"] == list(state.next)
    capsys.readouterr()
    assert main(["show", str(ours), "thread-1"]) == 0
    assert f"change: waiting: {QUESTION} \u00b7 " in capsys.readouterr().out


def test_an_imported_waiting_thread_says_it_too(waiting, tmp_path: Path) -> None:
    theirs, ours, _ = waiting
    copy = tmp_path / "imported.db"
    assert main(["import", str(theirs), str(copy), "--apply"]) == 0
    assert _timeline(copy) == _timeline(theirs, "thread-1")
    assert _run(copy).status == "interrupted" and _run(copy).last_error == _run(ours).last_error


def test_answered_it_waits_no_more(waiting) -> None:
    """Answered by another saver (as a new process answers it): the step that waited no longer
    says so, as in LangGraph's own file answered the same way."""
    theirs, ours, _ = waiting
    assert _timeline(ours)[-1][1].startswith(f"waiting: {QUESTION}")
    with SqliteSaver.from_conn_string(str(theirs)) as saver:
        build(saver).invoke(Command(resume="yes"), CFG)
    with InspectorSaver.from_conn_string(str(ours)) as saver:
        graph = build(saver)
        graph.invoke(Command(resume="yes"), CFG)
        assert graph.get_state(CFG).next == ()
    expected = _timeline(theirs, "thread-1")
    assert not [c for _, c in expected if c.startswith("waiting: ")]
    assert _timeline(ours) == expected
    assert _run(ours).status == "completed" and _run(ours).last_error is None


def test_interrupt_written_before_its_checkpoint(waiting, tmp_path: Path) -> None:
    """LangGraph puts a checkpoint and its writes in the background, in no set order: the
    interrupt stored before its checkpoint is still said once the checkpoint comes."""
    theirs, ours, _ = waiting
    with InspectorSaver.from_conn_string(str(ours)) as source:
        steps = list(reversed(list(source.list(CFG))))
        lanes = LaneStore(source.store)
        paths = {(row.checkpoint_id, task): path for row in lanes.list("thread-1", "", None, None)
                 for task, _, _, path, _ in row.writes}     # (a tuple's pending writes have no task path)
        lanes.close()
    late = tmp_path / "late.db"
    with InspectorSaver.from_conn_string(str(late)) as saver:
        for i, step in enumerate(steps):
            writes: dict[str, list] = {}
            for task, channel, value in step.pending_writes:
                writes.setdefault(task, []).append((channel, value))
            if i == len(steps) - 1:         # the head: its interrupt first
                for task, found in writes.items():
                    saver.put_writes(step.config, found, task, paths[(step.config["configurable"]["checkpoint_id"], task)])
            saver.put(step.parent_config or {"configurable": {"thread_id": "thread-1", "checkpoint_ns": ""}},
                      step.checkpoint, step.metadata, step.checkpoint["channel_versions"])
            if i < len(steps) - 1:
                for task, found in writes.items():
                    saver.put_writes(step.config, found, task, paths[(step.config["configurable"]["checkpoint_id"], task)])
    assert _timeline(late) == _timeline(theirs, "thread-1")
    assert _run(late).status == "interrupted" and _run(late).last_error == _run(ours).last_error
