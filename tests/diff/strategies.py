"""Hypothesis strategies: JSON-like values, edited copies, message histories and task states."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import strategies as st

from inspector.taskstate import REVIEW_STATUSES, TASK_STATUSES

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-1000, 1000),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(max_size=8), st.text(alphabet="ab \n", min_size=80, max_size=120))
keys = st.text(alphabet="abcdefgh", min_size=1, max_size=3)

json_values = st.recursive(
    scalars,
    lambda children: st.one_of(st.lists(children, max_size=6),
                               st.dictionaries(keys, children, max_size=5)),
    max_leaves=30)


@st.composite
def edited(draw: st.DrawFn, value: Any, rounds: int = 4) -> Any:
    """A copy of ``value`` with a few random edits anywhere in the tree."""
    value = copy.deepcopy(value)
    for _ in range(draw(st.integers(0, rounds))):
        value = _edit_once(draw, value)
    return value


def _edit_once(draw: st.DrawFn, root: Any) -> Any:
    containers = [root] if isinstance(root, (dict, list)) else []
    stack = list(containers)
    while stack:
        node = stack.pop()
        children = node.values() if isinstance(node, dict) else node
        for child in children:
            if isinstance(child, (dict, list)):
                containers.append(child)
                stack.append(child)
    if not containers or draw(st.integers(0, 9)) == 0:
        return draw(json_values)
    node = draw(st.sampled_from(containers))
    if isinstance(node, dict):
        key = draw(keys)
        if key in node and draw(st.booleans()):
            del node[key]
        else:
            node[key] = draw(json_values)
        return root
    action = draw(st.sampled_from(["insert", "delete", "replace", "move", "append"]))
    if action in ("insert", "append") or not node:
        at = len(node) if action == "append" else draw(st.integers(0, len(node)))
        node.insert(at, draw(json_values))
    elif action == "delete":
        del node[draw(st.integers(0, len(node) - 1))]
    elif action == "replace":
        node[draw(st.integers(0, len(node) - 1))] = draw(json_values)
    else:
        item = node.pop(draw(st.integers(0, len(node) - 1)))
        node.insert(draw(st.integers(0, len(node))), item)
    return root


messages = st.lists(st.fixed_dictionaries({
    "role": st.sampled_from(["user", "assistant", "tool"]),
    "content": st.text(alphabet="abcdef ", min_size=0, max_size=60)}), min_size=0, max_size=90)


@st.composite
def histories(draw: st.DrawFn) -> tuple[dict, dict]:
    """A state with a message history (long enough to be chunked) and an edited copy."""
    old = {"messages": draw(messages), "notes": draw(st.text(alphabet="xyz \n", max_size=700)),
           "meta": draw(json_values)}
    new = copy.deepcopy(old)
    history = new["messages"]
    for _ in range(draw(st.integers(0, 5))):
        action = draw(st.sampled_from(["append", "insert", "delete", "edit", "move", "notes", "meta"]))
        if action == "append" or (not history and action in ("insert", "delete", "edit", "move")):
            history.extend(draw(messages)[:3])
        elif action == "insert":
            history.insert(draw(st.integers(0, len(history))), {"role": "tool", "content": draw(st.text(max_size=20))})
        elif action == "delete":
            del history[draw(st.integers(0, len(history) - 1))]
        elif action == "edit":
            history[draw(st.integers(0, len(history) - 1))]["content"] += draw(st.text(min_size=1, max_size=5))
        elif action == "move":
            item = history.pop(draw(st.integers(0, len(history) - 1)))
            history.insert(draw(st.integers(0, len(history))), item)
        elif action == "notes":
            new["notes"] = draw(st.text(alphabet="xyz \n", max_size=700))
        else:
            new["meta"] = draw(edited(new["meta"]))
    return old, new


checks = st.lists(st.fixed_dictionaries({
    "name": st.sampled_from(["lint", "tests", "docs", "build"]),
    "passed": st.sampled_from([True, False, None]),
    "detail": st.sampled_from([None, "ok", "2 failures"])}), max_size=4)


@st.composite
def task_states(draw: st.DrawFn) -> dict:
    """A valid task state (unique ids)."""
    ids = draw(st.lists(st.sampled_from([f"t{i}" for i in range(8)]), unique=True, max_size=6))
    return {"goal": draw(st.sampled_from(["ship", "ship it"])), "tasks": [
        {"id": tid, "title": draw(st.sampled_from(["draft", "review", tid])),
         "status": draw(st.sampled_from(TASK_STATUSES)),
         "progress": draw(st.sampled_from([0.0, 0.5, 1.0])),
         "review": {"status": draw(st.sampled_from(REVIEW_STATUSES)),
                    "reviewer": draw(st.sampled_from([None, "rita"])), "note": None},
         "checks": draw(checks)} for tid in ids]}


@st.composite
def task_pairs(draw: st.DrawFn) -> tuple[dict, dict]:
    """Two task states, the second derived from the first by a few transitions."""
    old = draw(task_states())
    new = copy.deepcopy(old)
    for task in new["tasks"]:
        if draw(st.booleans()):
            task["status"] = draw(st.sampled_from(TASK_STATUSES))
        if draw(st.integers(0, 3)) == 0:
            task["review"] = {"status": draw(st.sampled_from(REVIEW_STATUSES)), "reviewer": "rita", "note": None}
        for check in task["checks"]:
            if draw(st.integers(0, 2)) == 0:
                check["passed"] = draw(st.sampled_from([True, False, None]))
    if draw(st.booleans()):
        extra = draw(task_states())["tasks"]
        known = {t["id"] for t in new["tasks"]}
        new["tasks"] += [t for t in extra if t["id"] not in known][:2]
    if new["tasks"] and draw(st.booleans()):
        del new["tasks"][draw(st.integers(0, len(new["tasks"]) - 1))]
    return old, new


@st.composite
def respelled(draw: st.DrawFn, value: Any, numbers: bool = True) -> Any:
    """A value equal to ``value`` (``==``) but written another way: every dict with its keys
    in another order, and (``numbers``) integers here and there as the equal float (``1`` →
    ``1.0``: a change the diff reports, while the item stays the same item)."""
    if isinstance(value, dict):
        items = [(k, draw(respelled(v, numbers))) for k, v in value.items()]
        return dict(draw(st.permutations(items)))
    if isinstance(value, list):
        return [draw(respelled(v, numbers)) for v in value]
    if numbers and type(value) is int and abs(value) < 2 ** 53 and draw(st.booleans()):
        return float(value)
    return value


records = st.lists(st.fixed_dictionaries({
    "role": st.sampled_from(["user", "assistant", "tool"]),
    "tokens": st.integers(0, 50),
    "content": st.text(alphabet="abc ", max_size=12),
    "meta": st.fixed_dictionaries({"score": st.integers(0, 9), "tags": st.lists(st.integers(0, 3), max_size=3)})}),
    min_size=2, max_size=12)


@st.composite
def reordered_histories(draw: st.DrawFn) -> tuple[dict, dict]:
    """A list of distinct records and the same records in another order, each respelled
    (keys reordered): every difference is a move."""
    items = [dict(r, id=n) for n, r in enumerate(draw(records))]
    order = draw(st.permutations(range(len(items))))
    return {"items": items}, {"items": [draw(respelled(items[n], numbers=False)) for n in order]}
