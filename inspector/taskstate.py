"""Semantic task state: the documented JSON model, validation and the cumulative score.

The model (DESIGN.md §3)::

    {"goal": str,
     "tasks": [{"id": str, "title": str,
                "status": "pending"|"in_progress"|"blocked"|"done"|"failed",
                "progress": 0.0..1.0,
                "review": {"status": "none"|"requested"|"approved"|"changes_requested",
                           "reviewer": str|None, "note": str|None},
                "checks": [{"name": str, "passed": true|false|null, "detail": str|None}]}]}

Fields outside the model (an owner, a task's assignee, a check's weight) are kept as they are,
after the model's own. A string of a str subclass (a ``(str, Enum)`` member) is the plain
string it holds, as a state stores it. Evaluation is binary and cumulative: the score is
checks passed / checks total.
"""

from __future__ import annotations

import operator
from typing import Any
from collections.abc import Callable

from inspector import limits
from inspector.errors import TaskStateError
from inspector.model import Record

TASK_STATUSES = ("pending", "in_progress", "blocked", "done", "failed")
REVIEW_STATUSES = ("none", "requested", "approved", "changes_requested")
# a LangGraph step's node task (one per node the pending step runs): it describes that one
# step, so diffs and task histories leave it out
NODE_TASK_PREFIX = "node:"
# the LangGraph channel a thread's task state is read from unless the user names another
# (a list of todo items: the convention of LangChain's deep agents and todo middleware)
DEFAULT_TASK_CHANNEL = "todos"


class Score(Record):
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


def _text(value: Any) -> Any:
    """A string of a str subclass as the plain string it holds (as the state encoder stores
    it: a (str, Enum) member is its value); any other value as it is."""
    return str.__str__(value) if type(value) is not str and isinstance(value, str) else value


def _extras(raw: dict, known: frozenset, out: dict, where: str, level: int) -> dict:
    """``out`` with the fields of ``raw`` outside the model after its own, kept as they are;
    TaskStateError for one nesting past the depth budget (``level``: how deep ``out`` sits)."""
    if known.issuperset(raw):
        return out
    budget = limits.current().depth
    left = budget - level
    for key, value in raw.items():
        if key in known:
            continue
        if limits.depth_of(value, left, keys=True) > left or limits.depth_of(key, left, keys=True) > left:
            raise _fail(f"{where}.{_text(key)}" if where else str(_text(key)),
                        f"nests more than {budget:,} levels deep, deeper than a store is read by "
                        f"default ({limits.BUDGETS['depth'].env})")
        out[key] = value
    return out


def _opt_str(value: Any, path: Any, field: str = "") -> str | None:
    if value is None or type(value) is str or isinstance(value, str):
        return _text(value)
    raise _fail(_where(path, field), f"must be a string or null, not {type(value).__name__}")


def _where(path: Any, field: str = "") -> str:
    """A place in the task state as messages name it; ``path`` is built only on failure
    (a tuple: ``(task index,)`` or ``(task index, check index)``)."""
    if type(path) is tuple:
        path = f"tasks[{path[0]}]" + (f".checks[{path[1]}]" if len(path) > 1 else "")
    return f"{path}.{field}" if field else path


_NO_REVIEW = {"status": "none", "reviewer": None, "note": None}


_REVIEW_FIELDS = frozenset({"status", "reviewer", "note"})
_CHECK_FIELDS = frozenset({"name", "passed", "detail"})
_TASK_FIELDS = frozenset({"id", "title", "status", "progress", "review", "checks"})
_STATE_FIELDS = frozenset({"goal", "tasks"})


def _review(raw: Any, path: Any) -> dict:
    if raw is None:
        return dict(_NO_REVIEW)
    if isinstance(raw, str):
        raw = {"status": raw}
    if not isinstance(raw, dict):
        raise _fail(_where(path), "must be an object with a status")
    status = _text(raw.get("status", "none"))
    if status not in REVIEW_STATUSES:
        raise _fail(_where(path, "status"), f"{status!r} is not one of {', '.join(REVIEW_STATUSES)}")
    return _extras(raw, _REVIEW_FIELDS, {"status": status, "reviewer": _opt_str(raw.get("reviewer"), path, "reviewer"),
                                         "note": _opt_str(raw.get("note"), path, "note")}, _where(path), 4)


def _check(raw: Any, path: Any) -> dict:
    if type(raw) is not dict and not isinstance(raw, dict):
        raise _fail(_where(path), "must be an object with name and passed")
    name = raw.get("name")
    if type(name) is not str and not isinstance(name, str) or not name:
        raise _fail(_where(path, "name"), "must be a non-empty string")
    passed = raw.get("passed")
    if passed is not None and passed is not True and passed is not False:     # (1 == True: not a boolean)
        raise _fail(_where(path, "passed"), f"must be true, false or null, not {_kind(passed)}")
    detail = raw.get("detail")
    form = {"name": name if type(name) is str else _text(name), "passed": passed,
            "detail": detail if detail is None or type(detail) is str else _opt_str(detail, path, "detail")}
    return form if _CHECK_FIELDS.issuperset(raw) else _extras(raw, _CHECK_FIELDS, form, _where(path), 5)


def _kind(value: Any) -> str:
    """A value's type as a message names it (numpy's bool is ``numpy.bool``, not ``bool``)."""
    kind = type(value)
    return kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def _progress(raw: Any, path: Any, status: str) -> float:
    if raw is None:
        return 1.0 if status == "done" else 0.0
    kind = type(raw)
    if kind is not float and kind is not int and (isinstance(raw, bool) or not isinstance(raw, (int, float))):
        raise _fail(_where(path, "progress"), "must be a number between 0 and 1")
    if not 0.0 <= float(raw) <= 1.0:
        raise _fail(_where(path, "progress"), f"{raw} is outside 0..1")
    return float(raw)


def _task(raw: Any, index: int) -> dict:
    path = (index,)
    if type(raw) is not dict and not isinstance(raw, dict):
        raise _fail(_where(path), "must be an object")
    task_id = raw.get("id")
    if not isinstance(task_id, (str, int)) or isinstance(task_id, bool) or task_id == "":
        raise _fail(_where(path, "id"), "must be a non-empty string")
    if type(task_id) is not str:
        task_id = _text(task_id) if isinstance(task_id, str) else str(int.__int__(task_id))
    status = raw.get("status", "pending")
    if type(status) is not str:
        status = _text(status)
    if status not in TASK_STATUSES:
        raise _fail(_where(path, "status"), f"{status!r} is not one of {', '.join(TASK_STATUSES)}")
    checks = raw.get("checks") or []
    if type(checks) is not list and not isinstance(checks, list):
        raise _fail(_where(path, "checks"), "must be a list")
    title = raw.get("title", task_id)
    if type(title) is not str and not isinstance(title, str):
        raise _fail(_where(path, "title"), "must be a string")
    review = raw.get("review")
    form = {"id": task_id, "title": title if type(title) is str else _text(title), "status": status,
            "progress": _progress(raw.get("progress"), path, status),
            "review": dict(_NO_REVIEW) if review is None else _review(review, _where(path, "review")),
            "checks": [_check(c, (index, i)) for i, c in enumerate(checks)]}
    return form if _TASK_FIELDS.issuperset(raw) else _extras(raw, _TASK_FIELDS, form, _where(path), 3)


def validate(raw: Any, memo: TaskMemo | None = None) -> dict:
    """Return the normalised task state (defaults filled) or raise TaskStateError.

    ``memo`` (the recording library keeps one per run) reuses the normalised form of each
    task whose exact encoding it saw in the last call: of successive task states only the
    tasks that changed are validated again, and a task state with nothing changed is the
    very dict the last call returned (``memo.normal``; its score is ``memo.score``). The
    forms it hands out are shared between calls, so nothing may change them in place.
    """
    if raw is None:
        return {"goal": "", "tasks": []}
    if not isinstance(raw, dict):
        raise _fail("(root)", "must be an object with goal and tasks")
    goal = _text(raw.get("goal", ""))
    if not isinstance(goal, str):
        raise _fail("goal", "must be a string")
    tasks = raw.get("tasks") or []
    if not isinstance(tasks, list):
        raise _fail("tasks", "must be a list")
    normal = [_task(t, i) for i, t in enumerate(tasks)] if memo is None else memo.tasks(tasks)
    ids = [task["id"] for task in normal]
    if len(set(ids)) != len(ids):
        seen: set[str] = set()
        for i, task_id in enumerate(ids):
            if task_id in seen:
                raise _fail(f"tasks[{i}].id", f"duplicate id {task_id!r}")
            seen.add(task_id)
    state = {"goal": goal, "tasks": normal} if memo is None else memo.state(goal, normal)
    if _STATE_FIELDS.issuperset(raw):
        return state
    return _extras(raw, _STATE_FIELDS, dict(state), "", 1)     # (a copy: the memo's form is shared)


class TaskMemo:
    """The normalised tasks of the last ``validate`` call, by each raw task's exact key
    (``key``: the raw tasks' fingerprints, None for one that has none), each with its counts
    for the score; and the task state that call returned (``normal``) with its ``score``."""

    __slots__ = ("_key", "_known", "_counts", "normal", "score")

    def __init__(self, key: Callable[[list], list]) -> None:
        self._key = key
        self._known: dict[Any, tuple[dict, tuple[int, int, int]]] = {}
        self._counts: list[tuple[int, int, int]] = []     # of the tasks the last ``tasks`` call returned
        self.normal: dict | None = None
        self.score = Score()

    def tasks(self, raw_tasks: list) -> list[dict]:
        known, now = self._known, {}
        normal, counts = [], []
        for i, (task, key) in enumerate(zip(raw_tasks, self._key(raw_tasks), strict=True)):
            hit = known.get(key) if key is not None else None
            if hit is None:
                form = _task(task, i)
                checks = form["checks"]
                hit = (form, (form["status"] == "done", len(checks),
                              sum(1 for c in checks if c["passed"] is True)))
            if key is not None:
                now[key] = hit
            normal.append(hit[0])
            counts.append(hit[1])
        self._known, self._counts = now, counts
        return normal

    def state(self, goal: str, normal: list[dict]) -> dict:
        """The task state of ``goal`` and the tasks the last ``tasks`` call returned: the last
        one itself when its goal is the same exact string and its tasks the same forms."""
        last = self.normal
        if (last is not None and type(goal) is str and type(last["goal"]) is str and last["goal"] == goal
                and len(last["tasks"]) == len(normal) and all(map(operator.is_, last["tasks"], normal))):
            return last
        done, checks, passed = (map(sum, zip(*self._counts, strict=True)) if self._counts else (0, 0, 0))
        self.normal = {"goal": goal, "tasks": normal}
        self.score = Score(done, len(normal), passed, checks)      # positional: the record's fast path
        return self.normal


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
