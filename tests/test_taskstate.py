"""The semantic task-state model: validation messages and the cumulative score."""

from __future__ import annotations

import pytest

from inspector import taskstate
from inspector.errors import TaskStateError


def test_defaults_are_filled() -> None:
    state = taskstate.validate({"goal": "g", "tasks": [{"id": 1, "title": "T"}]})
    task = state["tasks"][0]
    assert task == {"id": "1", "title": "T", "status": "pending", "progress": 0.0,
                    "review": {"status": "none", "reviewer": None, "note": None}, "checks": []}


@pytest.mark.parametrize("raw, where", [
    ([], "(root)"),
    ({"tasks": [{"id": "a", "status": "finished"}]}, "tasks[0].status"),
    ({"tasks": [{"id": "a", "progress": 1.5}]}, "tasks[0].progress"),
    ({"tasks": [{"id": "a", "review": {"status": "maybe"}}]}, "tasks[0].review.status"),
    ({"tasks": [{"id": "a", "checks": [{"name": "c", "passed": "yes"}]}]}, "tasks[0].checks[0].passed"),
    ({"tasks": [{"id": "a"}, {"id": "a"}]}, "tasks[1].id"),
    ({"tasks": [{"title": "no id"}]}, "tasks[0].id"),
])
def test_errors_name_the_place(raw, where: str) -> None:
    with pytest.raises(TaskStateError) as err:
        taskstate.validate(raw)
    assert where in str(err.value)


def test_score_is_binary_and_cumulative() -> None:
    state = {"tasks": [
        {"id": "a", "status": "done", "checks": [{"name": "x", "passed": True}, {"name": "y", "passed": False}]},
        {"id": "b", "status": "in_progress", "checks": [{"name": "z", "passed": None}]},
    ]}
    score = taskstate.score(state)
    assert (score.tasks_done, score.tasks_total, score.checks_passed, score.checks_total) == (1, 2, 1, 3)
    assert str(score) == "1/3" and score.ratio == pytest.approx(1 / 3)
    assert taskstate.score(None).checks_total == 0


def _tasks(n: int, step: int) -> dict:
    return {"goal": "g", "tasks": [
        {"id": f"t{i}", "status": ("done" if (i + step) % 3 == 0 else "pending"),
         "checks": [{"name": f"c{j}", "passed": (True if (i + j + step) % 2 else None)} for j in range(i % 4)]}
        for i in range(n)]}


def test_the_memo_returns_the_last_state_when_nothing_changed_and_counts_the_score() -> None:
    import copy
    from inspector.codec.encoded import fingerprints
    memo = taskstate.TaskMemo(fingerprints)
    first = taskstate.validate(_tasks(8, 0), memo)
    assert memo.normal is first and memo.score == taskstate.score(first)
    again = taskstate.validate(copy.deepcopy(_tasks(8, 0)), memo)
    assert again is first                     # nothing changed: the very state of the last call
    for step in range(1, 7):
        raw = _tasks(8 + step % 2, step)
        state = taskstate.validate(raw, memo)
        assert state is not first and state == taskstate.validate(raw)
        assert memo.score == taskstate.score(state)
        first = state
    raw = _tasks(8, 6)
    assert taskstate.validate(raw, memo) is first
    raw["tasks"][2]["checks"][0]["passed"] = False       # changed in place: seen
    changed = taskstate.validate(raw, memo)
    assert changed is not first and memo.score == taskstate.score(changed)
    raw["goal"] = "other"
    assert taskstate.validate(raw, memo)["goal"] == "other"

    class Text(str):
        pass
    raw["goal"] = Text("other")        # a str subclass is the plain string it holds, as a state stores it
    assert type(taskstate.validate(raw, memo)["goal"]) is str
