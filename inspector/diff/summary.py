"""One-line summaries: of a diff result, and a cheap one for adjacent snapshots (timeline column)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from inspector.codec import ChunkedList, Ref
from inspector.diff.lists import same
from inspector.diff.model import ADDED, CHANGED, MOVED, REMOVED, Change, format_path
from inspector.diff.tasks import diff_tasks

MESSAGE_KEYS = frozenset({"messages", "history", "chat_history", "msgs", "conversation", "transcript"})
SEPARATOR = " · "
REORDERED_MOVES = 3     # a list with this many items moved reads as reordered in a headline


def structural_summary(changes: tuple[Change, ...] | list[Change]) -> str:
    """``+3 msgs, -1 msg, 2 changed, 1 removed`` from structural changes ('' when there are
    none): messages added to and removed from a history are counted apart (a message
    replaced is ``+1 msg, -1 msg``, not ``+1 msg, 1 removed``), and a list with
    ``REORDERED_MOVES`` moves or more reads as reordered (``records reordered (21 moved)``)."""
    appended: Counter[Any] = Counter()
    dropped: Counter[Any] = Counter()
    moves: Counter[tuple] = Counter()
    rest: Counter[str] = Counter()
    for change in changes:
        path = change.path
        if (change.op in (ADDED, REMOVED) and len(path) == 2 and path[0] in MESSAGE_KEYS
                and isinstance(path[1], int)):
            (appended if change.op == ADDED else dropped)[path[0]] += 1
        elif change.op == MOVED and path:
            moves[path[:-1]] += 1
        else:
            rest[change.op] += 1
    several = len(appended.keys() | dropped.keys()) > 1
    parts = [f"{sign}{_msgs(n)}" + (f" in {key}" if several else "")
             for sign, counts in (("+", appended), ("-", dropped)) for key, n in counts.items()]
    for parent, n in moves.items():
        if n >= REORDERED_MOVES:
            parts.append(f"{format_path(parent)} reordered ({n} moved)")
        else:
            rest[MOVED] += n
    parts.extend(f"{rest[op]} {op}" for op in (ADDED, REMOVED, CHANGED, MOVED) if rest[op])
    return ", ".join(parts)


def result_summary(task_line: str, changes: tuple[Change, ...]) -> str:
    """The headline of a diff: the task summary, then the state changes."""
    state = structural_summary(changes)
    if task_line and state:
        return f"{task_line}{SEPARATOR}state: {state}"
    if task_line:
        return f"{task_line}{SEPARATOR}state unchanged"
    return f"state: {state}" if state else "no changes"


def change_summary(old_state: Any, new_state: Any, old_tasks: Any = None, new_tasks: Any = None,
                   max_parts: int = 4) -> str:
    """A short label for a step between adjacent snapshots: ``+1 msg · draft → done``.

    Looks only at top-level keys (comparing markers by digest when given root pieces of
    native states) and at task transitions; never walks the state.
    """
    parts = _state_parts(old_state, new_state)
    task_parts = _task_parts(old_tasks, new_tasks) if (old_tasks or new_tasks) else []
    messages = [p for p in parts if p.endswith(("msg", "msgs", "messages edited"))]
    others = [p for p in parts if p not in messages]
    ordered = messages + task_parts + others
    if len(ordered) > max_parts:
        ordered = ordered[:max_parts - 1] + [f"+{len(ordered) - max_parts + 1} more"]
    return SEPARATOR.join(ordered)


def _state_parts(old: Any, new: Any) -> list[str]:
    if old is new:
        return []
    if not (isinstance(old, dict) and isinstance(new, dict)):
        return [] if same(old, new) else ["state replaced" if type(old) is not type(new) else "state changed"]
    parts = []
    for key, value in new.items():
        if key not in old:
            parts.append(f"+{key}")
            continue
        before = old[key]
        if before is value or same(before, value):
            continue
        len_before, len_after = (_length(before), _length(value)) if key in MESSAGE_KEYS else (None, None)
        if len_before is not None and len_after is not None:
            delta = len_after - len_before
            parts.append(f"+{_msgs(delta)}" if delta > 0 else f"-{_msgs(-delta)}" if delta < 0
                         else "messages edited")
        else:
            parts.append(str(key))
    parts.extend(f"-{key}" for key in old if key not in new)
    return parts


def _task_parts(old: Any, new: Any) -> list[str]:
    parts = []
    for change in diff_tasks(old, new):
        label = change.title or change.task_id
        if change.kind == "status":
            parts.append(f"{label} → {change.new}")
        elif change.kind == "added":
            parts.append(f"+task {label}")
        elif change.kind == "removed":
            parts.append(f"-task {label}")
        elif change.kind == "review" and change.old != change.new:
            parts.append(f"{label}: review {change.new}")
        elif change.kind == "check" and change.regression:
            parts.append(f"{label}: {change.name} failed")
    return parts


def _length(value: Any) -> int | None:
    if isinstance(value, list):
        return len(value)
    if isinstance(value, ChunkedList):
        return value.length
    if isinstance(value, Ref):
        return None
    return None


def _msgs(n: int) -> str:
    return f"{n} msg" if n == 1 else f"{n} msgs"
