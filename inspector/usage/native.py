"""The storage report of a native store: by run, checkpoint and field, and on disk."""

from __future__ import annotations

from collections.abc import Callable

from inspector.store.native import usage_sql
from inspector.store.native.reads import NativeReads
from inspector.usage.graph import ROOT, PieceCache, Walk
from inspector.humanize import fmt_size, plural
from inspector.usage.report import (
    OTHER_FIELD,
    ROWS_FIELD,
    TASKS_FIELD,
    CheckpointUsage,
    RunDetail,
    RunUsage,
    TradeoffPoint,
    UsageReport,
    growth_curve,
    replay_cost,
)

ROW_ESTIMATE = 160          # bytes per checkpoint row when SQLite has no dbstat table
TRADEOFF_EVERY = (1, 2, 3, 5, 10, 20, 50)
Progress = Callable[[int, int], None]


def _fetch(store: NativeReads):
    return lambda digests: usage_sql.read_pieces(store, digests)


def native_usage(store: NativeReads, run_id: str | None = None, *, pieces: bool = True,
                 progress: Progress | None = None) -> UsageReport:
    """Usage of the whole store; with ``run_id`` also that run's per-checkpoint detail and its
    interval trade-off. ``pieces=False`` skips the piece walk (totals from SQL only)."""
    disk = usage_sql.disk_usage(store)
    n_checkpoints, logical = usage_sql.checkpoint_totals(store)
    _n_pieces, content, _raw = usage_sql.blob_totals(store)
    rows_bytes = disk.tables.get("ci_checkpoints") or ROW_ESTIMATE * n_checkpoints
    per_row = rows_bytes / n_checkpoints if n_checkpoints else 0.0
    run_rows = usage_sql.list_runs(store)
    if run_id is not None and not any(r.id == run_id for r in run_rows):
        store.get_run(run_id)     # the one-sentence "no such run"
    notes: list[str] = []
    cache = PieceCache(_fetch(store))
    walk = Walk(cache)
    per_run: dict[str, dict] = {r.id: {"bytes": 0.0, "logical": 0, "count": 0, "fields": {}} for r in run_rows}
    growth: list[tuple[float, int]] = []
    detail_rows: list[tuple[usage_sql.CheckpointRow, int, int]] = []
    damaged = 0
    for ordinal, row in enumerate(usage_sql.iter_checkpoints(store)):
        if not usage_sql.checkpoint_row_ok(row):
            damaged += 1
            continue
        entry = per_run.setdefault(row.run_id, {"bytes": 0.0, "logical": 0, "count": 0, "fields": {}})
        added = walk.visit(ordinal, row.state_hash, row.tasks_hash, TASKS_FIELD, entry["fields"]) if pieces else 0
        entry["bytes"] += added + per_row
        entry["logical"] += row.size
        entry["count"] += 1
        growth.append((row.created, int(added + per_row)))
        if row.run_id == run_id:
            detail_rows.append((row, ordinal, added))
        if progress is not None and (ordinal + 1) % 5000 == 0:
            progress(ordinal + 1, n_checkpoints)
    if damaged:
        one = damaged == 1
        notes.append(f"{plural(damaged, 'checkpoint row')} {'holds' if one else 'hold'} values of the wrong type "
                     f"(the store is damaged); {'it is' if one else 'they are'} left out.")
    if cache.missing:
        notes.append(f"{plural(len(cache.missing), 'piece')} referenced by checkpoints "
                     f"{'is' if len(cache.missing) == 1 else 'are'} missing (the store is damaged).")
    if not pieces:
        notes.append("Pieces were not walked: content is reported as one total, not by run or field.")
    other = max(0, content - sum(walk.field_bytes.values()))
    if other and pieces:
        notes.append(f"{fmt_size(other)}: pieces no checkpoint reaches (prune collects them), "
                     f"counted as {OTHER_FIELD}.")
    fields = _fields(walk.field_bytes, int(rows_bytes), other)
    runs = []
    for r in run_rows:
        entry = per_run[r.id]
        run_fields = {("(state)" if k == ROOT else k): v for k, v in entry["fields"].items()}
        run_fields[ROWS_FIELD] = int(per_row * entry["count"])
        runs.append(RunUsage(run=r.id, name=r.name, status=r.status, checkpoints=entry["count"],
                             bytes=int(entry["bytes"]), logical_bytes=entry["logical"],
                             fields=dict(sorted(run_fields.items(), key=lambda kv: -kv[1])),
                             created=r.created, updated=r.updated))
    runs.sort(key=lambda r: -r.bytes)
    detail = None
    if run_id is not None:
        detail = _detail(run_id, detail_rows, walk, cache, per_row)
    return UsageReport(
        store=store.info.display, kind="native", backend=store.info.backend,
        total_bytes=disk.total_bytes, free_bytes=disk.free_bytes, wal_bytes=disk.wal_bytes,
        tables=disk.tables, content_bytes=content, rows_bytes=int(rows_bytes), logical_bytes=logical,
        checkpoints=n_checkpoints, runs=tuple(runs), fields=fields, growth=growth_curve(growth),
        detail=detail, notes=tuple(notes),
        method=(f"on disk: {disk.method}; content: every distinct piece counted once, for the run and "
                "field that first stored it (a run's bytes are what it added; a root piece is shared among its "
                f"fields by the bytes each takes in it); rows: the ci_checkpoints table shared evenly by its rows; "
                f"{OTHER_FIELD}: stored content no field claims, so that the fields add up to content and rows"))


def _fields(field_bytes: dict[str, int], rows_bytes: int, other: int) -> dict[str, int]:
    """Stored bytes by field, adding up to content plus rows: what no field claims (pieces no
    checkpoint reaches, or all content when the pieces were not walked) is ``OTHER_FIELD``."""
    out = {("(state)" if k == ROOT else k): v for k, v in field_bytes.items() if v}
    out[ROWS_FIELD] = rows_bytes
    if other:
        out[OTHER_FIELD] = other
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def _detail(run_id: str, rows: list, walk: Walk, cache: PieceCache, per_row: float) -> RunDetail:
    unique = walk.unique_by_ordinal()
    checkpoints = tuple(
        CheckpointUsage(id=row.id, seq=row.seq, created=row.created, logical=row.size,
                        stored=int(added + per_row), unique=int(unique.get(ordinal, 0) + per_row),
                        ops=row.ops, checks_passed=row.checks_passed, checks_total=row.checks_total)
        for row, ordinal, added in rows)
    return RunDetail(run=run_id, checkpoints=checkpoints, tradeoff=tradeoff(rows, cache, per_row))


def tradeoff(rows: list, cache: PieceCache, per_row: float) -> tuple[TradeoffPoint, ...]:
    """The run's checkpoints re-walked keeping every k-th one: the bytes that recording would
    have written (exact for content: equal states give equal pieces) against the operations a
    recovery would replay (from the ``ops`` the recording library stores per checkpoint)."""
    if not rows:
        return ()
    ops = [row.ops for row, _, _ in rows]
    points = []
    for every in TRADEOFF_EVERY:
        if every > 1 and every >= len(rows):
            break
        kept = list(range(0, len(rows), every))
        if kept[-1] != len(rows) - 1:
            kept.append(len(rows) - 1)
        walk = Walk(cache)
        written = sum(walk.visit(n, rows[i][0].state_hash, rows[i][0].tasks_hash, TASKS_FIELD)
                      for n, i in enumerate(kept))
        worst, mean = replay_cost(ops, kept)
        points.append(TradeoffPoint(every=every, snapshots=len(kept), write_bytes=int(written + per_row * len(kept)),
                                    replay_max=worst, replay_mean=round(mean, 2)))
    return tuple(points)
