"""A real LangGraph graph whose node changes the state *in place*: an old message, a nested dict
of one, and a plain channel it does not return (shared by the saver and diff tests)."""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages

THREAD = {"configurable": {"thread_id": "edits"}}


class Edited(TypedDict):
    messages: Annotated[list, add_messages]
    notes: dict


def editing_graph(checkpointer: Any) -> Any:
    """One node: edits messages[0..2] and ``notes`` in place, returns one new message."""
    def edit(state: Edited) -> dict:
        n = len(state["messages"])
        first = state["messages"][0]
        first.content = f"edited at {n}"                       # an old message, in place
        state["messages"][1].additional_kwargs["seen"] = n     # a nested dict of one
        state["messages"][2].additional_kwargs["flag"] = n % 2 == 0 if n > 10 else n % 2  # 0/1 then bools
        state["notes"]["count"] = n                            # a channel it does not return
        state["notes"].setdefault("log", []).append(n)
        return {"messages": [AIMessage(content=f"reply {n}", id=f"r-{n}")]}

    graph = StateGraph(Edited)
    graph.add_node("edit", edit)
    graph.add_edge(START, "edit")
    return graph.compile(checkpointer=checkpointer)


def drive(saver: Any, turns: int) -> tuple[Any, dict]:
    """``turns`` invokes (durability sync: each step's checkpoint is written before the next
    step edits the state again); the compiled graph and the thread's config."""
    graph = editing_graph(saver)
    graph.invoke({"messages": [HumanMessage(content="first", id="h-0"), AIMessage(content="a", id="a-0"),
                               AIMessage(content="b", id="b-0")], "notes": {"count": 0}},
                 THREAD, durability="sync")
    for turn in range(1, turns):
        graph.invoke({"messages": [HumanMessage(content=f"turn {turn}", id=f"h-{turn}")]}, THREAD,
                     durability="sync")
    return graph, THREAD
