"""Retention rules as the user gives them (``--older-than 30d`` …) and the plan a prune makes."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from inspector.errors import StoreError
from inspector.model import ACTIVE_STATUSES, RunInfo, parse_statuses
from inspector.store.base import Store
from inspector.store.native.prune_sql import Describe, Rules

__all__ = ["RENUMBERED", "Describe", "Diagnose", "PrunePlan", "Rules", "RunPlan", "diagnosed", "make_rules",
           "parse_duration"]


RENUMBERED = ("The checkpoints kept are numbered again from #0 in each run (their ids stay): "
              "a RUN:N written before this prune may name another checkpoint now.")


class Shown(Protocol):
    """A status as the app shows it (``inspector.resume.status.EffectiveStatus``)."""

    @property
    def status(self) -> str: ...


# run id -> the status shown, for the active runs whose shown status is not the stored one
# (a dead "running" run is crashed): the caller's diagnosis, as ``runs`` makes it
# (``inspector.resume.status.effective_statuses``, a layer above)
Diagnose = Callable[[Store, Sequence[RunInfo]], Mapping[str, Shown]]


def diagnosed(store: Store, rules: Rules, diagnose: Diagnose | None) -> Rules:
    """``rules`` knowing the statuses the app shows for the store's active runs: one shown
    crashed is no live run, and ``statuses`` select by the status shown. Without ``diagnose``
    every active run is live."""
    active = store.list_runs(statuses=ACTIVE_STATUSES) if diagnose is not None else []
    found = diagnose(store, active) if diagnose is not None and active else {}
    shown = tuple((r.id, found[r.id].status, r.epoch) for r in active if r.id in found)
    return replace(rules, shown=shown) if shown else rules

_UNITS = {"s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_PART = re.compile(r"(\d+(?:\.\d+)?)\s*(min|s|m|h|d|w)")


def parse_duration(text: str) -> float:
    """Seconds in ``90s``, ``15m``, ``12h``, ``30d``, ``2w`` or ``1d12h``; StoreError otherwise."""
    cleaned = text.strip().lower().replace(" ", "")
    pos, total = 0, 0.0
    for match in _PART.finditer(cleaned):
        if match.start() != pos:
            break
        total += float(match.group(1)) * _UNITS[match.group(2)]
        pos = match.end()
    if not cleaned or pos != len(cleaned):
        raise StoreError(f"{text!r} is not a duration (use e.g. 90s, 15m, 12h, 30d, 2w or 1d12h).")
    return total


def make_rules(*, keep_last: int | None = None, older_than: str | float | None = None,
               runs: tuple[str, ...] | list[str] = (), statuses: tuple[str, ...] | list[str] = (),
               now: float | None = None) -> Rules:
    """Rules from user input; StoreError (one sentence) when they select nothing sensible."""
    if keep_last is not None and keep_last < 1:
        raise StoreError("--keep-last must be at least 1 (a run's head is always kept).")
    if keep_last is not None:
        keep_last = min(keep_last, 2 ** 62)    # more than any run holds: keeps them all (and fits SQL)
    cutoff = None
    if older_than is not None:
        seconds = parse_duration(older_than) if isinstance(older_than, str) else float(older_than)
        cutoff = (time.time() if now is None else now) - seconds
    statuses = parse_statuses(statuses)
    if keep_last is None and cutoff is None and not runs:
        raise StoreError("Say what to prune: --keep-last N, --older-than DURATION and/or --run RUN.")
    return Rules(keep_last=keep_last, older_than=cutoff, runs=tuple(runs), statuses=statuses)


@dataclass(frozen=True)
class RunPlan:
    """What a prune removes from one run (a LangGraph thread)."""

    run: str
    name: str
    status: str
    remove: int
    keep: int


@dataclass(frozen=True)
class PrunePlan:
    """What a prune would remove (dry run) or removed (``applied``), and the bytes it frees."""

    store: str
    kind: str
    runs: tuple[RunPlan, ...]
    remove_checkpoints: int
    total_checkpoints: int
    rows_bytes: int             # checkpoint rows (and pending writes) removed
    content_bytes: int          # pieces / blobs no kept checkpoint reaches any more
    pieces: int                 # how many such pieces
    protected: dict[str, int] = field(default_factory=dict)   # reason -> selected checkpoints it keeps
    applied: bool = False
    disk_before: int = 0        # the file and its write-ahead log, measured right before
    disk_after: int = 0         # the file and its write-ahead log, measured right after
    wal_after: int = 0          # of which the write-ahead log (SQLite folds it into the file)
    backup: str | None = None
    notes: tuple[str, ...] = ()
    wal_before: int = 0         # the write-ahead log in ``disk_before``
    # the checkpoints a dry run found (native: ids; LangGraph: (thread, namespace, checkpoint
    # id)), kept when asked for (``plan_prune(ids=True)``): what ``apply_prune(preview=…)``
    # removes at most, so that a prune confirmed after a preview never removes more
    chosen: Collection[Any] | None = field(default=None, repr=False, compare=False)

    @property
    def bytes(self) -> int:
        """Bytes freed inside the store (VACUUM gives them back to the OS)."""
        return self.rows_bytes + self.content_bytes

    def on_disk(self) -> tuple[int, int, int]:
        """(the file before, the file after, its write-ahead log after): file compared with
        file, the log said apart (``wal_before`` is the log before). The log holds what every
        writer committed since SQLite last folded it into the file (at its next checkpoint;
        when the last connection closes, the log goes): the prune's deletions, and an agent's
        saves meanwhile. Adding it to either side would credit the prune with another writer's
        log, or hide it behind a file that keeps its size."""
        return self.disk_before - self.wal_before, self.disk_after - self.wal_after, self.wal_after

    def to_json(self) -> dict:
        """The ``prune --json`` document."""
        return {"store": self.store, "kind": self.kind, "applied": self.applied,
                "remove_checkpoints": self.remove_checkpoints, "total_checkpoints": self.total_checkpoints,
                "bytes": self.bytes, "rows_bytes": self.rows_bytes, "content_bytes": self.content_bytes,
                "pieces": self.pieces, "protected": self.protected, "disk_before": self.disk_before,
                "disk_after": self.disk_after, "wal_before": self.wal_before, "wal_after": self.wal_after,
                "backup": self.backup, "notes": list(self.notes),
                "runs": [{"run": r.run, "name": r.name, "status": r.status, "remove": r.remove, "keep": r.keep}
                         for r in self.runs]}
