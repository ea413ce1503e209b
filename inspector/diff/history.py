"""A run's history: every checkpoint where its task state changed, and what changed — "did the
reviewer ever approve task 4, and at which step?" answered in one call — or where one value of
its state changed ("when did ``budget.total`` go wrong?").

Each checkpoint of the run's main lane is compared with its parent (so a LangGraph thread's
branches each read from where they left), its first with nothing (its tasks appear there).
A store that keeps states by content compares task states by their hash first: a long run
whose tasks changed at a few steps reads those few task states only. Node tasks (a LangGraph
step's nodes, ``node:<name>``) describe one step each and have no history; they are left out,
as the diff leaves them out.

A value's history compares states as the diff does (a store that keeps states by content skips
equal parts unread) and keeps the changes at the value's path, inside it, at a part of the
path (the value appeared, went or was replaced with its container), and, for a path through a
list, the items added, removed or moved before its index (the value at that index moved).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from inspector.diff.checkpoints import _Reader
from inspector.diff.engine import Engine
from inspector.diff.model import ADDED, CHANGED, MOVED, REMOVED, CancelFn, Change, DiffCancelled, TaskChange
from inspector.diff.tasks import diff_tasks
from inspector.errors import StoreError
from inspector.lazy import LazyValue, materialize
from inspector.model import CheckpointInfo
from inspector.store.base import Store


@dataclass(frozen=True)
class TaskEvent:
    """A checkpoint where the task state changed, with the changes (of the task asked for)."""

    checkpoint: CheckpointInfo
    changes: tuple[TaskChange, ...]
    problem: str = ""       # its task state cannot be read (a damaged store): why


@dataclass(frozen=True)
class ValueEvent:
    """A checkpoint where the value at a path changed, with the changes that concern it."""

    checkpoint: CheckpointInfo
    changes: tuple[Change, ...]
    problem: str = ""       # its state cannot be read (a damaged store): why


Progress = Callable[[int, int], object]


Same = Callable[[_Reader, CheckpointInfo, CheckpointInfo], bool]


def _walk(store: Store, run_id: str, compare: Callable[[_Reader, CheckpointInfo | None, CheckpointInfo], Any],
          same: Same, cancel: CancelFn | None, progress: Progress | None, what: str,
          channel: str | None = None, tasks_only: bool = False) -> Iterator[tuple[CheckpointInfo, Any, str]]:
    """Each checkpoint of the run's main lane with ``compare(reader, parent, it)`` (parent None:
    the first), or with the sentence saying why it could not be read; a damaged checkpoint is
    skipped as a parent (the next one is compared with the last that could be read).
    ``same(reader, parent, it)``: the two hold one state by its hash (what ``compare``
    compares; a long run's steps mostly repeat their parent's): it is left out unread,
    as ``compare`` would find no change. ``channel``: ``compare`` reads that top-level key
    of the states alone; ``tasks_only``: their task states alone."""
    with store.reading():       # (a store may keep one connection for the walk)
        infos = [i for i in store.list_checkpoints(run_id) if not i.lane]
        by_id = {i.id: i for i in infos}
        # big values stay encoded where the store can
        reader = _Reader(store, cancel, None, lazy=True, channel=channel, tasks_only=tasks_only)
        damaged: set = set()
        for done, info in enumerate(infos, 1):
            if cancel is not None and cancel():
                raise DiffCancelled(f"The {what} was cancelled.")
            parent = by_id.get(info.parent_id) if info.parent_id is not None else None
            while parent is not None and parent.id in damaged:     # compared with what could be read
                parent = by_id.get(parent.parent_id) if parent.parent_id is not None else None
            if parent is not None and not info.damaged and same(reader, parent, info):
                if progress is not None:
                    progress(done, len(infos))
                continue
            try:
                found, problem = compare(reader, parent, info), ""
            except StoreError as err:       # one damaged checkpoint: said, and the history goes on
                damaged.add(info.id)
                found, problem = None, str(err)
            yield info, found, problem
            # only this checkpoint's state may be asked for again (as the next one's parent)
            for key in [k for k in reader.snapshots if k != info.id]:
                del reader.snapshots[key]
            if progress is not None:
                progress(done, len(infos))


def task_history(store: Store, run_id: str, task_id: str | None = None, *, cancel: CancelFn | None = None,
                 progress: Progress | None = None) -> list[TaskEvent]:
    """The checkpoints of run ``run_id`` where its task state (or task ``task_id``'s part of
    it) changed, in order. ``cancel()`` returning True raises DiffCancelled; ``progress(done,
    total)`` is called as checkpoints are read."""
    def compare(reader: _Reader, parent: CheckpointInfo | None, info: CheckpointInfo) -> tuple[TaskChange, ...]:
        if info.damaged and "tasks_hash" in info.damaged:   # (a damaged row names its column)
            raise StoreError(f"Its task state cannot be read ({info.damaged}).")
        changes = diff_tasks(None, reader.tasks(info)) if parent is None else reader.task_changes(parent, info)[0]
        return tuple(changes) if task_id is None else tuple(c for c in changes if c.task_id == task_id)

    return [TaskEvent(info, found or (), problem)
            for info, found, problem in _walk(store, run_id, compare, _same_tasks, cancel, progress, "task history",
                                              tasks_only=True)
            if found or problem]


def _same_tasks(reader: _Reader, parent: CheckpointInfo, info: CheckpointInfo) -> bool:
    """One task state by hash (``_Reader.task_changes`` finds no change)."""
    return parent.tasks_hash == info.tasks_hash and reader._by_pieces(parent, info)


def _same_state(reader: _Reader, parent: CheckpointInfo, info: CheckpointInfo) -> bool:
    """One state by hash (``_Reader.states`` finds no change)."""
    return parent.state_hash == info.state_hash and reader._hashed(parent, info)


def value_history(store: Store, run_id: str, path: tuple, *, cancel: CancelFn | None = None,
                  progress: Progress | None = None) -> list[ValueEvent]:
    """The checkpoints of run ``run_id`` where the value at ``path`` (keys and list indices)
    changed, with the changes that concern it; the first checkpoint's when the value is there.
    Cancel and progress as ``task_history``."""
    path = tuple(path)
    if any(_index(p) and p < 0 for p in path):
        raise StoreError("A value's history needs list indices counted from the start (messages[3]), "
                         "not from the end: the last item is another one at each step.")

    def compare(reader: _Reader, parent: CheckpointInfo | None, info: CheckpointInfo) -> tuple[Change, ...]:
        if info.damaged and "state_hash" in info.damaged:
            raise StoreError(f"Its state cannot be read ({info.damaged}).")
        if parent is None:      # the value as it starts, when it is there
            found = value_at(reader.snapshot(info).state, path)
            return () if found is MISSING else (Change(path, ADDED, new=found),)
        changes = reader.states(parent, info)   # (on the path's top-level key: the reader's channel)
        if not any(shifts(c, path) for c in changes):
            return tuple(shown for c in changes if (shown := concerning(c, path)) is not None)
        # items went in or out at or before the value's index: the value there may be
        # another one now; the two states say (read whole, for these checkpoints only)
        moved = _value_change(path, *(value_at(reader.snapshot(x).state, path) for x in (parent, info)))
        return () if moved is None else (moved,)

    channel = path[0] if path and isinstance(path[0], str) else None
    return [ValueEvent(info, found or (), problem)
            for info, found, problem in _walk(store, run_id, compare, _same_state, cancel, progress, "value history",
                                              channel)
            if found or problem]


def concerning(change: Change, path: tuple) -> Change | None:
    """What ``change`` does to the value at ``path``: itself when it is at the value or inside
    it; for a container on the way, the value's own change (None when it is there alike
    before and after, or not at all); None when it is elsewhere."""
    where = change.path
    n = min(len(where), len(path))
    if not _same(where[:n], path[:n]):
        return None
    if n == len(path):
        return change
    rest = path[n:]
    before = value_at(change.old, rest) if change.op != ADDED else MISSING
    after = value_at(change.new, rest) if change.op != REMOVED else MISSING
    return _value_change(path, before, after)


def _value_change(path: tuple, before: Any, after: Any) -> Change | None:
    """The change of the value at ``path`` from ``before`` to ``after`` (MISSING: not there)."""
    if before is MISSING and after is MISSING:
        return None
    if before is MISSING:
        return Change(path, ADDED, new=after)
    if after is MISSING:
        return Change(path, REMOVED, old=before)
    inner = Engine().run(before, after)
    if not inner:
        return None
    if len(inner) == 1 and inner[0].path == ():
        return Change(path, inner[0].op, inner[0].old, inner[0].new, inner[0].detail)
    return Change(path, CHANGED, before, after)


def shifts(change: Change, path: tuple) -> bool:
    """Whether ``change`` adds, removes or moves an item at or before the index ``path`` takes
    in a list it passes through (the value at that index may be another one after)."""
    where = change.path
    k = len(where) - 1
    if change.op not in (ADDED, REMOVED, MOVED) or k < 0 or k >= len(path):
        return False
    index, wanted = where[k], path[k]
    return _index(index) and _index(wanted) and _same(where[:k], path[:k]) and index <= wanted


MISSING = object()


def value_at(value: Any, path: tuple) -> Any:
    """The value at ``path`` in ``value`` (parts read on demand are read), or MISSING."""
    for part in path:
        value = materialize(value) if isinstance(value, LazyValue) else value
        held = ((isinstance(value, dict) and _hashable(part) and part in value)     # a key of any type
                or (isinstance(value, list) and _index(part) and 0 <= part < len(value)))
        if not held:
            return MISSING
        value = value[part]
    return materialize(value)


def _hashable(part: Any) -> bool:
    try:
        hash(part)
    except TypeError:
        return False
    return True


def _index(part: Any) -> bool:
    return isinstance(part, int) and not isinstance(part, bool)


def _same(a: tuple, b: tuple) -> bool:
    """Equal paths, part by part of the same type (a key ``"1"`` is not the index ``1``)."""
    return len(a) == len(b) and all(type(x) is type(y) and x == y for x, y in zip(a, b))
