"""The storage report's values (frozen dataclasses shared by the CLI, the GUI and the bench)."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

ROWS_FIELD = "(checkpoint rows)"
TASKS_FIELD = "(task state)"
WRITES_FIELD = "(pending writes)"
METADATA_FIELD = "(checkpoint metadata)"
OTHER_FIELD = "(other / overhead)"     # stored bytes no field claims: the fields add up to the total


@dataclass(frozen=True)
class CheckpointUsage:
    """One checkpoint: what its state decodes to and what storing it cost."""

    id: int | str
    seq: int
    created: float
    logical: int          # bytes of the state's encoding (what it decodes to)
    stored: int           # bytes this checkpoint added to the store (pieces first stored by it + its row)
    unique: int           # bytes only this checkpoint refers to (what removing it alone frees)
    ops: int = 1          # operations recorded since the previous snapshot
    checks_passed: int = 0
    checks_total: int = 0


@dataclass(frozen=True)
class TradeoffPoint:
    """The run re-recorded with a snapshot every ``every`` checkpoints: write cost vs replay."""

    every: int
    snapshots: int
    write_bytes: int
    replay_max: int       # operations a recovery replays at worst
    replay_mean: float    # ... on average over a crash at any operation


@dataclass(frozen=True)
class ChannelUsage:
    """A LangGraph channel: bytes stored, and how many of them repeat the previous step."""

    name: str
    bytes: int
    unchanged_bytes: int  # bytes re-written although the value equals the parent's
    versions: int         # values stored for it


@dataclass(frozen=True)
class RunUsage:
    """One run (a LangGraph thread): its checkpoints and what it costs."""

    run: str
    name: str
    status: str
    checkpoints: int
    bytes: int                 # stored bytes attributed to the run (pieces it added + its rows)
    logical_bytes: int         # sum of its checkpoints' logical sizes
    fields: dict[str, int]     # field (LangGraph channel) -> stored bytes
    created: float = 0.0
    updated: float = 0.0


@dataclass(frozen=True)
class RunDetail:
    """Per-checkpoint figures of one run and its interval trade-off."""

    run: str
    checkpoints: tuple[CheckpointUsage, ...]
    tradeoff: tuple[TradeoffPoint, ...] = ()


@dataclass(frozen=True)
class OurStoreEstimate:
    """What the same history would take in this project's store (LangGraph stores)."""

    bytes: int
    pieces: int
    method: str


@dataclass(frozen=True)
class UsageReport:
    """Why the store is the size it is."""

    store: str
    kind: str                      # native | langgraph
    backend: str                   # sqlite | postgresql
    total_bytes: int               # on disk: file + WAL (SQLite) or relations (PostgreSQL)
    free_bytes: int                # free pages inside the file (VACUUM gives them back)
    wal_bytes: int
    tables: dict[str, int]
    content_bytes: int             # stored state content (pieces / bodies / blobs)
    rows_bytes: int                # checkpoint rows (everything but content)
    logical_bytes: int
    checkpoints: int
    runs: tuple[RunUsage, ...]
    fields: dict[str, int]         # over the whole store
    growth: tuple[tuple[float, int], ...] = ()   # (time, cumulative stored bytes)
    detail: RunDetail | None = None
    channels: tuple[ChannelUsage, ...] = ()      # LangGraph only
    ours: OurStoreEstimate | None = None         # LangGraph only
    notes: tuple[str, ...] = ()
    method: str = ""
    extra: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        """The ``usage --json`` document (``total_bytes`` and ``runs`` at the top)."""
        out: dict = {
            "store": self.store, "kind": self.kind, "backend": self.backend,
            "total_bytes": self.total_bytes, "free_bytes": self.free_bytes, "wal_bytes": self.wal_bytes,
            "content_bytes": self.content_bytes, "rows_bytes": self.rows_bytes,
            "logical_bytes": self.logical_bytes, "checkpoints": self.checkpoints,
            "tables": self.tables, "fields": self.fields,
            "runs": [{"run": r.run, "name": r.name, "status": r.status, "checkpoints": r.checkpoints,
                      "bytes": r.bytes, "logical_bytes": r.logical_bytes, "fields": r.fields}
                     for r in self.runs],
            "method": self.method, "notes": list(self.notes),
        }
        if self.channels:
            out["channels"] = [{"channel": c.name, "bytes": c.bytes, "unchanged_bytes": c.unchanged_bytes,
                                "versions": c.versions} for c in self.channels]
        if self.ours is not None:
            out["our_store_estimate"] = {"bytes": self.ours.bytes, "pieces": self.ours.pieces,
                                         "method": self.ours.method}
        if self.detail is not None:
            out["detail"] = {
                "run": self.detail.run,
                "checkpoints": [{"id": c.id, "seq": c.seq, "created": c.created, "logical": c.logical,
                                 "stored": c.stored, "unique": c.unique, "ops": c.ops,
                                 "checks_passed": c.checks_passed, "checks_total": c.checks_total}
                                for c in self.detail.checkpoints],
                "tradeoff": [{"every": t.every, "snapshots": t.snapshots, "write_bytes": t.write_bytes,
                              "replay_max": t.replay_max, "replay_mean": t.replay_mean}
                             for t in self.detail.tradeoff],
            }
        out.update(self.extra)
        return out


GROWTH_BINS = 200


def growth_curve(points: list[tuple[float, int]], bins: int = GROWTH_BINS) -> tuple[tuple[float, int], ...]:
    """(time, bytes added) points as a cumulative curve of at most ``bins`` steps."""
    if not points:
        return ()
    times = [t for t, _ in points if math.isfinite(t)]
    if len(times) < len(points):     # a damaged row's time (NaN, infinite): its bytes at the newest one
        last = max(times, default=0.0)
        points = [(t if math.isfinite(t) else last, b) for t, b in points]
    points.sort()
    lo, hi = points[0][0], points[-1][0]
    if not hi - lo > 0 or not math.isfinite(hi - lo):     # one moment, or times too far apart to bin
        return ((hi, sum(b for _, b in points)),)
    width = (hi - lo) / bins
    totals = [0] * (bins + 1)
    for t, b in points:
        totals[min(bins, int((t - lo) / width))] += b
    return cumulative(lo, width, totals)


def cumulative(lo: float, width: float, totals: list[int]) -> tuple[tuple[float, int], ...]:
    """Bytes added by bin (bin ``n`` starts at ``lo + n * width``) as a cumulative curve."""
    curve, running = [], 0
    for n, b in enumerate(totals):
        running += b
        curve.append((lo + n * width, running))
    return tuple(curve)


def replay_cost(ops: list[int], kept: list[int]) -> tuple[int, float]:
    """(max, mean) operations a recovery replays when only checkpoints ``kept`` (indices into
    ``ops``, ascending, the first always kept) exist: a crash at any operation replays the
    operations since the last kept snapshot."""
    if not ops or not kept:
        return 0, 0.0
    positions = []
    total = 0
    for n in ops:
        total += max(0, int(n))
        positions.append(total)
    gaps = [positions[b] - positions[a] for a, b in itertools.pairwise(kept)]
    if not gaps:
        return 0, 0.0
    span = sum(gaps)
    if span <= 0:
        return 0, 0.0
    return max(gaps) - 1, sum(g * (g - 1) / 2 for g in gaps) / span
