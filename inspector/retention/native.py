"""Pruning a native store: plan (a dry run), delete in short transactions, collect pieces.

Crash safety comes from the order and the size of the steps: checkpoints go first, a few
thousand per transaction, each transaction also renumbering its runs; pieces go after, in
transactions that first re-walk whatever checkpoints were added since the mark. A process
killed at any moment leaves committed transactions only, and a new prune finishes the work
(the piece collection always runs, whether or not checkpoints are left to delete).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from inspector.retention.rules import PrunePlan, RunPlan
from inspector.store.columns import BINARY
from inspector.store.engine import guard, make_engine
from inspector.store.native import pins as pin_sql
from inspector.store.native import prune_sql, usage_sql
from inspector.store.native.prune_sql import Candidate, Rules
from inspector.store.native.store import NativeStore
from inspector.usage.graph import PieceCache
from inspector.humanize import plural

Progress = Callable[[str], None]
GC_BATCH = min(2000, prune_sql.ID_BATCH)


def _cache(store: NativeStore) -> PieceCache:
    return PieceCache(lambda digests: usage_sql.read_pieces(store, digests))


def reachable(cache: PieceCache, roots: Iterable[bytes], into: set[bytes] | None = None) -> set[bytes]:
    """Every piece the roots reach (added to ``into``)."""
    seen = set() if into is None else into
    frontier = [d for d in set(roots) if d not in seen]
    while frontier:
        cache.load(frontier)
        seen.update(frontier)
        frontier = list({c for d in frontier for c in cache.children[d] if c not in seen})
    return seen


class Collected(NamedTuple):
    """What a piece collection did: pieces and stored bytes deleted, and why it stopped short."""

    pieces: int
    content: int
    note: str | None = None


def unsure(damaged: int, unread: int, done: bool = True) -> str | None:
    """Why a mark cannot tell which pieces the checkpoints still reach (then nothing may be
    collected: a piece only a damaged row names may be what a repair needs), or None;
    ``done``: said of a collection that ran (else of a dry run)."""
    verb = "were not" if done else "would not be"
    if damaged:
        one = damaged == 1
        return (f"Unreferenced pieces {verb} collected: {plural(damaged, 'reference')} from checkpoints to "
                f"their state {'is' if one else 'are'} damaged (not a digest), so what {'it' if one else 'they'} "
                f"still {'reaches' if one else 'reach'} cannot be known. The checkpoints holding "
                f"{'it show' if one else 'them show'} as damaged; delete their runs, then prune again.")
    if unread:
        one = unread == 1
        return (f"Unreferenced pieces {verb} collected: {plural(unread, 'piece')} the checkpoints reach "
                f"could not be read (a damaged row), so what {'it reaches' if one else 'they reach'} "
                "in turn cannot be known.")
    return None


def _unread(conn: Any, cache: PieceCache) -> int:
    """Pieces the mark reached whose rows exist but could not be read."""
    return usage_sql.stored_among(conn, cache.missing) if cache.missing else 0


def _grouped(found: list[Candidate]) -> dict[str, list[int]]:
    by_run: dict[str, list[int]] = {}
    for cand in found:
        by_run.setdefault(cand.run_id, []).append(cand.id)
    return by_run


def plan(store: NativeStore, rules: Rules, *, pieces: bool = True) -> PrunePlan:
    """What ``apply`` would remove now, and the bytes it would free (changes nothing)."""
    engine, display = store.engine, store.info.display
    with guard(display), engine.connect() as conn:
        found = list(prune_sql.candidates(conn, rules))
        protected = prune_sql.protected_counts(conn, rules)
    by_run = _grouped(found)
    total, _logical = usage_sql.checkpoint_totals(store)
    disk = usage_sql.disk_usage(store)
    rows_total = disk.tables.get("ci_checkpoints") or 160 * total
    rows_bytes = int(rows_total * len(found) / total) if total else 0
    content, count = 0, 0
    notes: tuple[str, ...] = ()
    if pieces and found:
        doomed: dict[bytes, int] = {}
        for cand in found:
            for digest in (cand.state_hash, cand.tasks_hash):
                if isinstance(digest, BINARY) and digest:   # (a damaged row's text hash names no piece)
                    doomed[bytes(digest)] = doomed.get(bytes(digest), 0) + 1
        with guard(display), engine.connect() as conn:
            counts, damaged = prune_sql.root_counts(conn)
        roots = {d for d, n in counts.items() if n > doomed.get(d, 0)}   # still referred to afterwards
        cache = _cache(store)
        keep = reachable(cache, roots)
        with guard(display), engine.connect() as conn:
            why = unsure(damaged, _unread(conn, cache), done=False)
            if why:
                notes = (why,)
            else:
                for digest, size in usage_sql.all_piece_sizes(conn):
                    if digest not in keep:
                        content += size
                        count += 1
    runs = {r.id: r for r in usage_sql.list_runs(store)}
    plans = tuple(RunPlan(run=rid, name=runs[rid].name if rid in runs else rid,
                          status=runs[rid].status if rid in runs else "", remove=len(ids),
                          keep=max((runs[rid].checkpoint_count if rid in runs else 0) - len(ids), 0))
                  for rid, ids in sorted(by_run.items(), key=lambda kv: -len(kv[1])))
    return PrunePlan(store=display, kind="native", runs=plans, remove_checkpoints=len(found),
                     total_checkpoints=total, rows_bytes=rows_bytes, content_bytes=content, pieces=count,
                     protected=protected, disk_before=disk.total_bytes, notes=notes)


def apply(store: NativeStore, rules: Rules, *, vacuum: bool = False, progress: Progress | None = None) -> PrunePlan:
    """Prune ``store`` (opened for writing): delete what the rules select and nothing protects,
    collect the pieces no checkpoint reaches, optionally VACUUM. Returns what was done."""
    say = progress or (lambda _text: None)
    # reads go through a read-only engine: on SQLite a writable engine's every transaction
    # takes the write lock (BEGIN IMMEDIATE), which would stall the agents writing meanwhile
    reader = NativeStore(make_engine(store.target, readonly=True), store.target, read_only=True)
    try:
        return _apply(store, reader, rules, vacuum, say)
    finally:
        reader.close()


def _apply(store: NativeStore, reader: NativeStore, rules: Rules, vacuum: bool, say: Progress) -> PrunePlan:
    engine, display = store.engine, store.info.display
    before = usage_sql.disk_usage(reader).total_bytes
    with guard(display), engine.begin() as conn:
        pin_sql.ensure_table(conn)          # a writer may add the table (see FORMAT.md)
    with guard(display), reader.engine.connect() as conn:
        found = list(prune_sql.candidates(conn, rules))
        protected = prune_sql.protected_counts(conn, rules)     # said as the dry run says it
    total, _ = usage_sql.checkpoint_totals(reader)
    rows_total = usage_sql.disk_usage(reader).tables.get("ci_checkpoints") or 160 * total
    by_run = _grouped(found)
    runs = {r.id: r for r in usage_sql.list_runs(reader)}
    deleted = 0
    removed: dict[str, int] = {}
    batch_runs: list[str] = []
    batch_ids: list[int] = []

    def flush() -> None:
        nonlocal deleted, batch_runs, batch_ids
        if not batch_ids:
            return
        with guard(display), engine.begin() as conn:
            prune_sql.begin_exclusive(conn, "ci_runs")
            n = prune_sql.delete_checkpoints(conn, batch_runs, batch_ids)
        deleted += n
        say(f"removed {deleted:,} of {len(found):,} checkpoints")
        batch_runs, batch_ids = [], []

    for run_id, ids in by_run.items():
        if batch_ids and len(batch_ids) + len(ids) > prune_sql.ID_BATCH:
            flush()
        batch_runs.append(run_id)
        batch_ids.extend(ids)
        removed[run_id] = len(ids)
    flush()
    pieces, content, unsure_why = collect_pieces(store, reader, say)
    if vacuum:
        say("vacuuming")
        with guard(display):
            prune_sql.vacuum(engine)
    after = usage_sql.disk_usage(reader).total_bytes
    plans = tuple(RunPlan(run=rid, name=runs[rid].name if rid in runs else rid,
                          status=runs[rid].status if rid in runs else "", remove=n,
                          keep=max((runs[rid].checkpoint_count if rid in runs else 0) - n, 0))
                  for rid, n in sorted(removed.items(), key=lambda kv: -kv[1]))
    notes: tuple[str, ...] = () if deleted == len(found) else (
        f"{plural(len(found) - deleted, 'selected checkpoint')} became protected while pruning and "
        f"{'was' if len(found) - deleted == 1 else 'were'} kept.",)
    notes += (unsure_why,) if unsure_why else ()
    return PrunePlan(store=display, kind="native", runs=plans, remove_checkpoints=deleted, total_checkpoints=total,
                     rows_bytes=int(rows_total * deleted / total) if total else 0, content_bytes=content,
                     pieces=pieces, protected=protected, applied=True, disk_before=before, disk_after=after,
                     notes=notes)


def collect_pieces(store: NativeStore, reader: NativeStore, say: Progress) -> Collected:
    """Delete the pieces no checkpoint reaches: how many, their stored bytes, and why nothing
    (more) was collected when a damaged row makes what is reached unknowable.

    The mark reads while writers go on; each sweep transaction holds the write lock, first
    walks the checkpoints committed since the mark, then deletes only what is still garbage.
    """
    engine, display = store.engine, store.info.display
    cache = _cache(reader)
    with guard(display), reader.engine.connect() as conn:
        roots, mark, damaged = usage_sql.distinct_roots(conn)
    keep = reachable(cache, roots)
    with guard(display), reader.engine.connect() as conn:
        why = unsure(damaged, _unread(conn, cache))
        if why:
            return Collected(0, 0, why)
        sizes = {d: n for d, n in usage_sql.all_piece_sizes(conn) if d not in keep}
    garbage = sorted(sizes)
    gone, freed = 0, 0
    for start in range(0, len(garbage), GC_BATCH):
        with guard(display), engine.begin() as conn:
            prune_sql.begin_exclusive(conn, "ci_checkpoints", "ci_blobs")
            new_roots, mark, damaged = usage_sql.distinct_roots(conn, mark)
            if new_roots:
                reachable(cache, new_roots, keep)
            why = unsure(damaged, _unread(conn, cache))
            if why:         # written since the mark: stop here (what is deleted was garbage)
                return Collected(gone, freed, why)
            part = [d for d in garbage[start:start + GC_BATCH] if d not in keep]
            gone += prune_sql.delete_pieces(conn, part)
        freed += sum(sizes[d] for d in part)
        say(f"collected {gone:,} of {len(garbage):,} unreferenced pieces")
    return Collected(gone, freed)
