"""Deleting whole runs of a native store, or threads of a LangGraph database (``delete STORE
RUN…``): a dry run says what would go and what stops it; applying deletes the runs' rows in one
transaction, then collects the pieces no checkpoint reaches any more (as a prune does).

Refused, with one sentence and nothing deleted:

* a run that is still running (its owner alive and beating): stop it first;
* a run with pinned checkpoints (a pin says "keep this"): unpin them first;
* a run other runs were forked from, unless they are deleted with it (a fork starts from one
  of its checkpoints).

A run written by ``InspectorSaver`` is one lane of a LangGraph thread: the whole thread goes
(every lane, its LangGraph rows and pending writes), as the saver's ``delete_thread`` does.

In a LangGraph database (``SqliteSaver`` / ``PostgresSaver``) a run is a thread: it goes as
LangGraph's own ``delete_thread`` takes it (every namespace's checkpoints, pending writes and,
on PostgreSQL, blobs), only with ``langgraph_write`` (``--langgraph-write``: these are rows
LangGraph wrote), after a backup of a SQLite file, in one transaction that first checks that
no thread was written to since the plan.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace

from inspector.errors import StoreError
from inspector.humanize import plural
from inspector.model import ACTIVE_STATUSES, RunInfo
from inspector.store import open_store
from inspector.store.base import Store
from inspector.store.engine import guard, make_engine
from inspector.store.native import lanes as lane_sql
from inspector.store.native import live, prune_sql
from inspector.store.native import pins as pin_sql
from inspector.store.native.schema import checkpoints, runs
from inspector.store.native.store import NativeStore
from inspector.store.native.writer import notify
from inspector.store.refs import resolve_run


# which of these active runs (stored running, stuck or crashed) have an owner still at work: the
# caller's diagnosis (``inspector.resume.status``, a layer above); without one, all of them
Alive = Callable[[Store, Sequence[RunInfo]], Collection[str]]


@dataclass(frozen=True)
class DeletePlan:
    """The runs a delete removes (dry run) or removed (``applied``), or why it may not."""

    store: str
    runs: tuple[RunInfo, ...]
    checkpoints: int
    blockers: tuple[str, ...] = ()      # sentences: while there is one, nothing is deleted
    threads: tuple[str, ...] = ()       # LangGraph threads (InspectorSaver) deleted whole
    applied: bool = False
    rows_bytes: int = 0                 # what the checkpoint rows occupy (with their pending writes)
    pieces: int = 0                     # pieces collected after (no checkpoint reached them); dry run: would be
    content_bytes: int = 0              # what they occupied (the same estimate as prune's)
    langgraph: bool = False             # a LangGraph database: the runs are its threads
    backup: str | None = None           # the copy of a LangGraph SQLite file made first
    notes: tuple[str, ...] = ()         # sentences: what was left undone, and why

    @property
    def bytes(self) -> int:
        """Bytes freed inside the store (VACUUM gives them back to the OS)."""
        return self.rows_bytes + self.content_bytes

    def to_json(self) -> dict:
        """The ``delete --json`` document."""
        return {"store": self.store, "applied": self.applied, "checkpoints": self.checkpoints,
                "blockers": list(self.blockers), "threads": list(self.threads), "bytes": self.bytes,
                "rows_bytes": self.rows_bytes, "pieces": self.pieces, "content_bytes": self.content_bytes,
                "langgraph_database": self.langgraph, "backup": self.backup,
                "notes": list(self.notes),
                "runs": [{"run": r.id, "name": r.name, "status": r.status, "checkpoints": r.checkpoint_count}
                         for r in self.runs]}


def plan_delete(target: str | os.PathLike, refs: Sequence[str], *, alive: Alive | None = None,
                sized: bool = False) -> DeletePlan:
    """What deleting the runs ``refs`` (ids, prefixes, names) would remove, and what stops it
    (opens the store read-only; changes nothing). ``alive``: see ``Alive``; ``sized``: with
    about how many bytes that frees, as a prune's dry run estimates them (it walks the
    store's pieces: seconds on a big store)."""
    with open_store(target) as store:
        plan = _plan(store, refs, alive)
        return _sized(store, plan) if sized and not plan.blockers else plan


def _sized(store: Store, plan: DeletePlan) -> DeletePlan:
    """``plan`` with the bytes deleting its runs would free."""
    ids = [r.id for r in plan.runs]
    if isinstance(store, NativeStore):
        from inspector.retention.native import estimate

        with guard(store.info.display), store.engine.connect() as conn:
            roots = prune_sql.run_roots(conn, ids)
        freed = estimate(store, roots)
        return replace(plan, rows_bytes=freed.rows_bytes, content_bytes=freed.content_bytes, pieces=freed.pieces,
                       notes=freed.notes)
    from inspector.store.langgraph import usage_sql
    from inspector.store.langgraph.store import LangGraphStore

    assert isinstance(store, LangGraphStore)
    threads = set(ids)
    keys = [(r.thread_id, r.ns, r.checkpoint_id) for r in usage_sql.keys(store) if r.thread_id in threads]
    return replace(plan, rows_bytes=usage_sql.row_bytes(store, keys))


def apply_delete(target: str | os.PathLike, refs: Sequence[str], *, alive: Alive | None = None,
                 progress: Callable[[str], None] | None = None, langgraph_write: bool = False,
                 backup: str | None = None) -> DeletePlan:
    """Delete the runs ``refs`` for real; StoreError (the first blocker) when one stops it.
    A LangGraph database needs ``langgraph_write``; ``backup``: where its SQLite copy goes."""
    say = progress or (lambda _text: None)
    from inspector.retention.api import writable_native
    from inspector.retention.native import collect_pieces, row_bytes
    from inspector.store.native import usage_sql

    with open_store(target) as probe:
        _deletable(probe)
        if probe.info.kind == "langgraph":
            return _apply_langgraph(probe, refs, alive, say, langgraph_write, backup)
    store = writable_native(target)
    reader = NativeStore(make_engine(store.target, readonly=True), store.target, read_only=True)
    try:
        plan = _plan(reader, refs, alive)
        if plan.blockers:
            raise StoreError(plan.blockers[0])
        ids = [r.id for r in plan.runs]
        display = store.info.display
        total, _ = usage_sql.checkpoint_totals(reader)
        rows = row_bytes(usage_sql.disk_usage(reader), total, plan.checkpoints)
        say(f"deleting {plural(len(ids), 'run')} ({plural(plan.checkpoints, 'checkpoint')}) in one transaction")
        with guard(display), store.engine.begin() as conn:
            prune_sql.begin_exclusive(conn, "ci_runs")
            pinned = [i for run_id in ids for i in pin_sql.pinned_ids(conn, run_id)]
            if pinned:      # pinned meanwhile: kept, as a prune keeps them
                raise StoreError(f"{plural(len(pinned), 'checkpoint')} of these runs {'was' if len(pinned) == 1 else 'were'} "
                                 "pinned meanwhile; nothing was deleted.")
            if plan.threads:
                lane_sql.delete_lane_rows(conn, ids, sorted(plan.threads))
            conn.execute(checkpoints.delete().where(checkpoints.c.run_id.in_(ids)))
            conn.execute(runs.delete().where(runs.c.id.in_(ids)))
            live.note_removal(conn)
            notify(conn, ids)       # a window showing them learns it on commit (PostgreSQL)
        pieces, content, why = collect_pieces(store, reader, say)
        return DeletePlan(store=plan.store, runs=plan.runs, checkpoints=plan.checkpoints, threads=plan.threads,
                          applied=True, rows_bytes=rows, pieces=pieces, content_bytes=content,
                          notes=(why,) if why else ())
    finally:
        reader.close()
        store.close()


def _apply_langgraph(store: Store, refs: Sequence[str], alive: Alive | None, say: Callable[[str], None],
                     langgraph_write: bool, backup: str | None) -> DeletePlan:
    """Delete threads of a LangGraph database as LangGraph's ``delete_thread`` does."""
    from inspector.retention.langgraph import backup_first
    from inspector.store.langgraph import usage_sql
    from inspector.store.langgraph.store import LangGraphStore
    from inspector.store.langgraph.writer import LangGraphWriter

    assert isinstance(store, LangGraphStore)
    if not langgraph_write:
        raise StoreError("This is a LangGraph database: deleting a thread deletes rows LangGraph wrote; "
                         "pass --langgraph-write to allow it (a SQLite file is backed up first).")
    plan = _plan(store, refs, alive)
    if plan.blockers:
        raise StoreError(plan.blockers[0])
    threads = [r.id for r in plan.runs]
    display, path = store.display, store._path
    with guard(display), store.engine.connect() as conn:
        heads = usage_sql.thread_heads(conn, threads)
    copy = backup_first(path, backup, say) if path is not None else None
    say(f"deleting {plural(len(threads), 'thread')} ({plural(plan.checkpoints, 'checkpoint')}) in one transaction")
    with (LangGraphWriter(str(path) if path is not None else store.info.url, display) as writer,
          guard(display), writer.engine.begin() as conn):
        if usage_sql.thread_heads(conn, threads) != heads:
            raise StoreError(f"{_quoted(plan.runs)} {'was' if len(threads) == 1 else 'were'} written to "
                             "since the delete was planned; nothing was deleted.")
        usage_sql.delete_threads(conn, threads)
    return replace(plan, applied=True, backup=str(copy) if copy is not None else None)


def _quoted(runs: Sequence[RunInfo]) -> str:
    return ", ".join(repr(r.name) for r in runs[:3]) + (", …" if len(runs) > 3 else "")


def _deletable(store: Store) -> None:
    if store.info.kind not in ("native", "langgraph"):
        raise StoreError(f"{store.info.display} is a {store.info.kind} store: delete removes runs of this "
                         f"project's stores and threads of LangGraph databases ({store.info.kind} deletes "
                         "its own sessions).")


def _plan(store: Store, refs: Sequence[str], alive: Alive | None) -> DeletePlan:
    _deletable(store)
    if not refs:
        raise StoreError("Name the runs to delete (ids, id prefixes or names).")
    everything = store.list_runs()
    chosen: dict[str, RunInfo] = {}
    for ref in refs:
        run = resolve_run(store, ref)
        chosen[run.id] = run
    threads = {t for t in map(_thread, chosen.values()) if t is not None}
    for run in everything:        # a LangGraph thread goes whole: every lane of it
        if _thread(run) in threads:
            chosen.setdefault(run.id, run)
    blockers: list[str] = []
    active = [r for r in chosen.values() if r.status in ACTIVE_STATUSES]
    working = set(alive(store, active) if alive is not None else (r.id for r in active)) if active else set()
    blockers += [f"{run.name!r} ({run.id}) is running; stop it first (its program is still writing to it)."
                 for run in active if run.id in working]
    for run in chosen.values():
        forks = [r for r in everything if r.parent_run == run.id and r.id not in chosen]
        if forks:
            names = ", ".join(f"{f.name!r} ({f.id})" for f in forks[:5]) + (", …" if len(forks) > 5 else "")
            one = len(forks) == 1
            blockers.append(f"{plural(len(forks), 'run')} {'was' if one else 'were'} forked from {run.name!r} "
                            f"({run.id}): {names}. Delete {'that fork' if one else 'those forks'} first, "
                            "or together with it.")
    if isinstance(store, NativeStore):
        with guard(store.info.display), store.engine.connect() as conn:
            for run in chosen.values():
                pinned = len(pin_sql.pinned_ids(conn, run.id))
                if pinned:
                    blockers.append(f"{run.name!r} ({run.id}) has {plural(pinned, 'pinned checkpoint')}; unpin "
                                    f"{'it' if pinned == 1 else 'them'} first (Run \u25b8 Pin Checkpoint in the app, "
                                    "checkpoint-inspector unpin on the command line).")
    ordered = tuple(sorted(chosen.values(), key=lambda r: (r.created, r.id)))
    return DeletePlan(store=store.info.display, runs=ordered, checkpoints=sum(r.checkpoint_count for r in ordered),
                      blockers=tuple(blockers), threads=tuple(sorted(threads)),
                      langgraph=store.info.kind == "langgraph")


def _thread(run: RunInfo) -> str | None:
    """The LangGraph thread of a run written by ``InspectorSaver`` (None for other runs)."""
    lane = run.labels.get("langgraph") if isinstance(run.labels, dict) else None
    thread = lane.get("thread_id") if isinstance(lane, dict) else None
    return thread if isinstance(thread, str) else None
