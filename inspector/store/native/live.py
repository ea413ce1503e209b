"""Live-update cursors of the native store that miss nothing when writers commit out of order.

On PostgreSQL, concurrent writers take checkpoint ids from a sequence when they insert but
commit in any order, so a reader may see id 105 while 104 is still in flight. A cursor that
only remembered "the highest id seen" would skip 104 forever. ``LiveCursor`` therefore also
remembers the *holes* below its highest id and asks for them again until they show up or
are old enough to be ids of rolled-back transactions. Run updates are tracked the same way:
runs updated within ``RUN_OVERLAP`` seconds of the newest update are remembered with their
``updated`` stamp, so a late-committing update (writers' clocks and commit order differ) is
still reported once, and an unchanged run is never reported twice.

Deletions leave no row to find, so every transaction that deletes runs or checkpoints (a
prune, a deleted LangGraph thread) also counts itself in ``ci_meta``'s ``removals``
(``note_removal``); a cursor remembers that count, and a change in it is reported as
``removed``: the runs shown may be gone and a pruned run's checkpoints are numbered anew.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any
from collections.abc import Sequence

import sqlalchemy as sa

from inspector.store.native.schema import checkpoints, meta, runs

HOLE_WINDOW = 10_000   # ids below the newest that are checked for gaps
HOLE_TTL = 120.0       # seconds a gap waits for a slow transaction before it is given up
RUN_OVERLAP = 5.0      # seconds of run updates re-read after a cursor (clock skew, commit order)
REMOVALS = "removals"  # ci_meta key: how many transactions deleted rows (see the module's text)


@dataclass(frozen=True)
class LiveCursor:
    """Opaque position in a native store's change stream."""

    last_id: int = 0
    last_upd: float = 0.0
    holes: tuple[tuple[int, float], ...] = ()          # (missing id, monotonic time first missed)
    runs_seen: frozenset[tuple[str, float]] | None = None  # (run id, updated) near last_upd
    removals: int | None = None     # the store's count of deleting transactions (None: unknown)


def as_cursor(value: Any) -> LiveCursor:
    """Accept a LiveCursor, the older ``(last_id, last_updated)`` tuple, or None."""
    if isinstance(value, LiveCursor):
        return value
    if isinstance(value, (tuple, list)) and len(value) >= 2:
        return LiveCursor(int(value[0] or 0), float(value[1] or 0.0))
    return LiveCursor()


def note_removal(conn: sa.Connection) -> None:
    """Count a transaction that deletes runs or checkpoints (call inside it): live readers
    then know that what they show may be gone."""
    insert: Any
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    bumped = sa.cast(sa.cast(meta.c.value, sa.BigInteger) + 1, sa.Text)
    conn.execute(insert(meta).values(key=REMOVALS, value="1").on_conflict_do_update(
        index_elements=[meta.c.key], set_={"value": bumped}))


def _removals(conn: sa.Connection) -> int:
    value = conn.execute(sa.select(meta.c.value).where(meta.c.key == REMOVALS)).scalar()
    try:
        return int(value or 0)
    except ValueError:      # a damaged value: counted as none, and a change in it still tells
        return -1


def _gaps(lo: int, hi: int, present: set[int]) -> list[int]:
    """Ids in (lo, hi] (only the top HOLE_WINDOW of them) that are not in ``present``."""
    start = max(lo, hi - HOLE_WINDOW)
    return [i for i in range(start + 1, hi + 1) if i not in present]


def _number(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _recent_runs(conn: sa.Connection, since: float) -> list:
    """Runs updated after ``since`` (rows whose time is not a number are damaged: skipped)."""
    rows = conn.execute(sa.select(runs.c.id, runs.c.updated).where(runs.c.updated > since))
    return [r for r in rows if isinstance(r.updated, (int, float)) and not isinstance(r.updated, bool)]


def _runs_seen(touched: Sequence, newest: float) -> frozenset[tuple[str, float]]:
    return frozenset((r.id, r.updated) for r in touched if r.updated > newest - RUN_OVERLAP)


def read_cursor(conn: sa.Connection) -> LiveCursor:
    """The current position, with the gaps just below it that may still fill in."""
    removals = _removals(conn)
    last_id = int(_number(conn.execute(sa.select(sa.func.max(checkpoints.c.id))).scalar()))
    last_upd = _number(conn.execute(sa.select(sa.func.max(runs.c.updated))
                                    .where(sa.func.typeof(runs.c.updated).in_(["real", "integer"])
                                           if conn.dialect.name == "sqlite" else sa.true())).scalar())
    recent = set(conn.execute(sa.select(checkpoints.c.id)
                              .where(checkpoints.c.id > last_id - HOLE_WINDOW)).scalars())
    now = time.monotonic()
    holes = tuple((i, now) for i in _gaps(0, last_id, recent))
    touched = _recent_runs(conn, last_upd - RUN_OVERLAP)
    return LiveCursor(last_id, last_upd, holes, _runs_seen(touched, last_upd), removals)


def read_changes(conn: sa.Connection, cursor: Any,
                 columns: Sequence[sa.ColumnElement]) -> tuple[list, set[str], bool, LiveCursor]:
    """New checkpoint rows (selecting ``columns``), ids of changed runs, whether rows were
    deleted since ``cursor``, and the next cursor."""
    cur = as_cursor(cursor)
    removals = _removals(conn)     # read first: a deletion committed after it is seen next time
    wanted = checkpoints.c.id > cur.last_id
    if cur.holes:
        wanted = sa.or_(wanted, checkpoints.c.id.in_([i for i, _ in cur.holes]))
    new = list(conn.execute(sa.select(*columns).where(wanted).order_by(checkpoints.c.id)))
    touched = _recent_runs(conn, cur.last_upd - RUN_OVERLAP)
    found = {r.id for r in new}
    last_id = max([cur.last_id, *found])
    now = time.monotonic()
    holes = [(i, t) for i, t in cur.holes if i not in found and now - t < HOLE_TTL]
    holes += [(i, now) for i in _gaps(cur.last_id, last_id, found)]
    last_upd = max([cur.last_upd, *(r.updated for r in touched)])
    if cur.runs_seen is None:   # a fresh or old-style cursor: report what is newer
        changed = {r.id for r in touched if r.updated > cur.last_upd}
    else:
        changed = {r.id for r in touched if (r.id, r.updated) not in cur.runs_seen}
    changed |= {r.run_id for r in new}
    nxt = LiveCursor(last_id, last_upd, tuple(holes), _runs_seen(touched, last_upd), removals)
    return new, changed, cur.removals is not None and removals != cur.removals, nxt
