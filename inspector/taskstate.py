"""Semantic task state: the documented JSON model, validation and the cumulative score.

The model (DESIGN.md §3)::

    {"goal": str,
     "tasks": [{"id": str, "title": str,
                "status": "pending"|"in_progress"|"blocked"|"done"|"failed",
                "progress": 0.0..1.0,
                "review": {"status": "none"|"requested"|"approved"|"changes_requested",
                           "reviewer": str|None, "note": str|None},
                "checks": [{"name": str, "passed": true|false|null, "detail": str|None}]}]}

Evaluation is binary and cumulative: the score is checks passed / checks total.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from inspector.errors import TaskStateError

TASK_STATUSES = ("pending", "in_progress", "blocked", "done", "failed")
REVIEW_STATUSES = ("none", "requested", "approved", "changes_requested")


@dataclass(frozen=True)
class Score:
    """Counts that summarise a task state."""

    tasks_done: int = 0
    tasks_total: int = 0
    checks_passed: int = 0
    checks_total: int = 0

    def __str__(self) -> str:
        return f"{self.checks_passed}/{self.checks_total}"

    @property
    def ratio(self) -> float:
        """Checks passed over checks total (0 when there are no checks)."""
        return self.checks_passed / self.checks_total if self.checks_total else 0.0


def _fail(path: str, message: str) -> TaskStateError:
    return TaskStateError(f"task state {path}: {message}")


def _opt_str(value: Any, path: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise _fail(path, f"must be a string or null, not {type(value).__name__}")


def _review(raw: Any, path: str) -> dict:
    if raw is None:
        return {"status": "none", "reviewer": None, "note": None}
    if isinstance(raw, str):
        raw = {"status": raw}
    if not isinstance(raw, dict):
        raise _fail(path, "must be an object with a status")
    status = raw.get("status", "none")
    if status not in REVIEW_STATUSES:
        raise _fail(f"{path}.status", f"{status!r} is not one of {', '.join(REVIEW_STATUSES)}")
    return {"status": status, "reviewer": _opt_str(raw.get("reviewer"), f"{path}.reviewer"),
            "note": _opt_str(raw.get("note"), f"{path}.note")}


def _check(raw: Any, path: str) -> dict:
    if not isinstance(raw, dict):
        raise _fail(path, "must be an object with name and passed")
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise _fail(f"{path}.name", "must be a non-empty string")
    passed = raw.get("passed")
    if passed not in (True, False, None):
        raise _fail(f"{path}.passed", "must be true, false or null")
    return {"name": name, "passed": passed, "detail": _opt_str(raw.get("detail"), f"{path}.detail")}


def _progress(raw: Any, path: str, status: str) -> float:
    if raw is None:
        return 1.0 if status == "done" else 0.0
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        raise _fail(path, "must be a number between 0 and 1")
    if not 0.0 <= float(raw) <= 1.0:
        raise _fail(path, f"{raw} is outside 0..1")
    return float(raw)


def _task(raw: Any, path: str) -> dict:
    if not isinstance(raw, dict):
        raise _fail(path, "must be an object")
    task_id = raw.get("id")
    if not isinstance(task_id, (str, int)) or isinstance(task_id, bool) or task_id == "":
        raise _fail(f"{path}.id", "must be a non-empty string")
    status = raw.get("status", "pending")
    if status not in TASK_STATUSES:
        raise _fail(f"{path}.status", f"{status!r} is not one of {', '.join(TASK_STATUSES)}")
    checks = raw.get("checks") or []
    if not isinstance(checks, list):
        raise _fail(f"{path}.checks", "must be a list")
    title = raw.get("title", str(task_id))
    if not isinstance(title, str):
        raise _fail(f"{path}.title", "must be a string")
    return {"id": str(task_id), "title": title, "status": status,
            "progress": _progress(raw.get("progress"), f"{path}.progress", status),
            "review": _review(raw.get("review"), f"{path}.review"),
            "checks": [_check(c, f"{path}.checks[{i}]") for i, c in enumerate(checks)]}


def validate(raw: Any) -> dict:
    """Return the normalised task state (defaults filled) or raise TaskStateError."""
    if raw is None:
        return {"goal": "", "tasks": []}
    if not isinstance(raw, dict):
        raise _fail("(root)", "must be an object with goal and tasks")
    goal = raw.get("goal", "")
    if not isinstance(goal, str):
        raise _fail("goal", "must be a string")
    tasks = raw.get("tasks") or []
    if not isinstance(tasks, list):
        raise _fail("tasks", "must be a list")
    normal = [_task(t, f"tasks[{i}]") for i, t in enumerate(tasks)]
    seen: set[str] = set()
    for i, task in enumerate(normal):
        if task["id"] in seen:
            raise _fail(f"tasks[{i}].id", f"duplicate id {task['id']!r}")
        seen.add(task["id"])
    return {"goal": goal, "tasks": normal}


def score(state: dict | None) -> Score:
    """Counts of done tasks and passed checks; tolerant of unvalidated input."""
    if not isinstance(state, dict):
        return Score()
    tasks = [t for t in state.get("tasks") or [] if isinstance(t, dict)]
    checks = [c for t in tasks for c in (t.get("checks") or []) if isinstance(c, dict)]
    return Score(tasks_done=sum(1 for t in tasks if t.get("status") == "done"),
                 tasks_total=len(tasks),
                 checks_passed=sum(1 for c in checks if c.get("passed") is True),
                 checks_total=len(checks))


def task_by_id(state: dict | None) -> dict[str, dict]:
    """Index the tasks of a task state by id (string)."""
    if not isinstance(state, dict):
        return {}
    return {str(t.get("id")): t for t in state.get("tasks") or [] if isinstance(t, dict)}
