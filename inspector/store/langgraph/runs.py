"""Threads → ``RunInfo``: status from the head checkpoint's pending writes and next nodes.

Status rule (documented for the GUI), looking at the root-namespace head of the thread:

1. ``failed`` — a task of the head's pending step wrote ``__error__`` and no output.
2. ``interrupted`` — a task raised ``interrupt()`` and has not finished (waits for
   ``Command(resume=…)``).
3. ``completed`` — the head has no next nodes and no unfinished task.
4. otherwise nodes are waiting to run: ``running`` if the head is younger than
   ``running_window`` seconds, else ``interrupted`` (paused at a static breakpoint, or the
   process stopped); either way ``invoke(None, config)`` would continue it.

Only the head's ``channel_values`` keys, ``channel_versions``, ``versions_seen`` and the task
channel are read (a streaming decode that skips every other value).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import msgpack

from inspector.model import RunInfo
from inspector.store.columns import BINARY
from inspector.store.langgraph.decode import BlobError, decode_plain, decode_typed, plain_or_error
from inspector.store.langgraph.ids import id_time
from inspector.store.langgraph.mapping import parse_metadata
from inspector.store.langgraph.pregel import (ERRORED, FINISHED, INTERRUPTED, JOIN_PREFIX, PREGEL_TASKS,
                                              TaskWrites, next_nodes, push_index, send_nodes, summarise_tasks,
                                              with_next)
from inspector.store.langgraph.rows import CHANNEL_SEP, HeadRow, TaskOutputRow, ThreadRow, WriteRow
from inspector.store.langgraph.tasks import build_task_state
from inspector.taskstate import Score, score

STANDARD_METADATA = {"source", "step", "parents", "writes"}
NOT_RESUMABLE = ("Resuming a LangGraph thread needs its graph: give it as module:attr in the Resume "
                 "dialog or Run \u25b8 LangGraph Settings (resume --graph on the command line).")


@dataclass(frozen=True)
class HeadSummary:
    """What the run list needs from a head body: next nodes and the task channel value."""

    next: tuple[str, ...] | None      # None when the body could not be read
    tasks_value: Any = None
    sends: tuple[str | None, ...] = ()   # the node of each Send packet (what its PUSH task runs)


def _read_head_msgpack(blob: bytes, task_channel: str) -> HeadSummary:
    up = msgpack.Unpacker(raw=False, strict_map_key=False, max_buffer_size=max(len(blob), 1))
    up.feed(blob)
    names: list[Any] = []
    tasks_value = None
    fields: dict[str, Any] = {}
    steering: dict[str, Any] = {}
    for _ in range(up.read_map_header()):
        key = up.unpack()
        if key == "channel_values":
            for _ in range(up.read_map_header()):
                name = up.unpack()
                names.append(name)
                if name == task_channel:
                    tasks_value = plain_or_error(up.unpack())
                elif isinstance(name, str) and (name == PREGEL_TASKS or name.startswith(JOIN_PREFIX)):
                    steering[name] = up.unpack()      # Send packets and join barriers count for next
                else:
                    up.skip()
        elif key in ("channel_versions", "versions_seen"):
            fields[key] = up.unpack()
        else:
            up.skip()
    found = next_nodes(names, fields.get("channel_versions"), fields.get("versions_seen"), steering)
    return HeadSummary(tuple(found), tasks_value, tuple(send_nodes(steering.get(PREGEL_TASKS))))


def read_head(head: HeadRow, task_channel: str) -> HeadSummary:
    """Next nodes and task-channel value of a head body, decoding as little as possible."""
    try:
        if head.type == "msgpack" and isinstance(head.blob, BINARY):
            return _read_head_msgpack(bytes(head.blob), task_channel)
        body = decode_typed(head.type, head.blob)
    except (BlobError, ValueError, TypeError, msgpack.UnpackException, RecursionError):
        return HeadSummary(None)
    if not isinstance(body, dict) or "__opaque__" in body:
        return HeadSummary(None)
    values = got_values if isinstance(got_values := body.get("channel_values"), dict) else {}
    found = next_nodes(values.keys(), body.get("channel_versions"), body.get("versions_seen"), values)
    return HeadSummary(tuple(found), plain_or_error(values.get(task_channel)),
                       tuple(send_nodes(values.get(PREGEL_TASKS))))


def run_status(tasks: dict[str, TaskWrites], head: HeadSummary, updated: float,
               running_window: float, now: float | None = None, source: Any = None) -> str:
    """The run status by the rule in this module's docstring; a head written by
    ``update_state`` or a fork (``source`` update/fork) with no task started on it waits to be
    resumed (interrupted), however recent: nothing runs it until someone resumes it."""
    statuses = {t.status for t in tasks.values()}
    if not statuses and source in ("update", "fork") and head.next:
        return "interrupted"
    if ERRORED in statuses:
        return "failed"
    if INTERRUPTED in statuses:
        return "interrupted"
    waiting = bool(head.next) or any(s != FINISHED for s in statuses)
    if not waiting:
        return "completed"
    now = time.time() if now is None else now
    return "running" if now - updated < running_window else "interrupted"


def _labels(metadata: Any) -> dict:
    meta = parse_metadata(metadata)
    return {str(k): v for k, v in meta.items()
            if k not in STANDARD_METADATA and isinstance(v, (str, int, float, bool))}


def _node(task: TaskWrites, sends: tuple[str | None, ...]) -> str | None:
    """A task's node; a PUSH task's is its Send packet's (so it counts as that next node)."""
    index = push_index(task.task_path)
    if index is not None and index < len(sends) and sends[index]:
        return sends[index]
    return task.node


def head_score(tasks: dict[str, TaskWrites], summary: HeadSummary, task_channel: str) -> Score:
    """A thread's score as its head shows it: the task channel's tasks, then a node task per
    task of the pending step (from its writes) and per next node not yet run."""
    shape = tuple((_node(t, summary.sends), t.status) for t in tasks.values())
    if summary.tasks_value is None:
        return _shape_score(shape, tuple(summary.next or ()), task_channel)
    return _score(shape, tuple(summary.next or ()), summary.tasks_value, task_channel)


def _score(shape: tuple[tuple[str | None, str], ...], next_nodes: tuple[str, ...], tasks_value: Any,
           task_channel: str) -> Score:
    """The score of the task channel's tasks and a node task per (node, status) of ``shape``
    and per next node not among them (only counts: the tasks' ids are their places)."""
    node_tasks = with_next([{"task_id": f"task-{i}", "node": node, "status": status}
                            for i, (node, status) in enumerate(shape)], next_nodes)
    return score(build_task_state({task_channel: tasks_value}, node_tasks, task_channel))


@functools.lru_cache(maxsize=1024)
def _shape_score(shape: tuple[tuple[str | None, str], ...], next_nodes: tuple[str, ...], task_channel: str) -> Score:
    """``_score`` without a task channel value (cached: a thread's steps repeat a few shapes)."""
    return _score(shape, next_nodes, None, task_channel)


StepWrites = dict[tuple[str, str], list[tuple[str, str, str]]]


def step_writes(outputs: dict[tuple[str, str], list[TaskOutputRow]],
                stops: Iterable[tuple[str, str, str, str]]) -> StepWrites:
    """(task id, task path, channel) of the writes of each listed checkpoint's step, by (ns,
    checkpoint id): its finished tasks' outputs and its tasks' error and interrupt writes
    (``stops``), as ``summarise_tasks`` takes them."""
    rows: StepWrites = {}
    for key, found in outputs.items():
        rows[key] = [(o.task_id, o.task_path, channel) for o in found for channel in o.channels.split(CHANNEL_SEP)]
    for ns, checkpoint_id, task_id, channel in stops:
        rows.setdefault((ns, checkpoint_id), []).append((task_id, "", channel))
    return rows


def row_scores(writes: StepWrites, task_channel: str) -> dict[tuple[str, str], Score]:
    """The score of each listed checkpoint that has pending writes (``step_writes``), as the
    Tasks tab shows it: a node task per task of the step after it, done when it finished,
    failed or interrupted when it stopped. Next nodes no task has written for yet are left to
    a head (``head_score``)."""
    return {key: _shape_score(tuple((t.node, t.status) for t in summarise_tasks(found, key[1]).values()), (),
                              task_channel)
            for key, found in writes.items()}


def build_run(thread: ThreadRow, head: HeadRow | None, summary: HeadSummary,
              writes: list[WriteRow], *, task_channel: str, running_window: float) -> RunInfo:
    """One RunInfo from a thread row, its head and the head's pending writes."""
    tasks = summarise_tasks(((w.task_id, w.task_path, w.channel) for w in writes), head.checkpoint_id if head else None)
    updated = id_time(thread.last_id)
    last_error = next((decode_plain(w.type, w.value) for w in writes if w.channel == "__error__"), None)
    sc = head_score(tasks, summary, task_channel)
    return RunInfo(
        id=thread.thread_id, name=thread.thread_id, agent="langgraph",
        status=run_status(tasks, summary, updated, running_window,
                          source=parse_metadata(head.metadata).get("source") if head else None),
        created=id_time(thread.first_id), updated=updated, checkpoint_count=thread.checkpoints,
        head_seq=thread.checkpoints - 1, resumable=False, not_resumable_reason=NOT_RESUMABLE,
        labels=_labels(head.metadata) if head else {},
        last_error=last_error if isinstance(last_error, str) or last_error is None else str(last_error),
        tasks_done=sc.tasks_done, tasks_total=sc.tasks_total,
        checks_passed=sc.checks_passed, checks_total=sc.checks_total)
