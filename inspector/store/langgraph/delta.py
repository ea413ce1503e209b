"""Rebuilding DeltaChannel values (langgraph 1.2, beta) that a checkpoint does not store.

A ``DeltaChannel`` is absent from ``channel_values`` except every Nth update, where it is an
ext-7 snapshot of the full value; ``metadata.counters_since_delta_snapshot`` lists it at
checkpoints without a snapshot. To show its value the inspector walks the parent chain to
the nearest checkpoint without a counter (the snapshot, or the thread start), then appends
the channel's pending writes from there down to the parent — concatenation, which is exact
only for list-append reducers (the user's reducer is code we never run). The result is
flagged ``reconstructed`` in ``Snapshot.meta["reconstructed"]``.
"""

from __future__ import annotations

from typing import Any

from inspector.store.langgraph.decode import BlobError, decode_plain, decode_typed, plain_or_error
from inspector.store.langgraph.ids import CheckpointKey, make_id
from inspector.store.langgraph.mapping import parse_metadata
from inspector.store.langgraph.rows import Reader

MAX_DEPTH = 1000
NOTE = "rebuilt by concatenating writes since the last snapshot; exact for list-append reducers only"


def delta_channels(meta: dict, values: dict) -> list[str]:
    """Delta channels the checkpoint names in its metadata but does not store."""
    counters = meta.get("counters_since_delta_snapshot")
    if not isinstance(counters, dict):
        return []
    return [ch for ch in counters if isinstance(ch, str) and ch not in values]


def _snapshot_value(reader: Reader, key: CheckpointKey, cid: str, channel: str) -> Any:
    body = reader.body(key.thread_id, key.ns, cid)
    if body is None:
        return None
    try:
        decoded = decode_typed(body.type, body.blob)
    except BlobError:
        return None
    values = decoded.get("channel_values") if isinstance(decoded, dict) else None
    if not isinstance(values, dict) or channel not in values:
        return None
    plain = plain_or_error(values[channel])
    return plain["__delta_snapshot__"] if isinstance(plain, dict) and "__delta_snapshot__" in plain else plain


def _rebuild(reader: Reader, key: CheckpointKey, channel: str, chain: list[tuple[str, Any]]) -> dict:
    used: list[str] = []
    base: Any = []
    source = None
    for cid, meta_text in chain:
        used.append(cid)
        counters = parse_metadata(meta_text).get("counters_since_delta_snapshot")
        if isinstance(counters, dict) and channel in counters:
            continue
        found = _snapshot_value(reader, key, cid, channel)
        if found is not None:
            base, source = found, cid
        break
    else:
        if len(chain) >= MAX_DEPTH:
            return {"value": None, "reconstructed": False,
                    "note": f"no snapshot within {MAX_DEPTH} ancestors; not rebuilt"}
    order = {cid: i for i, cid in enumerate(reversed(used))}
    writes = sorted(reader.channel_writes(key.thread_id, key.ns, channel, used),
                    key=lambda w: (order.get(w.checkpoint_id, 0), w.task_path, w.task_id, w.idx))
    if not isinstance(base, list):
        return {"value": None, "reconstructed": False, "writes": len(writes),
                "note": "the snapshot is not a list; rebuilding needs the graph's reducer"}
    value = list(base)
    for w in writes:
        item = decode_plain(w.type, w.value)
        value.extend(item if isinstance(item, list) else [item])
    return {"value": value, "reconstructed": True, "writes": len(writes), "note": NOTE,
            "from_snapshot": make_id(key.thread_id, key.ns, source) if source else None}


def reconstruct(reader: Reader, key: CheckpointKey, meta: dict, values: dict) -> dict[str, dict]:
    """channel → {value, reconstructed, writes, note, from_snapshot} for missing delta channels."""
    channels = delta_channels(meta, values)
    if not channels:
        return {}
    chain = reader.ancestry(key.thread_id, key.ns, key.checkpoint_id, MAX_DEPTH)
    return {ch: _rebuild(reader, key, ch, chain) for ch in channels}
