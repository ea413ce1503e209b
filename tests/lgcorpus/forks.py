"""Forks and replays made by LangGraph itself on a routed graph.

``plan`` routes to ``act`` or ``skip`` by ``mode``. forks-1 runs, then: ``update_state`` at
the checkpoint before ``act`` with ``mode="skip"`` as ``plan`` (routing changes to ``skip``)
and continues it; ``update_state(..., as_node="__copy__")`` of the first step; a replay
(``invoke(None, older checkpoint)``, which LangGraph starts with a ``fork`` checkpoint).
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph

from ._util import cfg, oldest


class State(TypedDict, total=False):
    """A topic, a routing mode and a log."""

    topic: str
    mode: str
    log: Annotated[list[str], operator.add]


def _plan(state: State) -> dict:
    return {"log": [f"plan {state['topic']}"]}


def _route(state: State) -> str:
    return "skip" if state.get("mode") == "skip" else "act"


def _act(state: State) -> dict:
    return {"log": ["act"]}


def _skip(state: State) -> dict:
    return {"log": ["skip"]}


def build(checkpointer: Any = None) -> Any:
    """plan → act | skip."""
    graph = StateGraph(State)
    graph.add_node("plan", _plan)
    graph.add_node("act", _act)
    graph.add_node("skip", _skip)
    graph.add_edge(START, "plan")
    graph.add_conditional_edges("plan", _route, ["act", "skip"])
    graph.add_edge("act", END)
    graph.add_edge("skip", END)
    return graph.compile(checkpointer=checkpointer)


def run(checkpointer: Any) -> list[dict]:
    """forks-1 with an edited fork, a copy and a replay."""
    graph = build(checkpointer)
    thread = "forks-1"
    graph.invoke({"topic": "release", "mode": "act", "log": []}, cfg(thread))
    before_act = oldest(graph, thread, lambda s: s.next == ("act",))
    edited = graph.update_state(before_act.config, {"mode": "skip"}, as_node="plan")
    graph.invoke(None, edited)
    first = oldest(graph, thread, lambda s: s.next == ("plan",) and s.metadata.get("source") == "loop")
    graph.update_state(first.config, None, as_node="__copy__")
    graph.invoke(None, before_act.config)             # replay from an older checkpoint
    return [cfg(thread)]
