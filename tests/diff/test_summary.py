"""Summaries: the diff headline and the cheap label for adjacent snapshots."""

from __future__ import annotations

import copy

from inspector.diff import change_summary, diff_values, result_summary, structural_summary
from inspector.codec import PieceEncoder, unpack


def chat(n: int) -> dict:
    return {"messages": [{"role": "user", "content": f"m{i}"} for i in range(n)], "plan": "draft", "step": n}


def test_structural_summary_counts_appended_messages() -> None:
    old = chat(10)
    new = copy.deepcopy(old)
    new["messages"].append({"role": "assistant", "content": "hi"})
    new["step"] += 1
    new["extra"] = 1
    assert structural_summary(diff_values(old, new)) == "+1 msg, 1 added, 1 changed"
    assert structural_summary(()) == ""


def test_result_summary_combines_tasks_and_state() -> None:
    assert result_summary("", ()) == "no changes"
    assert result_summary("1 task done", ()) == "1 task done · state unchanged"
    changes = diff_values({"a": 1}, {"a": 2})
    assert result_summary("1 task done", changes) == "1 task done · state: 1 changed"


def test_change_summary_for_a_step() -> None:
    old = chat(5)
    new = copy.deepcopy(old)
    new["messages"].append({"role": "tool", "content": "result"})
    old_tasks = {"tasks": [{"id": "1", "title": "draft", "status": "in_progress"}]}
    new_tasks = {"tasks": [{"id": "1", "title": "draft", "status": "done"}]}
    assert change_summary(old, new, old_tasks, new_tasks) == "+1 msg · draft → done"
    assert change_summary(old, old) == ""


def test_change_summary_names_changed_added_and_removed_keys() -> None:
    old = {"messages": [1, 2, 3], "plan": "a", "gone": 1}
    new = {"messages": [1, 2], "plan": "b", "new": 1}
    assert change_summary(old, new) == "-1 msg · plan · +new · -gone"
    assert change_summary(old, {**old, "messages": [1, 2, 4]}) == "messages edited"
    assert change_summary(1, 2) == "state changed"
    assert change_summary({"a": 1}, [1]) == "state replaced"


def test_change_summary_is_cut_to_a_few_parts() -> None:
    old = {f"k{i}": i for i in range(10)}
    new = {f"k{i}": -i - 1 for i in range(10)}
    assert change_summary(old, new, max_parts=3) == "k0 · k1 · +8 more"


def test_change_summary_on_root_pieces_uses_chunk_tables() -> None:
    encoder = PieceEncoder()
    old = {"messages": [{"role": "user", "content": f"message {i} " * 8} for i in range(200)], "plan": "x"}
    new = copy.deepcopy(old)
    new["messages"] += [{"role": "tool", "content": "a"}, {"role": "tool", "content": "b"}]
    root_a, _, pieces_a = encoder.encode(old)
    root_b, _, pieces_b = encoder.encode(new)
    form_a, form_b = unpack(pieces_a[root_a]), unpack(pieces_b[root_b])
    assert change_summary(form_a, form_b) == "+2 msgs"


def test_three_way_conflicts_exclude_identical_changes() -> None:
    from inspector.diff import ThreeWay
    from inspector.model import CheckpointInfo

    base = {"log": ["a"], "plan": "x", "n": 1}
    left = {"log": ["a", "b"], "plan": "y", "n": 2}
    right = {"log": ["a", "b"], "plan": "z", "n": 1}
    ancestor = CheckpointInfo(id=1, run_id="r", seq=0, kind="step", name="", created=0.0)
    three = ThreeWay(ancestor, diff_values(base, left), diff_values(base, right))
    assert three.both_changed == (("plan",),)
