"""A fork through the user's graph writes exactly the state that was edited.

The real langgraph runs a user's project (written here as files, imported by our runner
subprocess, strict msgpack on as for any store not marked trusted); LangGraph itself, in this
process, reads the forks back and continues them. Three ways a fork used to differ from the
edit: a channel with a reducer got the edited value through its reducer (a list appended to
itself, a count added to), values of the user's classes the edit did not touch came back as
plain dicts and strings (the strict serializer without the graph's allowed classes), and
messages the edit did not touch were rebuilt with other fields.
"""

from __future__ import annotations

import copy
import sqlite3
import sys
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.resume.langgraph import fork_langgraph
from inspector.store import open_store
from inspector.store.langgraph.settings import GraphSettings, save_settings

PROJECT = '''
import dataclasses
import enum
import operator
from typing import Annotated

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from pydantic import BaseModel
from typing_extensions import TypedDict


def linear(schema, *nodes):
    """START → each node in turn → END, compiled without a checkpointer."""
    builder = StateGraph(schema)
    for node in nodes:
        builder.add_node(node.__name__, node)
    for a, b in zip((START, *(n.__name__ for n in nodes)), (*(n.__name__ for n in nodes), END)):
        builder.add_edge(a, b)
    return builder.compile()


class Tally(TypedDict):
    vals: Annotated[list, operator.add]
    total: Annotated[int, operator.add]
    last: str


def first(state):
    return {"vals": ["a"], "total": 1, "last": "first"}


def second(state):
    return {"vals": ["b"], "total": 10, "last": "second"}


tally = linear(Tally, first, second)


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Item(BaseModel):
    name: str
    qty: int = 1


class Order(BaseModel):
    title: str = ""
    items: list[Item] = []
    color: Color | None = None


def take(state):
    return {"title": "order", "items": [Item(name="apple", qty=2)], "color": Color.RED}


def count(state):
    return {"items": state.items + [Item(name="pear", qty=sum(i.qty for i in state.items))]}


order = linear(Order, take, count)


@dataclasses.dataclass
class Note:
    text: str
    score: float = 0.0


@dataclasses.dataclass
class Notes:
    topic: str = ""
    notes: list[Note] = dataclasses.field(default_factory=list)
    best: float = 0.0


def jot(state):
    return {"topic": "t", "notes": [Note("a", 1.0), Note("b", 2.5)]}


def rank(state):
    return {"best": max(n.score for n in state.notes)}


notes = linear(Notes, jot, rank)


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


class Model(BaseChatModel):
    @property
    def _llm_type(self):
        return "scripted"

    def bind_tools(self, tools, **kwargs):
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        if not any(isinstance(m, AIMessage) for m in messages):
            reply = AIMessage(content="", id="ai-1", tool_calls=[
                {"name": "add", "args": {"a": 2, "b": 3}, "id": "call-1", "type": "tool_call"}])
        else:
            last = [m for m in messages if isinstance(m, ToolMessage)][-1]
            reply = AIMessage(content=f"it is {last.content}", id="ai-2")
        return ChatResult(generations=[ChatGeneration(message=reply)])


def agent(state):
    return {"messages": [Model().invoke(state["messages"])]}


_r = StateGraph(MessagesState)
_r.add_node("agent", agent)
_r.add_node("tools", ToolNode([add]))
_r.add_edge(START, "agent")
_r.add_conditional_edges("agent", tools_condition)
_r.add_edge("tools", "agent")
react = _r.compile()
'''


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's project (``forkproj``), importable here and by the runner."""
    monkeypatch.setenv("CHECKPOINT_INSPECTOR_CONFIG_DIR", str(tmp_path / "config"))
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "forkproj.py").write_text(PROJECT)
    monkeypatch.syspath_prepend(str(folder))
    yield folder
    sys.modules.pop("forkproj", None)


def _run(project: Path, name: str, inputs: dict, db: Path) -> None:
    """Run graph ``name`` of the project to its end on a SqliteSaver database at ``db``."""
    from langgraph.checkpoint.sqlite import SqliteSaver
    import forkproj
    conn = sqlite3.connect(str(db), check_same_thread=False)
    try:
        getattr(forkproj, name).builder.compile(checkpointer=SqliteSaver(conn)).invoke(
            inputs, {"configurable": {"thread_id": "t"}})
    finally:
        conn.close()
    with open_store(db, readonly=False) as store:
        save_settings(store.info.url, GraphSettings(graph=f"forkproj:{name}", cwd=str(project)))


def _langgraph_state(name: str, db: Path) -> tuple[object, object]:
    """LangGraph's own view of the thread's head, and the graph (bound to the database)."""
    from langgraph.checkpoint.sqlite import SqliteSaver
    import forkproj
    graph = getattr(forkproj, name).builder.compile(
        checkpointer=SqliteSaver(sqlite3.connect(str(db), check_same_thread=False)))
    return graph.get_state({"configurable": {"thread_id": "t"}}), graph


def _before(db: Path, node: str) -> str:
    """The last checkpoint whose next node is ``node``."""
    with open_store(db) as store:
        return [i.id for i in store.list_checkpoints("t") if store.load(i.id).meta["next"] == [node]][-1]


def _fork_edited(db: Path, ref: str, edit) -> str:
    """Fork ``ref`` with its shown state edited by ``edit`` (as the fork dialog does)."""
    with open_store(db, readonly=False) as store:
        state = copy.deepcopy(store.load(ref).state)
        edit(state)
        return fork_langgraph(store, ref, state=state, reason="exact", quiet_seconds=0).checkpoint_id


def test_a_reducer_channel_becomes_exactly_the_edited_value(project: Path, tmp_path: Path) -> None:
    db = tmp_path / "tally.db"
    _run(project, "tally", {"vals": [], "total": 0, "last": ""}, db)

    def edit(state: dict) -> None:
        state["vals"] = ["a", "X"]     # was ["a"]: the reducer would have made it ["a", "a", "X"]
        state["total"] = 5             # was 1: operator.add would have made it 6

    _fork_edited(db, _before(db, "second"), edit)
    head, graph = _langgraph_state("tally", db)
    assert head.values == {"vals": ["a", "X"], "total": 5, "last": "first"} and head.next == ("second",)
    final = graph.invoke(None, {"configurable": {"thread_id": "t"}})     # the reducers apply from there
    assert final == {"vals": ["a", "X", "b"], "total": 15, "last": "second"}


def test_a_shortened_message_history_stays_short(project: Path, tmp_path: Path) -> None:
    db = tmp_path / "react.db"
    _run(project, "react", {"messages": [("user", "two and three?")]}, db)
    _fork_edited(db, _before(db, "tools"), lambda state: state.update(messages=state["messages"][:1]))
    head, _ = _langgraph_state("react", db)
    assert [m.content for m in head.values["messages"]] == ["two and three?"]   # add_messages kept both


def test_classes_the_edit_did_not_touch_keep_their_types(project: Path, tmp_path: Path) -> None:
    import forkproj
    db = tmp_path / "order.db"
    _run(project, "order", {}, db)
    _fork_edited(db, _before(db, "count"), lambda state: state.update(title="changed"))
    head, graph = _langgraph_state("order", db)
    values = head.values
    assert values["title"] == "changed"
    assert values["items"] == [forkproj.Item(name="apple", qty=2)] and type(values["items"][0]) is forkproj.Item
    assert values["color"] is forkproj.Color.RED
    final = graph.invoke(None, {"configurable": {"thread_id": "t"}})
    assert final["items"][-1] == forkproj.Item(name="pear", qty=2)

    db = tmp_path / "notes.db"
    _run(project, "notes", {}, db)
    _fork_edited(db, _before(db, "rank"), lambda state: state.update(topic="changed"))
    head, graph = _langgraph_state("notes", db)
    assert head.values["notes"] == [forkproj.Note("a", 1.0), forkproj.Note("b", 2.5)]
    assert graph.invoke(None, {"configurable": {"thread_id": "t"}})["best"] == 2.5   # was AttributeError


def test_an_edited_message_leaves_the_others_as_they_were(project: Path, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture) -> None:
    db = tmp_path / "react.db"
    _run(project, "react", {"messages": [("user", "two and three?")]}, db)
    ref = _before(db, "agent")
    history = [s for s in _langgraph_state("react", db)[1].get_state_history({"configurable": {"thread_id": "t"}})
               if s.next == ("agent",)]
    original = history[0].values["messages"]      # newest first: after the tool ran
    assert main(["fork", str(db), ref, "--reason", "exact", "--force", "--set", 'messages[2].content="999"']) == 0
    capsys.readouterr()
    head, graph = _langgraph_state("react", db)
    forked = head.values["messages"]
    assert forked[2].content == "999" and forked[2].tool_call_id == original[2].tool_call_id
    assert forked[:2] == original[:2] and forked[1].additional_kwargs == {}    # not rebuilt with other fields
    assert [type(m) for m in forked] == [type(m) for m in original]
    final = graph.invoke(None, {"configurable": {"thread_id": "t"}})
    assert final["messages"][-1].content == "it is 999"
