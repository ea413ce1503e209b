"""``Send`` map-reduce with a multi-source join (``add_edge(["work", "audit"], "reduce")``).

``split`` sends one ``work`` task per item (PUSH tasks) and triggers ``audit``; ``reduce``
waits for both sources (a ``join:…`` barrier channel). An item named ``bad`` makes its task
raise: its sibling tasks' writes stay pending and the thread stops with the error.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Send

from ._util import cfg
import contextlib


class State(TypedDict, total=False):
    """Items in, results collected by a reducer."""

    items: list[str]
    results: Annotated[list[str], operator.add]
    audit: str
    summary: str


def _split(state: State) -> dict:
    return {"items": [i.strip() for i in state["items"]]}


def _fan_out(state: State) -> list[Send]:
    return [Send("work", {"item": item}) for item in state["items"]]


def _work(arg: dict) -> dict:
    if arg["item"] == "bad":
        raise ValueError(f"cannot process item {arg['item']!r}")
    return {"results": [arg["item"].upper()]}


def _audit(state: State) -> dict:
    return {"audit": f"{len(state['items'])} items"}


def _reduce(state: State) -> dict:
    return {"summary": ", ".join(sorted(state.get("results", []))) + f" ({state['audit']})"}


def build(checkpointer: Any = None) -> Any:
    """split → Send(work)×N + audit → join → reduce."""
    graph = StateGraph(State)
    graph.add_node("split", _split)
    graph.add_node("work", _work)
    graph.add_node("audit", _audit)
    graph.add_node("reduce", _reduce)
    graph.add_edge(START, "split")
    graph.add_conditional_edges("split", _fan_out, ["work"])
    graph.add_edge("split", "audit")
    graph.add_edge(["work", "audit"], "reduce")
    graph.add_edge("reduce", END)
    return graph.compile(checkpointer=checkpointer)


def run(checkpointer: Any) -> list[dict]:
    """mapreduce-1: three items, all fine; mapreduce-2: one item fails."""
    graph = build(checkpointer)
    graph.invoke({"items": ["alpha", " beta", "gamma"]}, cfg("mapreduce-1"))
    with contextlib.suppress(ValueError):
        graph.invoke({"items": ["one", "bad", "three"]}, cfg("mapreduce-2"))
    return [cfg("mapreduce-1"), cfg("mapreduce-2")]
