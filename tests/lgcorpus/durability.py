"""One graph run with each ``durability`` mode: ``sync``, ``async`` and ``exit``.

With ``exit`` LangGraph saves only the final checkpoint; the others save every step.
``arun`` is the async variant (``AsyncSqliteSaver`` / ``AsyncPostgresSaver``).
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph

from ._util import cfg

MODES = ("sync", "async", "exit")


class State(TypedDict, total=False):
    """A counter and a log."""

    n: int
    log: Annotated[list[str], operator.add]


def _step(name: str) -> Any:
    def node(state: State) -> dict:
        return {"n": state.get("n", 0) + 1, "log": [name]}
    return node


async def _async_last(state: State) -> dict:
    return {"n": state.get("n", 0) + 1, "log": ["last"]}


def build(checkpointer: Any = None) -> Any:
    """first → second → last."""
    graph = StateGraph(State)
    graph.add_node("first", _step("first"))
    graph.add_node("second", _step("second"))
    graph.add_node("last", _step("last"))
    graph.add_edge(START, "first")
    graph.add_edge("first", "second")
    graph.add_edge("second", "last")
    graph.add_edge("last", END)
    return graph.compile(checkpointer=checkpointer)


def run(checkpointer: Any) -> list[dict]:
    """durability-<mode> with a sync saver."""
    graph = build(checkpointer)
    for mode in MODES:
        graph.invoke({"n": 0, "log": []}, cfg(f"durability-{mode}"), durability=mode)
    return [cfg(f"durability-{mode}") for mode in MODES]


async def arun(checkpointer: Any) -> list[dict]:
    """durability-<mode> with an async saver (``ainvoke``)."""
    graph = build(checkpointer)
    for mode in MODES:
        await graph.ainvoke({"n": 0, "log": []}, cfg(f"durability-{mode}"), durability=mode)
    return [cfg(f"durability-{mode}") for mode in MODES]
