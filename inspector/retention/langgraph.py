"""Pruning a LangGraph database (SqliteSaver / PostgresSaver) without losing what matters.

Never removed: the head of every thread and of each of its subgraph namespaces (with its
pending writes, which LangGraph needs to continue), every checkpoint with more than one child
(a fork: ``update_state`` or a replay) and all its ancestors, the root checkpoints subgraph
runs hang from, every checkpoint of a thread that is running, and every checkpoint of a
thread that uses a ``DeltaChannel`` (its values are rebuilt from the ancestors' writes).
SQLite: a backup of the whole file is made first, then one transaction deletes. PostgreSQL:
one transaction deletes the rows and the blobs no remaining checkpoint names.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Collection
from pathlib import Path

from inspector.errors import StoreError
from inspector.model import ACTIVE_STATUSES
from inspector.retention.rules import PrunePlan, RunPlan
from inspector.store import open_store
from inspector.store.engine import guard
from inspector.store.langgraph import usage_sql
from inspector.store.langgraph.ids import id_time
from inspector.store.langgraph.mapping import parse_metadata
from inspector.store.langgraph.store import LangGraphStore
from inspector.store.langgraph.writer import LangGraphWriter
from inspector.store.native.prune_sql import Rules

Key = tuple[str, str, str]


def _doomed(store: LangGraphStore, rules: Rules) -> tuple[list[Key], dict[str, int], dict[str, int], dict[str, int]]:
    """(checkpoints to delete, protected counts by reason, kept per thread, total per thread)."""
    rows = usage_sql.keys(store)
    runs = {r.id: r for r in store.list_runs()}
    lanes: dict[tuple[str, str], list[usage_sql.KeyRow]] = {}
    for row in rows:
        lanes.setdefault((row.thread_id, row.ns), []).append(row)
    protected: dict[str, set[Key]] = {"head": set(), "live run": set(), "fork origin or its ancestor": set(),
                                      "subgraph parent": set(), "DeltaChannel thread": set()}
    delta_threads = set()
    for row in rows:
        meta = parse_metadata(row.meta)
        if "counters_since_delta_snapshot" in meta:
            delta_threads.add(row.thread_id)
        parents = meta.get("parents")
        if row.ns and isinstance(parents, dict) and isinstance(parents.get(""), str):
            protected["subgraph parent"].add((row.thread_id, "", parents[""]))
    selected: list[Key] = []
    total: dict[str, int] = {}
    for (thread, ns), lane in lanes.items():
        lane.sort(key=lambda r: r.checkpoint_id)
        total[thread] = total.get(thread, 0) + len(lane)
        by_id = {r.checkpoint_id: r for r in lane}
        protected["head"].add((thread, ns, lane[-1].checkpoint_id))
        children: dict[str, int] = {}
        for r in lane:
            if r.parent_id:
                children[r.parent_id] = children.get(r.parent_id, 0) + 1
        for cid, n in children.items():
            while n > 1 and cid in by_id and (thread, ns, cid) not in protected["fork origin or its ancestor"]:
                protected["fork origin or its ancestor"].add((thread, ns, cid))
                cid = by_id[cid].parent_id or ""
        stored = runs[thread].status if thread in runs else ""
        status = rules.shown_status(thread, stored)
        if rules.runs and thread not in rules.runs:
            continue
        if rules.statuses and status not in rules.statuses:
            continue
        cut = len(lane) - rules.keep_last if rules.keep_last is not None else len(lane)
        for r in lane[:max(0, cut)]:
            if rules.older_than is not None and id_time(r.checkpoint_id) >= rules.older_than:
                continue
            key = (thread, ns, r.checkpoint_id)
            if stored in ACTIVE_STATUSES and status != "crashed":
                protected["live run"].add(key)
            if thread in delta_threads:
                protected["DeltaChannel thread"].add(key)
            selected.append(key)
    keep = set().union(*protected.values())
    doomed = [k for k in selected if k not in keep]
    counts = {reason: sum(1 for k in selected if k in keys) for reason, keys in protected.items()}
    kept = dict(total)
    for thread, _, _ in doomed:
        kept[thread] -= 1
    return doomed, counts, kept, total


def _plan(store: LangGraphStore, rules: Rules, doomed: list[Key], counts: dict, kept: dict, total: dict,
          **extra) -> PrunePlan:
    per: dict[str, int] = {}
    for thread, _, _ in doomed:
        per[thread] = per.get(thread, 0) + 1
    statuses = {r.id: rules.shown_status(r.id, r.status) for r in store.list_runs()}
    runs = tuple(RunPlan(run=t, name=t, status=statuses.get(t, ""), remove=n, keep=kept.get(t, 0))
                 for t, n in sorted(per.items(), key=lambda kv: -kv[1]))
    return PrunePlan(store=store.display, kind="langgraph", runs=runs, remove_checkpoints=len(doomed),
                     total_checkpoints=sum(total.values()), protected={k: v for k, v in counts.items() if v},
                     **extra)


def plan(store: LangGraphStore, rules: Rules, *, ids: bool = False) -> PrunePlan:
    """What a prune would remove (rows and pending writes) and the bytes (changes nothing);
    with ``ids``, also which checkpoints (``PrunePlan.chosen``: what ``apply(only=…)`` removes
    at most)."""
    doomed, counts, kept, total = _doomed(store, rules)
    disk = usage_sql.disk_usage(store)
    return _plan(store, rules, doomed, counts, kept, total, rows_bytes=usage_sql.row_bytes(store, doomed),
                 content_bytes=0, pieces=0, disk_before=disk.total_bytes, wal_before=disk.wal_bytes,
                 chosen=frozenset(doomed) if ids else None,
                 notes=("PostgreSQL: blobs that only removed checkpoints name are deleted too (not counted here)."
                        ,) if store.info.backend == "postgresql" else ())


def backup_first(path: Path, backup: str | None, say: Callable[[str], None]) -> Path:
    """A consistent copy of the SQLite database at ``path``, made before rows LangGraph wrote
    are deleted: at ``backup``, or beside it with the time in its name."""
    backup_path = Path(backup) if backup else path.with_name(f"{path.name}.backup-{time.strftime('%Y%m%d-%H%M%S')}")
    check_backup_path(backup_path)
    say(f"backing up to {backup_path}")
    try:
        usage_sql.sqlite_backup(path, backup_path)
    except (sqlite3.Error, OSError) as exc:
        backup_path.unlink(missing_ok=True)
        raise StoreError(f"Could not write the backup {backup_path} ({' '.join(str(exc).split()) or type(exc).__name__}); nothing was deleted.") from exc
    return backup_path


def check_backup_path(backup_path: Path) -> None:
    """StoreError unless a backup can be made at ``backup_path`` (a new file in a folder that exists)."""
    if backup_path.exists():
        raise StoreError(f"{backup_path} exists already; choose another --backup path.")
    folder = backup_path.parent
    if not folder.is_dir():
        raise StoreError(f"The folder {folder} of the backup {backup_path} does not exist; create it or choose "
                         "another --backup path.")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise StoreError(f"The folder {folder} is not writable; choose another --backup path.")


def apply(target: str | os.PathLike, rules: Rules, *, vacuum: bool = False,
          progress: Callable[[str], None] | None = None, backup: str | None = None,
          only: Collection[Key] | None = None) -> PrunePlan:
    """Prune a LangGraph database (the caller checked ``--langgraph-write``); ``only``: the
    checkpoints a preview listed (``plan(ids=True)``), the most that goes (see
    ``native.apply``)."""
    say = progress or (lambda _text: None)
    with open_store(target) as store:
        assert isinstance(store, LangGraphStore)
        doomed, counts, kept, total = _doomed(store, rules)
        changed: tuple[str, ...] = ()
        if only is not None:
            doomed, changed = _previewed(doomed, only, kept)
        rows_bytes = usage_sql.row_bytes(store, doomed)
        disk_before = usage_sql.disk_usage(store)
        url, display, path = store.info.url, store.display, store._path
        backup_path = backup_first(path, backup, say) if path is not None and doomed else None
        blobs_gone = blob_bytes = 0
        with LangGraphWriter(str(path) if path is not None else url, display) as writer:
            if doomed:
                say(f"removing {len(doomed):,} checkpoints in one transaction")
                with guard(display), writer.engine.begin() as conn:
                    usage_sql.delete_checkpoints(conn, doomed)
                    if writer.backend == "postgresql":
                        blobs_gone, blob_bytes = usage_sql.pg_collect_blobs(conn, sorted({t for t, _, _ in doomed}))
            if vacuum:
                say("vacuuming")
                with guard(display):
                    usage_sql.vacuum(writer.engine)
        after = usage_sql.disk_usage(store)
        return _plan(store, rules, doomed, counts, kept, total, rows_bytes=rows_bytes, content_bytes=blob_bytes,
                     pieces=blobs_gone, applied=True, disk_before=disk_before.total_bytes,
                     wal_before=disk_before.wal_bytes, disk_after=after.total_bytes, wal_after=after.wal_bytes,
                     backup=str(backup_path) if backup_path else None, notes=changed)


def _previewed(doomed: list[Key], only: Collection[Key], kept: dict[str, int]) -> tuple[list[Key], tuple[str, ...]]:
    """Of what the rules select now, what the preview listed (``kept`` per thread counted
    anew), and what was left out, said."""
    from inspector.retention.native import changed_notes

    wanted = set(only)
    chosen = [k for k in doomed if k in wanted]
    for thread, _, _ in doomed:
        kept[thread] += 1
    for thread, _, _ in chosen:
        kept[thread] -= 1
    return chosen, changed_notes(len(wanted) - len(chosen), len(doomed) - len(chosen))
