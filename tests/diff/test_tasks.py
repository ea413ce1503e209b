"""Task-state diff: transitions, regressions and the one-line summary."""

from __future__ import annotations

import copy

from inspector.diff import diff_tasks, task_summary


def state() -> dict:
    def task(tid: str, title: str, status: str, passed: list) -> dict:
        return {"id": tid, "title": title, "status": status, "progress": 0.5,
                "review": {"status": "requested", "reviewer": None, "note": None},
                "checks": [{"name": f"c{i}", "passed": p, "detail": None} for i, p in enumerate(passed)]}
    return {"goal": "write the report", "tasks": [
        task("1", "outline", "in_progress", [True, None]),
        task("2", "draft", "in_progress", [True, False, None]),
        task("3", "sources", "pending", [True, True])]}


def test_equal_states_have_no_task_changes_and_an_empty_summary() -> None:
    assert diff_tasks(state(), state()) == ()
    assert task_summary((), state(), state()) == ""
    assert diff_tasks(None, None) == ()


def test_transitions_reviews_checks_and_the_summary_line() -> None:
    old, new = state(), state()
    new["tasks"][0].update(status="done", progress=1.0)
    new["tasks"][0]["checks"][1]["passed"] = True
    new["tasks"][1].update(status="done", progress=1.0)
    new["tasks"][1]["review"] = {"status": "approved", "reviewer": "rita", "note": "fine"}
    new["tasks"][1]["checks"][1]["passed"] = True
    new["tasks"][1]["checks"][2]["passed"] = True
    new["tasks"][2]["checks"][0]["passed"] = False
    changes = diff_tasks(old, new)
    kinds = [(c.task_id, c.kind) for c in changes]
    assert ("1", "status") in kinds and ("2", "status") in kinds and ("2", "review") in kinds
    review = next(c for c in changes if c.kind == "review")
    assert (review.old, review.new, review.reviewer) == ("requested", "approved", "rita")
    regression = [c for c in changes if c.regression]
    assert len(regression) == 1 and regression[0].task_id == "3" and regression[0].name == "c0"
    assert "REGRESSION" in regression[0].describe()
    status = next(c for c in changes if c.task_id == "2" and c.kind == "status")
    assert status.describe() == "~ task 2 'draft': in_progress → done"
    assert task_summary(changes, old, new) == (
        "2 tasks done, review approved on 'draft', checks 4/7 → 6/7, 1 regression")


def test_tasks_added_and_removed() -> None:
    old, new = state(), state()
    removed = new["tasks"].pop(2)
    new["tasks"].append({"id": "4", "title": "publish", "status": "pending"})
    changes = diff_tasks(old, new)
    assert [(c.task_id, c.kind) for c in changes] == [("4", "added"), ("3", "removed")]
    assert changes[1].old == removed["status"]
    assert task_summary(changes, old, new) == "1 new task, 1 task removed, checks 4/7 → 2/5"


def test_done_task_going_back_is_a_regression() -> None:
    old, new = state(), state()
    old["tasks"][0]["status"] = "done"
    (change,) = [c for c in diff_tasks(old, new) if c.kind == "status"]
    assert change.regression


def test_progress_goal_and_check_detail() -> None:
    old, new = state(), state()
    new["goal"] = "write a better report"
    new["tasks"][2]["progress"] = 0.75
    new["tasks"][2]["checks"][1]["detail"] = "now with links"
    changes = diff_tasks(old, new)
    assert {c.kind for c in changes} == {"goal", "progress", "check"}
    progress = next(c for c in changes if c.kind == "progress")
    assert progress.describe() == "~ task 3 'sources': progress 50% → 75% (+25%)"
    assert task_summary(changes, old, new) == "goal changed, progress on 1 task"


def test_reordered_checks_with_the_same_name_are_not_changes() -> None:
    old = state()
    old["tasks"][0]["checks"] = [{"name": "tests", "passed": False}, {"name": "tests", "passed": True}]
    new = copy.deepcopy(old)
    new["tasks"][0]["checks"].reverse()
    assert diff_tasks(old, new) == ()


def test_invalid_task_states_are_diffed_leniently() -> None:
    old = {"tasks": [{"id": "a", "status": "weird", "progress": 1.0}, "not a task", {"id": "b"}]}
    new = {"tasks": [{"id": "a", "status": "done"}, {"id": "b", "status": "done"}]}
    changes = diff_tasks(old, new)
    assert [(c.task_id, c.kind, c.old, c.new) for c in changes] == [
        ("a", "status", "weird", "done"), ("b", "status", "pending", "done"), ("b", "progress", 0.0, 1.0)]


def test_the_summary_counts_the_checks_of_the_tasks_it_compares() -> None:
    """A LangGraph step's node task (``node:<name>``) is left out of a diff's changes, so its
    checks are left out of the summary too: "checks 1/1 → 0/0" over no change said nothing."""
    from inspector.diff import task_diff
    node = {"id": "node:agent", "title": "agent", "status": "done",
            "checks": [{"name": "finished", "passed": True}]}
    work = {"id": "t1", "title": "Write", "status": "in_progress", "checks": [{"name": "lint", "passed": None}]}
    changes, summary = task_diff({"goal": "g", "tasks": [node, work]}, {"goal": "g", "tasks": [work]})
    assert changes == () and summary == ""
    assert task_summary(changes, {"goal": "g", "tasks": [node]}, {"goal": "g", "tasks": []}) == ""
    done = dict(work, status="done", checks=[{"name": "lint", "passed": True}])
    changes, summary = task_diff({"goal": "g", "tasks": [node, work]}, {"goal": "g", "tasks": [done]})
    assert summary == "1 task done, checks 0/1 → 1/1"
