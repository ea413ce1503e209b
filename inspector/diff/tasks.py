"""Task-state diff: tasks added or removed, status, progress, review and check transitions."""

from __future__ import annotations

from collections import Counter
from typing import Any

from inspector.diff.model import TaskChange
from inspector.errors import TaskStateError
from inspector.model import replace
from inspector.taskstate import NODE_TASK_PREFIX, Score, score, validate

_STATUS_WORDS = {"done": "done", "failed": "failed", "in_progress": "started",
                 "blocked": "blocked", "pending": "reset to pending"}
_REVIEW_WORDS = {"approved": "review approved", "changes_requested": "changes requested",
                 "requested": "review requested", "none": "review cleared"}


def normalise(raw: Any) -> dict:
    """The task state with defaults filled; tolerant of states that do not validate
    (each task is validated alone; a broken one is read as well as it can be)."""
    try:
        return validate(raw)
    except TaskStateError:
        pass
    tasks = raw.get("tasks") if isinstance(raw, dict) else None
    out, seen = [], set()
    for task in tasks if isinstance(tasks, list) else []:
        if not isinstance(task, dict) or task.get("id") in (None, "") or str(task.get("id")) in seen:
            continue
        try:
            out.append(validate({"tasks": [task]})["tasks"][0])
        except TaskStateError:
            out.append(_lenient_task(task))
        seen.add(out[-1]["id"])
    goal = raw.get("goal", "") if isinstance(raw, dict) else ""
    return {"goal": goal if isinstance(goal, str) else str(goal), "tasks": out}


def _lenient_task(task: dict) -> dict:
    review = task.get("review")
    review = review if isinstance(review, dict) else {"status": review or "none"}
    checks = task.get("checks")
    checks = [c for c in checks if isinstance(c, dict)] if isinstance(checks, list) else []
    status = task.get("status", "pending")
    progress = task.get("progress")
    return {"id": str(task["id"]), "title": str(task.get("title", task["id"])), "status": status,
            "progress": (1.0 if status == "done" else 0.0) if progress is None else progress,
            "review": {"status": review.get("status", "none"), "reviewer": review.get("reviewer"),
                       "note": review.get("note")},
            "checks": [{"name": str(c.get("name")), "passed": c.get("passed"), "detail": c.get("detail")}
                       for c in checks]}


def task_diff(old: Any, new: Any, *, edit: bool = False) -> tuple[tuple[TaskChange, ...], str]:
    """The task changes and their summary line, normalising each state once.

    ``edit``: ``new`` is an edit of ``old`` (a fork or LangGraph ``update_state`` made from it),
    so a status or check going back is what someone set, not a regression.
    """
    a, b = normalise(old), normalise(new)
    changes = _diff_normal(a, b)
    if edit:
        changes = tuple(replace(c, regression=False) if c.regression else c for c in changes)
    return changes, _summary(changes, _state_score(a), _state_score(b))


def diff_tasks(old: Any, new: Any) -> tuple[TaskChange, ...]:
    """Semantic changes between two task states (in the new state's task order)."""
    return _diff_normal(normalise(old), normalise(new))


def _state_tasks(tasks: list[dict]) -> list[dict]:
    """Tasks that are state: LangGraph's step tasks (``node:<name>``, the nodes that run next
    from one checkpoint) describe that checkpoint's pending step, so a diff leaves them out
    (adjacent checkpoints would otherwise list every step's nodes as removed and added)."""
    return [t for t in tasks if not str(t.get("id", "")).startswith(NODE_TASK_PREFIX)]


def _state_score(state: dict) -> Score:
    """The score of the tasks a diff compares (step tasks left out, as from the changes: a
    summary saying "checks 1/1 → 0/0" over changes that name no check explains nothing)."""
    return score(dict(state, tasks=_state_tasks(state["tasks"])))


def _diff_normal(a: dict, b: dict) -> tuple[TaskChange, ...]:
    changes: list[TaskChange] = []
    if a["goal"] != b["goal"]:
        changes.append(TaskChange("", "", "goal", a["goal"], b["goal"]))
    a = dict(a, tasks=_state_tasks(a["tasks"]))
    b = dict(b, tasks=_state_tasks(b["tasks"]))
    before = {t["id"]: t for t in a["tasks"]}
    after_ids = {t["id"] for t in b["tasks"]}
    for task in b["tasks"]:
        prev = before.get(task["id"])
        if prev is None:
            changes.append(TaskChange(task["id"], task["title"], "added", None, task["status"]))
        else:
            changes.extend(_task_changes(prev, task))
    for task in a["tasks"]:
        if task["id"] not in after_ids:
            changes.append(TaskChange(task["id"], task["title"], "removed", task["status"], None))
    return tuple(changes)


def _task_changes(old: dict, new: dict) -> list[TaskChange]:
    tid, title = new["id"], new["title"]
    out: list[TaskChange] = []
    if old["title"] != new["title"]:
        out.append(TaskChange(tid, title, "title", old["title"], new["title"]))
    if old["status"] != new["status"]:
        out.append(TaskChange(tid, title, "status", old["status"], new["status"],
                              regression=old["status"] == "done"))
    if old["progress"] != new["progress"]:
        out.append(TaskChange(tid, title, "progress", old["progress"], new["progress"]))
    if old["review"] != new["review"]:
        out.append(TaskChange(tid, title, "review", old["review"]["status"], new["review"]["status"],
                              reviewer=new["review"]["reviewer"]))
    out.extend(_check_changes(tid, title, old["checks"], new["checks"]))
    return out


def _check_changes(tid: str, title: str, old: list[dict], new: list[dict]) -> list[TaskChange]:
    """Checks pair up by name; when a name repeats, identical checks pair first (a reorder
    is no change), the rest in order."""
    out: list[TaskChange] = []
    for name, before, after in _pair_by_name(old, new):
        if before is None:      # (_pair_by_name never pairs None with None)
            if after is not None:
                out.append(TaskChange(tid, title, "check_added", None, after["passed"], name=name))
        elif after is None:
            out.append(TaskChange(tid, title, "check_removed", before["passed"], None, name=name))
        elif before != after:
            out.append(TaskChange(tid, title, "check", before["passed"], after["passed"], name=name,
                                  regression=before["passed"] is True and after["passed"] is False))
    return out


def _pair_by_name(old: list[dict], new: list[dict]) -> list[tuple[str, dict | None, dict | None]]:
    groups: dict[str, tuple[list[dict], list[dict]]] = {}
    for check in old:
        groups.setdefault(check["name"], ([], []))[0].append(check)
    for check in new:
        groups.setdefault(check["name"], ([], []))[1].append(check)
    pairs: list[tuple[str, dict | None, dict | None]] = []
    for name, (before, after) in groups.items():
        if len(before) > 1 or len(after) > 1:
            for check in list(after):
                if check in before:
                    before.remove(check)
                    after.remove(check)
        for i in range(max(len(before), len(after))):
            pairs.append((name, before[i] if i < len(before) else None, after[i] if i < len(after) else None))
    return pairs


def task_summary(changes: tuple[TaskChange, ...], old: Any, new: Any) -> str:
    """One line: ``2 tasks done, review approved on 'draft', checks 4/7 → 6/7, 1 regression``."""
    return _summary(changes, _state_score(normalise(old)), _state_score(normalise(new)))


def _summary(changes: tuple[TaskChange, ...], before: Score, after: Score) -> str:
    parts: list[str] = []
    kinds = Counter(c.kind for c in changes)
    if kinds["added"]:
        parts.append(_count(kinds["added"], "new task"))
    if kinds["removed"]:
        parts.append(_count(kinds["removed"], "task") + " removed")
    statuses = Counter(c.new for c in changes if c.kind == "status")
    for status, word in _STATUS_WORDS.items():
        if statuses[status]:
            parts.append(f"{_count(statuses[status], 'task')} {word}")
    parts.extend(_review_parts(changes))
    if kinds["goal"]:
        parts.append("goal changed")
    if (before.checks_passed, before.checks_total) != (after.checks_passed, after.checks_total):
        parts.append(f"checks {before} → {after}")
    elif kinds["progress"] and not statuses:
        parts.append(f"progress on {_count(kinds['progress'], 'task')}")
    regressions = sum(1 for c in changes if c.regression)
    if regressions:
        parts.append(_count(regressions, "regression"))
    if not parts and changes:
        parts.append(_count(len({c.task_id for c in changes}), "task") + " edited")
    return ", ".join(parts)


def _review_parts(changes: tuple[TaskChange, ...]) -> list[str]:
    moves = [c for c in changes if c.kind == "review" and c.old != c.new]
    by_status: dict[str, list[TaskChange]] = {}
    for change in moves:
        by_status.setdefault(change.new, []).append(change)
    parts = []
    for status, word in _REVIEW_WORDS.items():
        group = by_status.get(status, [])
        if len(group) > 2:
            parts.append(f"{word} on {len(group)} tasks")
        else:
            parts.extend(f"{word} on {c.title!r}" for c in group)
    return parts


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
