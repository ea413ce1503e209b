"""SQL the storage report and retention run on a native store (no policy here: see
``inspector.usage`` and ``inspector.retention``).

Every read streams or batches: checkpoint rows come in pages (never a million at once),
pieces in batches of ``FETCH_BATCH``, and every stored piece is checked against its digest and
its declared size before anything decodes it. The report's reads are plain SQL on the
store's DB-API cursors (``NativeReads._connection``): a report of a SQLite store read with
``sqlite3`` alone (``SqliteNativeReader``) never imports SQLAlchemy; retention's (which
takes an engine's connection) do.
"""

from __future__ import annotations

import bisect
from collections.abc import Collection, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

from inspector import codec as pieces
from inspector.errors import CorruptDataError
from inspector.store.columns import BINARY, as_count, as_opt_text, as_real, as_text
from inspector.store.disk import DiskUsage
from inspector.store.native import blobs
from inspector.store.native.reads import FETCH_BATCH, NativeReads, marks

if TYPE_CHECKING:
    import sqlalchemy as sa

PAGE = 20_000
MAX_PIECE_BYTES = 256 * 1024 * 1024     # a stored piece claiming more is treated as damaged


class CheckpointRow(NamedTuple):
    """What the report needs of one checkpoint (no state)."""

    run_id: str
    seq: int
    id: int
    created: float
    state_hash: bytes
    tasks_hash: bytes | None
    size: int
    ops: int
    checks_passed: int
    checks_total: int


class RunRow(NamedTuple):
    """What the report needs of one run."""

    id: str
    name: str
    status: str
    created: float
    updated: float
    checkpoint_count: int
    parent_run: str | None


class StoredPiece(NamedTuple):
    """One piece as stored: bytes on disk (``stored``) and its decompressed bytes (``raw``)."""

    stored: int
    raw: bytes


def checkpoint_row_ok(row: CheckpointRow) -> bool:
    """Whether a checkpoint row holds the types the report adds up (a damaged store may hold
    text in a number column or a number in a hash column: that row alone is damaged)."""
    run_id, seq, id_, created, state_hash, tasks_hash, size, ops, passed, total = row
    return (type(run_id) is str and type(state_hash) is bytes and (tasks_hash is None or type(tasks_hash) is bytes)
            and type(created) in (int, float) and all(type(v) is int for v in (seq, id_, size, ops, passed, total))
            and size >= 0 and ops >= 0 and 0 <= passed <= total)    # (what the store's rows call damage too)


def _piece_row_ok(row: Any) -> bool:
    """Whether a ``ci_blobs`` row has its column types (hash and data bytes, codec and size
    whole numbers); a row that has not is a damaged piece, left out like a missing one."""
    digest, codec, size, data = row
    return type(digest) is bytes and type(codec) is int and type(size) is int and type(data) is bytes


def list_runs(store: NativeReads, run_id: str | None = None) -> list[RunRow]:
    """Runs in the order the report walks them: oldest first (a fork after its parent)."""
    sql = "SELECT id, name, status, created, updated, checkpoint_count, parent_run FROM ci_runs"
    params: tuple = ()
    if run_id is not None:
        sql, params = sql + " WHERE id = ?", (run_id,)
    with store._connection() as cur:     # _fetch: text that is not UTF-8 is that row's damage
        return [_run_row(r) for r in store._fetch(cur, sql + " ORDER BY created, id", params)[1]]


def _run_row(row: Any) -> RunRow:
    """A run's row with its columns as the types they name (a damaged file's row may hold text
    or bytes where a number belongs, bytes or numbers where text does)."""
    run_id, name, status, created, updated, count, parent = row
    return RunRow(as_text(run_id), as_text(name), as_text(status), as_real(created), as_real(updated),
                  as_count(count) or 0, as_opt_text(parent))


_PAGE_SQL = (f"SELECT run_id, seq, id, created, state_hash, tasks_hash, size, ops, checks_passed, checks_total "
             f"FROM ci_checkpoints WHERE id > ? {{run}}ORDER BY id LIMIT {PAGE}")


def iter_checkpoints(store: NativeReads, run_id: str | None = None) -> Iterator[CheckpointRow]:
    """Every checkpoint (of one run, or of all) in the order they were written (by id: a
    fork's checkpoints come after the one it starts from), in pages of ``PAGE``."""
    sql = _PAGE_SQL.format(run="" if run_id is None else "AND run_id = ? ")
    make = CheckpointRow._make
    after: Any = -1
    while True:
        with store._connection() as cur:     # plain tuples: a million rows
            page = store._fetch(cur, sql, (after,) if run_id is None else (after, run_id))[1]
        if not page:
            return
        for row in page:
            yield make(row)
        after = page[-1][2]


ROOT_STEPS = 256      # first-seen searches before the rest is found by one GROUP BY


class RunTally(NamedTuple):
    """One ``run_id`` value of ``ci_checkpoints`` added up: its rows, their logical bytes and
    their times' range, and whether every row holds the types ``checkpoint_row_ok`` wants
    (``clean``; told by aggregates, not row by row: see ``run_tallies``)."""

    run_id: Any
    rows: int
    logical: int
    first: float
    last: float
    clean: bool


def _finite(value: Any) -> bool:
    return type(value) in (int, float) and value - value == 0       # (inf - inf and NaN - NaN are NaN)


def _clean(store: NativeReads, row: tuple) -> bool:
    """Whether the aggregates of a ``run_id`` group (``run_tallies``) say all its rows hold the
    wanted types. On SQLite: ``sum()`` of whole numbers is one (of anything else, a NULL
    counted as 0.5 included, a real), ``min()`` of a column is a blob only when all of it is
    (a NULL counted as 0), ``max()`` a number only when all of it is (a NULL counted as
    text), and a group's run id is one value. PostgreSQL's typed columns need no telling.
    Times must be finite on both, and no size, ops or score impossible (``checkpoint_row_ok``)."""
    run_id, _rows, first, last, states, tasks, *sums = row[:-len(_BOUNDS)]
    if not (_finite(first) and _finite(last)):
        return False
    if any(isinstance(v, (int, float)) and v < 0 for v in row[-len(_BOUNDS):]):
        return False
    if store.dialect != "sqlite":
        return True
    return (type(run_id) is str and type(states) is bytes and (tasks is None or type(tasks) is bytes)
            and all(type(v) is int for v in sums))


# a group's least size, ops and checks passed, and least checks not passed: negative when a
# row holds an impossible one
_BOUNDS = ("MIN(size)", "MIN(ops)", "MIN(checks_passed)", "MIN(checks_total - checks_passed)")
# one pass over the checkpoints by run (as the (run_id, seq) index holds them)
_TALLIES_SQLITE = ("SELECT run_id, COUNT(*), MIN(created), MAX(COALESCE(created, '')), MIN(COALESCE(state_hash, 0)), "
                   "MIN(tasks_hash), SUM(COALESCE(size, 0.5)), SUM(COALESCE(seq, 0.5)), SUM(COALESCE(ops, 0.5)), "
                   "SUM(COALESCE(checks_passed, 0.5)), SUM(COALESCE(checks_total, 0.5)), "
                   f"{', '.join(_BOUNDS)} FROM ci_checkpoints GROUP BY run_id")
_TALLIES = ("SELECT run_id, COUNT(*), MIN(created), MAX(created), NULL, NULL, SUM(size), "
            f"{', '.join(_BOUNDS)} FROM ci_checkpoints GROUP BY run_id")


def run_tallies(store: NativeReads) -> list[RunTally]:
    """Every ``run_id`` of the checkpoints added up in one pass."""
    with store._connection() as cur:
        found = store._fetch(cur, _TALLIES_SQLITE if store.dialect == "sqlite" else _TALLIES)[1]
    out = []
    for r in found:
        clean = _clean(store, r)
        out.append(RunTally(r[0], int(r[1]), int(r[6] or 0) if clean else 0, r[2], r[3], clean))
    return out


def first_seen(store: NativeReads) -> Iterator[CheckpointRow]:
    """The checkpoints (in the order they were written, see ``iter_checkpoints``) that refer
    to a root piece no earlier one refers to (as state or task state), and maybe a few more:
    the only ones that can add pieces to an ordered walk. Every other checkpoint's roots
    were reached before it. For a store whose rows ``run_tallies`` found clean.

    Each search reads on from the last one found up to the next checkpoint with a root not
    seen yet, so a store of few distinct states is read once, in its id order, without
    sorting a million rows; after ``ROOT_STEPS`` searches the rest comes from one GROUP BY
    (its groups' first rows, of which those with a root not seen yet)."""
    columns = "run_id, seq, id, created, state_hash, tasks_hash, size, ops, checks_passed, checks_total"
    seen: set[bytes] = set()
    after: Any = -1
    for _ in range(ROOT_STEPS):
        known = sorted(seen)
        new = (f" AND (state_hash NOT IN ({marks(len(known))}) OR (tasks_hash IS NOT NULL "
               f"AND tasks_hash NOT IN ({marks(len(known))})))") if known else ""
        with store._connection() as cur:
            rows = store._fetch(cur, f"SELECT {columns} FROM ci_checkpoints WHERE id > ?{new} ORDER BY id LIMIT 1",
                                [after, *known, *known])[1]
        if not rows:
            return
        row = CheckpointRow._make(rows[0])
        after = row.id
        seen.update(d for d in (row.state_hash, row.tasks_hash) if d is not None)
        yield row
    with store._connection() as cur:
        rows = store._fetch(cur, f"SELECT {columns} FROM ci_checkpoints WHERE id IN (SELECT MIN(id) FROM "
                                 f"ci_checkpoints WHERE id > ? GROUP BY state_hash, tasks_hash) ORDER BY id",
                            (after,))[1]
    for row in map(CheckpointRow._make, rows):
        if row.state_hash not in seen or (row.tasks_hash is not None and row.tasks_hash not in seen):
            seen.update(d for d in (row.state_hash, row.tasks_hash) if d is not None)
            yield row


def places(store: NativeReads, wanted: dict[str, list[int]]) -> dict[str, list[int]]:
    """Run -> where each of its checkpoints ``wanted`` (ids) comes among the run's checkpoints
    in the order they were written (0 for its first)."""
    out: dict[str, list[int]] = {}
    for run_id, ids in wanted.items():
        with store._connection() as cur:
            order = [r[0] for r in store._fetch(cur, "SELECT id FROM ci_checkpoints WHERE run_id = ? ORDER BY id",
                                                (run_id,))[1]]
        out[run_id] = [bisect.bisect_left(order, cid) for cid in ids]
    return out


def time_bins(store: NativeReads, low: float, width: float, bins: int, runs: Collection[str] | None = None
              ) -> dict[int, int]:
    """Checkpoints (of ``runs``, or all) by growth bin: ``int((t - low) / width)``, at most
    ``bins``, of each one's time ``t``, computed as Python computes it (IEEE doubles,
    truncated; times ``>= low``)."""
    if store.dialect == "sqlite":
        n = "MIN(?, CAST((created - ?) / ? AS INTEGER))"
    else:
        n = ("LEAST(?, CAST(TRUNC((created - CAST(? AS DOUBLE PRECISION)) / CAST(? AS DOUBLE PRECISION)) "
             "AS BIGINT))")
    ordered = None if runs is None else sorted(runs)
    out: dict[int, int] = {}
    with store._connection() as cur:
        for start in range(0, 1 if ordered is None else len(ordered), FETCH_BATCH):
            part = [] if ordered is None else ordered[start:start + FETCH_BATCH]
            where = "" if ordered is None else f" WHERE run_id IN ({marks(len(part))})"
            for b, count in store._fetch(cur, f"SELECT {n} AS b, COUNT(*) FROM ci_checkpoints{where} GROUP BY b",
                                         (bins, low, width, *part))[1]:
                out[int(b)] = out.get(int(b), 0) + int(count)
    return out


def read_pieces(store: NativeReads, digests: Collection[bytes]) -> dict[bytes, StoredPiece]:
    """Pieces with their stored (compressed) length, verified against their digests.

    A missing piece, or one whose row has the wrong column types, is simply absent from the
    answer (the caller reports it as damage); a piece whose bytes do not match its digest
    raises CorruptDataError.
    """
    ordered = sorted(set(digests))
    found: dict[bytes, StoredPiece] = {}
    with store._connection() as cur:
        for start in range(0, len(ordered), FETCH_BATCH):
            batch = ordered[start:start + FETCH_BATCH]
            sql = f"SELECT hash, codec, size, data FROM ci_blobs WHERE hash IN ({marks(len(batch))})"
            rows = [r for r in store._fetch(cur, sql, batch)[1] if _piece_row_ok(r)]
            for r in rows:
                if not 0 <= r[2] <= MAX_PIECE_BYTES:
                    raise CorruptDataError("A stored piece declares an impossible size (the store is damaged).")
            raws = blobs.decompress_many([(r[1], r[3], r[2]) for r in rows])
            for r, raw in zip(rows, raws, strict=True):
                digest = r[0]
                if pieces.digest_of(raw) != digest:
                    raise CorruptDataError("A stored piece does not match its hash (the store is damaged).")
                found[digest] = StoredPiece(len(r[3]) + len(digest) + 8, raw)
    return found


def _one(store: NativeReads, sql: str) -> tuple:
    with store._connection() as cur:
        return tuple(store._fetch(cur, sql)[1][0])


def blob_totals(store: NativeReads) -> tuple[int, int, int]:
    """(pieces, stored bytes, raw bytes) of the whole ``ci_blobs`` table."""
    n, stored, raw = _one(store, "SELECT count(*), coalesce(sum(length(data)), 0), coalesce(sum(size), 0) "
                                 "FROM ci_blobs")
    return int(n), int(stored) + 24 * int(n), int(raw)


def checkpoint_totals(store: NativeReads) -> tuple[int, int]:
    """(checkpoints, logical bytes) of the whole store (a size that is no byte count, a damaged
    row's, adds nothing)."""
    valid = "typeof(size) = 'integer' AND size >= 0" if store.dialect == "sqlite" else "size >= 0"
    n, size = _one(store, f"SELECT count(*), coalesce(sum(CASE WHEN {valid} THEN size END), 0) FROM ci_checkpoints")
    return int(n), int(size)


def disk_usage(store: NativeReads) -> DiskUsage:
    """On-disk size: SQLite pages (used and free) and WAL; PostgreSQL relation sizes."""
    with store._connection() as cur:
        if store.dialect == "sqlite":
            return _sqlite_disk(cur, store)
        return _pg_disk(cur, store)


def _pragma(cur: Any, name: str) -> int:
    cur.execute(f"PRAGMA {name}")
    row = cur.fetchone()
    return int((row[0] if row else 0) or 0)


def _sqlite_disk(cur: Any, store: NativeReads) -> DiskUsage:
    import sqlite3

    page_size, page_count, free = (_pragma(cur, n) for n in ("page_size", "page_count", "freelist_count"))
    wal = 0
    path = store.target.path
    if path is not None:
        try:
            wal = path.with_name(path.name + "-wal").stat().st_size
        except OSError:
            wal = 0
    tables: dict[str, int] = {}
    method = "PRAGMA page_count/freelist_count"
    try:
        names: dict[str, str] = dict(store._fetch(
            cur, "SELECT name, COALESCE(tbl_name, name) FROM sqlite_master WHERE type IN ('table', 'index')")[1])
        for name, used in store._fetch(cur, "SELECT name, SUM(pgsize) FROM dbstat GROUP BY name")[1]:
            owner = names.get(name, name)
            if owner.startswith("sqlite_autoindex_"):
                owner = owner.split("_", 3)[-1].rsplit("_", 1)[0]
            tables[owner] = tables.get(owner, 0) + int(used or 0)
        method += " + dbstat"
    except sqlite3.Error:
        tables = {}      # SQLite built without the dbstat table: totals only
    return DiskUsage(total_bytes=page_size * page_count + wal, free_bytes=page_size * free, wal_bytes=wal,
                     tables=tables, page_size=page_size, page_count=page_count, freelist_count=free,
                     method=method)


def _pg_disk(cur: Any, store: NativeReads) -> DiskUsage:
    names = ["ci_meta", "ci_runs", "ci_checkpoints", "ci_blobs", "ci_pins"]
    tables: dict[str, int] = {}
    for name in names:
        size = store._fetch(cur, "SELECT pg_total_relation_size(to_regclass(?))", (name,))[1][0][0]
        if size is not None:
            tables[name] = int(size)
    return DiskUsage(total_bytes=sum(tables.values()), free_bytes=0, wal_bytes=0, tables=tables,
                     method="pg_total_relation_size")


def distinct_roots(conn: sa.Connection, min_id: int = 0) -> tuple[set[bytes], int, int]:
    """Every state and task-state root digest of checkpoints with id > ``min_id``, the largest
    checkpoint id seen (so a later call can pick up only what was added since), and how many
    distinct roots are damaged (text, a number or bytes of another length where a digest
    belongs: what such a row named cannot be known)."""
    import sqlalchemy as sa

    from inspector.store.native.schema import checkpoints

    found: set[bytes] = set()
    damaged = 0
    for column in (checkpoints.c.state_hash, checkpoints.c.tasks_hash):
        for (digest,) in conn.execute(sa.select(column).where(checkpoints.c.id > min_id, column.is_not(None))
                                      .distinct()):
            if isinstance(digest, BINARY) and len(digest) == pieces.DIGEST_SIZE:
                found.add(bytes(digest))
            else:
                damaged += 1
    top = conn.execute(sa.select(sa.func.max(checkpoints.c.id))).scalar()
    return found, int(top or 0), damaged


def stored_among(conn: sa.Connection, digests: Collection[bytes]) -> int:
    """How many of ``digests`` have a row in ``ci_blobs`` (read or not)."""
    import sqlalchemy as sa

    from inspector.store.native.schema import blobs as blob_table

    ordered, n = sorted(digests), 0
    for start in range(0, len(ordered), FETCH_BATCH):
        n += conn.execute(sa.select(sa.func.count()).select_from(blob_table)
                          .where(blob_table.c.hash.in_(ordered[start:start + FETCH_BATCH]))).scalar() or 0
    return int(n)


def unpack_children(raw: bytes) -> tuple[Any, list[bytes]]:
    """A piece decoded (markers kept) and the digests it refers to directly."""
    if not pieces.may_hold_markers(raw):
        return None, []
    value = pieces.unpack(raw)
    return value, list(pieces.iter_digests(value))
