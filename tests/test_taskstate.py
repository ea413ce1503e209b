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
