"""Raw fork of a LangGraph checkpoint, without the user's graph (reference §4, "What a
third-party tool must write").

The new checkpoint is the source checkpoint with some channel values replaced: untouched
data re-encodes byte-identically, each edited channel's version is bumped, the id is a new
UUIDv6 sorting after every checkpoint of the thread (so LangGraph takes it as the head),
``metadata.source = "update"``, ``step = source step + 1``, parent = the source, and no
writes rows. ``versions_seen`` and the ``branch:to:*`` triggers are kept, so the same next
node runs when LangGraph resumes the thread (``invoke(None, {"thread_id": …})``).

What it cannot do is listed in ``RAW_FORK_LIMITS`` (for the fork dialog to state).
"""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass
from typing import Any
from collections.abc import Mapping

from inspector.errors import StoreError
from inspector.store.base import Store
from inspector.store.langgraph.decode import BlobError, decode_typed, pack, plain_or_error, unpack
from inspector.store.langgraph.edit import is_primitive, merge_edit, new_checkpoint_id, next_version
from inspector.store.langgraph.ids import CheckpointKey, id_time, make_id, parse_id
from inspector.store.langgraph.mapping import metadata_step, parse_metadata
from inspector.store.langgraph.pregel import is_control_channel, next_nodes
from inspector.store.langgraph.rows import BlobRow
from inspector.store.langgraph.writer import LangGraphWriter, NewRow

RAW_FORK_LIMITS = (
    "Values replace the stored ones: the graph's reducers are not applied (a list is not appended to).",
    "Routing is not re-evaluated: the node that was about to run still runs next.",
    "Message ids and other graph-side bookkeeping are not updated.",
    "Subgraph state (checkpoints in subgraph namespaces) is not copied to the fork.",
    "Threads that use DeltaChannel state cannot be forked this way.",
    "Edited values are written as plain data unless they keep their stored type "
    "(a message, enum, datetime, set or dataclass whose shape is unchanged).",
)
DEFAULT_QUIET_SECONDS = 5.0
FORKED_BY = "checkpoint-inspector"


@dataclass(frozen=True)
class ForkResult:
    """A fork written to a LangGraph thread."""

    checkpoint_id: str               # our id of the new checkpoint (THREAD@ID)
    thread_id: str
    langgraph_checkpoint_id: str
    source_id: str                   # our id of the checkpoint forked from
    edited: tuple[str, ...]          # channels whose value changed
    mode: str                        # "raw" | "graph"
    limits: tuple[str, ...] = ()
    next: tuple[str, ...] = ()


def as_langgraph(store: Store) -> Any:
    """``store`` as a ``LangGraphStore``, else a StoreError."""
    from inspector.store.langgraph.store import LangGraphStore
    if not isinstance(store, LangGraphStore):
        raise StoreError(f"{store.info.display} is not a LangGraph database.")
    return store


def writable_langgraph(store: Store, action: str = "forking") -> Any:
    """``store`` as a LangGraph store opened writable, else a StoreError saying why not."""
    as_langgraph(store)
    if store.info.read_only:
        raise StoreError(f"{action.capitalize()} writes to the database, but {store.info.display} is "
                         "open read-only; open it writable for this action.")
    return store


def _ours(store: Any, thread_id: str, newest: str) -> bool:
    """True when the thread's newest checkpoint is a fork this tool wrote (not a running graph)."""
    heads = store.reader.heads(thread_id)
    return bool(heads) and heads[0].checkpoint_id == newest \
        and parse_metadata(heads[0].metadata).get("forked_by") == FORKED_BY


class ThreadBusyError(StoreError):
    """A write refused because the thread may be mid-run; ``wait`` says so without naming the
    command line's ``--force`` (the window words its own way out: try again)."""

    def __init__(self, wait: str) -> None:
        super().__init__(f"{wait}, or act anyway with --force.")
        self.wait = wait


def check_quiet(store: Any, thread_id: str, quiet_seconds: float, force: bool, now: float | None = None) -> None:
    """Refuse to write while the thread may be mid-run: its newest checkpoint is younger than
    ``quiet_seconds`` (a fork this tool just wrote does not count)."""
    if force or quiet_seconds <= 0:
        return
    rows = store.reader.threads(thread_id)
    if not rows:
        raise StoreError(f"No thread {thread_id!r} in {store.info.display}.")
    age = (time.time() if now is None else now) - id_time(rows[0].last_id)
    if age < quiet_seconds and not _ours(store, thread_id, rows[0].last_id):
        raise ThreadBusyError(f"Thread {thread_id!r} wrote a checkpoint {max(age, 0):.1f} s ago and may still be "
                              f"running; wait until it has been quiet for {quiet_seconds:g} s")


def _source(store: Any, ref: int | str) -> tuple[CheckpointKey, str, BlobRow]:
    info = store.get_checkpoint(ref)
    key = parse_id(str(info.id))
    assert key is not None
    if key.ns:
        raise StoreError("Forking a checkpoint inside a subgraph is not supported; fork the step of the "
                         "main graph that ran the subgraph.")
    body = store.reader.body(*key)
    if body is None:
        raise StoreError(f"Checkpoint {info.id} disappeared from {store.info.display}.")
    return key, str(info.id), body


def _decoded(body: BlobRow) -> dict:
    if body.type != "msgpack":
        raise StoreError(f"The checkpoint is stored as {body.type or 'an unknown type'!r}; a raw fork can only "
                         "rewrite msgpack checkpoints (fork it with the graph instead).")
    try:
        cp = decode_typed(body.type, body.blob)
    except BlobError as err:
        raise StoreError(f"The checkpoint cannot be decoded ({err}), so it cannot be forked.") from err
    if not isinstance(cp, dict) or not isinstance(cp.get("channel_values"), dict) \
            or not isinstance(cp.get("channel_versions"), dict):
        raise StoreError("The checkpoint has no channel values and versions to fork.")
    return cp


def _blob_values(body: BlobRow) -> dict[str, Any]:
    out = {}
    for channel, (tag, data) in body.channel_blobs.items():
        try:
            out[channel] = unpack(data) if tag == "msgpack" and data is not None else decode_typed(tag, data)
        except BlobError:
            out[channel] = {"__error__": "undecodable"}
    return out


def _refuse_delta(meta: dict, values: Mapping[str, Any]) -> None:
    has_ext7 = any(getattr(v, "code", None) == 7 for v in values.values())
    if isinstance(meta.get("counters_since_delta_snapshot"), dict) or has_ext7:
        raise StoreError("This thread uses DeltaChannel state, which a raw fork would corrupt; "
                         "fork it with the graph instead.")


def _edits(values: Mapping[str, Any], edits: Mapping[str, Any]) -> dict[str, Any]:
    """channel → new lossless value, for the channels whose plain value really changes."""
    out = {}
    for channel, new in edits.items():
        if not isinstance(channel, str) or not channel or is_control_channel(channel):
            raise StoreError(f"Channel {channel!r} steers execution and cannot be edited in a raw fork.")
        old = values.get(channel)
        old_plain = plain_or_error(old)
        if channel in values and isinstance(old_plain, dict) and "__error__" in old_plain:
            raise StoreError(f"Channel {channel!r} cannot be decoded, so it cannot be edited.")
        merged = merge_edit(old, old_plain, new) if channel in values else new
        if channel not in values or merged is not old:
            out[channel] = merged
    return out


def _updated(cp: dict, edited: list[str]) -> list[str] | None:
    previous = cp.get("updated_channels")
    if not isinstance(previous, list):
        return None
    return sorted({*[c for c in previous if isinstance(c, str)], *edited})


def _metadata(meta: dict, step: int, reason: str, source_id: str, edited: list[str]) -> dict:
    return {"source": "update", "step": step, "parents": meta.get("parents") or {},
            "forked_by": FORKED_BY, "fork_reason": reason, "forked_from": source_id, "edited": edited}


def raw_fork(store: Store, ref: int | str, edits: Mapping[str, Any], *, reason: str,
             quiet_seconds: float = DEFAULT_QUIET_SECONDS, force: bool = False) -> ForkResult:
    """Fork ``ref`` in its own thread with ``edits`` (channel → new plain value) applied.

    ``store`` must be a LangGraph store opened writable; the row is written through a
    separate writable engine. Refuses (StoreError) while the thread wrote a checkpoint less
    than ``quiet_seconds`` ago unless ``force``; for subgraph checkpoints, non-msgpack
    bodies and DeltaChannel threads; and when no value actually changes.
    """
    if not reason or not reason.strip():
        raise StoreError("A fork needs a reason (it is kept in the new checkpoint's metadata).")
    st = writable_langgraph(store)
    key, source_id, body = _source(st, ref)
    check_quiet(st, key.thread_id, quiet_seconds, force)
    cp = _decoded(body)
    meta = parse_metadata(body.metadata)
    values = {**cp["channel_values"], **_blob_values(body)}
    _refuse_delta(meta, values)
    changed = _edits(values, edits)
    if not changed:
        raise StoreError("The edit changes no value; nothing to fork.")
    edited = sorted(changed)
    versions = dict(cp["channel_versions"])
    versions.update({ch: next_version(versions.get(ch)) for ch in edited})
    step = (metadata_step(meta, key.checkpoint_id) or 0) + 1
    postgres = st.info.backend == "postgresql"

    def build(newest: str | None) -> NewRow:
        new_id = new_checkpoint_id(step, newest)
        inline = dict(cp["channel_values"])
        blobs: dict[str, tuple[str, str, bytes]] = {}
        for channel in edited:
            if postgres and not is_primitive(changed[channel]):
                inline.pop(channel, None)
                blobs[channel] = (versions[channel], "msgpack", pack(changed[channel]))
            else:
                inline[channel] = changed[channel]
        new_cp = dict(cp, id=new_id, ts=dt.datetime.now(dt.UTC).isoformat(),
                      channel_values=inline, channel_versions=versions,
                      updated_channels=_updated(cp, edited))
        return NewRow(new_id, new_cp if postgres else pack(new_cp),
                      _metadata(meta, step, reason.strip(), source_id, edited), blobs)

    with LangGraphWriter(st.info.url, st.info.display) as writer:
        row = writer.insert_fork(key.thread_id, "", key.checkpoint_id, build)
    nxt = next_nodes({**values, **changed}.keys(), versions, cp.get("versions_seen"))
    return ForkResult(make_id(key.thread_id, "", row.checkpoint_id), key.thread_id, row.checkpoint_id,
                      source_id, tuple(edited), "raw", RAW_FORK_LIMITS, tuple(nxt))
