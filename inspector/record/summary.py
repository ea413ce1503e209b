"""A cheap one-line change summary written with each checkpoint ("+1 msg · draft → done")."""

from __future__ import annotations

import reprlib
from typing import Any

from inspector import taskstate
from inspector.codec.encoded import fingerprint
from inspector.codec.markers import pack

SHORT = {"messages": "msg", "history": "msg", "conversation": "msg"}


LENGTHS_MAX_KEYS = 256   # a bigger top-level map is a map of data, not of named channels


def lengths(state: Any) -> dict:
    """Lengths of the top-level lists of a state (O(keys); {} for a big flat map)."""
    if not isinstance(state, dict) or len(state) > LENGTHS_MAX_KEYS:
        return {}
    return {k: len(v) for k, v in state.items() if isinstance(v, (list, tuple))}


def state_changes(old: Any, new: Any, old_len: dict, new_len: dict) -> list[str]:
    """Top-level changes between two encoder forms (appends counted, other keys named)."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        if same(old, new):
            return []
        if type(old) is type(new) and type(new).__name__ == "ChunkedMap":   # a big top-level map
            return [f"map of {new.length:,} keys edited" if old.length == new.length
                    else f"{new.length - old.length:+,} keys"]
        return ["state replaced"]
    parts: list[str] = []
    named: list[str] = []
    for key, form in new.items():
        if key not in old:
            named.append(f"+{_label(key)}")
            continue
        if same(old[key], form):
            continue
        before, after = old_len.get(key), new_len.get(key)
        if before is not None and after is not None and before != after:
            delta = after - before
            label = _label(key)
            label = SHORT.get(label, label)
            parts.append(f"{delta:+d} {label}")
        else:
            named.append(_label(key))
    named.extend(f"-{_label(k)}" for k in old if k not in new)
    parts.sort(key=lambda p: p.split()[-1] != "msg")   # message appends first
    if len(named) > 2:
        named = named[:2] + [f"+{len(named) - 2} more"]
    return parts + named


_SIMPLE = frozenset({str, bytes, int, bool, type(None)})    # ``==`` on two of one of these types is exact
_short = reprlib.Repr()
_short.maxlevel, _short.maxtuple, _short.maxstring = 3, 4, 40


def same(old: Any, new: Any) -> bool:
    """Whether two encoder forms store the same value exactly: ``==`` would take True for
    1.0 and a NaN for a change; a float or a small container is compared by its encoding."""
    if old is new:
        return True
    kind = type(old)
    if kind is not type(new):
        return False
    if kind in _SIMPLE:
        return bool(old == new)
    if kind is float:
        return old == new or (old != old and new != new)
    if kind is not dict and kind is not list:
        return bool(old == new)          # a marker: digests and sizes
    fp = fingerprint(old)                # (None when it holds a marker)
    return fp == fingerprint(new) if fp is not None else pack(old) == pack(new)


def _label(key: Any) -> str:
    """A key as the summary names it: a string as it is, another key briefly (a key nested
    a thousand levels is not printed whole)."""
    if type(key) is str:
        return key
    return str.__str__(key) if isinstance(key, str) else _short.repr(key)


def task_changes(old: dict | None, new: dict | None,
                 scores: tuple[taskstate.Score, taskstate.Score] | None = None) -> list[str]:
    """Task status and review transitions, and the check score when it moved (``scores``:
    those of ``old`` and ``new``, when the caller has them already)."""
    pairs = _same_ids(old, new)
    parts: list[str] = []
    if pairs is not None:            # the same tasks in the same order: only the changed ones are looked at
        for prev, task in pairs:
            _task_moves(parts, task["id"], prev, task)
        before: dict[str, dict] = {}
        after: dict[str, dict] = {}
    else:
        before, after = taskstate.task_by_id(old), taskstate.task_by_id(new)
    for tid, task in after.items():
        known = before.get(tid)
        title = tid  # ids are short and stable; titles are shown on the board
        if known is None:
            parts.append(f"+task {title}")
            continue
        if known is task:          # the same normalised task (``TaskMemo``: unchanged since the last save)
            continue
        _task_moves(parts, title, known, task)
    parts.extend(f"-task {t}" for t in before if t not in after)
    s0, s1 = scores or (taskstate.score(old), taskstate.score(new))
    if (s0.checks_passed, s0.checks_total) != (s1.checks_passed, s1.checks_total):
        parts.append(f"checks {s0} → {s1}")
    return parts


def _task_moves(parts: list[str], title: str, prev: dict, task: dict) -> None:
    """A task's status and review transitions."""
    if prev.get("status") != task.get("status"):
        parts.append(f"{title} → {task.get('status')}")
    old_review = (prev.get("review") or {}).get("status", "none")
    new_review = (task.get("review") or {}).get("status", "none")
    if old_review != new_review:
        parts.append(f"review {new_review.replace('_', ' ')} on {title}")


def _same_ids(old: dict | None, new: dict | None) -> list[tuple[dict, dict]] | None:
    """The changed (old, new) task pairs when both task states are normalised ones (``validate``)
    with the same string ids in the same order, each task either the very form of the last
    state (unchanged, ``TaskMemo``) or one with the same id; else None (compared by id)."""
    if type(old) is not dict or type(new) is not dict:
        return None
    a, b = old.get("tasks"), new.get("tasks")
    if type(a) is not list or type(b) is not list or len(a) != len(b):
        return None
    pairs = [(p, t) for p, t in zip(a, b) if p is not t]
    for p, t in pairs:
        if type(p) is not dict or type(t) is not dict or type(t.get("id")) is not str or p.get("id") != t.get("id"):
            return None
    try:
        ids = [t["id"] for t in b]
    except (TypeError, KeyError, IndexError):
        return None
    if set(map(type, ids)) != {str} or len(set(ids)) != len(ids):   # not normalised: compared by id
        return None
    return pairs


def summarize(old_form: Any, new_form: Any, old_len: dict, new_len: dict,
              old_tasks: dict | None, new_tasks: dict | None,
              scores: tuple[taskstate.Score, taskstate.Score] | None = None) -> str:
    """The summary line joined with middle dots; empty when nothing changed."""
    return " · ".join(task_changes(old_tasks, new_tasks, scores)
                      + state_changes(old_form, new_form, old_len, new_len))
