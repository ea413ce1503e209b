"""``interrupt()`` inside a subgraph, answered with ``Command(resume=…)`` from the parent graph."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from ._util import cfg

QUESTION = "Approve the draft?"


class State(TypedDict, total=False):
    """Shared by the parent and the review subgraph."""

    topic: str
    draft: str
    approved: Any
    log: Annotated[list[str], operator.add]


def _draft(state: State) -> dict:
    return {"draft": f"A note about {state['topic']}", "log": ["drafted"]}


def _ask(state: State) -> dict:
    answer = interrupt({"question": QUESTION, "draft": state["draft"]})
    return {"approved": answer, "log": ["asked"]}


def _apply(state: State) -> dict:
    return {"draft": state["draft"] + f" ({state['approved']})", "log": ["applied"]}


def build_review() -> Any:
    """The review subgraph: draft → ask (interrupt) → apply."""
    sub = StateGraph(State)
    sub.add_node("draft", _draft)
    sub.add_node("ask", _ask)
    sub.add_node("apply", _apply)
    sub.add_edge(START, "draft")
    sub.add_edge("draft", "ask")
    sub.add_edge("ask", "apply")
    sub.add_edge("apply", END)
    return sub.compile()


def _prepare(state: State) -> dict:
    return {"topic": state["topic"].strip(), "log": ["prepared"]}


def _publish(state: State) -> dict:
    return {"log": [f"published: {state['draft']}"]}


def build(checkpointer: Any = None) -> Any:
    """prepare → review (the subgraph) → publish."""
    graph = StateGraph(State)
    graph.add_node("prepare", _prepare)
    graph.add_node("review", build_review())
    graph.add_node("publish", _publish)
    graph.add_edge(START, "prepare")
    graph.add_edge("prepare", "review")
    graph.add_edge("review", "publish")
    graph.add_edge("publish", END)
    return graph.compile(checkpointer=checkpointer)


def run(checkpointer: Any) -> list[dict]:
    """subgraph-1: interrupted then answered; subgraph-2: left waiting at the interrupt;
    subgraph-3: waiting, then forked inside the subgraph (``update_state`` on the review lane's
    checkpoint before ``draft``), so that lane has two leaves."""
    graph = build(checkpointer)
    graph.invoke({"topic": " rollout "}, cfg("subgraph-1"))
    graph.invoke(Command(resume="approved"), cfg("subgraph-1"))
    graph.invoke({"topic": " budget "}, cfg("subgraph-2"))
    graph.invoke({"topic": " forked "}, cfg("subgraph-3"))
    lane = graph.get_state(cfg("subgraph-3"), subgraphs=True).tasks[0].state.config["configurable"]["checkpoint_ns"]
    before = next(s for s in graph.get_state_history({"configurable": {"thread_id": "subgraph-3", "checkpoint_ns": lane}})
                  if s.next == ("draft",))
    graph.update_state(before.config, {"topic": "forked inside"})
    return [cfg("subgraph-1"), cfg("subgraph-2"), cfg("subgraph-3")]
