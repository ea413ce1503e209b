"""SQL of retention on a native store: which checkpoints rules select, which are protected,
and the deleting transactions (policy and orchestration: ``inspector.retention``).

Protection is part of every DELETE statement, not only of the plan: a run that turned live,
a checkpoint pinned or forked from after the plan was made, is still never deleted. On
SQLite each transaction starts with ``BEGIN IMMEDIATE`` (writers wait for it, readers do not);
on PostgreSQL it locks ``ci_runs`` (and, while collecting pieces, ``ci_checkpoints``) against
concurrent writers for its few milliseconds.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import sqlalchemy as sa

from inspector.codec import DIGEST_SIZE
from inspector.store import engine as _engine
from inspector.store.columns import BINARY
from inspector.store.native import live
from inspector.store.native import pins as pin_sql
from inspector.store.native.schema import blobs as blob_table
from inspector.store.native.schema import checkpoints, pins, runs

LIVE_STATUS = "running"
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
    statuses: tuple[str, ...] = ()


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
        where.append(r.status.in_(list(rules.statuses)))
    if rules.keep_last is not None:
        where.append(c.seq <= r.head_seq - rules.keep_last)
    if rules.older_than is not None:
        where.append(c.created < rules.older_than)
    return where


def protections(conn: sa.Connection) -> dict[str, sa.ColumnElement]:
    """Reason -> condition under which a checkpoint (``ci_checkpoints`` joined with its run) is
    protected. Tables that the store does not have protect nothing."""
    c, r = checkpoints.c, runs.c
    fork = runs.alias("fork")
    origin = checkpoints.alias("origin")
    out: dict[str, sa.ColumnElement] = {
        "live run": r.status == LIVE_STATUS,
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


def _unprotected(conn: sa.Connection) -> sa.ColumnElement:
    return sa.not_(sa.or_(*protections(conn).values()))


def candidates(conn: sa.Connection, rules: Rules) -> Iterator[Candidate]:
    """Every checkpoint the rules select and nothing protects, by run and seq (streamed)."""
    c = checkpoints.c
    stmt = (sa.select(c.id, c.run_id, c.seq, c.created, c.state_hash, c.tasks_hash)
            .select_from(checkpoints.join(runs, runs.c.id == c.run_id))
            .where(*_selected(rules), _unprotected(conn)).order_by(c.run_id, c.seq))
    compiled = stmt.compile(dialect=conn.dialect, compile_kwargs={"render_postcompile": True})
    dbapi = conn.connection.dbapi_connection
    assert dbapi is not None
    cur = dbapi.cursor()     # plain tuples: hundreds of thousands of rows
    try:
        params = compiled.construct_params()
        cur.execute(compiled.string, tuple(params[k] for k in compiled.positiontup or ()) if conn.dialect.positional
                    else params)
        make = Candidate._make
        while True:
            rows = cur.fetchmany(ID_BATCH)
            if not rows:
                return
            for row in rows:
                yield make(row)
    finally:
        cur.close()


def protected_counts(conn: sa.Connection, rules: Rules) -> dict[str, int]:
    """How many checkpoints the rules select that each protection keeps (one may count twice),
    counted in one pass."""
    found = protections(conn)
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


def begin_exclusive(conn: sa.Connection, *tables: str) -> None:
    """Take the write lock this transaction needs against concurrent writers."""
    if conn.dialect.name == "postgresql":
        for table in tables:
            conn.exec_driver_sql(f"LOCK TABLE {table} IN SHARE ROW EXCLUSIVE MODE")


def delete_checkpoints(conn: sa.Connection, run_ids: Collection[str], ids: Sequence[int]) -> int:
    """Delete these checkpoints unless protected now, renumber the runs' survivors and fix
    their parents and counts; returns how many were deleted (inside the caller's transaction)."""
    deleted = 0
    unprotected = _unprotected(conn)
    c = checkpoints.c
    for start in range(0, len(ids), ID_BATCH):
        part = list(ids[start:start + ID_BATCH])
        gone = [int(r[0]) for r in conn.execute(
            sa.select(c.id).select_from(checkpoints.join(runs, runs.c.id == c.run_id))
            .where(c.id.in_(part), unprotected))]
        if gone:
            pin_sql.delete_for(conn, gone)
            conn.execute(checkpoints.delete().where(c.id.in_(gone)))
            deleted += len(gone)
    if deleted:
        live.note_removal(conn)
        for run_id in run_ids:
            renumber(conn, run_id)
    return deleted


def renumber(conn: sa.Connection, run_id: str) -> None:
    """Give a run's checkpoints seqs 0.. without gaps again (ids never change), point each at
    the one before it, and set the run's head and count."""
    c = checkpoints.c
    rows = conn.execute(sa.select(c.id, c.seq, c.parent_id).where(c.run_id == run_id).order_by(c.seq)).all()
    moved: list[tuple[int, int, int | None]] = []
    previous: int | None = None
    for n, (cid, seq, parent) in enumerate(rows):
        if seq != n or parent != previous:
            moved.append((int(cid), n, previous))
        previous = int(cid)
    if moved:
        # two steps: a seq may only move down, but the unique (run_id, seq) index is checked per row
        conn.execute(checkpoints.update().where(c.id == sa.bindparam("cid")).values(seq=sa.bindparam("tmp")),
                     [{"cid": cid, "tmp": -1 - n} for cid, n, _ in moved])
        conn.execute(checkpoints.update().where(c.id == sa.bindparam("cid"))
                     .values(seq=sa.bindparam("new"), parent_id=sa.bindparam("par")),
                     [{"cid": cid, "new": n, "par": par} for cid, n, par in moved])
    conn.execute(runs.update().where(runs.c.id == run_id).values(head_seq=len(rows) - 1, checkpoint_count=len(rows)))


def piece_digests(conn: sa.Connection) -> list[bytes]:
    """Every piece's digest (16 bytes each: a million pieces is 16 MB)."""
    result = conn.execution_options(stream_results=True, yield_per=20_000).execute(sa.select(blob_table.c.hash))
    return [bytes(r[0]) for r in result if isinstance(r[0], BINARY)]   # (a number: no piece's digest)


def delete_pieces(conn: sa.Connection, digests: Sequence[bytes]) -> int:
    """Delete these pieces (the caller checked that nothing reaches them); how many went."""
    gone = 0
    for start in range(0, len(digests), ID_BATCH):
        part = list(digests[start:start + ID_BATCH])
        gone += conn.execute(blob_table.delete().where(blob_table.c.hash.in_(part))).rowcount or 0
    return gone


def vacuum(engine: sa.Engine) -> None:
    """Give free space back to the operating system (SQLite VACUUM; PostgreSQL VACUUM FULL of
    the two big tables, which locks them while it runs). Runs outside any transaction."""
    _engine.vacuum(engine, ("ci_checkpoints", "ci_blobs"))
