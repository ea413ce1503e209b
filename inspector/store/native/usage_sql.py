"""SQL the storage report and retention run on a native store (no policy here: see
``inspector.usage`` and ``inspector.retention``).

Every read streams or batches: checkpoint rows come in pages (never a million at once),
pieces in batches of ``FETCH_BATCH``, and every stored piece is checked against its digest and
its declared size before anything decodes it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from typing import Any, NamedTuple

import sqlalchemy as sa

from inspector import codec as pieces
from inspector.errors import CorruptDataError
from inspector.store.engine import CompiledStatement, guard, translate
from inspector.store.native import blobs
from inspector.store.native.schema import blobs as blob_table
from inspector.store.native.schema import checkpoints, runs
from inspector.store.native.store import FETCH_BATCH, NativeStore
from inspector.store.disk import DiskUsage

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


_COLUMNS = (checkpoints.c.run_id, checkpoints.c.seq, checkpoints.c.id, checkpoints.c.created,
            checkpoints.c.state_hash, checkpoints.c.tasks_hash, checkpoints.c.size, checkpoints.c.ops,
            checkpoints.c.checks_passed, checkpoints.c.checks_total)


def checkpoint_row_ok(row: CheckpointRow) -> bool:
    """Whether a checkpoint row holds the types the report adds up (a damaged store may hold
    text in a number column or a number in a hash column: that row alone is damaged)."""
    run_id, seq, id_, created, state_hash, tasks_hash, size, ops, passed, total = row
    return (type(run_id) is str and type(state_hash) is bytes and (tasks_hash is None or type(tasks_hash) is bytes)
            and type(created) in (int, float) and all(type(v) is int for v in (seq, id_, size, ops, passed, total)))


def _piece_row_ok(row: Any) -> bool:
    """Whether a ``ci_blobs`` row has its column types (hash and data bytes, codec and size
    whole numbers); a row that has not is a damaged piece, left out like a missing one."""
    digest, codec, size, data = row
    return type(digest) is bytes and type(codec) is int and type(size) is int and type(data) is bytes


def list_runs(store: NativeStore, run_id: str | None = None) -> list[RunRow]:
    """Runs in the order the report walks them: oldest first (a fork after its parent)."""
    stmt = sa.select(runs.c.id, runs.c.name, runs.c.status, runs.c.created, runs.c.updated,
                     runs.c.checkpoint_count, runs.c.parent_run).order_by(runs.c.created, runs.c.id)
    if run_id is not None:
        stmt = stmt.where(runs.c.id == run_id)
    with guard(store.info.display), store.engine.connect() as conn:
        return [RunRow(*r) for r in conn.execute(stmt)]


def iter_checkpoints(store: NativeStore, run_id: str | None = None) -> Iterator[CheckpointRow]:
    """Every checkpoint (of one run, or of all) in the order they were written (by id: a
    fork's checkpoints come after the one it starts from), in pages of ``PAGE``."""
    c = checkpoints.c
    stmt = sa.select(*_COLUMNS).where(c.id > sa.bindparam("after"))
    if run_id is not None:
        stmt = stmt.where(c.run_id == run_id)
    compiled = CompiledStatement(stmt.order_by(c.id).limit(PAGE), store.engine.dialect)
    make = CheckpointRow._make
    after = -1
    while True:
        with guard(store.info.display), store.engine.connect() as conn:
            dbapi = conn.connection.dbapi_connection
            assert dbapi is not None
            cur = dbapi.cursor()     # plain tuples: a million rows
            try:
                cur.execute(compiled.sql, compiled.params({"after": after}))   # run and limit are compiled in
                page = cur.fetchall()
            except conn.dialect.loaded_dbapi.Error as err:
                raise translate(err, store.info.display) from err
            finally:
                cur.close()
        if not page:
            return
        for row in page:
            yield make(row)
        after = page[-1][2]


def read_pieces(store: NativeStore, digests: Collection[bytes]) -> dict[bytes, StoredPiece]:
    """Pieces with their stored (compressed) length, verified against their digests.

    A missing piece, or one whose row has the wrong column types, is simply absent from the
    answer (the caller reports it as damage); a piece whose bytes do not match its digest
    raises CorruptDataError.
    """
    ordered = sorted(set(digests))
    found: dict[bytes, StoredPiece] = {}
    with guard(store.info.display), store.engine.connect() as conn:
        for start in range(0, len(ordered), FETCH_BATCH):
            rows = conn.execute(sa.select(blob_table.c.hash, blob_table.c.codec, blob_table.c.size,
                                          blob_table.c.data)
                                .where(blob_table.c.hash.in_(ordered[start:start + FETCH_BATCH]))).all()
            rows = [r for r in rows if _piece_row_ok(r)]
            for r in rows:
                if not 0 <= r[2] <= MAX_PIECE_BYTES:
                    raise CorruptDataError("A stored piece declares an impossible size (the store is damaged).")
            raws = blobs.decompress_many([(r[1], r[3], r[2]) for r in rows])
            for r, raw in zip(rows, raws):
                digest = r[0]
                if pieces.digest_of(raw) != digest:
                    raise CorruptDataError("A stored piece does not match its hash (the store is damaged).")
                found[digest] = StoredPiece(len(r[3]) + len(digest) + 8, raw)
    return found


def blob_totals(store: NativeStore) -> tuple[int, int, int]:
    """(pieces, stored bytes, raw bytes) of the whole ``ci_blobs`` table."""
    stmt = sa.select(sa.func.count(), sa.func.coalesce(sa.func.sum(sa.func.length(blob_table.c.data)), 0),
                     sa.func.coalesce(sa.func.sum(blob_table.c.size), 0))
    with guard(store.info.display), store.engine.connect() as conn:
        n, stored, raw = conn.execute(stmt).one()
    return int(n), int(stored) + 24 * int(n), int(raw)


def checkpoint_totals(store: NativeStore) -> tuple[int, int]:
    """(checkpoints, logical bytes) of the whole store."""
    stmt = sa.select(sa.func.count(), sa.func.coalesce(sa.func.sum(checkpoints.c.size), 0))
    with guard(store.info.display), store.engine.connect() as conn:
        n, size = conn.execute(stmt).one()
    return int(n), int(size)


def disk_usage(store: NativeStore) -> DiskUsage:
    """On-disk size: SQLite pages (used and free) and WAL; PostgreSQL relation sizes."""
    with guard(store.info.display), store.engine.connect() as conn:
        if conn.dialect.name == "sqlite":
            return _sqlite_disk(conn, store)
        return _pg_disk(conn)


def _sqlite_disk(conn: sa.Connection, store: NativeStore) -> DiskUsage:
    page_size = int(conn.exec_driver_sql("PRAGMA page_size").scalar() or 0)
    page_count = int(conn.exec_driver_sql("PRAGMA page_count").scalar() or 0)
    free = int(conn.exec_driver_sql("PRAGMA freelist_count").scalar() or 0)
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
        names: dict[str, str] = dict(conn.exec_driver_sql(
            "SELECT name, COALESCE(tbl_name, name) FROM sqlite_master WHERE type IN ('table', 'index')").all())
        for name, used in conn.exec_driver_sql("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name").all():
            owner = names.get(name, name)
            if owner.startswith("sqlite_autoindex_"):
                owner = owner.split("_", 3)[-1].rsplit("_", 1)[0]
            tables[owner] = tables.get(owner, 0) + int(used or 0)
        method += " + dbstat"
    except sa.exc.DBAPIError:
        tables = {}      # SQLite built without the dbstat table: totals only
    return DiskUsage(total_bytes=page_size * page_count + wal, free_bytes=page_size * free, wal_bytes=wal,
                     tables=tables, page_size=page_size, page_count=page_count, freelist_count=free,
                     method=method)


def _pg_disk(conn: sa.Connection) -> DiskUsage:
    names = ["ci_meta", "ci_runs", "ci_checkpoints", "ci_blobs", "ci_pins"]
    tables: dict[str, int] = {}
    for name in names:
        size = conn.execute(sa.text("SELECT pg_total_relation_size(to_regclass(:t))"), {"t": name}).scalar()
        if size is not None:
            tables[name] = int(size)
    return DiskUsage(total_bytes=sum(tables.values()), free_bytes=0, wal_bytes=0, tables=tables,
                     method="pg_total_relation_size")


def distinct_roots(conn: sa.Connection, min_id: int = 0) -> tuple[set[bytes], int]:
    """Every state and task-state root digest of checkpoints with id > ``min_id``, and the
    largest checkpoint id seen (so a later call can pick up only what was added since)."""
    found: set[bytes] = set()
    for column in (checkpoints.c.state_hash, checkpoints.c.tasks_hash):
        for (digest,) in conn.execute(sa.select(column).where(checkpoints.c.id > min_id, column.is_not(None))
                                      .distinct()):
            found.add(bytes(digest))
    top = conn.execute(sa.select(sa.func.max(checkpoints.c.id))).scalar()
    return found, int(top or 0)


def all_piece_sizes(conn: sa.Connection) -> Iterator[tuple[bytes, int]]:
    """(digest, stored bytes) of every piece, streamed."""
    result = conn.execution_options(stream_results=True).execute(
        sa.select(blob_table.c.hash, sa.func.length(blob_table.c.data)))
    for digest, length in result:
        yield bytes(digest), int(length or 0) + 24


def unpack_children(raw: bytes) -> tuple[Any, list[bytes]]:
    """A piece decoded (markers kept) and the digests it refers to directly."""
    if not pieces.may_hold_markers(raw):
        return None, []
    value = pieces.unpack(raw)
    return value, list(pieces.iter_digests(value))
