"""Real LangGraph graphs and threads written into a real SqliteSaver file (shared by LangGraph tests).

The graph: ``planner`` (a compiled subgraph: ``draft`` → ``refine``) writes ``todos`` and a
plan; a conditional edge sends high-priority work to ``review`` (which calls ``interrupt()``)
and the rest to ``execute``; ``execute`` marks the todos done, or raises when ``fail`` is set.
The state also carries values that exercise the msgpack ext types (datetime, set, UUID, Enum,
dataclass, LangChain messages).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import enum
import sqlite3
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.channels import DeltaChannel
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command, interrupt

REVIEW_QUESTION = "Approve the plan?"


class Stage(enum.Enum):
    """An Enum stored in the state (msgpack ext 0)."""

    PLANNED = "planned"
    DONE = "done"


@dataclass
class Note:
    """A dataclass stored in the state (msgpack ext 2)."""

    text: str
    weight: int = 1


class State(TypedDict, total=False):
    """The outer graph's state."""

    messages: Annotated[list[AnyMessage], add_messages]
    todos: list[dict]
    priority: str
    plan: str
    approved: Any
    fail: bool
    started: dt.datetime
    tags: set
    run_uid: uuid.UUID
    stage: Stage
    note: Note


class PlanState(TypedDict, total=False):
    """The planner subgraph's state (shares keys with the outer state)."""

    messages: Annotated[list[AnyMessage], add_messages]
    todos: list[dict]
    plan: str


def _draft(state: PlanState) -> dict:
    goal = state["messages"][0].content if state.get("messages") else "nothing"
    return {"plan": f"draft for {goal}",
            "todos": [{"content": "collect data", "status": "in_progress"},
                      {"content": "write report", "status": "pending"}]}


def _refine(state: PlanState) -> dict:
    return {"plan": state["plan"] + " (refined)",
            "messages": [AIMessage(content=f"Plan: {state['plan']}")]}


def build_planner() -> Any:
    """The compiled planner subgraph (two nodes)."""
    sub = StateGraph(PlanState)
    sub.add_node("draft", _draft)
    sub.add_node("refine", _refine)
    sub.add_edge(START, "draft")
    sub.add_edge("draft", "refine")
    sub.add_edge("refine", END)
    return sub.compile()


def _prepare(state: State) -> dict:
    return {"started": dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC),
            "tags": {"alpha", "beta"},
            "run_uid": uuid.UUID("12345678-1234-5678-1234-567812345678"),
            "stage": Stage.PLANNED, "note": Note("remember", 2)}


def _route(state: State) -> str:
    return "review" if state.get("priority") == "high" else "execute"


def _review(state: State) -> dict:
    answer = interrupt({"question": REVIEW_QUESTION, "plan": state.get("plan")})
    todos = [dict(t, status="in_progress") for t in state.get("todos", [])]
    return {"approved": answer, "todos": todos}


def _execute(state: State) -> dict:
    if state.get("fail"):
        raise RuntimeError("execute failed on purpose")
    todos = [dict(t, status="completed") for t in state.get("todos", [])]
    return {"todos": todos, "stage": Stage.DONE,
            "messages": [AIMessage(content="All done.")]}


def build_graph(checkpointer: Any, interrupt_before: list[str] | None = None) -> Any:
    """The outer graph: prepare → planner (subgraph) → review|execute → END."""
    graph = StateGraph(State)
    graph.add_node("prepare", _prepare)
    graph.add_node("planner", build_planner())
    graph.add_node("review", _review)
    graph.add_node("execute", _execute)
    graph.add_edge(START, "prepare")
    graph.add_edge("prepare", "planner")
    graph.add_conditional_edges("planner", _route, ["review", "execute"])
    graph.add_edge("review", "execute")
    graph.add_edge("execute", END)
    return graph.compile(checkpointer=checkpointer, interrupt_before=interrupt_before)


def config(thread_id: str, checkpoint_id: str | None = None, ns: str = "") -> dict:
    """A LangGraph run config for a thread (and optionally one checkpoint)."""
    conf: dict[str, Any] = {"thread_id": thread_id, "checkpoint_ns": ns}
    if checkpoint_id is not None:
        conf["checkpoint_id"] = checkpoint_id
    return {"configurable": conf}


def _start(text: str, priority: str, fail: bool = False) -> dict:
    return {"messages": [HumanMessage(content=text)], "priority": priority, "fail": fail}


# -- the standard threads ------------------------------------------------------------------
THREADS = {
    "thread-A": "high priority, stopped at the review interrupt",
    "thread-B": "high priority, interrupt answered with Command(resume=...), completed",
    "thread-C": "low priority, completed without review",
    "thread-D": "high priority, resumed and completed, then forked with update_state(priority=low)"
                " at the checkpoint before review (a branch) and completed again",
    "thread-E": "low priority with fail=True: execute raised",
}


def run_standard_threads(graph: Any) -> None:
    """Run the five standard threads (see THREADS) through a compiled graph."""
    graph.invoke(_start("Write the quarterly report", "high"), config("thread-A"))
    graph.invoke(_start("Plan the offsite", "high"), config("thread-B"))
    graph.invoke(Command(resume="yes, go"), config("thread-B"))
    graph.invoke(_start("Tidy the wiki", "low"), config("thread-C"))
    fork_before_review(graph, "thread-D")
    with contextlib.suppress(RuntimeError):
        graph.invoke(_start("Break things", "low", fail=True), config("thread-E"))


def fork_before_review(graph: Any, thread_id: str) -> dict:
    """Run to the interrupt and resume it, then fork the checkpoint before review.

    The fork (update_state with priority=low as planner) makes that checkpoint a branch
    point with two children; the fork is then run to the end. Returns its config.
    """
    graph.invoke(_start("Ship the release", "high"), config(thread_id))
    graph.invoke(Command(resume="approved"), config(thread_id))
    before_review = next(s for s in graph.get_state_history(config(thread_id))
                         if s.next == ("review",))
    new_cfg = graph.update_state(before_review.config, {"priority": "low"}, as_node="planner")
    graph.invoke(None, new_cfg)
    return new_cfg


def make_database(path: Path) -> Path:
    """Write the standard threads into a new SqliteSaver file at ``path`` and close it."""
    conn = sqlite3.connect(str(path), check_same_thread=False)
    try:
        saver = SqliteSaver(conn)
        run_standard_threads(build_graph(saver))
    finally:
        conn.close()
    return path


def open_graph(path: Path) -> tuple[Any, sqlite3.Connection]:
    """The standard graph bound to a SqliteSaver on ``path`` (caller closes the connection)."""
    conn = sqlite3.connect(str(path), check_same_thread=False)
    return build_graph(SqliteSaver(conn)), conn


# -- a DeltaChannel graph (langgraph 1.2 beta: values stored as deltas between snapshots) ----
def concat(state: Any, writes: list) -> list:
    """A list-append reducer for a DeltaChannel."""
    out = list(state or [])
    for w in writes:
        out.extend(w if isinstance(w, list) else [w])
    return out


class DeltaState(TypedDict, total=False):
    """State with one delta channel (snapshot every 3rd update)."""

    items: Annotated[list, DeltaChannel(concat, snapshot_frequency=3)]
    n: int


def _step(state: DeltaState) -> dict:
    n = state.get("n", 0) + 1
    return {"items": [f"item{n}"], "n": n}


def build_delta_graph(checkpointer: Any, steps: int = 6) -> Any:
    """A loop of ``steps`` turns appending to the delta channel ``items``."""
    graph = StateGraph(DeltaState)
    graph.add_node("step", _step)
    graph.add_edge(START, "step")
    graph.add_conditional_edges("step", lambda s: END if s["n"] >= steps else "step", ["step", END])
    return graph.compile(checkpointer=checkpointer)
