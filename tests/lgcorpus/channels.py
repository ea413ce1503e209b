"""Channels whose kind only the graph knows: a reducer written once, custom reducers, an
ephemeral value and a topic.

``score`` → ``tag`` ∥ ``check`` → ``finish``. ``once`` (``operator.add``) is written a single
time, by ``tag``, so before that LangGraph shows it as ``[]`` while the thread alone never
proves it a reducer; ``best`` uses the graph's own ``keep_max`` (shown as ``0`` until written)
and ``trail`` its ``join_trail`` (``"score > tag"``: neither the stored value, nor the last
write, nor any operator guessed from the type); ``flag`` is an ``EphemeralValue`` that the next
step empties; ``notes`` a ``Topic``. In channels-2 ``check`` fails, so the head's finished
``tag`` writes are pending and ``get_state`` shows them applied — ``trail`` through
``join_trail`` — with ``flag`` already cleared.
"""

from __future__ import annotations

import contextlib
import operator
from typing import Annotated, Any, TypedDict

from langgraph.channels import EphemeralValue, Topic
from langgraph.graph import END, START, StateGraph

from ._util import cfg


def keep_max(current: int, new: int) -> int:
    """A custom reducer: the larger score."""
    return max(current, new)


def join_trail(current: str, new: str) -> str:
    """A custom reducer: the nodes' marks joined with ``" > "``."""
    return f"{current} > {new}" if current else new


class State(TypedDict, total=False):
    """A topic and five channels of four kinds."""

    topic: str
    trail: Annotated[str, join_trail]
    once: Annotated[list[str], operator.add]
    best: Annotated[int, keep_max]
    flag: Annotated[str, EphemeralValue(str)]
    notes: Annotated[list[str], Topic(str)]


def _score(state: State) -> dict:
    return {"best": 3, "flag": "scored", "notes": ["scored"], "trail": "score"}


def _tag(state: State) -> dict:
    return {"once": ["tagged"], "trail": "tag"}


def _check(state: State) -> dict:
    if state["topic"] == "fail":
        raise ValueError("the check failed")
    return {"best": 5, "notes": ["checked"]}


def _finish(state: State) -> dict:
    return {"topic": f"{state['topic']} done"}


def build(checkpointer: Any = None) -> Any:
    """score → tag ∥ check → finish."""
    graph = StateGraph(State)
    for name, fn in (("score", _score), ("tag", _tag), ("check", _check), ("finish", _finish)):
        graph.add_node(name, fn)
    graph.add_edge(START, "score")
    graph.add_edge("score", "tag")
    graph.add_edge("score", "check")
    graph.add_edge(["tag", "check"], "finish")
    graph.add_edge("finish", END)
    return graph.compile(checkpointer=checkpointer)


def run(checkpointer: Any) -> list[dict]:
    """channels-1 runs through; channels-2 fails in check."""
    graph = build(checkpointer)
    graph.invoke({"topic": "report"}, cfg("channels-1"))
    with contextlib.suppress(ValueError):
        graph.invoke({"topic": "fail"}, cfg("channels-2"))
    return [cfg("channels-1"), cfg("channels-2")]
