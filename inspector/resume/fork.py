"""Fork a checkpoint into a new run: lineage recorded, unchanged content shared by reference."""

from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass
from typing import Any
from collections.abc import Iterable

from inspector import taskstate
from inspector.errors import ResumeSpecError, StoreError
from inspector.model import CheckpointInfo, RunInfo
from inspector.record.summary import lengths, summarize
from inspector.resume.edits import (EditError, apply_assignments, check_json_value, parse_json_text,
                                    restore_keys, validate_tasks)
from inspector.codec.exact import canonical
from inspector.store.base import Store
from inspector.codec import PieceEncoder, encode_flat
from inspector.codec.encoder import adopt_texts
from inspector.store.native.store import NativeStore
from inspector.store.native.rows import check_spec
from inspector.store.native.writer import NativeWriter, NewCheckpoint
from inspector.resume.fork_spec import (FlagConflict, SpecEdit, contradicted_flags, describe_spec,
                                        edited_keys)

_UNSET: Any = object()
NO_SPEC_EDIT = SpecEdit()      # the fork keeps a copy of the original's resume spec
LANGGRAPH_SPEC = ("A LangGraph fork is a checkpoint of the same thread, resumed through its graph; "
                  "it has no name or resume command of its own to set (use the store's LangGraph settings).")


def native(store: Store, action: str) -> NativeStore:
    """``store`` as a writable native store, or a StoreError saying why ``action`` is impossible."""
    if not isinstance(store, NativeStore):
        raise StoreError(f"{action.capitalize()} needs a Checkpoint Inspector store; "
                         f"{store.info.display} is a {store.info.kind} store.")
    if store.info.read_only:
        raise StoreError(f"{action.capitalize()} writes to the store, but {store.info.display} is open read-only.")
    return store


def langgraph_lane(run: RunInfo) -> dict | None:
    """The LangGraph thread (``thread_id``, ``checkpoint_ns``) a native run holds for
    ``InspectorSaver`` (written by it or imported), else None."""
    lane = run.labels.get("langgraph") if isinstance(run.labels, dict) else None
    return lane if isinstance(lane, dict) and isinstance(lane.get("thread_id"), str) else None


def lane_refusal(run: RunInfo, checkpoint_id: str | None = None, action: str = "fork") -> str | None:
    """Why a run InspectorSaver holds is not forked (``action``: or resumed) here (None: it is
    no such run): a new run would be a copy its graph never sees; LangGraph's own
    ``update_state`` makes the branch, and ``invoke`` continues it."""
    lane = langgraph_lane(run)
    if lane is None:
        return None
    thread = {"thread_id": lane["thread_id"]}
    config = {**thread, **({"checkpoint_ns": lane["checkpoint_ns"]} if lane.get("checkpoint_ns") else {}),
              **({"checkpoint_id": checkpoint_id} if checkpoint_id else {})}
    how = (f"graph.update_state({{'configurable': {config!r}}}, values), then graph.invoke(None, "
           f"{{'configurable': {thread!r}}})" if action == "fork" else
           f"graph.invoke(None, {{'configurable': {thread!r}}}) (an interrupt: Command(resume=…) instead of None)")
    why = " (a copy made here would be a run LangGraph never sees)" if action == "fork" else ""
    return (f"Run {run.id} is the LangGraph thread {lane['thread_id']!r} that InspectorSaver keeps, which only "
            f"its graph can {action}{why}: call {how} in your code.")


def source_fingerprint(store: Store, run_id: str, upto_seq: int | None = None) -> str:
    """A digest of a run's checkpoint rows (ids, order, kinds, content hashes, scores).

    Checkpoints are append-only, so the fingerprint of the checkpoints up to a seq never
    changes; fork verifies that with it. Derived counts (branches) are left out.
    """
    h = hashlib.sha256()
    for cp in store.list_checkpoints(run_id):
        if upto_seq is not None and cp.seq > upto_seq:
            break
        row = (cp.id, cp.seq, cp.parent_id, cp.kind, cp.name, cp.created, cp.size, cp.ops,
               cp.state_hash, cp.tasks_hash, cp.tasks_done, cp.tasks_total, cp.checks_passed,
               cp.checks_total, cp.change)
        h.update(repr(row).encode())
    return h.hexdigest()


def _edited_state(original: Any, state: Any) -> Any:
    if state is _UNSET:
        return _UNSET
    state = restore_keys(original, state)      # "101" typed in the text: the int key 101
    check_json_value(state, "state")
    return _UNSET if canonical(state) == canonical(original) else state


def _edited_tasks(original: dict | None, tasks: Any) -> Any:
    if tasks is _UNSET:
        return _UNSET
    normal = validate_tasks(tasks)
    return _UNSET if normal == original else normal


@dataclass(frozen=True)
class ForkOutcome:
    """A fork in any store: the run to show and the fork's first checkpoint.

    Native stores make a new run; LangGraph stores add a branch checkpoint to the same
    thread (``run`` is that thread). ``notes`` carry limits the user should know about.
    """

    run: RunInfo
    checkpoint_id: int | str
    notes: tuple[str, ...] = ()


def fork_checkpoint(store: Store, ref: int | str | CheckpointInfo, *, reason: str, state: Any = _UNSET,
                    tasks: Any = _UNSET, name: str | None = None, resume_spec: Any = _UNSET) -> ForkOutcome:
    """Fork ``ref`` in a native or LangGraph store (LangGraph: ``inspector.resume.langgraph``)."""
    if store.info.kind == "langgraph":
        from inspector.resume.langgraph import fork_langgraph
        if tasks is not _UNSET:
            raise EditError("A LangGraph task state is derived from the graph's state; edit the state instead.")
        if resume_spec is not _UNSET:
            raise EditError(LANGGRAPH_SPEC)
        result = fork_langgraph(store, ref, reason=reason, **({} if state is _UNSET else {"state": state}))
        return ForkOutcome(store.get_run(result.thread_id), result.checkpoint_id, tuple(result.limits))
    run = fork(store, ref, reason=reason, state=state, tasks=tasks, name=name, resume_spec=resume_spec)
    return ForkOutcome(run, store.get_checkpoint(f"{run.id}:0").id)


def fork(store: Store, ref: int | str | CheckpointInfo, *, reason: str, state: Any = _UNSET,
         tasks: Any = _UNSET, name: str | None = None, resume_spec: Any = _UNSET) -> RunInfo:
    """Create a run whose first checkpoint (kind ``fork``) is ``ref``'s snapshot, optionally edited.

    The source run is never modified (verified by the fingerprint of its checkpoints
    before and after). Unedited state and task state are taken by reference (the same
    content digests); an edited state stores only the pieces that differ. Invalid edits
    raise EditError with the reason. (LangGraph stores: the thread that got the branch.)
    ``resume_spec`` is the fork's own (``inspector.resume.fork_spec``); by default a copy of
    the original's.
    """
    if not reason or not reason.strip():
        raise EditError("A fork needs a reason (it is kept with the new run).")
    if store.info.kind == "langgraph":
        return fork_checkpoint(store, ref, reason=reason, state=state, tasks=tasks, resume_spec=resume_spec).run
    st = native(store, "forking")
    source = ref if isinstance(ref, CheckpointInfo) else st.get_checkpoint(ref)
    run = st.get_run(source.run_id)
    snap = st.load(source.id)
    refused = lane_refusal(run, _lane_checkpoint(snap.meta))
    if refused:
        raise EditError(refused)
    state = _edited_state(snap.state, state)
    tasks = _edited_tasks(snap.tasks, tasks)
    spec = copy.deepcopy(run.resume_spec) if resume_spec is _UNSET else resume_spec
    if spec is not None:
        try:
            check_spec(spec)
        except ResumeSpecError as err:
            raise EditError(f"The fork's resume command is invalid: {str(err).rstrip('.')}.") from err
    before = source_fingerprint(st, run.id, source.seq)
    child = _write_fork(st, run, snap, state, tasks, reason.strip(), name, spec)
    if source_fingerprint(st, run.id, source.seq) != before:  # pragma: no cover - would be a bug
        raise StoreError(f"Run {run.id} changed while it was forked; the store may be damaged.")
    return child


def _lane_checkpoint(meta: Any) -> str | None:
    """LangGraph's checkpoint id of a checkpoint InspectorSaver wrote (its snapshot's metadata)."""
    found = meta.get("langgraph") if isinstance(meta, dict) else None
    cid = found.get("checkpoint_id") if isinstance(found, dict) else None
    return cid if isinstance(cid, str) else None


def _write_fork(st: NativeStore, run: RunInfo, snap: Any, state: Any, tasks: Any, reason: str,
                name: str | None, spec: dict | None) -> RunInfo:
    writer = NativeWriter(st)
    try:
        return _write_fork_with(writer, st, run, snap, state, tasks, reason, name, spec)
    finally:
        writer.close()


def _write_fork_with(writer: NativeWriter, st: NativeStore, run: RunInfo, snap: Any, state: Any,
                     tasks: Any, reason: str, name: str | None, spec: dict | None) -> RunInfo:
    source = snap.info
    new_state = snap.state if state is _UNSET else state
    new_tasks = snap.tasks if tasks is _UNSET else tasks
    pieces: dict[bytes, bytes] = {}
    state_hash, tasks_hash, size = source.state_hash, source.tasks_hash, source.size
    old_form = PieceEncoder()
    old_form.encode(snap.state)
    enc = old_form
    if state is not _UNSET:
        enc = PieceEncoder()
        adopt_texts(enc, st.read_piece, source.state_hash, snap.state, new_state)
        state_hash, size, pieces = enc.encode(new_state)
    if tasks is not _UNSET:
        tasks_hash = None
        if new_tasks is not None:
            tasks_hash, _, task_pieces = encode_flat(new_tasks)
            pieces.update(task_pieces)
    edited = [part for part, value in (("state", state), ("tasks", tasks)) if value is not _UNSET]
    child = writer.create_run(
        name=name or fork_name(run.name, source.seq), agent=run.agent, status="forked",
        resume_spec=spec, resumable=run.resumable,
        not_resumable_reason=run.not_resumable_reason, labels=dict(run.labels),
        parent_run=run.id, parent_checkpoint=int(source.id), fork_reason=reason, owner=False)
    change = summarize(old_form.top_form, enc.top_form, lengths(snap.state), lengths(new_state),
                       snap.tasks, new_tasks)
    writer.append(child.id, child.epoch, NewCheckpoint(
        kind="fork", name=f"fork of {run.name} #{source.seq}", state_hash=state_hash,
        tasks_hash=tasks_hash, pieces=pieces, size=size,
        meta={"reason": reason, "source_run": run.id, "source_checkpoint": source.id,
              "source_seq": source.seq, "edited": edited},
        score=taskstate.score(new_tasks), change=change))
    writer.set_status(child.id, None, "forked")
    return st.get_run(child.id)


def _parse_edits(store: Store, ref: int | str, state_text: str | None, tasks_text: str | None,
                 assignments: list[str], task_assignments: list[str]) -> tuple[Any, Any, Any]:
    """(snapshot or None, edited state or _UNSET, edited tasks or _UNSET) from the CLI's edit texts."""
    state: Any = _UNSET
    tasks: Any = _UNSET
    snap = None
    if state_text is not None or assignments or tasks_text is not None or task_assignments:
        snap = store.load(ref)
        if state_text is not None or assignments:
            base = parse_json_text(state_text, "state file") if state_text is not None else snap.state
            state = apply_assignments(base, assignments, "state")
        if tasks_text is not None or task_assignments:
            base = parse_json_text(tasks_text, "task-state file") if tasks_text is not None else snap.tasks
            tasks = apply_assignments(base, task_assignments, "task state")
    return snap, state, tasks


def fork_with_edits(store: Store, ref: int | str, *, reason: str, state_text: str | None = None,
                    tasks_text: str | None = None, assignments: Iterable[str] = (),
                    task_assignments: Iterable[str] = (), name: str | None = None,
                    spec_edit: SpecEdit = NO_SPEC_EDIT) -> ForkOutcome:
    """Fork with edits given as text: whole JSON documents, then ``PATH=JSON`` assignments.

    This is what the CLI calls (``--state-file``, ``--tasks-file``, ``--set``, ``--set-task``;
    ``--argv``, ``--cwd``, ``--env`` for the fork's own resume command).
    """
    _snap, state, tasks = _parse_edits(store, ref, state_text, tasks_text, list(assignments),
                                       list(task_assignments))
    spec: Any = _UNSET
    if not spec_edit.empty:
        if store.info.kind == "langgraph":
            raise EditError(LANGGRAPH_SPEC)
        spec = spec_edit.apply(store.get_run(store.get_checkpoint(ref).run_id).resume_spec)
    return fork_checkpoint(store, ref, reason=reason, state=state, tasks=tasks, name=name, resume_spec=spec)


@dataclass(frozen=True)
class ForkPreview:
    """What ``fork`` would write, computed without writing (``fork --dry-run``)."""

    source: CheckpointInfo
    run: RunInfo
    name: str
    reason: str
    edits: tuple[Any, ...]      # EditLine rows of the review (empty: nothing edited)
    kind: str                   # "native": a new run; "langgraph": a branch checkpoint in the thread
    resume_spec: dict | None = None                 # the fork's own resume spec (native)
    conflicts: tuple[FlagConflict, ...] = ()        # its arguments that the edit contradicts

    def describe(self) -> str:
        """The preview as text: where, what, and every edited path."""
        from inspector.resume.edit_diff import edit_text

        where = f"{self.source.run_id}:{self.source.seq}"
        head = (f"would fork {where} ({self.source.kind} {self.source.name}) into a new run "
                f"{self.name!r}" if self.kind == "native"
                else f"would add a branch checkpoint to thread {self.run.id} after {where}")
        lines = [head, f"reason: {self.reason}"]
        if self.edits:
            lines.append(edit_text(list(self.edits)))
        else:
            lines.append("no edits: the state and task state are taken as they are (by reference)")
        if self.kind == "native":
            lines += describe_spec(self.resume_spec, self.conflicts)
        else:
            lines.append("resume: through the thread's graph (the store's LangGraph settings), as before")
        lines.append("nothing was written (dry run)")
        return "\n".join(lines)


def preview_fork(store: Store, ref: int | str, *, reason: str, state_text: str | None = None,
                 tasks_text: str | None = None, assignments: Iterable[str] = (),
                 task_assignments: Iterable[str] = (), name: str | None = None,
                 spec_edit: SpecEdit = NO_SPEC_EDIT) -> ForkPreview:
    """Check a fork's edits and describe what it would write; the store is only read."""
    from inspector.resume.edit_diff import edit_lines

    if not reason or not reason.strip():
        raise EditError("A fork needs a reason (it is kept with the new run).")
    source = store.get_checkpoint(ref)
    run = store.get_run(source.run_id)
    if store.info.kind != "langgraph" and langgraph_lane(run) is not None:
        raise EditError(lane_refusal(run, _lane_checkpoint(store.load(source.id).meta)) or "")
    snap, state, tasks = _parse_edits(store, source.id, state_text, tasks_text, list(assignments),
                                      list(task_assignments))
    if store.info.kind == "langgraph" and tasks is not _UNSET:
        raise EditError("A LangGraph task state is derived from the graph's state; edit the state instead.")
    if store.info.kind == "langgraph" and not spec_edit.empty:
        raise EditError(LANGGRAPH_SPEC)
    lines: list[Any] = []
    keys: tuple[str, ...] = ()
    if snap is not None:
        new_state = snap.state if state is _UNSET else _edited_state(snap.state, state)
        new_tasks = snap.tasks if tasks is _UNSET else _edited_tasks(snap.tasks, tasks)
        after_state = snap.state if new_state is _UNSET else new_state
        after_tasks = snap.tasks if new_tasks is _UNSET else new_tasks
        lines = edit_lines(snap.state, after_state, snap.tasks, after_tasks)
        keys = edited_keys(snap.state, after_state) + edited_keys(snap.tasks, after_tasks)
    spec = spec_edit.apply(run.resume_spec) if store.info.kind != "langgraph" else None
    conflicts = contradicted_flags(spec["argv"], keys) if spec else ()
    return ForkPreview(source, run, name or fork_name(run.name, source.seq), reason.strip(), tuple(lines),
                       "langgraph" if store.info.kind == "langgraph" else "native", spec, conflicts)


def fork_name(source_name: str, seq: int) -> str:
    """The default name of a new run forked from run ``source_name`` at checkpoint ``seq``."""
    return f"{source_name} (fork of #{seq})"
