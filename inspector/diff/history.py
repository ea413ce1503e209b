"""A run's task history: every checkpoint where its task state changed, and what changed —
"did the reviewer ever approve task 4, and at which step?" answered in one call.

Each checkpoint of the run's main lane is compared with its parent (so a LangGraph thread's
branches each read from where they left), its first with nothing (its tasks appear there).
A store that keeps states by content compares task states by their hash first: a long run
whose tasks changed at a few steps reads those few task states only. Node tasks (a LangGraph
step's nodes, ``node:<name>``) describe one step each and have no history; they are left out,
as the diff leaves them out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from inspector.diff.checkpoints import _Reader
from inspector.diff.model import CancelFn, DiffCancelled, TaskChange
from inspector.diff.tasks import diff_tasks
from inspector.errors import StoreError
from inspector.model import CheckpointInfo
from inspector.store.base import Store


@dataclass(frozen=True)
class TaskEvent:
    """A checkpoint where the task state changed, with the changes (of the task asked for)."""

    checkpoint: CheckpointInfo
    changes: tuple[TaskChange, ...]
    problem: str = ""       # its task state cannot be read (a damaged store): why


def task_history(store: Store, run_id: str, task_id: str | None = None, *, cancel: CancelFn | None = None,
                 progress: Callable[[int, int], object] | None = None) -> list[TaskEvent]:
    """The checkpoints of run ``run_id`` where its task state (or task ``task_id``'s part of
    it) changed, in order. ``cancel()`` returning True raises DiffCancelled; ``progress(done,
    total)`` is called as checkpoints are read."""
    infos = [i for i in store.list_checkpoints(run_id) if not i.lane]
    by_id = {i.id: i for i in infos}
    reader = _Reader(store, cancel, None, lazy=True)   # big values stay encoded: only tasks are read
    events: list[TaskEvent] = []
    damaged: set = set()
    for done, info in enumerate(infos, 1):
        if cancel is not None and cancel():
            raise DiffCancelled("The task history was cancelled.")
        parent = by_id.get(info.parent_id) if info.parent_id is not None else None
        while parent is not None and parent.id in damaged:     # compared with what could be read
            parent = by_id.get(parent.parent_id) if parent.parent_id is not None else None
        try:
            if info.damaged and "tasks_hash" in info.damaged:   # (a damaged row names its column)
                raise StoreError(f"Its task state cannot be read ({info.damaged}).")
            changes = diff_tasks(None, reader.tasks(info)) if parent is None else reader.task_changes(parent, info)[0]
        except StoreError as err:       # one damaged checkpoint: said, and the history goes on
            damaged.add(info.id)
            events.append(TaskEvent(info, (), str(err)))
            continue
        kept = tuple(changes) if task_id is None else tuple(c for c in changes if c.task_id == task_id)
        if kept:
            events.append(TaskEvent(info, kept))
        # only this checkpoint's state may be asked for again (as the next one's parent)
        for key in [k for k in reader.snapshots if k != info.id]:
            del reader.snapshots[key]
        if progress is not None:
            progress(done, len(infos))
    return events
