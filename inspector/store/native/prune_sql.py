"""SQL of retention on a native store: which checkpoints rules select, which are protected,
and the deleting transactions (policy and orchestration: ``inspector.retention``).

Protection is part of every DELETE statement, not only of the plan: a run that turned live,
a checkpoint pinned or forked from after the plan was made, is still never deleted. A
checkpoint kept after deleted ones is said anew against the one kept before it (its ops,
size_delta and change), in the same transaction. On
SQLite each transaction starts with ``BEGIN IMMEDIATE`` (writers wait for it, readers do not);
on PostgreSQL it locks ``ci_runs`` (and, while collecting pieces, ``ci_checkpoints``) against
concurrent writers for its few milliseconds.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import sqlalchemy as sa

from inspector import codec
from inspector.codec import DIGEST_SIZE
from inspector.errors import CorruptDataError, StoreError
from inspector.model import ACTIVE_STATUSES
from inspector.store import engine as _engine
from inspector.store.columns import BINARY, as_int
from inspector.store.native import blobs, live
from inspector.store.native import pins as pin_sql
from inspector.store.native.schema import blobs as blob_table
from inspector.store.native.schema import checkpoints, pins, runs
from inspector.store.native.writer import STORE_CHANGED, notify

LG_LANES = "ci_lg_lanes"     # issue 19's LangGraph lanes: their own prune, never touched here
# checkpoints (and pieces) per deleting transaction; the crash tests make it small so that a
# kill lands between many transactions
ID_BATCH = max(1, int(os.environ.get("CHECKPOINT_INSPECTOR_PRUNE_BATCH", "5000") or 5000))


@dataclass(frozen=True)
class Rules:
    """What a prune selects (every given rule must hold; runs/statuses restrict the runs)."""

    keep_last: int | None = None          # keep the N most recent checkpoints of each run
    older_than: float | None = None       # only checkpoints created before this time (epoch seconds)
    runs: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()        # as the app shows them (``shown``), not only as stored
    # (run id, status shown, epoch) of the active runs shown with another status than the stored
    # one (crashed, stuck): the caller's diagnosis (``inspector.retention.api``), not user input
    shown: tuple[tuple[str, str, int], ...] = ()

    def shown_status(self, run_id: str, stored: str) -> str:
        """The status the app shows for a run stored with status ``stored``."""
        return next((status for rid, status, _ in self.shown if rid == run_id), stored)

    @property
    def dead(self) -> list[tuple[str, int]]:
        """(run id, epoch) of the runs shown crashed: their owner is gone, so they are not live
        while that epoch owns them (a resume takes a new one, and the run is live again)."""
        return [(rid, epoch) for rid, status, epoch in self.shown if status == "crashed"]


# what changed from one state to the next, as the recording library says it: (parent's top
# form, top form, their top-level list lengths, parent's task state, task state) -> one line
# (``inspector.record.summary.summarize``, a layer above)
Describe = Callable[[Any, Any, dict, dict, Any, Any], str]


class Candidate(NamedTuple):
    """A checkpoint the rules select and nothing protects."""

    id: int
    run_id: str
    seq: int
    created: float
    state_hash: bytes
    tasks_hash: bytes | None


def _selected(rules: Rules) -> list[sa.ColumnElement]:
    c, r = checkpoints.c, runs.c
    where: list[sa.ColumnElement] = [r.id == c.run_id]
    if rules.runs:
        where.append(r.id.in_(list(rules.runs)))
    if rules.statuses:
        stored: sa.ColumnElement = r.status.in_(list(rules.statuses))
        if rules.shown:     # a run shown crashed is selected by "crashed", not by its stored "running"
            stored = sa.or_(sa.and_(stored, r.id.not_in([rid for rid, _, _ in rules.shown])),
                            r.id.in_([rid for rid, status, _ in rules.shown if status in rules.statuses]))
        where.append(stored)
    if rules.keep_last is not None:
        where.append(c.seq <= r.head_seq - rules.keep_last)
    if rules.older_than is not None:
        where.append(c.created < rules.older_than)
    return where


def protections(conn: sa.Connection, rules: Rules) -> dict[str, sa.ColumnElement]:
    """Reason -> condition under which a checkpoint (``ci_checkpoints`` joined with its run) is
    protected. Tables that the store does not have protect nothing."""
    c, r = checkpoints.c, runs.c
    fork = runs.alias("fork")
    origin = checkpoints.alias("origin")
    live: sa.ColumnElement = r.status.in_(ACTIVE_STATUSES)
    if rules.dead:
        live = sa.and_(live, sa.not_(sa.tuple_(r.id, r.epoch).in_(rules.dead)))
    out: dict[str, sa.ColumnElement] = {
        "live run": live,
        "head": c.seq == r.head_seq,
        "fork origin or its ancestor": sa.exists().where(
            fork.c.parent_run == c.run_id, origin.c.id == fork.c.parent_checkpoint, origin.c.seq >= c.seq),
    }
    if pin_sql.table_exists(conn):
        out["pinned"] = sa.exists().where(pins.c.checkpoint_id == c.id)
    if pin_sql.table_exists(conn, LG_LANES):
        lanes = sa.table(LG_LANES, sa.column("run_id"))
        out["LangGraph lane"] = sa.exists().where(lanes.c.run_id == c.run_id)
    return out


def _unprotected(conn: sa.Connection, rules: Rules) -> sa.ColumnElement:
    return sa.not_(sa.or_(*protections(conn, rules).values()))


def candidates(conn: sa.Connection, rules: Rules) -> Iterator[Candidate]:
    """Every checkpoint the rules select and nothing protects, by run and seq (streamed)."""
    c = checkpoints.c
    stmt = (sa.select(c.id, c.run_id, c.seq, c.created, c.state_hash, c.tasks_hash)
            .select_from(checkpoints.join(runs, runs.c.id == c.run_id))
            .where(*_selected(rules), _unprotected(conn, rules)).order_by(c.run_id, c.seq))
    # a run's rows (by seq) repeat its id and mostly their neighbour's hashes: each row takes
    # the previous one's objects when equal (a million candidates held 414 MB, half of it copies)
    run: Any = None
    state: Any = None
    tasks: Any = None
    for cid, run_id, seq, created, state_hash, tasks_hash in _plain(conn, stmt):
        run = run if run_id == run else run_id
        state = state if state_hash == state else state_hash
        tasks = tasks if tasks_hash == tasks else tasks_hash
        yield Candidate(cid, run, seq, created, state, tasks)


def candidate_groups(conn: sa.Connection, rules: Rules) -> list[tuple[Any, Any, Any, int]]:
    """``candidates`` counted by (run, state hash, task-state hash), by run: what a dry run
    says (how many a run loses, which roots go), without a row each (a million candidates
    took 4.5 s and 264 MB as rows)."""
    c = checkpoints.c
    stmt = (sa.select(c.run_id, c.state_hash, c.tasks_hash, sa.func.count())
            .select_from(checkpoints.join(runs, runs.c.id == c.run_id))
            .where(*_selected(rules), _unprotected(conn, rules))
            .group_by(c.run_id, c.state_hash, c.tasks_hash).order_by(c.run_id))
    return [(run_id, state, tasks, int(n)) for run_id, state, tasks, n in _plain(conn, stmt)]


def _plain(conn: sa.Connection, stmt: sa.Select) -> Iterator[tuple]:
    """The rows of ``stmt`` as the driver's plain tuples, fetched ``ID_BATCH`` at a time on
    the connection's own cursor (in its transaction): hundreds of thousands of rows, where
    a SQLAlchemy row each costs seconds."""
    compiled = stmt.compile(dialect=conn.dialect, compile_kwargs={"render_postcompile": True})
    dbapi = conn.connection.dbapi_connection
    assert dbapi is not None
    cur = dbapi.cursor()
    try:
        params = compiled.construct_params()
        cur.execute(compiled.string, tuple(params[k] for k in compiled.positiontup or ()) if conn.dialect.positional
                    else params)
        while True:
            rows = cur.fetchmany(ID_BATCH)
            if not rows:
                return
            yield from rows
    finally:
        cur.close()


def protected_counts(conn: sa.Connection, rules: Rules) -> dict[str, int]:
    """How many checkpoints the rules select that each protection keeps (one may count twice),
    counted in one pass."""
    found = protections(conn, rules)
    stmt = (sa.select(*[sa.func.coalesce(sa.func.sum(sa.case((cond, 1), else_=0)), 0) for cond in found.values()])
            .select_from(checkpoints.join(runs, runs.c.id == checkpoints.c.run_id)).where(*_selected(rules)))
    row = conn.execute(stmt).one()
    return {reason: int(n or 0) for reason, n in zip(found, row)}


def root_counts(conn: sa.Connection) -> tuple[dict[bytes, int], int]:
    """How many checkpoints refer to each state and task-state root, and how many distinct
    roots are damaged (text, a number or bytes of another length: a row that names no piece
    one can tell)."""
    c = checkpoints.c
    out: dict[bytes, int] = {}
    damaged = 0
    for column in (c.state_hash, c.tasks_hash):
        for digest, n in conn.execute(sa.select(column, sa.func.count()).where(column.is_not(None)).group_by(column)):
            if isinstance(digest, BINARY) and len(digest) == DIGEST_SIZE:
                key = bytes(digest)
                out[key] = out.get(key, 0) + int(n)
            else:
                damaged += 1
    return out, damaged


def run_roots(conn: sa.Connection, run_ids: Sequence[str]) -> list[tuple[Any, Any]]:
    """The (state, task state) roots of every checkpoint of these runs."""
    c = checkpoints.c
    out: list[tuple[Any, Any]] = []
    for start in range(0, len(run_ids), ID_BATCH):
        out += [(r[0], r[1]) for r in conn.execute(sa.select(c.state_hash, c.tasks_hash)
                                                   .where(c.run_id.in_(list(run_ids[start:start + ID_BATCH]))))]
    return out


def begin_exclusive(conn: sa.Connection, *tables: str) -> None:
    """Take the write lock this transaction needs against concurrent writers."""
    if conn.dialect.name == "postgresql":
        for table in tables:
            conn.exec_driver_sql(f"LOCK TABLE {table} IN SHARE ROW EXCLUSIVE MODE")


def delete_checkpoints(conn: sa.Connection, rules: Rules, run_ids: Collection[str], ids: Sequence[int],
                       describe: Describe | None = None) -> int:
    """Delete these checkpoints unless protected now, renumber the runs' survivors, fix their
    parents and counts, and say anew each survivor whose parent went (``renumber``; its change
    only with ``describe``); returns how many were deleted (inside the caller's transaction,
    which tells PostgreSQL listeners of each run that lost checkpoints when it commits).

    The runs' rows are read once, each with whether it is protected now, and every write is
    one statement per table for the whole batch (a statement per run, or an IN list of
    thousands of ids that SQLAlchemy expands, cost a prune of a million checkpoints most of
    its time)."""
    wanted = set(ids)
    before = _rows(conn, rules, list(dict.fromkeys(run_ids)))      # with the ops of what goes
    gone = [row[0] for rows in before.values() for row in rows if row[7] and row[0] in wanted]
    if not gone:
        return 0
    doomed = set(gone)
    if pin_sql.table_exists(conn):      # (pins are few: an IN list of the pinned ones alone)
        pin_sql.delete_for(conn, [r[0] for r in conn.execute(sa.select(pins.c.checkpoint_id)) if r[0] in doomed])
    _delete_ids(conn, "ci_checkpoints", "id", gone)
    live.note_removal(conn)
    notify(conn, [run_id for run_id, rows in before.items() if any(row[0] in doomed for row in rows)])
    renumber(conn, [(run_id, *_kept(rows, doomed)) for run_id, rows in before.items()], describe)
    return len(gone)


def _delete_ids(conn: sa.Connection, table: str, column: str, ids: Sequence[int]) -> None:
    """DELETE the rows whose ``column`` is one of ``ids``, in statements of ``ID_BATCH`` ids
    given to the driver as they are (no IN list for SQLAlchemy to expand)."""
    for start in range(0, len(ids), ID_BATCH):
        part = [int(i) for i in ids[start:start + ID_BATCH]]
        if conn.dialect.name == "postgresql":
            conn.exec_driver_sql(f"DELETE FROM {table} WHERE {column} = ANY(%s)", (part,))
        else:
            conn.exec_driver_sql(f"DELETE FROM {table} WHERE {column} IN ({', '.join('?' * len(part))})",
                                 tuple(part))


class _Row(NamedTuple):
    """What renumbering and saying a kept checkpoint anew need of a checkpoint row."""

    id: int
    seq: int
    parent_id: int | None
    ops: int
    size: int
    state_hash: Any
    tasks_hash: Any


def _rows(conn: sa.Connection, rules: Rules, run_ids: list[str]) -> dict[str, list[tuple]]:
    """Every row of these runs by seq, as ``_Row`` fields and whether nothing protects it now
    (each run listed, rows or not)."""
    c = checkpoints.c
    out: dict[str, list[tuple]] = {run_id: [] for run_id in run_ids}
    free = sa.case((_unprotected(conn, rules), 1), else_=0)
    for start in range(0, len(run_ids), ID_BATCH):
        stmt = (sa.select(c.run_id, c.id, c.seq, c.parent_id, c.ops, c.size, c.state_hash, c.tasks_hash, free)
                .select_from(checkpoints.join(runs, runs.c.id == c.run_id))
                .where(c.run_id.in_(run_ids[start:start + ID_BATCH])).order_by(c.run_id, c.seq))
        for r in _plain(conn, stmt):
            out[r[0]].append(r[1:])
    return out


def _kept(rows: list[tuple], gone: set[int]) -> tuple[list[_Row], dict[int, int]]:
    """A run's rows (``_rows``) that stay, and kept checkpoint id -> the ops of the deleted
    checkpoints just before it (a run's last ones are never deleted: its head is kept)."""
    kept: list[_Row] = []
    skipped: dict[int, int] = {}
    ops = 0
    for row in rows:
        if row[0] in gone:
            ops += max(0, as_int(row[3]))
            continue
        kept.append(_Row._make(row[:7]))
        if ops:
            skipped[row[0]], ops = ops, 0
    return kept, skipped


def renumber(conn: sa.Connection, kept: Sequence[tuple[str, list[_Row], dict[int, int]]],
             describe: Describe | None) -> None:
    """Give each run's kept checkpoints (``kept``: run id, its rows by seq, and ``skipped``)
    seqs 0.. without gaps again (ids never change), point each at the one before it, and
    set the run's head and count.

    A checkpoint whose parent went (in ``skipped``: the ops of the deleted ones before it) is
    said as a save right after its new parent would have said it: its ops count theirs too
    (what a resume from that parent replays), size_delta and change are measured from that
    parent (a first checkpoint has no change, as a run's first save has none).
    """
    c = checkpoints.c
    moved: list[tuple[int, int, int | None]] = []
    redone: list[dict[str, Any]] = []
    for _run_id, rows, skipped in kept:
        previous: _Row | None = None
        for n, row in enumerate(rows):
            parent = previous.id if previous else None
            if row.seq != n or row.parent_id != parent:
                moved.append((row.id, n, parent))
            if row.id in skipped:
                change = (_change(conn, previous, row, describe) if previous else "") if describe else None
                redone.append({"cid": row.id, "n_ops": max(0, as_int(row.ops)) + skipped[row.id],
                               "delta": as_int(row.size) - (as_int(previous.size) if previous else 0),
                               "said": change})
            previous = row
    if moved:
        # two steps: a seq may only move down, but the unique (run_id, seq) index is checked per row
        conn.execute(checkpoints.update().where(c.id == sa.bindparam("cid")).values(seq=sa.bindparam("tmp")),
                     [{"cid": cid, "tmp": -1 - n} for cid, n, _ in moved])
        conn.execute(checkpoints.update().where(c.id == sa.bindparam("cid"))
                     .values(seq=sa.bindparam("new"), parent_id=sa.bindparam("par")),
                     [{"cid": cid, "new": n, "par": par} for cid, n, par in moved])
    for said in (False, True):      # (without ``describe`` a change is left as it was)
        part = [v for v in redone if (v["said"] is not None) == said]
        if part:
            values: dict[str, Any] = {"ops": sa.bindparam("n_ops"), "size_delta": sa.bindparam("delta"),
                                      **({"change": sa.bindparam("said")} if said else {})}
            conn.execute(checkpoints.update().where(c.id == sa.bindparam("cid")).values(**values),
                         [v if said else {k: x for k, x in v.items() if k != "said"} for v in part])
    if kept:
        conn.execute(runs.update().where(runs.c.id == sa.bindparam("rid"))
                     .values(head_seq=sa.bindparam("head"), checkpoint_count=sa.bindparam("count")),
                     [{"rid": run_id, "head": len(rows) - 1, "count": len(rows)} for run_id, rows, _ in kept])


def _change(conn: sa.Connection, parent: _Row, row: _Row, describe: Describe) -> str:
    """What changed from ``parent`` to ``row``, read from their pieces as the writer compared
    its encodings (the root piece is the top form it wrote); '' when a piece cannot be read
    (a damaged row says nothing it could be wrong about)."""
    try:
        old, new = _piece(conn, parent.state_hash), _piece(conn, row.state_hash)
        return describe(old, new, _lengths(conn, old, new), _lengths(conn, new, old),
                        _tasks(conn, parent.tasks_hash), _tasks(conn, row.tasks_hash))
    except StoreError:
        return ""


def _piece(conn: sa.Connection, digest: Any) -> Any:
    """One piece decoded, markers kept; CorruptDataError when missing or damaged."""
    b = blob_table.c
    found = conn.execute(sa.select(b.codec, b.size, b.data).where(b.hash == digest)).first() \
        if isinstance(digest, BINARY) else None
    if found is None:
        raise CorruptDataError("A stored piece is missing (the store is damaged).")
    raw = blobs.decompress(as_int(found[0]), found[2], found[1])
    if codec.digest_of(raw) != bytes(digest):
        raise CorruptDataError("A stored piece does not match its hash (the store is damaged).")
    return codec.unpack(raw)


def _tasks(conn: sa.Connection, digest: Any) -> Any:
    return None if digest is None else _piece(conn, digest)


def _lengths(conn: sa.Connection, form: Any, other: Any) -> dict:
    """The lengths of a top form's lists that ``other`` holds otherwise: those of
    ``summary.lengths`` that a summary reads (an unchanged value's length is never read; a
    top-level map of 64 keys or more is a ChunkedMap, no dict, and needs none)."""
    if not isinstance(form, dict) or not isinstance(other, dict):
        return {}
    out = {}
    for key, value in form.items():
        if key not in other or other[key] == value:
            continue
        if isinstance(value, codec.Ref):    # a list of a few big items is a piece of its own
            value = _piece(conn, value.digest)
        if isinstance(value, list):
            out[key] = len(value)
        elif isinstance(value, codec.ChunkedList):
            out[key] = value.length
    return out


def piece_rows(conn: sa.Connection) -> Iterator[tuple[Any, int, int, int]]:
    """(digest, rowid, raw size, stored bytes) of every piece, streamed; on SQLite in rowid
    order, the order VACUUM writes them in (PostgreSQL has no rowid: 0)."""
    b = blob_table.c
    sqlite = conn.dialect.name == "sqlite"
    rowid: sa.ColumnElement = sa.literal_column("rowid") if sqlite else sa.literal(0)
    stmt = sa.select(b.hash, rowid, b.size, sa.func.length(b.data))
    result = conn.execution_options(stream_results=True, yield_per=20_000).execute(
        stmt.order_by(sa.literal_column("rowid")) if sqlite else stmt)
    for row in result:
        yield row[0], row[1], row[2], row[3]


def page_size(conn: sa.Connection) -> int | None:
    """A SQLite file's page size (None on PostgreSQL)."""
    if conn.dialect.name != "sqlite":
        return None
    return as_int(conn.exec_driver_sql("PRAGMA page_size").scalar()) or None


def delete_pieces(conn: sa.Connection, digests: Sequence[bytes]) -> list[bytes]:
    """Delete these pieces (the caller checked that nothing reaches them); the digests of those
    that went (not those another prune or delete collected first: what was freed is theirs)."""
    gone: list[bytes] = []
    for start in range(0, len(digests), ID_BATCH):
        part = list(digests[start:start + ID_BATCH])
        gone += [bytes(r[0]) for r in conn.execute(blob_table.delete().where(blob_table.c.hash.in_(part))
                                                   .returning(blob_table.c.hash))]
    if gone:        # the store's size changed: a window's totals follow it
        notify(conn, (STORE_CHANGED,))
    return gone


def vacuum(engine: sa.Engine) -> None:
    """Give free space back to the operating system (SQLite VACUUM; PostgreSQL VACUUM FULL of
    the two big tables, which locks them while it runs). Runs outside any transaction."""
    _engine.vacuum(engine, ("ci_checkpoints", "ci_blobs"))
