"""The storage report of a native store: by run, checkpoint and field, and on disk."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

from inspector.store.native import usage_sql
from inspector.store.native.reads import NativeReads
from inspector.usage.graph import ROOT, PieceCache, Walk
from inspector.humanize import fmt_size, plural
from inspector.usage.report import (
    GROWTH_BINS,
    OTHER_FIELD,
    ROWS_FIELD,
    TASKS_FIELD,
    CheckpointUsage,
    RunDetail,
    RunUsage,
    TradeoffPoint,
    UsageReport,
    cumulative,
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
    # the whole store's report adds up in SQL when every row holds the types it adds up
    # (a damaged row is told and left out row by row, as a run's detail reads every row)
    tallies = usage_sql.run_tallies(store) if run_id is None else None
    if tallies is not None and not all(t.clean for t in tallies):
        tallies = None
    if tallies is not None:
        n_checkpoints, logical = sum(t.rows for t in tallies), sum(t.logical for t in tallies)
    else:
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
    if tallies is not None:
        tally = _by_sql(store, walk, per_row, pieces, tallies)
        if progress is not None:
            progress(n_checkpoints, n_checkpoints)
    else:
        tally = _by_row(store, run_id, walk, per_row, pieces, n_checkpoints, progress)
    per_run, damaged, detail_rows = tally.per_run, tally.damaged, tally.detail_rows
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
        entry = per_run.get(r.id) or _Entry()
        run_fields = {("(state)" if k == ROOT else k): v for k, v in entry.fields.items()}
        run_fields[ROWS_FIELD] = int(per_row * entry.count)
        runs.append(RunUsage(run=r.id, name=r.name, status=r.status, checkpoints=entry.count,
                             bytes=int(entry.bytes), logical_bytes=entry.logical,
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
        checkpoints=n_checkpoints, runs=tuple(runs), fields=fields, growth=tally.growth,
        detail=detail, notes=tuple(notes),
        method=(f"on disk: {disk.method}; content: every distinct piece counted once, for the run and "
                "field that first stored it (a run's bytes are what it added; a root piece is shared among its "
                f"fields by the bytes each takes in it); rows: the ci_checkpoints table shared evenly by its rows; "
                f"{OTHER_FIELD}: stored content no field claims, so that the fields add up to content and rows"))


class _Entry:
    """One run's running totals: checkpoints, logical bytes, stored bytes (what its pieces
    added and its rows' share, summed checkpoint by checkpoint), by field."""

    __slots__ = ("count", "logical", "bytes", "fields")

    def __init__(self) -> None:
        self.count = 0
        self.logical = 0
        self.bytes = 0.0
        self.fields: dict[str, int] = {}


class _Tally(NamedTuple):
    """What a pass over the checkpoints found: by run, the growth curve, damaged rows and,
    for a run's detail, its rows (with their walk ordinals and the bytes each added)."""

    per_run: dict[str, _Entry]
    growth: tuple[tuple[float, int], ...]
    damaged: int
    detail_rows: list[tuple[usage_sql.CheckpointRow, int, int]]


def _by_row(store: NativeReads, run_id: str | None, walk: Walk, per_row: float, pieces: bool, n_checkpoints: int,
            progress: Progress | None) -> _Tally:
    """Every checkpoint row read and walked in order (a run's detail needs each of its rows,
    and what every checkpoint shares with a later one)."""
    per_run: dict[str, _Entry] = {}
    growth: list[tuple[float, int]] = []
    detail_rows: list[tuple[usage_sql.CheckpointRow, int, int]] = []
    damaged = 0
    for ordinal, row in enumerate(usage_sql.iter_checkpoints(store)):
        if not usage_sql.checkpoint_row_ok(row):
            damaged += 1
            continue
        entry = per_run.get(row.run_id)
        if entry is None:
            entry = per_run[row.run_id] = _Entry()
        added = walk.visit(ordinal, row.state_hash, row.tasks_hash, TASKS_FIELD, entry.fields) if pieces else 0
        entry.bytes += added + per_row
        entry.logical += row.size
        entry.count += 1
        growth.append((row.created, int(added + per_row)))
        if row.run_id == run_id:
            detail_rows.append((row, ordinal, added))
        if progress is not None and (ordinal + 1) % 5000 == 0:
            progress(ordinal + 1, n_checkpoints)
    return _Tally(per_run, growth_curve(growth), damaged, detail_rows)


def _by_sql(store: NativeReads, walk: Walk, per_row: float, pieces: bool,
            tallies: list[usage_sql.RunTally]) -> _Tally:
    """What ``_by_row`` finds, without a Python object per checkpoint: counts, logical bytes
    and times added up by SQL (``tallies``: all clean), and only the checkpoints that may add
    a piece walked (``usage_sql.first_seen``: a checkpoint whose roots were reached before
    adds nothing)."""
    per_run: dict[str, _Entry] = {}
    for t in tallies:
        entry = per_run[t.run_id] = _Entry()
        entry.count, entry.logical = t.rows, t.logical
    visited: list[tuple[float, int]] = []
    adding: dict[str, list[tuple[int, int]]] = {}     # run -> (checkpoint id, bytes it added)
    if pieces:
        for row in usage_sql.first_seen(store):
            if row.run_id not in per_run:       # (a run written since the tallies)
                per_run[row.run_id] = _Entry()
            added = walk.visit(row.id, row.state_hash, row.tasks_hash, TASKS_FIELD, per_run[row.run_id].fields)
            if added:
                visited.append((row.created, added))
                adding.setdefault(row.run_id, []).append((row.id, added))
    _sum_bytes(store, per_run, adding, per_row)
    return _Tally(per_run, _growth(store, tallies, visited, per_row), 0, [])


def _sum_bytes(store: NativeReads, per_run: dict[str, _Entry], adding: dict[str, list[tuple[int, int]]],
               per_row: float) -> None:
    """Each run's stored bytes summed as ``_by_row`` sums them, a float checkpoint after
    checkpoint (the same figure to the byte): the runs that added no piece share one
    running sum of ``per_row``; the others are summed with their pieces where they come
    (their places among the run's checkpoints read from SQL)."""
    plain = sorted({e.count for run, e in per_run.items() if run not in adding})
    sums: dict[int, float] = {}
    total, n = 0.0, 0
    for count in plain:
        while n < count:
            total += per_row
            n += 1
        sums[count] = total
    for run, entry in per_run.items():
        if run not in adding:
            entry.bytes = sums[entry.count]
    for run, places in usage_sql.places(store, {run: [cid for cid, _ in rows] for run, rows in adding.items()}).items():
        entry, total, n = per_run[run], 0.0, 0
        for place, (_cid, added) in sorted(zip(places, adding[run], strict=True)):
            while n < place:
                total += per_row
                n += 1
            total += added + per_row
            n += 1
        while n < entry.count:
            total += per_row
            n += 1
        entry.bytes = total


def _growth(store: NativeReads, tallies: list[usage_sql.RunTally], visited: list[tuple[float, int]],
            per_row: float) -> tuple[tuple[float, int], ...]:
    """``growth_curve`` of every checkpoint's (time, ``int(added + per_row)``), with the
    checkpoints counted by bin in SQL: each adds ``int(per_row)``, those that added pieces
    (``visited``: their time and bytes) the difference too."""
    count = sum(t.rows for t in tallies)
    if not count:
        return ()
    low, high = min(t.first for t in tallies), max(t.last for t in tallies)
    base = int(per_row)
    extra = [(t, int(added + per_row) - base) for t, added in visited]
    if not high - low > 0 or not math.isfinite(high - low):
        return ((high, base * count + sum(b for _, b in extra)),)
    width = (high - low) / GROWTH_BINS
    totals = [0] * (GROWTH_BINS + 1)
    def bin_of(t: float) -> int:
        return min(GROWTH_BINS, int((t - low) / width))

    # a run whose first and last times share a bin has all its checkpoints there (the bin
    # grows with the time); only the others are counted by bin in SQL
    # (a full pass when those hold most checkpoints)
    spread = [t for t in tallies if bin_of(t.first) != bin_of(t.last)]
    if sum(t.rows for t in spread) > count // 2:
        counted = usage_sql.time_bins(store, low, width, GROWTH_BINS)
    else:
        counted = usage_sql.time_bins(store, low, width, GROWTH_BINS, [t.run_id for t in spread])
        for t in tallies:
            if bin_of(t.first) == bin_of(t.last):
                totals[bin_of(t.first)] += base * t.rows
    for n, k in counted.items():
        totals[n] += base * k
    for at, b in extra:
        totals[bin_of(at)] += b
    return cumulative(low, width, totals)


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
