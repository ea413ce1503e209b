"""How the inspector shows a LangGraph lane of a native store: LangGraph's own semantics.

A checkpoint written by ``InspectorSaver`` is turned back into the rows the LangGraph adapter
reads from LangGraph's own databases (a checkpoint body with its channel values, its pending
writes) and decoded by the same code (``inspector.store.langgraph.snapshot``): the snapshot
carries ``next``, the pending writes, the tasks with their status, the interrupts, errors and
subgraph lanes, and its task state comes from the ``todos`` channel. Typed leaves hold
LangGraph msgpack; they are read with the adapter's msgpack decoder, which imports and runs
nothing.
"""

from __future__ import annotations

import dataclasses
from typing import Any
from collections.abc import Callable

import sqlalchemy as sa

from inspector.errors import CorruptDataError
from inspector.model import CheckpointInfo, Snapshot
from inspector.store.langgraph.decode import BlobError, decode_typed, pack
from inspector.store.langgraph.rows import BlobRow, WriteRow
from inspector.store.langgraph.snapshot import build_snapshot
from inspector import codec as pieces
from inspector.store.native import blobs
from inspector.store.native.schema import lg_checkpoints, lg_lanes, lg_writes

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


def lane_snapshot(conn: sa.Connection, info: CheckpointInfo, state: Any,
                  fetch: Callable[[bytes], Any], task_channel: str = "todos") -> Snapshot | None:
    """The LangGraph view of checkpoint ``info`` (None when it is not a LangGraph lane's)."""
    row = conn.execute(sa.select(lg_checkpoints).where(lg_checkpoints.c.id == info.id)).first()
    if row is None:
        return None
    values = from_leaves(state) if isinstance(state, dict) else {}
    try:
        body = decode_typed(row.type, blobs.unpack_body(row.type, row.body))
    except (BlobError, CorruptDataError):
        body = {}
    if not isinstance(body, dict):
        body = {}
    body = dict(body, channel_values=values)
    blob = BlobRow(type="msgpack", blob=pack(body), metadata=row.metadata,
                   parent_id=row.parent_checkpoint_id)
    writes = []
    for w in conn.execute(sa.select(lg_writes).where(
            lg_writes.c.thread_id == row.thread_id, lg_writes.c.checkpoint_ns == row.checkpoint_ns,
            lg_writes.c.checkpoint_id == row.checkpoint_id).order_by(
            lg_writes.c.task_path, lg_writes.c.task_id, lg_writes.c.idx)):
        value = from_leaves(pieces.unpack(blobs.decompress(w.codec, bytes(w.data), w.size)))
        writes.append(WriteRow(w.checkpoint_ns, w.checkpoint_id, w.task_id, w.task_path, w.idx,
                               w.channel, "msgpack", pack(value)))
    namespaces = [r[0] for r in conn.execute(sa.select(lg_lanes.c.checkpoint_ns).where(
        lg_lanes.c.thread_id == row.thread_id))]
    lane_info = dataclasses.replace(info, lane=row.checkpoint_ns)
    return build_snapshot(lane_info, row.thread_id, row.checkpoint_ns, row.checkpoint_id, blob, writes,
                          namespaces, task_channel=task_channel)
