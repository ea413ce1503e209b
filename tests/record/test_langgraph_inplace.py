"""InspectorSaver never misses a change made in place, and hands back fresh objects.

A node that mutates an *old* message (far before the end of the history), a nested dict of
one, or a plain channel it does not return, changes the state the next checkpoint holds:
``SqliteSaver`` serializes the whole state at every put, so ours must store the same, at
every checkpoint of ``get_state_history``. ``get_tuple`` hands back copies: mutating what it
returned, or the objects a caller put, changes nothing stored.
"""

from __future__ import annotations

import dataclasses
import enum
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.checkpoint.base import empty_checkpoint

from inspector.record.langgraph import InspectorSaver
from tests.lgcorpus import sqlite_saver
from tests.record.lg_edits import drive, editing_graph
from tests.record.test_langgraph_differential import _difference, _history

TURNS = 30     # the history grows to 60+ messages: the edited ones are far from its end


@dataclasses.dataclass
class Item:
    name: str
    done: Any


@pytest.fixture(autouse=True)
def _trusted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LANGGRAPH_STRICT_MSGPACK", raising=False)


def test_changes_in_place_are_stored_like_sqlite_saver(tmp_path: Path) -> None:
    with sqlite_saver(tmp_path / "lg.db") as theirs:
        graph, config = drive(theirs, TURNS)
        expected = _history(graph, config)
    path = tmp_path / "native.db"
    with InspectorSaver.from_conn_string(str(path)) as ours:
        graph, config = drive(ours, TURNS)
        got = _history(graph, config)
    # LangGraph's own race: the first step's input write (the very message objects the node
    # later edits in place) is handed to a saver's put_writes on a background thread, and
    # the next step's node may edit them first; either saver then stores the edited text
    for history in (expected, got):
        for step in history:
            if step["metadata"].get("source") == "input" and step["metadata"].get("step") == -1:
                for task in step["tasks"]:
                    task.pop("result", None)
    assert len(expected) > 2 * TURNS
    head = expected[0]["values"]
    assert head["messages"][0]["content"].startswith("edited at") and head["notes"]["count"] > TURNS
    assert got == expected, _difference(got, expected)
    # and from the file, by a new saver (nothing served from the writer's memory)
    with InspectorSaver.from_conn_string(str(path)) as reader:
        again = _history(editing_graph(reader), config)
        again[-1]["tasks"] = got[-1]["tasks"]       # (the same input write, read from the file)
        assert again == got


def _put(saver: InspectorSaver, step: int, values: dict) -> dict:
    checkpoint = empty_checkpoint()
    checkpoint["id"] = f"1ef0000{step:04d}"
    checkpoint["channel_values"] = values
    checkpoint["channel_versions"] = {k: f"{step:032}.0" for k in values}
    config = {"configurable": {"thread_id": "direct", "checkpoint_ns": ""}}
    return saver.put(config, checkpoint, {"source": "loop", "step": step}, dict(checkpoint["channel_versions"]))


def _values(saver: InspectorSaver) -> dict:
    found = saver.get_tuple({"configurable": {"thread_id": "direct", "checkpoint_ns": ""}})
    assert found is not None
    return found.checkpoint["channel_values"]


def test_get_tuple_hands_back_fresh_objects(tmp_path: Path) -> None:
    path = tmp_path / "native.db"
    history = [AIMessage(content=f"m{i}", id=f"m-{i}", additional_kwargs={"n": i}) for i in range(40)]
    items = [Item(f"t{i}", False) for i in range(3)]
    with InspectorSaver.from_conn_string(str(path)) as saver:
        _put(saver, 1, {"messages": history, "items": items, "notes": {"k": [1, 2]}})
        one, two = _values(saver), _values(saver)
        assert one == two == {"messages": history, "items": items, "notes": {"k": [1, 2]}}
        for a, b, mine in zip(one["messages"], two["messages"], history):
            assert a is not b and a is not mine and a.additional_kwargs is not mine.additional_kwargs
        assert one["items"][0] is not items[0] and one["notes"]["k"] is not two["notes"]["k"]
        # mutate what get_tuple returned, and what the caller put: nothing stored changes
        one["messages"][0].content = "tampered"
        one["messages"][5].additional_kwargs["n"] = "tampered"
        one["items"][1].done = "tampered"
        one["notes"]["k"].append(3)
        history[3].content = "changed after the put"
        items[2].done = True
        again = _values(saver)
        assert [m.content for m in again["messages"][:6]] == [f"m{i}" for i in range(6)]
        assert again["messages"][5].additional_kwargs == {"n": 5}
        assert [i.done for i in again["items"]] == [False, False, False] and again["notes"] == {"k": [1, 2]}
        # the caller's changes are stored at its next put, exactly (1 → True is a change)
        history[30].additional_kwargs["n"] = True
        rows = [{"id": i, "ok": 1, "a": 1, "b": 2} for i in range(200)]     # a plain channel, chunked
        _put(saver, 2, {"messages": history, "items": items, "notes": {"k": [1, 2]}, "rows": rows})
        rows[50]["ok"] = True                          # equal to 1, another type: a change
        rows[60] = {"id": 60, "ok": 1, "b": 2, "a": 1}  # equal, keys reordered: a change
        _put(saver, 3, {"messages": history, "items": items, "notes": {"k": [1, 2]}, "rows": rows})
        now = _values(saver)
        assert now["messages"][3].content == "changed after the put"
        assert now["messages"][30].additional_kwargs["n"] is True
        assert now["items"][2].done is True
    with InspectorSaver.from_conn_string(str(path)) as reader:
        stored = _values(reader)
        assert stored["messages"][3].content == "changed after the put" and stored["messages"][0].content == "m0"
        assert stored["messages"][30].additional_kwargs["n"] is True and stored["items"][2].done is True
        assert stored["rows"][50]["ok"] is True and list(stored["rows"][60]) == ["id", "ok", "b", "a"]


class Color(enum.StrEnum):
    RED = "red"


def _edits_equal_to_the_old(messages: list) -> None:
    """Changes ``==`` does not see (equal values of another type, sign or order), each in place."""
    messages[2].additional_kwargs["x"] = -0.0                   # was 0.0
    messages[4].additional_kwargs["x"] = 1.0                    # was 1
    messages[6].additional_kwargs["x"] = True                   # was 1
    messages[8].additional_kwargs = dict(reversed(messages[8].additional_kwargs.items()))   # equal, reordered
    messages[10].additional_kwargs["tags"] = {"t"}              # was ["t"]: a set
    messages[12].additional_kwargs["c"] = Color.RED             # was "red": an enum member
    messages[14].tool_calls[0]["args"]["n"] = True              # was 1, two levels down
    messages[16].additional_kwargs["x"] = 0                     # was 0.0
    messages[70].additional_kwargs["x"] = True                  # was 1, past the first group of 64


def _history_of_equal_values() -> list:
    out = []
    for i in range(80):
        kwargs: dict = {"x": 0.0 if i in (2, 16) else 1, "a": 1, "b": 2, "tags": ["t"], "c": "red"}
        calls = [{"name": "tool", "args": {"n": 1}, "id": f"c-{i}", "type": "tool_call"}] if i == 14 else []
        out.append(AIMessage(content="red", id=f"e-{i}", additional_kwargs=kwargs, tool_calls=calls))
    return out


def _exactly(messages: list) -> list:
    """What must survive the store exactly: reprs tell 1, 1.0 and True, 0.0 and -0.0, key
    order, a set from a list and an enum member from its value apart."""
    return [(repr(m.content), repr(m.additional_kwargs), repr(m.tool_calls)) for m in messages]


def test_changes_equal_to_the_old_value_are_stored(tmp_path: Path) -> None:
    """Every put fingerprints a whole history at once (strict msgpack: types, float signs,
    key order); a change ``==`` would miss is stored, whether made to the caller's objects
    or to the copies ``get_tuple`` handed back."""
    path = tmp_path / "native.db"
    with InspectorSaver.from_conn_string(str(path)) as saver:
        mine = _history_of_equal_values()
        _put(saver, 1, {"messages": mine})
        _edits_equal_to_the_old(mine)                           # the caller's own objects
        _put(saver, 2, {"messages": mine})
        expected = _exactly(mine)
        assert _exactly(_values(saver)["messages"]) == expected
        _put(saver, 3, {"messages": _history_of_equal_values()})
        copies = _values(saver)["messages"]                     # fresh copies of step 3
        _put(saver, 4, {"messages": copies})
        _edits_equal_to_the_old(copies)                         # the copies, after a put
        _put(saver, 5, {"messages": copies})
        assert _exactly(_values(saver)["messages"]) == expected
        copies = _values(saver)["messages"]
        _put(saver, 6, {"messages": copies})
        copies[75].additional_kwargs["x"] = 1.0                 # alone, past the first group of 64
        _put(saver, 7, {"messages": copies})
        assert repr(_values(saver)["messages"][75].additional_kwargs["x"]) == "1.0"
    with InspectorSaver.from_conn_string(str(path)) as reader:  # from the file
        stored = reader.list({"configurable": {"thread_id": "direct", "checkpoint_ns": ""}})
        by_step = {t.metadata["step"]: _exactly(t.checkpoint["channel_values"]["messages"]) for t in stored}
    assert by_step[2] == by_step[5] == by_step[6] == expected
    assert by_step[7][75] != expected[75] and by_step[7][:75] == expected[:75]
    assert by_step[1] == by_step[3] == by_step[4] == _exactly(_history_of_equal_values()) != expected


def test_long_histories_cut_shifted_and_odd_items_are_stored_exactly(tmp_path: Path) -> None:
    """A long history is checked in groups of messages: a history cut at the front (every
    group shifted), a message of another class put in place of one (same fields), and one
    holding a value only pickle can fingerprint (a date) are each stored as they are, at the
    put they are made before, whether made to the caller's objects or to ``get_tuple``'s copies."""
    import datetime

    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    serde = JsonPlusSerializer()
    path = tmp_path / "native.db"
    expected: dict[int, list] = {}

    def put(saver: InspectorSaver, step: int, messages: list) -> None:
        # what a read of the stored bytes gives (as from SqliteSaver's file)
        expected[step] = [serde.dumps_typed(serde.loads_typed(serde.dumps_typed(m))) for m in messages]
        _put(saver, step, {"messages": messages})

    with InspectorSaver.from_conn_string(str(path)) as saver:
        history = [(HumanMessage if i % 2 else AIMessage)(content=f"m{i} " + "x" * (i % 7) * 100, id=f"m-{i}")
                   for i in range(150)]
        put(saver, 1, history)
        copies = _values(saver)["messages"]
        put(saver, 2, copies[3:])                                   # cut at the front: all groups shift
        copies = _values(saver)["messages"]
        copies[70].additional_kwargs["when"] = datetime.date(2026, 1, 2)   # only pickle fingerprints it
        put(saver, 3, copies)
        copies = _values(saver)["messages"]
        assert copies[70].additional_kwargs["when"] == datetime.date(2026, 1, 2)
        copies[70].additional_kwargs["when"] = datetime.date(2026, 1, 3)   # the same object, changed
        object.__setattr__(copies[20], "__class__", HumanMessage if type(copies[20]) is AIMessage else AIMessage)
        put(saver, 4, copies)
        copies = _values(saver)["messages"]
        put(saver, 5, copies + [AIMessage(content="new", id="new")])
        copies = _values(saver)["messages"]
        copies[-1].content = "new, edited"                          # the tail, in place
        copies[0].additional_kwargs["x"] = 1                         # the first group, in place
        put(saver, 6, copies)
        history[5].content = "the caller's object, after its put"
        put(saver, 7, history)
    with InspectorSaver.from_conn_string(str(path)) as reader:       # from the file
        stored = {t.metadata["step"]: [serde.dumps_typed(m) for m in t.checkpoint["channel_values"]["messages"]]
                  for t in reader.list({"configurable": {"thread_id": "direct", "checkpoint_ns": ""}})}
    assert stored.keys() == expected.keys()
    for step, messages in expected.items():
        assert stored[step] == messages, step
    assert expected[3] != expected[4] and expected[5] != expected[6] and expected[1] != expected[7]


def test_an_input_put_keeps_the_channels_langgraph_did_not_change(tmp_path: Path) -> None:
    """The ``input`` put LangGraph makes right after its ``get_tuple`` stores a channel that has
    no new version and still holds the very object ``get_tuple`` returned as it was handed
    out, as LangGraph's own savers do (``InMemorySaver`` here, ``PostgresSaver`` alike: they
    store nothing for a channel without a new version). Every other put, another object in
    the channel, or an input put of another checkpoint is looked at item by item (what
    ``SqliteSaver`` stores). Real graphs: a node's or a stream consumer's change in place is
    stored (``test_changes_in_place_are_stored_like_sqlite_saver``, the differential)."""
    from langgraph.checkpoint.memory import InMemorySaver

    def run(saver: Any) -> dict[str, dict]:
        thread = {"configurable": {"thread_id": "direct", "checkpoint_ns": ""}}

        def put(parent: Any, step: int, values: dict, versions: dict, new: list[str], source: str) -> Any:
            checkpoint = empty_checkpoint()
            checkpoint["id"] = f"1ef0000{step:04d}"
            checkpoint["channel_values"] = values
            checkpoint["channel_versions"] = versions
            return saver.put(parent, checkpoint, {"source": source, "step": step}, {c: versions[c] for c in new})

        def latest() -> dict:
            found = saver.get_tuple(thread)
            assert found is not None
            return found.checkpoint["channel_values"]

        v1, v2 = f"{1:032}.0", f"{2:032}.0"
        history = [AIMessage(content=f"m{i}", id=f"m-{i}") for i in range(40)]
        first = put(thread, 1, {"messages": history, "notes": {"k": [1]}}, {"messages": v1, "notes": v1},
                    ["messages", "notes"], "loop")
        # a direct caller changes what get_tuple returned, then puts it back as input without
        # a new version: LangGraph's contract says unchanged, and so it is stored
        handed = saver.get_tuple(thread)
        values = handed.checkpoint["channel_values"]
        values["messages"][0].content = "changed before the input put"
        values["notes"]["k"].append(2)
        put(handed.config, 2, {**values, "__start__": {"q": 1}}, {"messages": v1, "notes": v1, "__start__": v2},
            ["__start__"], "input")
        # a loop put: everything is looked at (a channel without a new version included)
        handed = saver.get_tuple(thread)
        values = handed.checkpoint["channel_values"]
        values["messages"][1].content = "changed before a loop put"
        values["notes"]["k"].append(3)
        put(handed.config, 3, values, {"messages": v2, "notes": v1}, ["messages"], "loop")
        # an input put holding another object than the one handed out (looked at), and a
        # channel with a new version (looked at)
        handed = saver.get_tuple(thread)
        changed = list(handed.checkpoint["channel_values"]["messages"])
        changed[2] = AIMessage(content="another object", id="m-2")
        notes = handed.checkpoint["channel_values"]["notes"]
        notes["k"].append(4)
        put(handed.config, 4, {"messages": changed, "notes": notes}, {"messages": v2, "notes": v2}, ["notes"], "input")
        # an input put of another checkpoint than the one handed out (a fork of the first): looked at
        values = latest()
        values["messages"][3].content = "changed before a fork's input put"
        put(first, 5, values, {"messages": v2, "notes": v1}, [], "input")
        if isinstance(saver, InspectorSaver):
            # a channel in new_versions under its old version string (LangGraph's own savers
            # would overwrite that version's blob): looked at
            handed = saver.get_tuple(thread)
            values = handed.checkpoint["channel_values"]
            values["notes"]["k"].append(6)
            put(handed.config, 6, values, {"messages": v2, "notes": v1}, ["notes"], "input")
        return {t.checkpoint["id"][-1]: {"messages": [m.content for m in t.checkpoint["channel_values"]["messages"][:4]],
                                         "notes": t.checkpoint["channel_values"]["notes"]}
                for t in saver.list(thread)}

    path = tmp_path / "native.db"
    with InspectorSaver.from_conn_string(str(path)) as ours:
        got = run(ours)
    theirs = run(InMemorySaver())
    m = ["m0", "m1", "m2", "m3"]
    assert got["2"] == theirs["2"] == {"messages": m, "notes": {"k": [1]}}
    assert got["3"] == {"messages": ["m0", "changed before a loop put", "m2", "m3"], "notes": {"k": [1, 3]}}
    assert theirs["3"]["messages"] == got["3"]["messages"] and theirs["3"]["notes"] == {"k": [1]}
    assert got["4"] == {"messages": ["m0", "changed before a loop put", "another object", "m3"], "notes": {"k": [1, 3, 4]}}
    assert got["5"]["messages"] == ["m0", "changed before a loop put", "another object", "changed before a fork's input put"]
    assert got["6"]["notes"] == {"k": [1, 3, 4, 6]} and got["5"]["notes"] == {"k": [1, 3, 4]}
    with InspectorSaver.from_conn_string(str(path)) as reader:      # and so in the file
        thread = {"configurable": {"thread_id": "direct", "checkpoint_ns": ""}}
        again = {t.checkpoint["id"][-1]: {"messages": [m.content for m in t.checkpoint["channel_values"]["messages"][:4]],
                                          "notes": t.checkpoint["channel_values"]["notes"]} for t in reader.list(thread)}
    assert again == got


class _Chat(TypedDict):
    messages: Annotated[list, add_messages]
    notes: dict


def _consumer_edits(saver: Any) -> tuple[Any, dict]:
    """A real graph whose *caller* changes the state in place: a stream consumer edits the
    values of every chunk (old messages and a channel no node returns), and a caller edits an
    invoke's output before the next invoke."""
    def reply(state: _Chat) -> dict:
        return {"messages": [AIMessage(content=f"reply {len(state['messages'])}", id=f"r-{len(state['messages'])}")]}

    builder = StateGraph(_Chat)
    builder.add_node("reply", reply)
    builder.add_edge(START, "reply")
    graph = builder.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "consumer"}}
    graph.invoke({"messages": [HumanMessage(content="first", id="h-0")], "notes": {"log": []}}, config,
                 durability="sync")
    for turn in range(1, 8):
        question = {"messages": [HumanMessage(content=f"turn {turn}", id=f"h-{turn}")]}
        if turn % 2:
            for n, chunk in enumerate(graph.stream(question, config, stream_mode="values", durability="sync")):
                chunk["messages"][0].content = f"edited by the consumer at {turn}.{n}"
                chunk["notes"]["log"].append(f"{turn}.{n}")
        else:
            out = graph.invoke(question, config, durability="sync")
            out["messages"][1].content = f"edited after invoke {turn}"    # not stored: nothing is put after it
            out["notes"]["log"].append(f"after {turn}")
    return graph, config


def test_changes_a_caller_makes_in_place_are_stored_like_sqlite_saver(tmp_path: Path) -> None:
    with sqlite_saver(tmp_path / "lg.db") as theirs:
        graph, config = _consumer_edits(theirs)
        expected = _history(graph, config)
    with InspectorSaver.from_conn_string(str(tmp_path / "native.db")) as ours:
        graph, config = _consumer_edits(ours)
        got = _history(graph, config)
    head = expected[0]["values"]
    assert head["messages"][0]["content"].startswith("edited by the consumer") and len(head["notes"]["log"]) >= 4
    assert got == expected, _difference(got, expected)


@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings")     # (the bytearray content below)
def test_objects_nothing_else_can_reach_are_handed_out_themselves(tmp_path: Path) -> None:
    """``get_tuple`` hands out the very objects of the last put instead of copies only when a
    copy could not be told from them: nothing but the saver holds them (no reference, no weak
    one) nor any mutable part of them (``__dict__``, fields set, extras, a container of their
    state), and their states are as stored. Each way a caller can keep or change one makes
    the saver copy, so what it returns and stores never changes behind its back."""
    import gc
    import weakref

    def history(n: int = 130) -> list:
        return [(AIMessage if i % 2 else HumanMessage)(content=f"m{i} " + "x" * 50, id=f"m-{i}") for i in range(n)]

    def stored(saver: InspectorSaver, n: int = 130) -> list[str]:
        return [m.content for m in _values(saver)["messages"][:n]]

    expected = [m.content for m in history()]
    with InspectorSaver.from_conn_string(str(tmp_path / "native.db")) as saver:
        _put(saver, 1, {"messages": history()})
        first = [id(m) for m in _values(saver)["messages"]]     # copies (the caller's list was alive)
        again = [id(m) for m in _values(saver)["messages"]]     # nothing held them: the same objects
        assert again == first
        # a caller holding what get_tuple returned gets other objects next time
        held = _values(saver)["messages"]
        other = _values(saver)["messages"]
        assert all(a is not b for a, b in zip(held, other))
        held[0].content = "held and changed"
        assert stored(saver) == expected
        del held, other
        gc.collect()
        # changed, then let go: copied from what was stored, not handed out as changed
        changed = _values(saver)["messages"]
        changed[3].content = "changed, then let go"
        del changed
        assert stored(saver) == expected

        for step, (grab, change) in enumerate([
                (lambda m: m.additional_kwargs, lambda k: k.update(x=1)),
                (lambda m: m.response_metadata, lambda k: k.update(x=1)),
                (lambda m: vars(m), lambda d: d.update(content="via __dict__")),
                (lambda m: m.__pydantic_fields_set__, lambda s: s.add("name")),
                (lambda m: m.__pydantic_extra__, lambda e: e.update(x=1)),
                (lambda m: weakref.ref(m), lambda r: setattr(r(), "content", "via a weak reference")),
                (lambda m: m.tool_calls, lambda c: c.append({"name": "t", "args": {}, "id": "c", "type": "tool_call"}))],
                start=10):
            _put(saver, step, {"messages": history()})
            values = _values(saver)["messages"]
            ids = [id(m) for m in values]
            part = grab(values[7])      # only a part of one message is kept
            del values
            values = _values(saver)["messages"]
            assert [id(m) for m in values] != ids or step == 15     # (a weak reference: handed out itself)
            if step == 15:
                del values
                values = _values(saver)["messages"]
            change(part)
            assert [m.content for m in values] == expected and stored(saver) == expected
            assert values[7].additional_kwargs == {} and values[7].response_metadata == {}
            assert values[7].__pydantic_fields_set__ == {"content", "id"} and not values[7].__pydantic_extra__
            assert not values[7].tool_calls and not values[7].invalid_tool_calls
            del values, part
        # a bytearray in a state (fingerprinted as bytes): copied, never handed out
        raw = bytearray(b"raw")
        messages = history()
        messages[9].content = raw
        _put(saver, 20, {"messages": messages})
        del messages
        _values(saver)
        before = _values(saver)["messages"]
        raw[0:1] = b"R"
        assert before[9].content == b"raw" and _values(saver)["messages"][9].content == b"raw"
    with InspectorSaver.from_conn_string(str(tmp_path / "native.db")) as reader:
        thread = {"configurable": {"thread_id": "direct", "checkpoint_ns": ""}}
        steps = {t.metadata["step"]: [m.content for m in t.checkpoint["channel_values"]["messages"]] for t in reader.list(thread)}
    assert steps[1] == steps[16] == expected and steps[20][9] in (b"raw", "raw")    # (read back by LangGraph's serializer)
