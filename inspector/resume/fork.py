"""Fork a checkpoint into a new run: lineage recorded, unchanged content shared by reference."""

from __future__ import annotations

import copy
from typing import Any

from inspector import taskstate
from inspector.errors import StoreError
from inspector.model import RunInfo
from inspector.record.summary import lengths, summarize
from inspector.store.native.pieces import PieceEncoder
from inspector.store.native.store import NativeStore
from inspector.store.native.writer import NativeWriter, NewCheckpoint

_UNSET = object()


def fork(store: NativeStore, ref: int | str, *, reason: str, state: Any = _UNSET,
         tasks: Any = _UNSET, name: str | None = None) -> RunInfo:
    """Create a run whose first checkpoint (kind ``fork``) is ``ref``'s snapshot, optionally edited.

    The source run is never modified. Unedited state and task state are taken by reference
    (the same content digests), so forking costs a few hundred bytes.
    """
    if not reason.strip():
        raise StoreError("A fork needs a reason (it is kept with the new run).")
    writer = NativeWriter(store)
    source = store.get_checkpoint(ref)
    run = store.get_run(source.run_id)
    snap = store.load(source.id)
    new_state = snap.state if state is _UNSET else state
    new_tasks = snap.tasks if tasks is _UNSET else (taskstate.validate(tasks) if tasks is not None else None)
    pieces: dict[bytes, bytes] = {}
    state_hash, tasks_hash, size = source.state_hash, source.tasks_hash, source.size
    enc = PieceEncoder()
    if state is not _UNSET:
        state_hash, size, pieces = enc.encode(new_state)
    if tasks is not _UNSET and new_tasks is not None:
        tasks_hash, _, task_pieces = PieceEncoder().encode(new_tasks)
        pieces.update(task_pieces)
    elif tasks is not _UNSET:
        tasks_hash = None
    edited = [part for part, value in (("state", state), ("tasks", tasks)) if value is not _UNSET]
    child = writer.create_run(
        name=name or f"{run.name} (fork of #{source.seq})", agent=run.agent, status="forked",
        resume_spec=copy.deepcopy(run.resume_spec), resumable=run.resumable,
        not_resumable_reason=run.not_resumable_reason, labels=dict(run.labels),
        parent_run=run.id, parent_checkpoint=int(source.id), fork_reason=reason, owner=False)
    old_form = PieceEncoder()
    old_form.encode(snap.state)
    if state is _UNSET:
        enc.top_form = old_form.top_form
    change = summarize(old_form.top_form, enc.top_form, lengths(snap.state), lengths(new_state),
                       snap.tasks, new_tasks)
    writer.append(child.id, child.epoch, NewCheckpoint(
        kind="fork", name=f"fork of {run.name} #{source.seq}", state_hash=state_hash,
        tasks_hash=tasks_hash, pieces=pieces, size=size,
        meta={"reason": reason, "source_run": run.id, "source_checkpoint": source.id,
              "source_seq": source.seq, "edited": edited},
        score=taskstate.score(new_tasks), change=change))
    writer.set_status(child.id, None, "forked")
    return store.get_run(child.id)
