"""Copy a LangGraph checkpoint database (SqliteSaver / PostgresSaver) into a native store.

Every thread, namespace (lane), checkpoint — forks and branches included, with LangGraph's ids,
parents, metadata and channel versions — and every pending write is written as
``InspectorSaver`` would have written it (see FORMAT.md, "LangGraph lanes"), so the saver
continues the threads afterwards.

Nothing is deserialized through LangGraph: values are read with the adapter's lossless msgpack
decoder, containers become the structural form and every typed value (an extension type,
a map with non-string keys) is re-packed byte for byte into a typed leaf; values LangGraph
stored under another tag (``json``, ``pickle``, encrypted …) become typed leaves holding the
original bytes, untouched. So importing never runs code named by the data.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable

import msgpack

from inspector.errors import StoreError
from inspector.store.columns import BINARY
from inspector.store.langgraph.decode import BlobError, pack, unpack
from inspector.store.langgraph.ids import id_time
from inspector.store.langgraph.mapping import edit_change, orphan_step_name, parse_metadata, stored_step_name
from inspector.store.langgraph.pregel import ERROR, INTERRUPT, PREGEL_TASKS, next_nodes, send_nodes, summarise_tasks
from inspector.store.langgraph.rows import BlobRow, HeadRow, Reader, WriteRow
from inspector.store.langgraph.runs import head_score, read_head
from inspector import codec as pieces
from inspector.store.native.lanes import LaneCheckpoint, LaneStore, LaneWrite
from inspector.codec import PieceEncoder
from inspector.store.native.schema import runs
from inspector.taskstate import DEFAULT_TASK_CHANNEL

LEAF = "__lg__"
_PLAIN = (str, bool, float, type(None), bytes)


@dataclass
class ImportReport:
    """What was (or would be) copied."""

    threads: int = 0
    lanes: int = 0
    checkpoints: int = 0
    writes: int = 0
    skipped: list[str] = field(default_factory=list)
    thread_ids: list[str] = field(default_factory=list)


def to_form(value: Any) -> Any:
    """A losslessly decoded LangGraph msgpack value in the saver's structural form."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is int:
        return value
    if kind is list:
        return [to_form(v) for v in value]
    if kind is dict and LEAF not in value and all(type(k) is str for k in value):
        return {k: to_form(v) for k, v in value.items()}
    return {LEAF: "msgpack", "b": pack(value)}     # ExtType, tuple keys, Timestamp…: as LangGraph packed it


def _stored_bytes(value: Any, what: str) -> bytes:
    """A BLOB column's value as bytes; BlobError for a damaged row's text or number (``bytes()``
    of a number is that many zero bytes)."""
    if not isinstance(value, BINARY):
        raise BlobError(f"{what} is a {type(value).__name__}, not bytes")
    return bytes(value)


def typed_form(tag: str | None, data: bytes | None) -> Any:
    """A stored (type, bytes) value in the structural form (BlobError when msgpack is malformed)."""
    tag = (tag or "").strip()
    if data is None or tag in ("null", "empty"):
        return None
    data = _stored_bytes(data, "it")
    if tag == "msgpack":
        return to_form(unpack(data))
    if tag == "bytes":
        return data
    return {LEAF: tag, "b": data}       # json, bytearray, pickle, encrypted …: the original bytes


def _body(body: BlobRow) -> dict:
    """The checkpoint as a plain dict whose channel values are already in structural form."""
    tag = (body.type or "").strip()
    raw = _stored_bytes(body.blob, "its body") if body.blob is not None else b""
    if tag == "msgpack":
        checkpoint = unpack(raw)
        if not isinstance(checkpoint, dict):
            raise BlobError("the checkpoint is not a map")
        values = {str(k): to_form(v) for k, v in (checkpoint.get("channel_values") or {}).items()}
    elif tag == "json":
        try:
            checkpoint = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as err:
            raise BlobError(f"malformed JSON ({err})") from err
        if not isinstance(checkpoint, dict):
            raise BlobError("the checkpoint is not a map")
        values = {}
        for k, v in (checkpoint.get("channel_values") or {}).items():
            values[str(k)] = v if type(v) in _PLAIN or type(v) is int else {
                LEAF: "json", "b": json.dumps(v).encode("utf-8")}
    else:
        raise BlobError(f"its body is stored as {tag or 'an unknown type'} (not read without running code)")
    for channel, (ctag, data) in body.channel_blobs.items():
        values[str(channel)] = typed_form(ctag, data)
    checkpoint = {k: v for k, v in checkpoint.items() if k != "channel_values"}
    checkpoint["channel_values"] = values
    return checkpoint


def _write(row: WriteRow) -> LaneWrite:
    if not -2 ** 63 <= row.idx < 2 ** 63:     # (a damaged row: no database column holds it)
        raise ValueError("a pending write's index is out of range (beyond 64 bits)")
    return LaneWrite(task_id=row.task_id, idx=row.idx, channel=row.channel, task_path=row.task_path or "",
                     data=pieces.pack(typed_form(row.type, row.value)))


def _status(checkpoint: dict, writes: list[WriteRow]) -> tuple[str, str | None]:
    channels = {w.channel for w in writes}
    if ERROR in channels:
        error = next(w for w in writes if w.channel == ERROR)
        try:
            form = typed_form(error.type, error.value)
        except BlobError:
            form = None
        return "failed", form if isinstance(form, str) else "a task failed"
    values = checkpoint.get("channel_values") or {}
    waiting = next_nodes(values.keys(), checkpoint.get("channel_versions"), checkpoint.get("versions_seen"))
    if INTERRUPT in channels or waiting or values.get("__pregel_tasks"):
        return "interrupted", None      # stopped with work left (an interrupt, or a step never run)
    return "completed", None


def _task_writes(writes: list[WriteRow]) -> list[tuple[str, list[str]]]:
    """(task path, channels) per task of one checkpoint's pending writes."""
    tasks: dict[str, tuple[str, list[str]]] = {}
    for w in writes:
        path, channels = tasks.setdefault(w.task_id, (w.task_path or "", []))
        channels.append(w.channel)
    return list(tasks.values())


def _sends(checkpoint: dict) -> list[str | None]:
    """The nodes of a checkpoint's Send packets (its ``__pregel_tasks`` value)."""
    packets = (checkpoint.get("channel_values") or {}).get(PREGEL_TASKS)
    if not isinstance(packets, list) or not packets:
        return []
    try:
        return send_nodes([unpack(p["b"]) if isinstance(p, dict) and p.get(LEAF) == "msgpack" else p
                           for p in packets])
    except (StoreError, msgpack.UnpackException, ValueError, TypeError):   # (BlobError, a budget: no names)
        return []


class _Outputs:
    """The task writes and Send packets of the checkpoints imported last (a step is named from
    its parent's), read again from the source for an older parent (a replay's)."""

    KEEP = 4096

    def __init__(self, reader: Reader, thread_id: str) -> None:
        self._reader, self._thread = reader, thread_id
        self._recent: dict[tuple[str, str], tuple[list[tuple[str, list[str]]], list[str | None]]] = {}

    def add(self, ns: str, checkpoint_id: str, checkpoint: dict, writes: list[WriteRow]) -> None:
        self._recent[(ns, checkpoint_id)] = (_task_writes(writes), _sends(checkpoint))
        if len(self._recent) > self.KEEP:
            self._recent.pop(next(iter(self._recent)))

    def of(self, ns: str, checkpoint_id: str | None) -> tuple[list[tuple[str, list[str]]], list[str | None]]:
        if checkpoint_id is None:
            return [], []
        found = self._recent.get((ns, checkpoint_id))
        if found is not None:
            return found
        body = self._reader.body(self._thread, ns, checkpoint_id)
        try:
            sends = _sends(_body(body)) if body is not None else []
        except (BlobError, msgpack.UnpackException, ValueError, TypeError):
            sends = []
        return _task_writes(self._reader.writes(self._thread, ns, checkpoint_id)), sends


def existing_threads(lanes: LaneStore, thread_ids: list[str]) -> list[str]:
    """Threads of ``thread_ids`` the destination already holds."""
    return sorted({t for _, t, _ in lanes.lanes_of(thread_ids)})


def import_threads(reader: Reader, lanes: LaneStore, *, progress: Callable[[str], None] | None = None) -> ImportReport:
    """Copy every thread ``reader`` sees into ``lanes`` (which must not hold any of them)."""
    report = ImportReport()
    threads = [t.thread_id for t in reader.threads()]
    clash = existing_threads(lanes, threads)
    if clash:
        more = f" and {len(clash) - 1} more" if len(clash) > 1 else ""
        raise StoreError(f"The destination already holds thread {clash[0]!r}{more}; import into a new store.")
    for thread_id in threads:
        report.threads += 1
        report.thread_ids.append(thread_id)
        encoders: dict[str, PieceEncoder] = {}
        heads: dict[str, tuple[dict, list[WriteRow]]] = {}
        outputs = _Outputs(reader, thread_id)
        times: dict[str, list[float]] = {}      # per lane: when LangGraph wrote its checkpoints
        versions: dict[tuple[str, str], dict] = {}      # channel versions of the thread's checkpoints
        for row in reader.list_rows(thread_id, 0, None):
            body = reader.body(thread_id, row.ns, row.checkpoint_id)
            if body is None:
                continue
            try:
                checkpoint = _body(body)
                writes = reader.writes(thread_id, row.ns, row.checkpoint_id)
                lane_writes = [_write(w) for w in writes]
            except (BlobError, msgpack.UnpackException, ValueError, TypeError) as err:
                report.skipped.append(f"{thread_id} {row.ns or '(root)'} {row.checkpoint_id}: {err}")
                continue
            meta = parse_metadata(body.metadata)
            encoder = encoders.setdefault(row.ns, PieceEncoder())
            digest, size, new_pieces = encoder.encode(checkpoint["channel_values"])
            raw_source, raw_parents = meta.get("source"), meta.get("parents")
            source = raw_source if isinstance(raw_source, str) else "step"
            parents = raw_parents if isinstance(raw_parents, dict) else {}
            outer = row.ns.rsplit("|", 1)[0] if "|" in row.ns else ""
            parent_lane = (outer, parents[outer]) if row.ns and isinstance(parents.get(outer), str) else None
            status, _ = _status(checkpoint, writes)
            # its score as LangGraph's view of it shows it: the tasks of the step after it (its
            # writes) and its next nodes none ran (as InspectorSaver stores it once that step is in)
            summary = read_head(HeadRow(thread_id, row.checkpoint_id, body.type, body.blob, body.metadata), DEFAULT_TASK_CHANNEL)
            sc = head_score(summarise_tasks(((w.task_id, w.task_path, w.channel) for w in writes), row.checkpoint_id),
                            summary, DEFAULT_TASK_CHANNEL)
            parent_writes = outputs.of(row.ns, body.parent_id) if source == "loop" else ([], [])
            name, change = stored_step_name(source, *parent_writes)
            mine = checkpoint.get("channel_versions") or {}
            versions[(row.ns, row.checkpoint_id)] = mine
            gone = bool(body.parent_id) and (row.ns, body.parent_id) not in versions    # (a pruned parent)
            if source == "loop" and (gone or not parent_writes[0]):     # no writes on its parent to name it
                # (pruned, or none saved: durability="exit"): named from its own body, as the LangGraph reader names it
                parent = None if gone or not body.parent_id else versions.get((row.ns, body.parent_id))
                name, change = orphan_step_name(checkpoint, parent) or (name, change)
            if source in ("update", "fork") and body.parent_id:     # as reading SqliteSaver's rows says it
                change = edit_change(source, mine, None if gone else versions[(row.ns, body.parent_id)])
            outputs.add(row.ns, row.checkpoint_id, checkpoint, writes)
            body_plain = {k: v for k, v in checkpoint.items() if k != "channel_values"}
            lg_run = meta.get("run_id")
            lanes.put(thread_id, row.ns, LaneCheckpoint(
                checkpoint_id=row.checkpoint_id, parent_checkpoint_id=body.parent_id, body_type="msgpack",
                body=pack(body_plain), metadata=json.dumps(meta, ensure_ascii=False, default=str),
                lg_run_id=str(lg_run) if lg_run is not None else None, state_hash=digest, pieces=new_pieces,
                size=size, kind=source if source in ("input", "loop", "update", "fork") else "step",
                name=name, change=change, status=status, parent_lane=parent_lane,
                created=id_time(row.checkpoint_id) or None,     # when LangGraph wrote it, not now
                score=(sc.tasks_done, sc.tasks_total, sc.checks_passed, sc.checks_total)))
            times.setdefault(row.ns, []).append(id_time(row.checkpoint_id))
            lanes.put_writes(thread_id, row.ns, row.checkpoint_id, lane_writes, replace=True)
            report.checkpoints += 1
            report.writes += len(lane_writes)
            heads[row.ns] = (checkpoint, writes)      # rows come in checkpoint id order: the last is the head
        for ns, (checkpoint, writes) in heads.items():
            status, error = _status(checkpoint, writes)
            lanes.set_lane_status(thread_id, ns, status, error)
        report.lanes += len(encoders)
        # nobody owns an imported thread until a saver writes to it; it was made and last
        # written when LangGraph wrote its checkpoints
        for run_id, _, ns in lanes.lanes_of([thread_id]):
            known = [t for t in times.get(ns, ()) if t > 0]
            dates = {"created": min(known), "updated": max(known)} if known else {}
            with lanes.engine.begin() as conn:
                conn.execute(runs.update().where(runs.c.id == run_id).values(
                    owner_host=None, owner_pid=None, heartbeat=None, **dates))
        if progress:
            progress(thread_id)
    return report
