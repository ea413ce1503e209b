"""How the inspector shows a LangGraph lane of a native store: LangGraph's own semantics.

A checkpoint written by ``InspectorSaver`` is turned back into the rows the LangGraph adapter
reads from LangGraph's own databases (a checkpoint body with its channel values, its pending
writes) and decoded by the same code (``inspector.store.langgraph.snapshot``): the snapshot
carries ``next``, the pending writes, the tasks with their status, the interrupts, errors and
subgraph lanes, and its task state comes from the ``todos`` channel; a lane's latest checkpoint
is shown as ``get_state()`` shows it, its pending writes applied (``snapshot.live_view``, as
the adapter shows a LangGraph database's). Typed leaves hold LangGraph msgpack; they are read
with the adapter's msgpack decoder, which imports and runs nothing.
"""

from __future__ import annotations

import dataclasses
from typing import Any
from collections.abc import Callable

import sqlalchemy as sa

from inspector.errors import CorruptDataError, StoreError
from inspector.store.columns import BINARY, as_int, as_opt_text, as_text
from inspector.model import CheckpointInfo, Snapshot
from inspector.store.langgraph.decode import BlobError, decode_typed, pack, plain_or_error
from inspector.store.langgraph.mapping import parse_metadata
from inspector.store.langgraph.pregel import INTERRUPT, NULL_TASK_ID, task_label
from inspector.store.langgraph.channels import INFERRED_LAST, ChannelKind
from inspector.store.langgraph.reducers import NO_VALUE, inferred_kind, inferred_note, missing_reducers
from inspector.store.langgraph.rows import BlobRow, WriteRow
from inspector.store.langgraph.snapshot import build_snapshot, live_view, pending_questions
from inspector import codec as pieces
from inspector.store.native import blobs
from inspector.store.native.schema import lg_checkpoints, lg_lanes, lg_writes
from inspector.taskstate import DEFAULT_TASK_CHANNEL

LEAF = "__lg__"


def from_leaves(form: Any) -> Any:
    """A stored structural value with its typed leaves decoded losslessly (never code)."""
    kind = type(form)
    if kind is dict:
        if LEAF in form:
            try:
                return decode_typed(str(form[LEAF]), form.get("b"))
            except BlobError as err:
                return {"__error__": f"cannot decode a stored value: {err}"}
        return {k: from_leaves(v) for k, v in form.items()}
    if kind is list:
        return [from_leaves(v) for v in form]
    return form


def _write_row(w: Any) -> WriteRow:
    """A stored pending write as the LangGraph adapter reads one (its value in LangGraph msgpack)."""
    if not isinstance(w.data, BINARY):     # a damaged file's row (SQLite columns take any type)
        raise CorruptDataError(f"A stored pending write is a {type(w.data).__name__}, not bytes (the store is damaged).")
    value = from_leaves(pieces.unpack(blobs.decompress(w.codec, bytes(w.data), w.size)))
    return _write(w, pack(value))


def _write(w: Any, value: bytes) -> WriteRow:
    """The LangGraph adapter's row of stored write ``w`` holding ``value``: its text columns as
    text and its index as a number, whatever a damaged file holds there."""
    return WriteRow(as_text(w.checkpoint_ns), as_text(w.checkpoint_id), as_text(w.task_id), as_text(w.task_path),
                    as_int(w.idx), as_text(w.channel), "msgpack", value)


def lane_asks(conn: sa.Connection, thread_id: str, ns: str, checkpoint_id: str) -> list[tuple[str, str]]:
    """(node, question) of each interrupt of a lane's checkpoint still waiting for an answer,
    read from its pending writes as the LangGraph adapter reads a LangGraph database's (only
    the interrupts' values are decoded; a damaged one asks nothing)."""
    rows: list[tuple[str, str, str, str, Any]] = []
    nodes: dict[str, str] = {}
    for w in conn.execute(sa.select(lg_writes).where(
            lg_writes.c.thread_id == thread_id, lg_writes.c.checkpoint_ns == ns,
            lg_writes.c.checkpoint_id == checkpoint_id).order_by(lg_writes.c.task_id, lg_writes.c.idx)):
        task_id, channel = as_text(w.task_id), as_text(w.channel)
        nodes.setdefault(task_id, task_label(as_text(w.task_path)) or "?")
        value = None
        if channel == INTERRUPT:
            try:
                value = _write_row(w).value
            except StoreError:
                continue
        rows.append((checkpoint_id, task_id, channel, "msgpack", value))
    return [(nodes[task_id], question) for task_id, question in pending_questions(rows).get(checkpoint_id, [])]


class _LaneReader:
    """The reads ``reducers.missing_reducers`` makes, on a native store's LangGraph lanes."""

    def __init__(self, conn: sa.Connection) -> None:
        self._conn = conn

    def written_channels(self, thread_id: str, ns: str) -> list[str]:
        return [str(r[0]) for r in self._conn.execute(sa.select(lg_writes.c.channel).distinct().where(
            lg_writes.c.thread_id == thread_id, lg_writes.c.checkpoint_ns == ns))]

    def channel_steps(self, thread_id: str, channel: str, limit: int) -> list[tuple[str, str, int]]:
        writers = sa.func.count(sa.distinct(lg_writes.c.task_id))
        rows = self._conn.execute(
            sa.select(lg_writes.c.checkpoint_ns, lg_writes.c.checkpoint_id, writers)
            .where(lg_writes.c.thread_id == thread_id, lg_writes.c.channel == channel,
                   lg_writes.c.task_id != NULL_TASK_ID)
            .group_by(lg_writes.c.checkpoint_ns, lg_writes.c.checkpoint_id)
            .order_by(writers.desc(), lg_writes.c.checkpoint_id.desc()).limit(limit))
        return [(str(r[0]), str(r[1]), int(r[2])) for r in rows]

    def channel_writes(self, thread_id: str, ns: str, channel: str, checkpoint_ids: list[str]) -> list[WriteRow]:
        found = []
        for w in self._conn.execute(sa.select(lg_writes).where(
                lg_writes.c.thread_id == thread_id, lg_writes.c.checkpoint_ns == ns, lg_writes.c.channel == channel,
                lg_writes.c.checkpoint_id.in_(checkpoint_ids))):
            try:
                found.append(_write_row(w))
            except StoreError:      # a damaged write proves nothing (and spoils no other checkpoint's view)
                continue
        return found

    def child_ids(self, thread_id: str, ns: str, checkpoint_id: str) -> list[str]:
        return [str(r[0]) for r in self._conn.execute(sa.select(lg_checkpoints.c.checkpoint_id).where(
            lg_checkpoints.c.thread_id == thread_id, lg_checkpoints.c.checkpoint_ns == ns,
            lg_checkpoints.c.parent_checkpoint_id == checkpoint_id))]

    def extent(self, thread_id: str) -> tuple[int, int | None]:
        """(pending writes, newest checkpoint row) of a thread: what a proof was tried against."""
        writes = self._conn.execute(sa.select(sa.func.count()).select_from(lg_writes).where(
            lg_writes.c.thread_id == thread_id)).scalar_one()
        newest = self._conn.execute(sa.select(sa.func.max(lg_checkpoints.c.id)).where(
            lg_checkpoints.c.thread_id == thread_id)).scalar()
        return int(writes), newest

    def child_value(self, thread_id: str, load_state: Callable[[int], Any]) -> Callable[[str, str, str], Any]:
        """A channel's plain value in a loop checkpoint of the thread (``NO_VALUE`` otherwise)."""
        def value(ns: str, checkpoint_id: str, channel: str) -> Any:
            row = self._conn.execute(sa.select(lg_checkpoints.c.id, lg_checkpoints.c.metadata).where(
                lg_checkpoints.c.thread_id == thread_id, lg_checkpoints.c.checkpoint_ns == ns,
                lg_checkpoints.c.checkpoint_id == checkpoint_id)).first()
            if row is None or parse_metadata(row.metadata).get("source") != "loop":
                return NO_VALUE       # only a loop child applied the parent's pending writes
            try:
                state = load_state(row.id)
            except StoreError:      # a damaged step proves nothing (and spoils no view)
                return NO_VALUE
            if not isinstance(state, dict) or channel not in state:
                return NO_VALUE
            return plain_or_error(from_leaves(state[channel]))
        return value


def _unproven(channel: str) -> ChannelKind:
    """A channel's kind with no proof at hand: a last value (several writes still combine)."""
    return INFERRED_LAST


def lane_snapshot(conn: sa.Connection, info: CheckpointInfo, state: Any,
                  fetch: Callable[[bytes], Any], task_channel: str = DEFAULT_TASK_CHANNEL,
                  load_state: Callable[[int], Any] | None = None,
                  reducer_cache: dict | None = None) -> Snapshot | None:
    """The LangGraph view of checkpoint ``info`` (None when it is not a LangGraph lane's).

    With ``load_state`` (a checkpoint's stored state by its id), a reducer channel the
    checkpoint does not hold shows as LangGraph shows it, empty, when the thread proves it a
    reducer (``reducers``); what the proofs found is kept in ``reducer_cache``."""
    row = conn.execute(sa.select(lg_checkpoints).where(lg_checkpoints.c.id == info.id)).first()
    if row is None:
        return None
    values = from_leaves(state) if isinstance(state, dict) else {}
    problems: list[str] = []
    # a body that cannot be read leaves the state (its own pieces) readable; LangGraph's
    # versions, and what they tell (next, tasks), are then unknown
    kind = as_opt_text(row.type)
    try:
        if not isinstance(row.body, BINARY):   # a damaged file's row (SQLite columns take any type)
            raise CorruptDataError(f"it is a {type(row.body).__name__}, not bytes")
        body = decode_typed(kind, blobs.unpack_body(kind or "", bytes(row.body)))
    except (BlobError, CorruptDataError) as err:
        body = {}
        problems.append(f"the LangGraph checkpoint (versions, next) cannot be read: {err}")
    else:
        if not isinstance(body, dict):
            problems.append(f"the LangGraph checkpoint (versions, next) is a {type(body).__name__}, not a map")
            body = {}
    body = dict(body, channel_values=values)
    blob = BlobRow(type="msgpack", blob=pack(body), metadata=row.metadata,
                   parent_id=as_opt_text(row.parent_checkpoint_id))
    writes: list[WriteRow] = []
    for w in conn.execute(sa.select(lg_writes).where(
            lg_writes.c.thread_id == row.thread_id, lg_writes.c.checkpoint_ns == row.checkpoint_ns,
            lg_writes.c.checkpoint_id == row.checkpoint_id).order_by(
            lg_writes.c.task_path, lg_writes.c.task_id, lg_writes.c.idx)):
        try:
            writes.append(_write_row(w))
        except StoreError as err:   # the rest of the checkpoint still reads as LangGraph's
            text = f"pending write {as_text(w.channel)!r} of task {as_text(w.task_id)}: {err}"
            problems.append(text)
            writes.append(_write(w, pack({"__error__": text})))
    namespaces = [as_text(r[0]) for r in conn.execute(sa.select(lg_lanes.c.checkpoint_ns).where(
        lg_lanes.c.thread_id == row.thread_id))]
    # (the queries above and below match the row's columns as stored; what is shown is text)
    thread_id, ns, checkpoint_id = as_text(row.thread_id), as_text(row.checkpoint_ns), as_text(row.checkpoint_id)
    lane_info = dataclasses.replace(info, lane=ns)
    empties = None
    kinds = _unproven
    proven: dict[tuple[str, str], Any] = {}
    if load_state is not None:
        reader = _LaneReader(conn)
        cache = reducer_cache if reducer_cache is not None else {}
        child_value = reader.child_value(row.thread_id, load_state)
        # a channel once proven a reducer stays one (more history only adds proofs); one not
        # proven is tried again only once the thread has more checkpoints or writes
        marker = reader.extent(row.thread_id)
        proven = {key: value for key, (seen, value) in cache.items()
                  if key[0] == row.thread_id and (value is not NO_VALUE or seen == marker)}

        def empties(present: set[str]) -> dict[str, Any]:
            return missing_reducers(reader, row.thread_id, row.checkpoint_ns, present, child_value, proven)

        def kinds(channel: str) -> ChannelKind:
            return inferred_kind(reader, row.thread_id, channel, child_value, proven)
    snapshot = build_snapshot(lane_info, thread_id, ns, checkpoint_id, blob, writes,
                              namespaces, task_channel=task_channel, empties=empties)
    latest = conn.execute(sa.select(sa.func.max(lg_checkpoints.c.checkpoint_id)).where(
        lg_checkpoints.c.thread_id == row.thread_id, lg_checkpoints.c.checkpoint_ns == row.checkpoint_ns)).scalar()
    if latest == row.checkpoint_id:     # the lane's latest: as get_state() shows it (pending writes applied)
        snapshot = live_view(snapshot, kinds)
    if load_state is not None:
        if len(cache) > 10_000:
            cache.clear()
        cache.update({key: (marker, value) for key, value in proven.items()})
    notes = list(snapshot.meta.get("notes", []))
    if snapshot.meta.get("empty_reducers"):    # as the LangGraph reader says it of its inferred kinds
        notes.append(inferred_note(snapshot.meta["empty_reducers"]))
    snapshot = dataclasses.replace(snapshot, meta=dict(snapshot.meta, channel_kinds="inferred", notes=notes))
    return dataclasses.replace(snapshot, problems=(*snapshot.problems, *problems)) if problems else snapshot
