"""SQL of the storage report and of retention on LangGraph databases (SqliteSaver and
PostgresSaver); the report and the policy live in ``inspector.usage`` / ``inspector.retention``.

Bodies are streamed in pages; sizes on PostgreSQL are ``octet_length`` of what the saver
stored (``pg_column_size`` would report TOAST-compressed sizes that depend on the server).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import sqlalchemy as sa

from inspector.errors import StoreError
from inspector.store import engine as _engine
from inspector.store.columns import as_blob
from inspector.store.columns import as_text as _text
from inspector.store.engine import guard
from inspector.store.langgraph.store import LangGraphStore
from inspector.store.disk import DiskUsage

PAGE = 500
PG_TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes", "checkpoint_migrations")
SQLITE_TABLES = ("checkpoints", "writes")


class BodyRow(NamedTuple):
    """One checkpoint row as stored: ids, serde tag, body bytes and metadata length."""

    thread_id: str
    ns: str
    checkpoint_id: str
    parent_id: str | None
    type: str | None
    body: Any            # bytes (SQLite) or the JSONB as a dict (PostgreSQL)
    body_bytes: int
    meta_bytes: int


class KeyRow(NamedTuple):
    """One checkpoint without its body (what retention plans with)."""

    thread_id: str
    ns: str
    checkpoint_id: str
    parent_id: str | None
    meta: Any            # metadata text/bytes or a dict


def iter_bodies(store: LangGraphStore, thread_id: str | None = None) -> Iterator[BodyRow]:
    """Every checkpoint with its body, by thread, namespace and id (pages of ``PAGE``)."""
    pg = store.engine.dialect.name == "postgresql"
    collate = ' COLLATE "C"' if pg else ""
    length = "octet_length" if pg else "LENGTH"
    body_len = "octet_length(c.checkpoint::text)" if pg else "LENGTH(c.checkpoint)"
    where = "WHERE c.thread_id = :thread" if thread_id is not None else ""
    after = "(c.thread_id, c.checkpoint_ns, c.checkpoint_id) > (:t, :n, :c)" if pg else \
        "(c.thread_id > :t OR (c.thread_id = :t AND (c.checkpoint_ns > :n OR (c.checkpoint_ns = :n AND c.checkpoint_id > :c))))"
    sql = (f"SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.type, c.checkpoint, "
           f"{body_len}, COALESCE({length}(c.metadata{'::text' if pg else ''}), 0) FROM checkpoints c "
           f"{where} {'AND' if where else 'WHERE'} {{after}} "
           f"ORDER BY c.thread_id{collate}, c.checkpoint_ns{collate}, c.checkpoint_id{collate} LIMIT {PAGE}")
    key = ("", "", "")
    first = True
    while True:
        cond = "TRUE" if first and pg else "1 = 1" if first else after
        params = {"t": key[0], "n": key[1], "c": key[2], "thread": thread_id}
        with guard(store.display), store.engine.connect() as conn:
            rows = conn.execute(sa.text(sql.format(after=cond)), params).all()
        if not rows:
            return
        for r in rows:
            yield BodyRow(_text(r[0]), _text(r[1]), _text(r[2]), None if r[3] is None else _text(r[3]),
                          None if r[4] is None else _text(r[4]), r[5], int(r[6] or 0), int(r[7] or 0))
        # the next page starts after the last row's key as stored: an id a damaged file holds as
        # a BLOB sorts after every text one, so its text form would find that row again, forever
        last = tuple(rows[-1][:3])
        if not first and last == key:
            raise StoreError(f"{store.display} lists checkpoint {_text(last[2])!r} of thread "
                             f"{_text(last[0])!r} out of order: its checkpoints table is damaged.")
        key, first = last, False


def write_sizes(store: LangGraphStore) -> dict[tuple[str, str], tuple[int, int]]:
    """(thread, channel) -> (bytes, rows) of pending writes."""
    pg = store.engine.dialect.name == "postgresql"
    sql = ("SELECT thread_id, channel, COALESCE(SUM(octet_length(blob)), 0), COUNT(*) FROM checkpoint_writes "
           "GROUP BY thread_id, channel") if pg else \
        "SELECT thread_id, channel, COALESCE(SUM(LENGTH(value)), 0), COUNT(*) FROM writes GROUP BY thread_id, channel"
    with guard(store.display), store.engine.connect() as conn:
        return {(_text(r[0]), _text(r[1])): (int(r[2]), int(r[3])) for r in conn.execute(sa.text(sql))}


def writes_by_checkpoint(store: LangGraphStore, thread_id: str) -> dict[tuple[str, str], int]:
    """(namespace, checkpoint id) -> bytes of its pending writes, for one thread."""
    pg = store.engine.dialect.name == "postgresql"
    table, col, fn = ("checkpoint_writes", "blob", "octet_length") if pg else ("writes", "value", "LENGTH")
    sql = (f"SELECT checkpoint_ns, checkpoint_id, COALESCE(SUM({fn}({col})), 0) FROM {table} "
           "WHERE thread_id = :thread GROUP BY checkpoint_ns, checkpoint_id")
    with guard(store.display), store.engine.connect() as conn:
        return {(_text(r[0]), _text(r[1])): int(r[2]) for r in conn.execute(sa.text(sql), {"thread": thread_id})}


def pg_blobs(store: LangGraphStore, thread_id: str | None = None) -> dict[tuple[str, str, str, str], tuple[str | None, bytes | None]]:
    """PostgreSQL: (thread, ns, channel, version) -> (type, bytes) of ``checkpoint_blobs``."""
    where = "WHERE thread_id = :thread" if thread_id is not None else ""
    with guard(store.display), store.engine.connect() as conn:
        result = conn.execution_options(stream_results=True).execute(sa.text(
            f"SELECT thread_id, checkpoint_ns, channel, version, type, blob FROM checkpoint_blobs {where}"),
            {"thread": thread_id})
        return {(r[0], r[1], r[2], r[3]): (r[4], as_blob(r[5])) for r in result}


def disk_usage(store: LangGraphStore) -> DiskUsage:
    """Files (SQLite: pages, free pages, WAL) or relations (PostgreSQL) of the database."""
    with guard(store.display), store.engine.connect() as conn:
        if conn.dialect.name == "postgresql":
            tables = {}
            for name in PG_TABLES:
                size = conn.execute(sa.text("SELECT pg_total_relation_size(to_regclass(:t))"), {"t": name}).scalar()
                if size is not None:
                    tables[name] = int(size)
            return DiskUsage(sum(tables.values()), 0, 0, tables, method="pg_total_relation_size")
        page_size = int(conn.exec_driver_sql("PRAGMA page_size").scalar() or 0)
        pages = int(conn.exec_driver_sql("PRAGMA page_count").scalar() or 0)
        free = int(conn.exec_driver_sql("PRAGMA freelist_count").scalar() or 0)
        tables = {}
        method = "PRAGMA page_count/freelist_count"
        try:
            owners: dict[str, str] = dict(conn.exec_driver_sql(
                "SELECT name, tbl_name FROM sqlite_master WHERE type IN ('table', 'index')").all())
            for name, used in conn.exec_driver_sql("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name").all():
                owner = owners.get(name, name)
                tables[owner] = tables.get(owner, 0) + int(used or 0)
            method += " + dbstat"
        except sa.exc.DBAPIError:
            tables = {}
    wal = 0
    path = store._path
    if path is not None:
        try:
            wal = Path(f"{path}-wal").stat().st_size
        except OSError:
            wal = 0
    return DiskUsage(page_size * pages + wal, page_size * free, wal, tables, page_size, pages, free, method)


# -- retention -------------------------------------------------------------------------------------
def keys(store: LangGraphStore) -> list[KeyRow]:
    """Every checkpoint's ids and metadata (no bodies)."""
    meta = "c.metadata" if store.engine.dialect.name == "postgresql" else "CAST(c.metadata AS BLOB)"
    with guard(store.display), store.engine.connect() as conn:
        rows = conn.execute(sa.text(f"SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, "
                                    f"{meta} FROM checkpoints c")).all()
    return [KeyRow(_text(r[0]), _text(r[1]), _text(r[2]), None if r[3] is None else _text(r[3]), r[4]) for r in rows]


def row_bytes(store: LangGraphStore, doomed: Sequence[tuple[str, str, str]]) -> int:
    """Bytes of the rows (checkpoint and its pending writes) of these checkpoints."""
    pg = store.engine.dialect.name == "postgresql"
    fn = "octet_length" if pg else "LENGTH"
    cp_sql = (f"SELECT COALESCE({fn}(checkpoint{'::text' if pg else ''}), 0) + COALESCE({fn}(metadata{'::text' if pg else ''}), 0) "
              "FROM checkpoints WHERE thread_id = :t AND checkpoint_ns = :n AND checkpoint_id = :c")
    table, col = ("checkpoint_writes", "blob") if pg else ("writes", "value")
    w_sql = (f"SELECT COALESCE(SUM({fn}({col})), 0) FROM {table} "
             "WHERE thread_id = :t AND checkpoint_ns = :n AND checkpoint_id = :c")
    total = 0
    with guard(store.display), store.engine.connect() as conn:
        for t, n, c in doomed:
            params = {"t": t, "n": n, "c": c}
            total += int(conn.execute(sa.text(cp_sql), params).scalar() or 0)
            total += int(conn.execute(sa.text(w_sql), params).scalar() or 0)
    return total


def sqlite_backup(path: Path, target: Path) -> None:
    """A consistent copy of a SQLite database (the online backup API; writers may go on)."""
    src = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)
    dst = sqlite3.connect(str(target))
    try:
        src.backup(dst)
    finally:
        dst.close()
        src.close()


def delete_checkpoints(conn: sa.Connection, doomed: Sequence[tuple[str, str, str]]) -> int:
    """Delete these checkpoints and their pending writes (inside the caller's transaction)."""
    if not doomed:
        return 0
    pg = conn.dialect.name == "postgresql"
    writes = "checkpoint_writes" if pg else "writes"
    params = [{"t": t, "n": n, "c": c} for t, n, c in doomed]
    conn.execute(sa.text(f"DELETE FROM {writes} WHERE thread_id = :t AND checkpoint_ns = :n AND checkpoint_id = :c"), params)
    conn.execute(sa.text("DELETE FROM checkpoints WHERE thread_id = :t AND checkpoint_ns = :n AND checkpoint_id = :c"), params)
    return len(doomed)


def thread_heads(conn: sa.Connection, threads: Sequence[str]) -> dict[str, tuple[int, str]]:
    """thread → (its checkpoints, its newest checkpoint id), every namespace: what a delete
    planned on, compared again inside its transaction."""
    if not threads:
        return {}
    rows = conn.execute(sa.text("SELECT thread_id, COUNT(*), MAX(checkpoint_id) FROM checkpoints "
                                "WHERE thread_id IN :threads GROUP BY thread_id").bindparams(
        sa.bindparam("threads", expanding=True)), {"threads": list(threads)})
    return {str(t): (int(n), str(head)) for t, n, head in rows}


def delete_threads(conn: sa.Connection, threads: Sequence[str]) -> None:
    """Delete whole threads as LangGraph's ``delete_thread`` does (inside the caller's
    transaction): their checkpoints, pending writes and, on PostgreSQL, blobs."""
    tables = (("checkpoint_writes", "checkpoint_blobs", "checkpoints") if conn.dialect.name == "postgresql"
              else ("writes", "checkpoints"))
    for table in tables:
        conn.execute(sa.text(f"DELETE FROM {table} WHERE thread_id IN :threads").bindparams(
            sa.bindparam("threads", expanding=True)), {"threads": list(threads)})


def pg_collect_blobs(conn: sa.Connection, threads: Sequence[str]) -> tuple[int, int]:
    """PostgreSQL: delete the blobs of these threads that no checkpoint names any more."""
    if not threads:
        return 0, 0
    row = conn.execute(sa.text(
        "WITH gone AS (DELETE FROM checkpoint_blobs b WHERE b.thread_id = ANY(:threads) AND NOT EXISTS ("
        " SELECT 1 FROM checkpoints c WHERE c.thread_id = b.thread_id AND c.checkpoint_ns = b.checkpoint_ns"
        " AND c.checkpoint -> 'channel_versions' ->> b.channel = b.version) RETURNING octet_length(b.blob) AS n) "
        "SELECT COUNT(*), COALESCE(SUM(n), 0) FROM gone"), {"threads": list(threads)}).one()
    return int(row[0]), int(row[1])


def vacuum(store_engine: sa.Engine) -> None:
    """SQLite VACUUM / PostgreSQL VACUUM FULL of LangGraph's tables (outside a transaction)."""
    _engine.vacuum(store_engine, ("checkpoints", "checkpoint_blobs", "checkpoint_writes"))
