"""Effective run status (what the GUI and `runs` show): a 'running' run whose owner is gone or silent is shown crashed or stuck.

Two tiers, so a big store's list never waits on diagnoses:

* ``quick_statuses`` reads no store (heartbeat age, and whether the owner process still
  exists on this host) — it runs with every listing;
* ``deep_statuses`` may read a few checkpoints per run (a live process that stopped making
  progress, a loop) — it runs afterwards, only for runs the quick tier found alive.

Both use ``inspector.resume`` (``liveness.owner_of``, ``stuck.diagnose_many``) when present,
else a small local rule (pid gone on this host → crashed; heartbeat older than
``STALE_AFTER`` → stuck). Call them from a worker thread.
"""

import time
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from inspector.model import ACTIVE_STATUSES, RunInfo, ownerless_running
from inspector.store.base import Store


STALE_AFTER = 30.0


class EffectiveStatus(NamedTuple):
    """What the runs list shows for a run: a status and, when it differs, why."""

    status: str
    reason: str = ""


def _local_owner_state(run: RunInfo, now: float) -> tuple[str, str]:
    import socket

    if run.owner_pid and run.owner_host == socket.gethostname():
        import psutil
        if not psutil.pid_exists(run.owner_pid):
            return "gone", f"its process {run.owner_pid} on this host is gone"
    beat = run.heartbeat or run.updated
    if beat and now - beat > STALE_AFTER:
        return "silent", f"no heartbeat for {int(now - beat)} s"
    return "live", ""


def _owner_state(run: RunInfo, now: float) -> tuple[str, str]:
    try:
        from inspector.resume.liveness import owner_of
    except ImportError:
        return _local_owner_state(run, now)
    owner = owner_of(run, now=now, heartbeat_threshold=STALE_AFTER)
    return owner.state, owner.text


def quick_statuses(runs: Iterable[RunInfo], now: float | None = None) -> dict[str, EffectiveStatus]:
    """Run id → crashed/stuck for active runs whose owner is gone or silent (no store reads)."""
    now = time.time() if now is None else now
    out: dict[str, EffectiveStatus] = {}
    for run in runs:
        if run.status not in ACTIVE_STATUSES or ownerless_running(run):
            continue
        state, text = _owner_state(run, now)
        if state == "gone":
            out[run.id] = EffectiveStatus("crashed", text)
        elif state == "silent":
            out[run.id] = EffectiveStatus("stuck", text)
    return out


def deep_statuses(store: Store, runs: Iterable[RunInfo], now: float | None = None) -> dict[str, EffectiveStatus]:
    """Run id → stuck/crashed for active runs a full diagnosis flags (may read the store)."""
    active = [r for r in runs if r.status in ACTIVE_STATUSES]
    if not active:      # nothing to diagnose: the diagnosis (and psutil) is not even imported
        return {}
    try:
        from inspector.resume.stuck import diagnose_many
    except ImportError:
        return {}
    try:
        found = diagnose_many(store, active, now=now, heartbeat_threshold=STALE_AFTER)
    except Exception:  # a diagnosis must never break the runs list
        import logging     # here, not at the top: the CLI's start-up does without it
        logging.getLogger(__name__).exception("diagnosing runs failed")
        return {}
    return {run_id: EffectiveStatus(d.status, getattr(d, "summary", "") or "")
            for run_id, d in found.items() if d.status in ("stuck", "crashed")}


def effective_statuses(store: Store, runs: Iterable[RunInfo], now: float | None = None) -> dict[str, EffectiveStatus]:
    """Both tiers at once (the CLI's ``runs`` and ``show``): run id → status where it differs."""
    runs = list(runs)
    out = quick_statuses(runs, now)
    out.update(deep_statuses(store, [r for r in runs if r.id not in out], now))
    return out


def shown_status(run: RunInfo, statuses: dict[str, EffectiveStatus]) -> str:
    """The status to show for ``run``: the effective one when a diagnosis changed it."""
    found = statuses.get(run.id)
    return found.status if found is not None else run.status


def still_working(store: Store, runs: Sequence[RunInfo]) -> list[str]:
    """Ids of the active runs among ``runs`` whose owner is still at work: not diagnosed
    crashed or stuck (what ``delete`` refuses to remove)."""
    diagnosed = deep_statuses(store, runs)
    return [r.id for r in runs if r.status in ACTIVE_STATUSES and r.id not in diagnosed]
