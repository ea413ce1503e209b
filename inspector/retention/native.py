"""Pruning a native store: plan (a dry run), delete in short transactions, collect pieces.

Crash safety comes from the order and the size of the steps: checkpoints go first, a few
thousand per transaction, each transaction also renumbering its runs; pieces go after, in
transactions that first re-walk whatever checkpoints were added since the mark. A process
killed at any moment leaves committed transactions only, and a new prune finishes the work
(the piece collection always runs, whether or not checkpoints are left to delete).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Collection, Iterable
from typing import Any, NamedTuple

from inspector.retention.footprint import Layout
from inspector.retention.rules import PrunePlan, RunPlan
from inspector.store.columns import BINARY
from inspector.store.engine import guard, make_engine
from inspector.store.native import pins as pin_sql
from inspector.store.native import prune_sql, usage_sql
from inspector.store.native.prune_sql import Candidate, Describe, Rules
from inspector.store.native.store import NativeStore
from inspector.store.native.writer import STORE_CHANGED, notify
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
    """What a piece collection did: pieces deleted and the bytes they occupied, and why it stopped short."""

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


def plan(store: NativeStore, rules: Rules, *, ids: bool = False) -> PrunePlan:
    """What ``apply`` would remove now, and the bytes it would free (changes nothing); with
    ``ids``, also which checkpoints (``PrunePlan.chosen``: what ``apply(only=…)`` removes at
    most), counted from those same rows so that the numbers said are the ids kept."""
    chosen: array[int] | None = None
    with guard(store.info.display), store.engine.connect() as conn:
        if ids:
            chosen = array("q")
            counted: dict[tuple[Any, Any, Any], int] = {}
            for cand in prune_sql.candidates(conn, rules):
                chosen.append(cand.id)
                key = (cand.run_id, cand.state_hash, cand.tasks_hash)
                counted[key] = counted.get(key, 0) + 1
            groups = [(*key, n) for key, n in counted.items()]
        else:
            groups = prune_sql.candidate_groups(conn, rules)
        protected = prune_sql.protected_counts(conn, rules)
    by_run: dict[Any, int] = {}
    for run_id, _state, _tasks, n in groups:        # (by run, as the candidates come)
        by_run[run_id] = by_run.get(run_id, 0) + n
    freed = estimate(store, [(state, tasks) for _run, state, tasks, _n in groups], [n for *_g, n in groups])
    runs = {r.id: r for r in usage_sql.list_runs(store)}
    plans = tuple(RunPlan(run=rid, name=runs[rid].name if rid in runs else rid,
                          status=rules.shown_status(rid, runs[rid].status if rid in runs else ""), remove=count,
                          keep=max((runs[rid].checkpoint_count if rid in runs else 0) - count, 0))
                  for rid, count in sorted(by_run.items(), key=lambda kv: -kv[1]))
    return PrunePlan(store=store.info.display, kind="native", runs=plans, remove_checkpoints=sum(by_run.values()),
                     total_checkpoints=freed.total, rows_bytes=freed.rows_bytes, content_bytes=freed.content_bytes,
                     pieces=freed.pieces, protected=protected, disk_before=freed.disk_before,
                     wal_before=freed.wal_before, notes=freed.notes, chosen=chosen)


class Estimate(NamedTuple):
    """What deleting some checkpoints would free (then VACUUM gives it back to the disk)."""

    total: int                  # checkpoints in the store
    rows_bytes: int             # their rows
    content_bytes: int          # the pieces no other checkpoint reaches (what their rows occupy)
    pieces: int                 # how many such pieces
    disk_before: int
    wal_before: int
    notes: tuple[str, ...] = ()


def estimate(store: NativeStore, roots: list[tuple[Any, Any]], per_pair: list[int] | None = None) -> Estimate:
    """What deleting the checkpoints whose (state, task state) roots are ``roots`` would free
    (a prune's or a delete's dry run; changes nothing); ``per_pair``: how many checkpoints have
    each pair (one each when not given)."""
    engine, display = store.engine, store.info.display
    total, _logical = usage_sql.checkpoint_totals(store)
    disk = usage_sql.disk_usage(store)
    weights = per_pair if per_pair is not None else [1] * len(roots)
    rows_bytes = row_bytes(disk, total, sum(weights))
    if not roots:
        return Estimate(total, rows_bytes, 0, 0, disk.total_bytes, disk.wal_bytes)
    doomed: dict[bytes, int] = {}
    for pair, n in zip(roots, weights, strict=True):
        for digest in pair:
            if isinstance(digest, BINARY) and digest:   # (a damaged row's text hash names no piece)
                doomed[bytes(digest)] = doomed.get(bytes(digest), 0) + n
    with guard(display), engine.connect() as conn:
        counts, damaged = prune_sql.root_counts(conn)
    kept = {d for d, n in counts.items() if n > doomed.get(d, 0)}   # still referred to afterwards
    cache = _cache(store)
    keep = reachable(cache, kept)
    with guard(display), engine.connect() as conn:
        why = unsure(damaged, _unread(conn, cache), done=False)
        if why:
            return Estimate(total, rows_bytes, 0, 0, disk.total_bytes, disk.wal_bytes, (why,))
        pieces_now = layout(conn)
    garbage = [d for d in pieces_now.sizes if d not in keep]
    return Estimate(total, rows_bytes, pieces_now.freed(garbage, disk.tables.get("ci_blobs", 0)), len(garbage),
                    disk.total_bytes, disk.wal_bytes)


def row_bytes(disk: Any, total: int, count: int) -> int:
    """What ``count`` of the ``total`` checkpoint rows occupy (their share of the table and its
    index; ``disk``: ``usage_sql.disk_usage``)."""
    return int((disk.tables.get("ci_checkpoints") or 160 * total) * count / total) if total else 0


def apply(store: NativeStore, rules: Rules, *, vacuum: bool = False, progress: Progress | None = None,
          describe: Describe | None = None, only: Collection[int] | None = None) -> PrunePlan:
    """Prune ``store`` (opened for writing): delete what the rules select and nothing protects
    (saying anew each kept checkpoint whose parent went, see ``prune_sql.renumber``), collect
    the pieces no checkpoint reaches, optionally VACUUM. Returns what was done.

    ``only``: the ids a preview listed (``plan(ids=True)``), which the user confirmed: of what
    the rules select now, only those go. The store may have changed since (a run finished, a
    checkpoint was pinned, another prune ran): the notes say what was left, and why."""
    say = progress or (lambda _text: None)
    # reads go through a read-only engine: on SQLite a writable engine's every transaction
    # takes the write lock (BEGIN IMMEDIATE), which would stall the agents writing meanwhile
    reader = NativeStore(make_engine(store.target, readonly=True), store.target, read_only=True)
    try:
        return _apply(store, reader, rules, vacuum, say, describe, only)
    finally:
        reader.close()


def previewed(found: list[Candidate], only: Collection[int]) -> tuple[list[Candidate], tuple[str, ...]]:
    """Of the checkpoints the rules select now, those the preview listed (``only``), and what
    the store's changes since the preview left out, said (nothing when it did not change)."""
    wanted = set(only)
    kept = [c for c in found if c.id in wanted]
    return kept, changed_notes(len(wanted) - len(kept), len(found) - len(kept))


def changed_notes(gone: int, more: int) -> tuple[str, ...]:
    """What a prune confirmed after a preview left, said: ``gone`` previewed checkpoints no
    longer selected (protected now, or deleted meanwhile), ``more`` selected now that the
    preview did not list."""
    notes: tuple[str, ...] = ()
    if gone:
        notes += (f"{plural(gone, 'previewed checkpoint')} {'was' if gone == 1 else 'were'} kept: the store "
                  "changed since the preview (protected now, or no longer there).",)
    if more:
        notes += (f"{plural(more, 'more checkpoint')} that the rules select now {'was' if more == 1 else 'were'} "
                  "not in the preview and stayed; press Preview to see what would go now.",)
    return notes


def _apply(store: NativeStore, reader: NativeStore, rules: Rules, vacuum: bool, say: Progress,
           describe: Describe | None, only: Collection[int] | None) -> PrunePlan:
    engine, display = store.engine, store.info.display
    disk_before = usage_sql.disk_usage(reader)
    with guard(display), engine.begin() as conn:
        pin_sql.ensure_table(conn)          # a writer may add the table (see FORMAT.md)
    with guard(display), reader.engine.connect() as conn:
        found = list(prune_sql.candidates(conn, rules))
        protected = prune_sql.protected_counts(conn, rules)     # said as the dry run says it
    changed: tuple[str, ...] = ()
    if only is not None:
        found, changed = previewed(found, only)
    total, _ = usage_sql.checkpoint_totals(reader)
    disk = usage_sql.disk_usage(reader)
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
            n = prune_sql.delete_checkpoints(conn, rules, batch_runs, batch_ids, describe)
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
        if engine.dialect.name == "postgresql":     # the store's size changed: tell its windows
            with guard(display), engine.begin() as conn:
                notify(conn, (STORE_CHANGED,))
    after = usage_sql.disk_usage(reader)
    plans = tuple(RunPlan(run=rid, name=runs[rid].name if rid in runs else rid,
                          status=rules.shown_status(rid, runs[rid].status if rid in runs else ""), remove=n,
                          keep=max((runs[rid].checkpoint_count if rid in runs else 0) - n, 0))
                  for rid, n in sorted(removed.items(), key=lambda kv: -kv[1]))
    notes: tuple[str, ...] = () if deleted == len(found) else (
        f"{plural(len(found) - deleted, 'selected checkpoint')} became protected while pruning and "
        f"{'was' if len(found) - deleted == 1 else 'were'} kept.",)
    notes += changed + ((unsure_why,) if unsure_why else ())
    return PrunePlan(store=display, kind="native", runs=plans, remove_checkpoints=deleted, total_checkpoints=total,
                     rows_bytes=row_bytes(disk, total, deleted), content_bytes=content,
                     pieces=pieces, protected=protected, applied=True, disk_before=disk_before.total_bytes,
                     wal_before=disk_before.wal_bytes, disk_after=after.total_bytes, wal_after=after.wal_bytes,
                     notes=notes)


def collect_pieces(store: NativeStore, reader: NativeStore, say: Progress) -> Collected:
    """Delete the pieces no checkpoint reaches: how many, what their rows occupied
    (``footprint``), and why nothing (more) was collected when a damaged row makes what is
    reached unknowable.

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
        pieces_now = layout(conn)
    garbage = sorted(d for d in pieces_now.sizes if d not in keep)
    gone: list[bytes] = []
    count = 0
    relation = usage_sql.disk_usage(reader).tables.get("ci_blobs", 0) if pieces_now.page_size is None else 0
    for start in range(0, len(garbage), GC_BATCH):
        with guard(display), engine.begin() as conn:
            prune_sql.begin_exclusive(conn, "ci_checkpoints", "ci_blobs")
            new_roots, mark, damaged = usage_sql.distinct_roots(conn, mark)
            if new_roots:
                reachable(cache, new_roots, keep)
            why = unsure(damaged, _unread(conn, cache))
            if why:         # written since the mark: stop here (what is deleted was garbage)
                return Collected(count, pieces_now.freed(gone, relation), why)
            part = [d for d in garbage[start:start + GC_BATCH] if d not in keep]
            went = prune_sql.delete_pieces(conn, part)
        gone += went        # (a piece another prune or delete collected first is not counted here)
        count += len(went)
        say(f"collected {count:,} of {len(garbage):,} unreferenced pieces")
    return Collected(count, pieces_now.freed(gone, relation))


def layout(conn: Any) -> Layout:
    """Every piece with what its row occupies (``footprint``)."""
    return Layout(prune_sql.piece_rows(conn), prune_sql.page_size(conn))
