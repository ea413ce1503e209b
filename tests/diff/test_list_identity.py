"""List items that carry an id are matched by it; a reordered list reads as the fewest moves.

Two messages with different ids are two messages (one removed, one added), never one
message whose fields all changed; a message with the same id that moved and was edited is
a move and its field changes; a sorted list never says an item moved to where it was.
"""

from __future__ import annotations

import copy
import random
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, SystemMessage, ToolMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

from inspector.diff import ADDED, CHANGED, MOVED, REMOVED, Change, apply, diff_checkpoints, diff_values
from inspector.diff.grouping import ItemRange, group_changes
from inspector.diff.lists import identity
from inspector.store import open_store
from inspector.store.refs import resolve_checkpoint

from .test_properties import hashed_diff


def _diff(path: Path, old: str, new: str) -> Any:
    """``diff_checkpoints`` of two checkpoints named as the CLI names them (RUN:SEQ)."""
    with open_store(path) as store:
        return diff_checkpoints(store, resolve_checkpoint(store, old), resolve_checkpoint(store, new))


def _messages(changes: tuple[Change, ...]) -> list[tuple[str, tuple]]:
    return [(c.op, c.path) for c in changes if c.path[:1] == ("messages",)]


# -- LangGraph messages, written by real LangGraph savers -------------------------------------
class ChatState(TypedDict):
    messages: Annotated[list, add_messages]


def _langgraph_store(path: Path, saver_kind: str) -> None:
    """A real graph whose history is windowed: the system and human messages removed, seven
    agent and tool messages added (as ``add_messages`` does it), in one update."""
    builder = StateGraph(ChatState)
    builder.add_node("agent", lambda state: {"messages": []})
    builder.add_edge(START, "agent")
    builder.add_edge("agent", END)
    if saver_kind == "sqlite":
        from langgraph.checkpoint.sqlite import SqliteSaver
        manager: Any = SqliteSaver.from_conn_string(str(path))
    else:
        from inspector.record.langgraph import InspectorSaver
        manager = InspectorSaver.from_conn_string(str(path))
    with manager as saver:
        graph = builder.compile(checkpointer=saver)
        config: Any = {"configurable": {"thread_id": "chat"}}
        start: Any = {"messages": [SystemMessage(content="sys", id="sys"), HumanMessage(content="Write 3 files", id="h1")]}
        graph.invoke(start, config)
        added: list[Any] = []
        for n in range(3):
            added.append(AIMessage(content="", id=f"ai-{n}", tool_calls=[
                {"id": f"call_{n}", "name": "write_file", "args": {"path": f"f{n}.py"}}]))
            added.append(ToolMessage(content='{"ok": true}', tool_call_id=f"call_{n}", id=f"tool-{n}"))
        added.append(AIMessage(content="All done.", id="ai-final"))
        graph.update_state(config, {"messages": [RemoveMessage(id="sys"), RemoveMessage(id="h1"), *added]})


@pytest.mark.parametrize("saver_kind", ["sqlite", "inspector"])
def test_langgraph_messages_with_other_ids_are_removed_and_added(tmp_path: Path, saver_kind: str) -> None:
    path = tmp_path / "lg.db"
    _langgraph_store(path, saver_kind)
    result = _diff(path, "chat:-2", "chat:-1")
    with open_store(path) as store:
        old = store.load(resolve_checkpoint(store, "chat:-2").id).state["messages"]
    assert [identity(m) for m in old] == ["sys", "h1"]       # the decoded messages carry their ids
    assert _messages(result.changes) == ([(REMOVED, ("messages", 0)), (REMOVED, ("messages", 1))]
                                         + [(ADDED, ("messages", j)) for j in range(7)])
    assert "+7 msgs, -2 msgs" in result.summary
    rows = group_changes(result.changes)
    assert [type(row) for row in rows] == [Change, Change, ItemRange]


def test_plain_dict_messages_replaced_in_place_are_other_messages() -> None:
    """Equal lengths, no shift: positions alone would pair them."""
    old = {"messages": [{"id": "sys", "role": "system", "content": "be brief", "name": None},
                        {"id": "h1", "role": "user", "content": "hi", "name": None}]}
    new = {"messages": [{"id": "a1", "role": "assistant", "content": "", "name": None},
                        {"id": "t1", "role": "tool", "content": "ok", "name": None}]}
    for changes in (diff_values(old, new), hashed_diff(old, new)):
        assert sorted(_messages(changes)) == sorted([(REMOVED, ("messages", 0)), (REMOVED, ("messages", 1)),
                                                     (ADDED, ("messages", 0)), (ADDED, ("messages", 1))])
        assert apply(old, changes) == new


def test_records_whose_ids_changed_in_place_are_a_run_removed_then_added() -> None:
    """Equal lengths, edits here and there, and two records in a row replaced by others: those
    read as a run removed and a run added, the edits stay edits; encoded chunks say the same."""
    old = [{"id": f"f{i}", "text": f"fact {i}", "score": i} for i in range(60)]
    new = copy.deepcopy(old)
    new[5]["score"] = -1
    new[20], new[21] = {"id": "x1", "text": "other", "score": 0}, {"id": "x2", "text": "other", "score": 0}
    new[40]["text"] = "edited"
    expected = [(CHANGED, ("facts", 5, "score")), (REMOVED, ("facts", 20)), (REMOVED, ("facts", 21)),
                (ADDED, ("facts", 20)), (ADDED, ("facts", 21)), (CHANGED, ("facts", 40, "text"))]
    for changes in (diff_values({"facts": old}, {"facts": new}), hashed_diff({"facts": old}, {"facts": new})):
        assert [(c.op, c.path) for c in changes] == expected
        assert apply({"facts": old}, changes) == {"facts": new}


def test_an_edited_message_with_its_id_is_edited_in_place() -> None:
    msgs = [{"id": f"m{i}", "role": "user", "content": f"message {i}"} for i in range(40)]
    new = copy.deepcopy(msgs)
    new[7]["content"] = "edited"
    del new[20]
    new.insert(30, {"id": "fresh", "role": "tool", "content": "x"})
    for changes in (diff_values({"messages": msgs}, {"messages": new}),
                    hashed_diff({"messages": msgs}, {"messages": new})):
        assert [(c.op, c.path) for c in changes] == [
            (CHANGED, ("messages", 7, "content")), (REMOVED, ("messages", 20)), (ADDED, ("messages", 30))]


# -- moves ------------------------------------------------------------------------------------
def test_a_message_moved_and_edited_is_a_move_and_its_field_change(tmp_path: Path) -> None:
    from inspector.record import Checkpointer, Interval

    msgs = [{"id": f"m{i}", "role": "user" if i % 2 == 0 else "assistant", "content": f"message number {i}"}
            for i in range(20)]
    new = copy.deepcopy(msgs)
    moved = new.pop(3)
    moved["content"] += " (edited)"
    new.insert(15, moved)
    path = tmp_path / "native.db"
    with Checkpointer(path, name="move_and_edit", interval=Interval.every_step()) as cp:
        cp.save({"messages": msgs})
        cp.save({"messages": new})
    result = _diff(path, "move_and_edit:0", "move_and_edit:1")
    assert [(c.op, c.path) for c in result.changes] == [(MOVED, ("messages", 15)),
                                                        (CHANGED, ("messages", 15, "content"))]
    move, edit = result.changes
    assert (move.detail.source, move.detail.target) == (3, 15)
    assert move.old == msgs[3] and move.new == new[15]
    assert edit.new == "message number 3 (edited)"
    assert apply({"messages": msgs}, result.changes) == {"messages": new}
    assert result.summary == "state: 1 changed, 1 moved"
    assert diff_values({"messages": msgs}, {"messages": new}) == result.changes


def _longest_increasing(values: list[int]) -> int:
    tails: list[int] = []
    for v in values:
        lo, hi = 0, len(tails)
        while lo < hi:
            mid = (lo + hi) // 2
            if tails[mid] < v:
                lo = mid + 1
            else:
                hi = mid
        tails[lo:lo + 1] = [v]
    return len(tails)


def test_a_sorted_list_reads_as_the_fewest_moves(tmp_path: Path) -> None:
    from inspector.record import Checkpointer, Interval

    rnd = random.Random(7)
    records = [{"id": i, "name": f"item{i}", "score": rnd.randint(0, 100)} for i in range(30)]
    ordered = sorted(copy.deepcopy(records), key=lambda r: r["score"])
    path = tmp_path / "native.db"
    with Checkpointer(path, name="resort", interval=Interval.every_step()) as cp:
        cp.save({"records": records})
        cp.save({"records": ordered})
    result = _diff(path, "resort:0", "resort:1")
    changes = result.changes
    assert {c.op for c in changes} == {MOVED}
    assert all(c.detail.source != c.detail.target for c in changes)       # never "from [12] to [12]"
    fixed = sum(1 for j, r in enumerate(ordered) if r["id"] == j)
    assert len(changes) <= 30 - max(_longest_increasing([r["id"] for r in ordered]), fixed)
    assert apply({"records": records}, changes) == {"records": ordered}
    assert result.summary == f"state: records reordered ({len(changes)} moved)"


def test_a_single_move_and_a_swap_stay_small() -> None:
    items = [{"id": i, "v": i} for i in range(10)]
    one = items[:2] + items[3:8] + [items[2]] + items[8:]
    assert [(c.op, c.detail.source, c.detail.target) for c in diff_values(items, one)] == [(MOVED, 2, 7)]
    swapped = [items[1], items[0]] + items[2:]
    assert len(diff_values(items, swapped)) == 1


def test_a_value_at_its_own_index_is_never_a_move() -> None:
    """``1`` and ``1.0`` are equal items: at the same index it is a change of type."""
    changes = diff_values({"x": [3, 1, 2, 0]}, {"x": [2, 1.0, 0, 3]})
    assert all(c.detail.source != c.detail.target for c in changes if c.op == MOVED)
    assert (CHANGED, ("x", 1)) in [(c.op, c.path) for c in changes]
    assert apply({"x": [3, 1, 2, 0]}, changes) == {"x": [2, 1.0, 0, 3]}


# -- properties --------------------------------------------------------------------------------
@st.composite
def id_lists(draw: st.DrawFn) -> tuple[list, list]:
    """A list of records with ids and a copy reshuffled, edited, shortened and grown."""
    size = draw(st.integers(0, 25))
    old: list[dict[str, Any]] = [{"id": f"r{i}", "v": draw(st.integers(0, 3)), "tag": "x"} for i in range(size)]
    new = copy.deepcopy(old)
    fresh = size
    for _ in range(draw(st.integers(0, 6))):
        action = draw(st.sampled_from(["move", "edit", "delete", "insert", "shuffle", "sort"]))
        if action == "insert" or not new:
            new.insert(draw(st.integers(0, len(new))), {"id": f"r{fresh}", "v": 0, "tag": "x"})
            fresh += 1
        elif action == "move":
            item = new.pop(draw(st.integers(0, len(new) - 1)))
            new.insert(draw(st.integers(0, len(new))), item)
        elif action == "edit":
            new[draw(st.integers(0, len(new) - 1))]["v"] += 1
        elif action == "delete":
            del new[draw(st.integers(0, len(new) - 1))]
        elif action == "shuffle":
            new = draw(st.permutations(new))
        else:
            new.sort(key=lambda r: r["v"])
    return old, new


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(id_lists())
def test_items_with_ids_are_matched_by_them(pair: tuple[list, list]) -> None:
    old, new = pair
    ids_old, ids_new = [r["id"] for r in old], [r["id"] for r in new]
    for changes in (diff_values({"l": old}, {"l": new}), hashed_diff({"l": old}, {"l": new})):
        assert apply({"l": old}, changes) == {"l": new}
        for c in changes:
            if c.op == MOVED:
                assert c.detail.source != c.detail.target
                assert ids_old[c.detail.source] == ids_new[c.detail.target]
            elif c.op == ADDED:
                assert len(c.path) == 2 and ids_new[c.path[1]] not in ids_old
            elif c.op == REMOVED:
                assert len(c.path) == 2 and ids_old[c.path[1]] not in ids_new
            else:       # an edit inside an item: the same item
                assert len(c.path) == 3 and c.path[2] == "v"
    changes = diff_values({"l": old}, {"l": new})
    moved = sum(1 for c in changes if c.op == MOVED)
    pairs = [(ids_old.index(i), j) for j, i in enumerate(ids_new) if i in ids_old]
    assert moved == len(pairs) - _most_kept(pairs)      # the fewest moves that keep every item at its index


def _most_kept(pairs: list[tuple[int, int]]) -> int:
    """How many of the ``(old index, new index)`` pairs (in new order) can stay: the longest
    chain increasing in the old index that holds every pair whose index did not change."""
    weight = [len(pairs) + 1 if i == j else 1 for i, j in pairs]
    best = list(weight)
    for k, (i, _) in enumerate(pairs):
        for m in range(k):
            if pairs[m][0] < i:
                best[k] = max(best[k], best[m] + weight[k])
    top = max(best, default=0)
    fixed = sum(1 for i, j in pairs if i == j)
    return top - fixed * (len(pairs) + 1) + fixed
