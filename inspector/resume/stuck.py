"""Stuck and crashed runs: detection, diagnosis (what it was doing) and where to resume."""

from __future__ import annotations

import itertools
import statistics
import time
from dataclasses import dataclass, field
from collections.abc import Iterable

from inspector.errors import StoreError
from inspector.model import ACTIVE_STATUSES, CheckpointInfo, RunInfo, ownerless_running
from inspector.resume.liveness import Owner, fmt_age, owner_of
from inspector.store.base import Store

RECENT = 40            # checkpoints looked at for the usual step gap and loops
LOOP_MIN = 3           # identical consecutive steps that count as a loop
GAP_FACTOR = 20.0      # "far longer than its usual step gap"
QUIET_FLOOR = 120.0    # never call a run quiet before this many seconds without a checkpoint


@dataclass(frozen=True)
class Diagnosis:
    """Why a run that says it is running is stuck or crashed, and what it was doing."""

    run_id: str
    status: str                                  # "stuck" | "crashed"
    reasons: tuple[str, ...]
    summary: str
    suggested_checkpoint: CheckpointInfo | None
    owner: Owner
    last_checkpoint: CheckpointInfo | None = None
    last_tool: CheckpointInfo | None = None
    since_checkpoint: float | None = None
    usual_gap: float | None = None
    loop: tuple[str, int] | None = None           # (step name, repetitions)
    pending_reviews: tuple[str, ...] = ()
    waiting_for: tuple[str, ...] = ()             # human input / blocked tasks
    detail: bool = field(default=False, compare=False)

    @property
    def reason(self) -> str:
        """The one-line summary (the name the runs list's badge code reads)."""
        return self.summary

    def describe(self) -> str:
        """Several lines for the CLI and the Metadata tab."""
        said = self.summary.lower().startswith(self.status)   # "Crashed after #8 …" names it already
        lines = [self.summary if said else f"{self.status}: {self.summary}"]
        # the summary ends with the first reason ("… (3 min ago): pid 42 on host is gone"): not twice
        reasons = self.reasons[1:] if self.reasons and self.summary.endswith(self.reasons[0]) else self.reasons
        lines += [f"  - {r}" for r in reasons]
        if self.last_checkpoint:
            lines.append(f"  last checkpoint #{self.last_checkpoint.seq} {self.last_checkpoint.kind} "
                         f"{self.last_checkpoint.name!r}, {fmt_age(self.since_checkpoint)} ago")
        if self.last_tool:
            lines.append(f"  last tool call #{self.last_tool.seq} {self.last_tool.name!r}")
        if self.loop:
            lines.append(f"  repeating {self.loop[0]!r} ×{self.loop[1]} (a loop?)")
        lines += [f"  pending review: {r}" for r in self.pending_reviews]
        lines += [f"  waiting for: {w}" for w in self.waiting_for]
        if self.suggested_checkpoint:
            lines.append(f"  suggested resume point: {self.run_id}:{self.suggested_checkpoint.seq}")
        return "\n".join(lines)


def _usual_gap(recent: list[CheckpointInfo]) -> float | None:
    gaps = [b.created - a.created for a, b in itertools.pairwise(recent) if b.created >= a.created]
    return statistics.median(gaps) if len(gaps) >= 2 else None


def _loop(recent: list[CheckpointInfo]) -> tuple[str, int, int] | None:
    """(name, repetitions, seq of the first repetition) when the tail repeats one step."""
    if not recent:
        return None
    last = recent[-1]
    count = 0
    for cp in reversed(recent):
        if (cp.kind, cp.name) != (last.kind, last.name) or cp.kind in ("resume", "fork", "input"):
            break
        count += 1
    if count < LOOP_MIN:
        return None
    return last.name or last.kind, count, recent[-count].seq


def _suggest(recent: list[CheckpointInfo], loop: tuple[str, int, int] | None) -> CheckpointInfo | None:
    if not recent:
        return None
    if loop is not None:
        earlier = [c for c in recent if c.seq < loop[2]]  # just before the loop began
        return earlier[-1] if earlier else recent[0]
    return recent[-1]


def _quiet(recent: list[CheckpointInfo], now: float, run: RunInfo) -> tuple[float | None, float | None]:
    last_time = recent[-1].created if recent else run.created
    return now - last_time, _usual_gap(recent)


def _reasons(run: RunInfo, owner: Owner, since: float | None, gap: float | None,
             loop: tuple | None) -> tuple[str, list[str]]:
    reasons: list[str] = []
    status = ""
    if owner.state == "gone":
        status = "crashed"
        reasons.append(owner.text)
    elif owner.state == "silent":
        status = "stuck"
        reasons.append(owner.text)
    if since is not None and gap is not None and since > max(GAP_FACTOR * gap, QUIET_FLOOR):
        status = status or "stuck"
        reasons.append(f"no checkpoint for {fmt_age(since)} (usual gap {fmt_age(gap)})")
    if loop is not None and status:
        reasons.append(f"the last {loop[1]} steps repeat {loop[0]!r}")
    if not status and run.status in ("stuck", "crashed"):
        status = run.status
        reasons.append(f"the run is marked {run.status}")
    return status, reasons


def _recent(store: Store, run: RunInfo) -> list[CheckpointInfo]:
    return store.list_checkpoints(run.id, after_seq=run.head_seq - RECENT) if run.head_seq >= 0 else []


def _diagnose_run(store: Store, run: RunInfo, now: float, threshold: float,
                  detail: bool) -> Diagnosis | None:
    if run.status not in ACTIVE_STATUSES:
        return None
    if ownerless_running(run):
        # no owner to claim a LangGraph database's thread or a framework's session: "running" is
        # only "wrote recently" (a thread written by InspectorSaver has its owner and heartbeat)
        return None
    owner = owner_of(run, now=now, heartbeat_threshold=threshold)
    if owner.state == "live" and run.status == "running" and run.updated > now - QUIET_FLOOR:
        return None  # cheap path: alive and recently active
    recent = _recent(store, run)
    since, gap = _quiet(recent, now, run)
    loop = _loop(recent)
    status, reasons = _reasons(run, owner, since, gap, loop)
    if not status:
        return None
    last = recent[-1] if recent else None
    tools = [c for c in recent if c.kind == "tool"]
    reviews, waiting = _pending(store, last) if detail and last else ((), ())
    doing = f"after #{last.seq} {last.name or last.kind}" if last else "before its first checkpoint"
    summary = f"{status.capitalize()} {doing} ({fmt_age(since)} ago): {reasons[0]}"
    return Diagnosis(run_id=run.id, status=status, reasons=tuple(reasons), summary=summary,
                     suggested_checkpoint=_suggest(recent, loop), owner=owner, last_checkpoint=last,
                     last_tool=tools[-1] if tools else None, since_checkpoint=since, usual_gap=gap,
                     loop=(loop[0], loop[1]) if loop else None, pending_reviews=reviews,
                     waiting_for=waiting, detail=detail)


def _pending(store: Store, last: CheckpointInfo) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Pending reviews and human input from the last checkpoint's task state and metadata."""
    try:
        snap = store.load(last.id)
    except StoreError:
        return (), ()
    reviews, waiting = [], []
    for task in (snap.tasks or {}).get("tasks", []):
        review = task.get("review") or {}
        title = task.get("title") or task.get("id")
        if review.get("status") == "requested":
            who = f" by {review['reviewer']}" if review.get("reviewer") else ""
            reviews.append(f"{title}{who}")
        if task.get("status") == "blocked":
            waiting.append(f"task {title} is blocked")
    for key in ("waiting_for", "interrupt", "human_input"):
        if snap.meta.get(key):
            waiting.append(f"{key.replace('_', ' ')}: {snap.meta[key]}")
    if last.kind == "input" and last.seq > 0:
        waiting.append("human input (the last checkpoint is an input)")
    return tuple(reviews), tuple(waiting)


def diagnose(store: Store, run: RunInfo | str, *, now: float | None = None,
             heartbeat_threshold: float = 30.0) -> Diagnosis | None:
    """The diagnosis of one run, or None when it is not stuck (or does not say it is running)."""
    info = store.get_run(run) if isinstance(run, str) else run
    return _diagnose_run(store, info, time.time() if now is None else now, heartbeat_threshold, True)


def diagnose_many(store: Store, runs: Iterable[RunInfo], *, now: float | None = None,
                  heartbeat_threshold: float = 30.0) -> dict[str, Diagnosis]:
    """Diagnoses of the stuck or crashed runs among ``runs`` (cheap: no snapshot is loaded).

    Runs that are not running cost nothing; live, recently active runs cost no query.
    """
    when = time.time() if now is None else now
    found: dict[str, Diagnosis] = {}
    for run in runs:
        diag = _diagnose_run(store, run, when, heartbeat_threshold, False)
        if diag is not None:
            found[run.id] = diag
    return found


def stuck_runs(store: Store, *, now: float | None = None, heartbeat_threshold: float = 30.0) -> list[Diagnosis]:
    """Detailed diagnoses of every stuck or crashed run in the store."""
    when = time.time() if now is None else now
    runs = store.list_runs(statuses=ACTIVE_STATUSES)
    return [d for d in (diagnose(store, r, now=when, heartbeat_threshold=heartbeat_threshold) for r in runs) if d]


def last_good_checkpoint(store: Store, run: RunInfo | str, *, heartbeat_threshold: float = 30.0) -> CheckpointInfo:
    """Where "Resume from last good checkpoint" starts: the diagnosis' suggestion, else the head."""
    info = store.get_run(run) if isinstance(run, str) else run
    diag = diagnose(store, info, heartbeat_threshold=heartbeat_threshold)
    if diag is not None and diag.suggested_checkpoint is not None:
        return diag.suggested_checkpoint
    if info.head_seq < 0:
        raise StoreError(f"Run {info.id} has no checkpoint to resume from.")
    return store.get_checkpoint(f"{info.id}:{info.head_seq}")
