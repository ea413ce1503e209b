"""The storage report of a LangGraph database: per channel, what is re-written unchanged, and
what the same history would take in this project's store.

SqliteSaver stores every channel value inline in every checkpoint row, so a channel's share
is the bytes of its encoded values summed over rows, and a value that equals the parent
checkpoint's is "re-written unchanged". PostgresSaver stores non-primitive values once per
channel version in ``checkpoint_blobs``: its channels are measured there (nothing is
re-written there; the inline primitives in each row are counted as the row).

The estimate for our store encodes every checkpoint's channel values, in order, with the
recording library's own encoder (``PieceEncoder``, one per thread and namespace, as a
recording would), compresses every new piece as the writer does and adds the row size our
store's checkpoint rows take — nothing is written anywhere.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import xxhash

from inspector.store.langgraph import usage_sql
from inspector.store.langgraph.decode import (
    BlobError,
    decode_typed,
    pack,
    plain_or_error,
    to_plain,
)
from inspector.store.langgraph.ids import id_time, make_id, parse_id
from inspector.store.langgraph.store import LangGraphStore
from inspector.store.native import blobs
from inspector.codec import PieceEncoder
from inspector.usage.native import ROW_ESTIMATE
from inspector.usage.report import (
    METADATA_FIELD,
    WRITES_FIELD,
    ChannelUsage,
    CheckpointUsage,
    OurStoreEstimate,
    RunDetail,
    RunUsage,
    UsageReport,
    growth_curve,
)

Progress = Callable[[int, int], None]


class _Ours:
    """Our store's cost of the same history (see the module docstring)."""

    def __init__(self) -> None:
        self.seen: set[bytes] = set()
        self.bytes = 0
        self.encoders: dict[tuple[str, str], PieceEncoder] = {}

    def add(self, lane: tuple[str, str], values: dict) -> int:
        encoder = self.encoders.setdefault(lane, PieceEncoder())
        try:
            _root, _size, new = encoder.encode({str(k): plain_or_error(v) for k, v in values.items()})
        except (TypeError, ValueError):
            return 0
        added = ROW_ESTIMATE
        for digest, raw in new.items():
            if digest not in self.seen:
                self.seen.add(digest)
                added += len(blobs.compress(raw)[1]) + 24
        self.bytes += added
        return added


def _values(row: usage_sql.BodyRow, pg_blobs: dict) -> dict[str, tuple[Any, int, bytes | None]]:
    """channel -> (lossless value, stored bytes it took in this row or blob, blob key or None)."""
    if isinstance(row.body, dict):               # PostgreSQL JSONB: primitives inline, the rest in blobs
        body = row.body
        out: dict[str, tuple[Any, int, bytes | None]] = {}
        inline = body.get("channel_values") or {}
        versions = body.get("channel_versions") or {}
        for channel, value in inline.items() if isinstance(inline, dict) else ():
            out[str(channel)] = (value, 0, None)
        for channel, version in versions.items() if isinstance(versions, dict) else ():
            found = pg_blobs.get((row.thread_id, row.ns, channel, str(version)))
            if found is None or found[0] == "empty":
                continue
            try:
                value = decode_typed(found[0], found[1])
            except BlobError:
                value = None
            key = f"{row.ns}\x1f{channel}\x1f{version}".encode()
            out[str(channel)] = (value, len(found[1] or b""), key)
        return out
    try:
        decoded = decode_typed(row.type, row.body)
    except BlobError:
        return {}
    values = decoded.get("channel_values") if isinstance(decoded, dict) else None
    if not isinstance(values, dict):
        return {}
    out = {}
    for channel, value in values.items():
        try:
            size = len(pack(value))
        except (TypeError, ValueError):
            size = 0
        out[str(channel)] = (value, size, None)
    return out


def langgraph_usage(store: LangGraphStore, run_id: str | None = None, *, progress: Progress | None = None) -> UsageReport:
    """Usage of a LangGraph database (see the module docstring); ``run_id`` is a thread id."""
    disk = usage_sql.disk_usage(store)
    pg = store.engine.dialect.name == "postgresql"
    threads = {t.thread_id: t for t in store.reader.threads()}
    if run_id is not None and run_id not in threads:
        store.get_run(run_id)
    statuses = {r.id: r for r in store.list_runs()}
    writes = usage_sql.write_sizes(store)
    ours = _Ours()
    channels: dict[str, list[int]] = {}          # channel -> [bytes, unchanged, versions]
    per_thread: dict[str, dict] = {}
    growth: list[tuple[float, int]] = []
    seen_blobs: set[bytes] = set()
    detail: list[tuple[str, str, int, int, int]] = []   # ns, cid, logical, stored
    rows_bytes = content = logical_total = count = 0
    for thread_id in threads:
        blob_map = usage_sql.pg_blobs(store, thread_id) if pg else {}
        pending = usage_sql.writes_by_checkpoint(store, thread_id)    # (ns, checkpoint id) -> bytes
        entry = per_thread.setdefault(thread_id, {"bytes": 0, "logical": 0, "count": 0, "fields": {}})
        last: dict[tuple[str, str], dict[str, bytes]] = {}
        for row in usage_sql.iter_bodies(store, thread_id):
            values = _values(row, blob_map)
            digests: dict[str, bytes] = {}
            parent = last.get((row.ns, row.parent_id or ""), {})
            stored_here = row.body_bytes + row.meta_bytes
            logical = 0
            value_bytes = 0
            for channel, (value, size, key) in values.items():
                stat = channels.setdefault(channel, [0, 0, 0])
                if key is not None:                   # a PostgreSQL blob: stored once per version
                    logical += size
                    if key in seen_blobs:
                        continue
                    seen_blobs.add(key)
                    stored_here += size
                    stat[0] += size
                    stat[2] += 1
                    entry["fields"][channel] = entry["fields"].get(channel, 0) + size
                    continue
                digest = xxhash.xxh3_64_digest(pack(value)) if size else b""
                digests[channel] = digest
                logical += size
                value_bytes += size
                stat[0] += size
                stat[2] += 1
                if parent.get(channel) == digest:
                    stat[1] += size
                entry["fields"][channel] = entry["fields"].get(channel, 0) + size
            last[(row.ns, row.checkpoint_id)] = digests
            overhead = row.body_bytes + row.meta_bytes - (value_bytes if not pg else 0)
            entry["fields"][METADATA_FIELD] = entry["fields"].get(METADATA_FIELD, 0) + overhead
            content += stored_here - overhead
            rows_bytes += overhead
            entry["bytes"] += stored_here
            entry["logical"] += logical
            entry["count"] += 1
            logical_total += logical
            count += 1
            ours.add((thread_id, row.ns), {c: to_plain(v[0]) for c, v in values.items()})
            # the growth counts a checkpoint's pending writes with it (they are stored beside it)
            growth.append((id_time(row.checkpoint_id), stored_here + pending.pop((row.ns, row.checkpoint_id), 0)))
            if thread_id == run_id:
                detail.append((row.ns, row.checkpoint_id, logical, stored_here, stored_here))
            if progress is not None and count % 1000 == 0:
                progress(count, 0)
        # writes whose checkpoint row is gone (or not written yet) still take room: at their id's time
        newest = id_time(threads[thread_id].last_id)
        growth.extend((id_time(cid) or newest, size) for (_ns, cid), size in pending.items())
    write_total = 0
    for (thread_id, _channel), (size, _n) in writes.items():
        entry = per_thread.setdefault(thread_id, {"bytes": 0, "logical": 0, "count": 0, "fields": {}})
        entry["fields"][WRITES_FIELD] = entry["fields"].get(WRITES_FIELD, 0) + size
        entry["bytes"] += size
        write_total += size
    ours.bytes += write_total
    fields: dict[str, int] = {}
    for entry in per_thread.values():
        for key, value in entry["fields"].items():
            fields[key] = fields.get(key, 0) + value
    runs = tuple(sorted((RunUsage(run=tid, name=tid, status=statuses[tid].status if tid in statuses else "",
                                  checkpoints=e["count"], bytes=e["bytes"], logical_bytes=e["logical"],
                                  fields=dict(sorted(e["fields"].items(), key=lambda kv: -kv[1])),
                                  created=id_time(threads[tid].first_id) if tid in threads else 0.0,
                                  updated=id_time(threads[tid].last_id) if tid in threads else 0.0)
                         for tid, e in per_thread.items()), key=lambda r: -r.bytes))
    report_detail = _detail(store, run_id, detail) if run_id is not None else None
    method = ("channels: encoded bytes of each value in each row (SqliteSaver stores every value in every row)"
              if not pg else "channels: checkpoint_blobs, once per channel version (PostgresSaver)")
    return UsageReport(
        store=store.display, kind="langgraph", backend=store.info.backend, total_bytes=disk.total_bytes,
        free_bytes=disk.free_bytes, wal_bytes=disk.wal_bytes, tables=disk.tables, content_bytes=content + write_total,
        rows_bytes=rows_bytes, logical_bytes=logical_total, checkpoints=count, runs=runs,
        fields=dict(sorted(fields.items(), key=lambda kv: -kv[1])), growth=growth_curve(growth),
        detail=report_detail,
        channels=tuple(sorted((ChannelUsage(name, b, u, v) for name, (b, u, v) in channels.items()),
                              key=lambda c: -c.bytes)),
        ours=OurStoreEstimate(bytes=ours.bytes, pieces=len(ours.seen), method=(
            "every checkpoint's channel values encoded in order by this project's PieceEncoder (one per thread "
            "and namespace), new pieces zstd-compressed as the writer does, "
            f"{ROW_ESTIMATE} bytes per checkpoint row, pending writes counted as they are")),
        method=f"on disk: {disk.method}; {method}")


def _detail(store: LangGraphStore, run_id: str, rows: list) -> RunDetail:
    by_key = {make_id(run_id, ns, cid): (logical, stored) for ns, cid, logical, stored, _ in rows}
    writes = usage_sql.writes_by_checkpoint(store, run_id)
    out = []
    for info in store.list_checkpoints(run_id):
        logical, stored = by_key.get(str(info.id), (info.size, info.size))
        key = parse_id(str(info.id))
        extra = writes.get((key.ns, key.checkpoint_id), 0) if key is not None else 0
        out.append(CheckpointUsage(id=info.id, seq=info.seq, created=info.created, logical=logical,
                                   stored=stored + extra, unique=stored + extra, ops=info.ops,
                                   checks_passed=info.checks_passed, checks_total=info.checks_total))
    return RunDetail(run=run_id, checkpoints=tuple(out))
