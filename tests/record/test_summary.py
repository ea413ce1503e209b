"""The change summary of task states: the path for normalised task states with the same ids
in the same order (only the changed tasks looked at) says what comparing by id says."""

from __future__ import annotations

import copy
import random

import pytest

from inspector import taskstate
from inspector.codec.encoded import fingerprints
from inspector.record import summary


def _raw(rnd: random.Random, ids: list) -> dict:
    return {"goal": "g", "tasks": [
        {"id": tid, "status": rnd.choice(taskstate.TASK_STATUSES),
         "review": rnd.choice([None, "requested", "approved"]),
         "checks": [{"name": "c", "passed": rnd.choice([True, False, None])}]} for tid in ids]}


def _by_id(old, new, scores=None):
    """What comparing by id says (the path the shortcut must agree with)."""
    real = summary._same_ids
    summary._same_ids = lambda a, b: None
    try:
        return summary.task_changes(old, new, scores)
    finally:
        summary._same_ids = real


@pytest.mark.parametrize("seed", range(6))
def test_successive_normalised_task_states_summarise_as_by_id(seed: int) -> None:
    rnd = random.Random(seed)
    memo = taskstate.TaskMemo(fingerprints)
    ids = [f"t{i}" for i in range(8)]
    raw = _raw(rnd, ids)
    old = taskstate.validate(raw, memo)
    seen_change = False
    for _ in range(30):
        raw = copy.deepcopy(raw)
        for task in rnd.sample(raw["tasks"], rnd.randint(0, 3)):
            task["status"] = rnd.choice(taskstate.TASK_STATUSES)
            task["review"] = rnd.choice([None, "requested", "approved", "changes_requested"])
            task["checks"][0]["passed"] = rnd.choice([True, False, None])
        if rnd.random() < 0.15:                      # now and then another set or order of tasks
            rnd.shuffle(raw["tasks"])
        new = taskstate.validate(raw, memo)
        got = summary.task_changes(old, new)
        assert got == _by_id(old, new)
        seen_change |= bool(got)
        old = new
    assert seen_change


def test_unnormalised_task_states_are_compared_by_id() -> None:
    a = {"tasks": [{"id": "x", "status": "done"}, {"id": "x", "status": "pending"}]}
    b = {"tasks": [{"id": "x", "status": "failed"}, {"id": "x", "status": "blocked"}]}
    assert summary.task_changes(a, b) == _by_id(a, b) == ["x → blocked"]
    c = {"tasks": [{"id": 1, "status": "done"}, "junk"]}
    d = {"tasks": [{"id": "1", "status": "failed"}, "junk"]}
    assert summary.task_changes(c, d) == _by_id(c, d) == ["1 → failed"]
