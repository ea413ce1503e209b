"""One LangGraph checkpoint decoded into a ``Snapshot`` (backend-independent).

``Snapshot.state`` is the decoded ``channel_values`` (control channels — ``branch:to:*`` and
``__*`` — only with ``show_control``). A body that cannot be decoded gives
``{"__error__": reason}`` (pickle / encrypted bodies give an ``__opaque__`` marker) and the
rest of the snapshot still fills in. ``Snapshot.meta`` keys:

``thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, source, step, ts, v,
serialization, langgraph_metadata, channel_versions, versions_seen, updated_channels,
next, writes, tasks, interrupts, errors, control_channels, channel_sizes, subgraphs,
planned_tasks, parent_step, delta_snapshots, reconstructed, empty_reducers, decode_errors, notes``.

``writes`` items: ``{task_id, node, task_path, idx, channel, type, value}``; ``tasks`` items:
``{task_id, node, task_path, status (finished|errored|interrupted|pending), channels,
question, error}``; ``interrupts`` items: ``{task_id, node, id, value, question, pending}``.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any
from collections.abc import Callable, Iterable

from inspector.errors import TaskStateError
from inspector.limits import BudgetExceeded
from inspector.model import CheckpointInfo, Snapshot
from inspector.store.langgraph.channels import ChannelKind, CustomWrites
from inspector.store.langgraph.decode import (BlobError, DecodeBudget, decode_plain, decode_typed, pack,
                                              plain_or_error)
from inspector.store.langgraph.live import apply_live
from inspector.store.langgraph.mapping import metadata_step, parse_metadata
from inspector.store.langgraph.pregel import (CONTROL_WRITES, ERROR, INTERRUPT, LATEST_CHECKPOINT_VERSION,
                                              NULL_TASK_ID, PREGEL_TASKS, call_index, entrypoint_of, is_call, is_control_channel,
                                              namespace_task, next_nodes, parent_namespace,
                                              planned_tasks, push_index, send_nodes,
                                              summarise_tasks, with_planned)
from inspector.store.langgraph.rows import BlobRow, WriteRow
from inspector.store.langgraph.tasks import build_task_state
from inspector.taskstate import DEFAULT_TASK_CHANNEL, score


def decode_body(body: BlobRow) -> tuple[Any, str | None]:
    """(checkpoint dict — lossless for msgpack — or an opaque marker, error text or None)."""
    try:
        value = decode_typed(body.type, body.blob)
    except BlobError as err:
        return None, f"cannot decode checkpoint: {err}"
    if isinstance(value, dict) and "__opaque__" in value:
        return value, None
    if not isinstance(value, dict):
        return None, f"checkpoint body is a {type(value).__name__}, not a map"
    if body.channel_blobs:
        values = dict(value.get("channel_values") or {})
        for channel, (tag, data) in body.channel_blobs.items():
            try:
                values[channel] = decode_typed(tag, data)
            except BlobError as err:
                values[channel] = {"__error__": f"cannot decode channel {channel}: {err}"}
        value = dict(value, channel_values=values)
    return value, None


def _size(value: Any) -> int:
    try:
        return len(pack(value))
    except (TypeError, ValueError, OverflowError):
        return len(json.dumps(plain_or_error(value), default=str))


def interrupt_question(value: Any) -> str | None:
    """The question text of an interrupt value (a string, or a map's question/message/… key)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in ("question", "message", "prompt", "content", "text"):
            if isinstance(value.get(key), str):
                return value[key]
    return None


WAITING = "waiting: "      # how the Change of a checkpoint waiting at interrupt() starts
_SEPARATOR = " \u00b7 "     # between what it asks and the channels its step wrote


def pending_questions(rows: Iterable[tuple[Any, str, str, str | None, Any]]) -> dict[Any, list[tuple[str, str]]]:
    """(task id, question) of every interrupt still waiting for an answer, by checkpoint.

    ``rows`` are pending writes as (checkpoint key, task id, channel, value type, value); only
    an interrupt's value is read. A task that wrote an output besides its interrupt was
    answered (it ran on), so its question is no longer pending."""
    tasks: dict[tuple[Any, str], dict] = {}
    for key, task_id, channel, tag, value in rows:
        task = tasks.setdefault((key, task_id), {"output": False, "questions": []})
        if channel == INTERRUPT:
            items = decode_plain(tag, value)
            for item in items if isinstance(items, list) else [items]:
                inner = item.get("value") if isinstance(item, dict) and "__type__" in item else item
                text = interrupt_question(inner)
                task["questions"].append(text if text is not None else json.dumps(inner, default=str))
        elif channel not in CONTROL_WRITES:
            task["output"] = True
    waiting: dict[Any, list[tuple[str, str]]] = {}
    for (key, task_id), task in sorted(tasks.items(), key=lambda item: item[0]):
        if not task["output"] and task["questions"]:     # every task still waiting asks
            waiting.setdefault(key, []).extend((task_id, q) for q in task["questions"])
    return waiting


def waiting_change(questions: Iterable[str], change: str) -> str:
    """The Change of a checkpoint whose interrupts ask ``questions``: ``waiting: …`` before the
    channels its step wrote. A question's own " · " is written " - ", so that the channels stay
    what follows the last one (``without_waiting``)."""
    text = " / ".join(questions).replace(_SEPARATOR, " - ")[:200]
    return WAITING + text + (_SEPARATOR + change if change else "")


def without_waiting(change: str) -> str:
    """``change`` without what ``waiting_change`` put before it."""
    if not change.startswith(WAITING):
        return change
    return change.rpartition(_SEPARATOR)[2] if _SEPARATOR in change else ""


def split_channels(values: dict, show_control: bool) -> tuple[dict, dict, dict, list[str]]:
    """(state, control channels, per-channel sizes, delta-snapshot channels).

    All channels together are held to the read budgets (BudgetExceeded names the flag)."""
    state, control, sizes, deltas = {}, {}, {}, []
    budget = DecodeBudget("The state of this LangGraph checkpoint")
    for channel, raw in values.items():
        plain = plain_or_error(raw, budget)
        if isinstance(plain, dict) and set(plain) == {"__delta_snapshot__"}:
            plain = plain["__delta_snapshot__"]
            deltas.append(str(channel))
        key = channel if isinstance(channel, str) else json.dumps(plain_or_error(channel))
        sizes[key] = _size(raw)
        if is_control_channel(channel):
            control[key] = plain
            if not show_control:
                continue
        state[key] = plain
    return state, control, sizes, deltas


def without_value(row: WriteRow) -> WriteRow:
    """A pending write without its value, unless it is an interrupt or an error (which the
    task state and the task list read)."""
    return row if row.channel in (INTERRUPT, ERROR) else row._replace(value=None)


def describe_writes(rows: list[WriteRow], planned: list[dict] | None = None,
                    sends: list[str | None] | None = None,
                    checkpoint_id: str | None = None) -> tuple[list[dict], list[dict], list[dict], list[dict]]:
    """(writes, tasks, interrupts, errors) from the pending writes of checkpoint ``checkpoint_id``.

    ``planned`` (``pregel.planned_tasks``) names tasks by LangGraph's task id; ``sends`` (the
    checkpoint's Send packets' nodes) names PUSH tasks by their packet index otherwise. An
    ``update_state``'s writes are listed among the writes, but are no task (``summarise_tasks``).
    """
    summary = summarise_tasks(((w.task_id, w.task_path, w.channel) for w in rows), checkpoint_id)
    by_id = {p["task_id"]: p["node"] for p in planned or () if p.get("task_id")}
    for summarised in summary.values():
        if summarised.task_id in by_id:
            summarised.node = by_id[summarised.task_id]
        elif (index := push_index(summarised.task_path)) is not None and sends and 0 <= index < len(sends) \
                and sends[index]:
            summarised.node = sends[index]
    writes, interrupts, errors = [], [], []
    details: dict[str, dict] = {}
    seen_ids: set = set()
    for w in rows:
        task = summary.get(w.task_id)
        node = task.node if task is not None else None
        value = decode_plain(w.type, w.value)
        writes.append({"task_id": w.task_id, "node": node, "task_path": w.task_path, "idx": w.idx,
                       "channel": w.channel, "type": w.type, "value": value})
        if w.task_id == NULL_TASK_ID or task is None:
            continue
        if w.channel == INTERRUPT:
            for item in value if isinstance(value, list) else [value]:
                inner = item.get("value") if isinstance(item, dict) and "__type__" in item else item
                question = interrupt_question(inner)
                details.setdefault(w.task_id, {}).setdefault("question", question)
                found_id = item.get("id") if isinstance(item, dict) else None
                # the checkpoint's interrupts are its prepared tasks' (as LangGraph's
                # StateSnapshot.interrupts): a functional call's interrupt reaches its caller,
                # which writes it again; the call keeps it as its own question
                if is_call(w.task_path) or (found_id is not None and found_id in seen_ids):
                    continue
                seen_ids.add(found_id)
                interrupts.append({"task_id": w.task_id, "node": node, "id": found_id,
                                   "value": inner, "question": question,
                                   "pending": not task.has_output})
        elif w.channel == ERROR:
            text = value if isinstance(value, str) else json.dumps(value, default=str)
            errors.append({"task_id": w.task_id, "node": node, "error": text})
            details.setdefault(w.task_id, {})["error"] = text
    # functional calls after the tasks that made them, in the order they were made (their writes
    # come in task id order)
    ordered = sorted(summary.values(), key=lambda t: (is_call(t.task_path), call_index(t.task_path) or 0))
    tasks = [{"task_id": t.task_id, "node": t.node, "task_path": t.task_path, "status": t.status,
              "channels": t.channels, **details.get(t.task_id, {})} for t in ordered]
    return writes, tasks, interrupts, errors


def _subgraphs(ns: str, tasks: list[dict], namespaces: list[str]) -> list[dict]:
    task_ids = {t["task_id"] for t in tasks}
    found = []
    for lane in namespaces:
        if lane and parent_namespace(lane) == ns and (nt := namespace_task(lane)) and nt[1] in task_ids:
            found.append({"lane": lane, "node": nt[0], "task_id": nt[1]})
    return found


def live_view(snap: Snapshot, kinds: Callable[[str], ChannelKind], clears: frozenset[str] = frozenset(),
              combine_custom: Callable[[CustomWrites], Any] | None = None) -> Snapshot:
    """A namespace's latest checkpoint as ``get_state()`` shows it, whoever stored it (a
    LangGraph saver's database, ``InspectorSaver``, an import): the output writes of the tasks
    of its step that finished applied, ``next`` and the interrupts only what still waits
    (``live.apply_live``, with ``kinds``, ``clears`` and ``combine_custom``); as stored when
    none finished or the state cannot be read."""
    if not snap.meta.get("writes") or not isinstance(snap.state, dict) or "__error__" in snap.state:
        return snap
    live = apply_live(snap.state, snap.meta, snap.meta.get("planned_tasks") or [], kinds, clears, combine_custom)
    return snap if live is None else dataclasses.replace(snap, state=live[0], meta=live[1])


def build_snapshot(info: CheckpointInfo, thread_id: str, ns: str, checkpoint_id: str,
                   body: BlobRow, writes: list[WriteRow], namespaces: list[str], *,
                   show_control: bool = False, task_channel: str = DEFAULT_TASK_CHANNEL,
                   rebuild: Callable[[dict, dict], dict[str, dict]] | None = None,
                   empties: Callable[[set[str]], dict[str, Any]] | None = None,
                   held_out: dict[str, Any] | None = None) -> Snapshot:
    """Decode one checkpoint into a Snapshot (never raises for bad data).

    ``rebuild(metadata, channel_values)`` returns values for channels the body does not
    store (DeltaChannel, see ``delta``); they go into the state, flagged in ``reconstructed``.
    ``empties(present channels)`` returns the empty values of reducer channels the body lacks
    (``reducers``); they go into the state as LangGraph shows them, listed in ``empty_reducers``.
    ``held_out``: channels the body holds encoded instead (a lazy view), as the task state
    reads them (``messages`` for its goal: ``lazy.EncodedItems``).
    """
    lg_meta = parse_metadata(body.metadata)
    checkpoint, error = decode_body(body)
    errors = [error] if error else []
    notes: list[str] = []
    cp = checkpoint if isinstance(checkpoint, dict) and "__opaque__" not in checkpoint else {}
    values = got_values if isinstance(got_values := cp.get("channel_values"), dict) else {}
    state, control, sizes, deltas = split_channels(values, show_control)
    rebuilt = rebuild(lg_meta, values) if rebuild and cp is checkpoint and checkpoint is not None else {}
    for channel, found in rebuilt.items():
        state[channel] = found.pop("value")
    empty = {}
    if empties and cp is checkpoint and checkpoint is not None:
        empty = {k: v for k, v in empties({str(c) for c in values} | set(rebuilt)).items() if k not in state}
        state.update(empty)
    if checkpoint is None:
        state = {"__error__": error}
    elif cp is not checkpoint:
        state = checkpoint
        notes.append(str(checkpoint.get("note", "checkpoint body not decoded")))
    version = cp.get("v")
    if isinstance(version, int) and version > LATEST_CHECKPOINT_VERSION:
        notes.append(f"checkpoint format v{version} is newer than this inspector knows "
                     f"(v{LATEST_CHECKPOINT_VERSION}); some fields may be missing")
    step = metadata_step(lg_meta, checkpoint_id)
    entry = entrypoint_of(checkpoint_id, ns, step, cp, ((w.task_id, w.task_path) for w in writes)) if cp else None
    next_list = next_nodes(values.keys(), cp.get("channel_versions"), cp.get("versions_seen"), values, entry)
    planned = planned_tasks(checkpoint_id, ns, step, cp, entry) if cp else []
    write_list, tasks, interrupts, task_errors = describe_writes(writes, planned,
                                                                 send_nodes(values.get(PREGEL_TASKS)), checkpoint_id)
    tasks = with_planned(tasks, planned)
    whole = "__error__" not in state
    try:
        try:
            task_state = build_task_state({**state, **(held_out or {})} if whole else {}, tasks, task_channel)
        except (BlobError, BudgetExceeded) as err:     # a damaged or huge message held out: no goal from it
            notes.append(f"The task state's goal could not be read from the messages: {err}")
            task_state = build_task_state(state, tasks, task_channel)
    except TaskStateError as err:  # pragma: no cover - build_task_state normalises its input
        task_state, notes = {"goal": "", "tasks": []}, notes + [str(err)]
    sc = score(task_state)
    meta = {
        "thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint_id,
        "parent_checkpoint_id": body.parent_id, "source": lg_meta.get("source"),
        "step": step, "ts": cp.get("ts"), "v": version,
        "serialization": body.type, "langgraph_metadata": plain_or_error(lg_meta),
        "channel_versions": plain_or_error(cp.get("channel_versions") or {}),
        "versions_seen": plain_or_error(cp.get("versions_seen") or {}),
        "updated_channels": plain_or_error(cp.get("updated_channels")),
        "next": next_list, "writes": write_list, "tasks": tasks, "interrupts": interrupts,
        "errors": task_errors, "control_channels": control, "channel_sizes": sizes,
        "subgraphs": _subgraphs(ns, tasks, namespaces), "planned_tasks": planned,
        "parent_step": info.parent_id if ns and body.parent_id is None else None,
        "delta_snapshots": deltas, "reconstructed": rebuilt, "empty_reducers": sorted(empty), "decode_errors": errors, "notes": notes,
    }
    info = dataclasses.replace(info, tasks_done=sc.tasks_done, tasks_total=sc.tasks_total,
                               checks_passed=sc.checks_passed, checks_total=sc.checks_total)
    return Snapshot(info=info, state=state, tasks=task_state, meta=meta)

