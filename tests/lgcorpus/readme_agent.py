"""The graph behind the README's LangGraph commands (``my_agent/graph.py`` in the test's folder).

``step1`` … ``step6`` then ``review`` (``interrupt()``), then ``done``: a thread run once stops
at the review with checkpoints 0–7, so ``thread-1:7`` is the step before the review.
"""

SOURCE = '''
import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt


class State(TypedDict, total=False):
    priority: str
    log: Annotated[list[str], operator.add]
    answer: str


def _step(name):
    def node(state):
        return {"log": [name]}
    return node


def review(state):
    return {"answer": interrupt("Approve the work?"), "log": ["review " + state.get("priority", "")]}


def done(state):
    return {"log": ["done"]}


builder = StateGraph(State)
previous = START
for i in range(1, 7):
    builder.add_node(f"step{i}", _step(f"step{i}"))
    builder.add_edge(previous, f"step{i}")
    previous = f"step{i}"
builder.add_node("review", review)
builder.add_node("done", done)
builder.add_edge(previous, "review")
builder.add_edge("review", "done")
builder.add_edge("done", END)
app = builder.compile()
'''
