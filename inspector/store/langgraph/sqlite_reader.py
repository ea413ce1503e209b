"""SQLite-only SQL for SqliteSaver databases: every query the LangGraph adapter runs lives here.

All reads are batched: listing a thread's checkpoints costs three queries per page whatever
its size (rows without bodies, the parents' task outputs grouped per task without values,
branch counts); no query runs per checkpoint. Bodies and write values are read only by
``body``/``writes`` (one checkpoint), ``head_bodies`` (heads not seen before) and the
DeltaChannel rebuild (``ancestry``/``channel_writes``, one checkpoint's chain).
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inspector.errors import StoreError
from inspector.store import dberrors
from inspector.store.langgraph.pregel import NULL_TASK_ID
from inspector.store.columns import as_int as _int, as_opt_text as _opt, as_text as _text
from inspector.store.langgraph.rows import (CHANNEL_SEP, BlobRow, HeadRow, ListRow, TaskOutputRow,
                                          ThreadRow, WriteRow)
from inspector.store.langgraph.shared_queries import SharedWriteQueries
from inspector.store import sqlite_ro

if TYPE_CHECKING:
    import sqlalchemy as sa

    from inspector.store.sqlite_ro import ReadPool


def _is_id(column: str, value: str) -> str:
    """``column`` holds the checkpoint id ``value`` (text): stored as text, or as a BLOB of its
    bytes, as a damaged file may hold it. SqliteSaver reads such a row all the same (SQLite
    sorts it after every text id: ``get_tuple`` takes it for the head), so a lookup by the id's
    text finds it too; still one seek of the primary key per value."""
    return f"{column} IN ({value}, CAST({value} AS BLOB))"


_HEADS = """
SELECT c.thread_id, c.checkpoint_id, c.type, NULL, CAST(c.metadata AS BLOB)
FROM checkpoints c
JOIN (SELECT thread_id, MAX(checkpoint_id) AS head FROM checkpoints
      WHERE checkpoint_ns = '' {where} GROUP BY thread_id) h
  ON c.thread_id = h.thread_id AND c.checkpoint_ns = '' AND c.checkpoint_id = h.head
"""
_HEAD_WRITES = """
SELECT w.thread_id, w.task_id, {task_path}, w.idx, w.channel, w.type,
       CASE WHEN w.channel = '__error__' THEN w.value END
FROM writes w
JOIN (SELECT thread_id, MAX(checkpoint_id) AS head FROM checkpoints
      WHERE checkpoint_ns = '' {where} GROUP BY thread_id) h
  ON w.thread_id = h.thread_id AND w.checkpoint_ns = '' AND w.checkpoint_id = CAST(h.head AS TEXT)
ORDER BY w.thread_id, w.task_id, w.idx
"""
_META_JSON1 = """
       CASE WHEN json_valid(CAST(c.metadata AS TEXT))
            THEN json_extract(CAST(c.metadata AS TEXT), '$.source') END,
       CASE WHEN json_valid(CAST(c.metadata AS TEXT))
            THEN json_extract(CAST(c.metadata AS TEXT), '$.step') END,
       CASE WHEN c.parent_checkpoint_id IS NULL OR NOT json_valid(CAST(c.metadata AS TEXT))
                 OR json_type(CAST(c.metadata AS TEXT), '$.writes') = 'object'
            THEN CAST(c.metadata AS BLOB) END,"""
_META_PLAIN = """
       NULL, NULL, CAST(c.metadata AS BLOB),"""  # SQLite without JSON functions: parse in Python
# the parent is found by its id stored as text or as a BLOB (``_is_id``)
_LIST = """
SELECT COALESCE(CAST(c.checkpoint_ns AS TEXT), ''), CAST(c.checkpoint_id AS TEXT),
       CAST(c.parent_checkpoint_id AS TEXT),{meta}
       COALESCE(LENGTH(c.checkpoint), 0) + COALESCE(LENGTH(c.metadata), 0),
       CASE WHEN p.checkpoint_id IS NOT NULL
            THEN COALESCE(LENGTH(p.checkpoint), 0) + COALESCE(LENGTH(p.metadata), 0) END
FROM (SELECT rowid AS rid FROM checkpoints WHERE thread_id = :thread
      ORDER BY checkpoint_id, checkpoint_ns LIMIT :limit OFFSET :offset) page
JOIN checkpoints c ON c.rowid = page.rid
LEFT JOIN checkpoints p ON p.thread_id = c.thread_id AND p.checkpoint_ns = c.checkpoint_ns
                       AND p.checkpoint_id IN (c.parent_checkpoint_id, CAST(c.parent_checkpoint_id AS BLOB))
ORDER BY c.checkpoint_id, c.checkpoint_ns
"""

# metadata is fetched as BLOB: bytes that are not UTF-8 then fail one row's parse, not the query
_ANCESTRY = f"""
WITH RECURSIVE chain(cid, depth) AS (
  SELECT parent_checkpoint_id, 1 FROM checkpoints
  WHERE thread_id = :thread AND checkpoint_ns = :ns AND {_is_id("checkpoint_id", ":cid")}
  UNION ALL
  SELECT c.parent_checkpoint_id, chain.depth + 1 FROM chain
  JOIN checkpoints c ON c.thread_id = :thread AND c.checkpoint_ns = :ns AND {_is_id("c.checkpoint_id", "chain.cid")}
  WHERE chain.depth < :depth
)
SELECT chain.cid, CAST(c.metadata AS BLOB) FROM chain
JOIN checkpoints c ON c.thread_id = :thread AND c.checkpoint_ns = :ns AND {_is_id("c.checkpoint_id", "chain.cid")}
ORDER BY chain.depth
"""


class SqliteReader(SharedWriteQueries):
    """Runs the adapter's queries on a SqliteSaver database, through a SQLAlchemy engine or
    (``pool``: a store only read, as the read commands open it) on the standard library's
    ``sqlite3`` alone; the same connections either way (``sqlite_ro``)."""

    def __init__(self, engine: sa.Engine | None, display: str, has_task_path: bool,
                 pool: ReadPool | None = None, path: Path | None = None) -> None:
        assert engine is not None or pool is not None
        self.engine = engine
        self.pool = pool
        self.path = path if path is not None else pool.path if pool is not None else None
        self._cursor: tuple[tuple, float, tuple] | None = None   # (files' key, when, cursor) of the last count
        self._held = threading.local()     # per thread: the connection of a ``held`` block
        self.display = display
        self._task_path = "w.task_path" if has_task_path else "''"
        self._list_sql: str | None = None

    def _listing_sql(self) -> str:
        if self._list_sql is None:
            try:
                self._all("SELECT json_valid('{}')")
                meta = _META_JSON1
            except StoreError:
                meta = _META_PLAIN
            self._list_sql = _LIST.format(meta=meta)
        return self._list_sql

    def _all(self, sql: str, **params: Any) -> list[Any]:
        """Run one query on a connection's sqlite3 cursor (plain tuples, no Row cost): the one
        a ``held`` block holds (replaced first when it is ``_stale``), else one of its own."""
        held = getattr(self._held, "conn", None)
        if held is not None and self._stale(held):
            self._held.conn = None      # the files changed under a snapshot: the block goes on on a new one
            self._give_back(held, True)
            held = self._held.conn = self._take()
        conn = held if held is not None else self._take()
        broken = False
        cur = self._driver(conn).cursor()
        try:
            cur.execute(sql, params)
            return cur.fetchall()
        except sqlite3.Error as err:
            broken = True
            raise self._translate(err) from err
        finally:
            cur.close()
            if held is None or broken:
                if held is not None:    # the block's next queries take connections of their own
                    self._held.conn = None
                self._give_back(conn, broken)

    # a connection: the read pool's sqlite3 connection, or a connection of the engine
    def _take(self) -> Any:
        if self.pool is not None:
            try:
                return self.pool.checkout()
            except sqlite3.Error as err:
                raise dberrors.translate_driver(err, self.display) from err
        from inspector.store.engine import guard

        assert self.engine is not None
        with guard(self.display):
            return self.engine.connect()

    def _give_back(self, conn: Any, broken: bool = False) -> None:
        if self.pool is not None:
            self.pool.checkin(conn, broken)
        else:
            conn.close()

    def _driver(self, conn: Any) -> sqlite3.Connection:
        if self.pool is not None:
            return conn
        driver = conn.connection.dbapi_connection
        assert isinstance(driver, sqlite3.Connection)   # pysqlite's pool hands out sqlite3 connections
        return driver

    def _translate(self, err: sqlite3.Error) -> StoreError:
        if self.pool is not None:
            return dberrors.translate_driver(err, self.display)
        from inspector.store.engine import translate
        return translate(err, self.display)

    def _stale(self, conn: Any) -> bool:
        """Whether ``conn`` (held for a block) reads a snapshot of files that have changed
        since it opened (``sqlite_ro.signature``): an immutable connection must then not read
        on. A connection that follows writers (``-shm``) never is."""
        opened = getattr(self._driver(conn), "ci_signature", None)
        return (opened is not None and self.path is not None and opened[0] != sqlite_ro.SHARED
                and opened != sqlite_ro.signature(self.path))

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """A block whose queries (run by this thread) share one connection, given back at its
        end. A connection that follows a writer (``-shm``) is otherwise opened and closed for
        every query (see ``sqlite_ro.ReadPool`` and the read-only engine): a load of one
        checkpoint runs several, and opening one costs as much as the query. Each query
        still reads the database as committed when it starts (no transaction is held open),
        and the connection is closed at the block's end as before."""
        if getattr(self._held, "conn", None) is not None:
            yield
            return
        self._held.conn = self._take()
        try:
            yield
        finally:
            # the one held now (a query may have replaced it, or given it back after failing)
            held, self._held.conn = getattr(self._held, "conn", None), None
            if held is not None:
                self._give_back(held)

    def close(self) -> None:
        """Close the connections of a reader on its own (an engine is the store's to dispose of)."""
        if self.pool is not None:
            self.pool.close()

    @staticmethod
    def _where(thread_id: str | None) -> str:
        return "" if thread_id is None else "AND thread_id = :thread"

    # -- threads ------------------------------------------------------------------------------
    def threads(self, thread_id: str | None = None) -> list[ThreadRow]:
        """Every thread (or one) with first/last checkpoint ids and the checkpoint count."""
        where = "" if thread_id is None else "WHERE thread_id = :thread"
        rows = self._all(f"SELECT thread_id, MIN(checkpoint_id), MAX(checkpoint_id), COUNT(*) "
                         f"FROM checkpoints {where} GROUP BY thread_id", thread=thread_id)
        return [ThreadRow(_text(r[0]), _text(r[1]), _text(r[2]), _int(r[3])) for r in rows]

    def heads(self, thread_id: str | None = None) -> list[HeadRow]:
        """The root-namespace head of every thread (or one) with metadata; ``blob`` is None."""
        rows = self._all(_HEADS.format(where=self._where(thread_id)), thread=thread_id)
        return [HeadRow(_text(r[0]), _text(r[1]), _opt(r[2]), None, r[4]) for r in rows]

    def head_bodies(self, keys: list[tuple[str, str]]) -> dict[tuple[str, str], HeadRow]:
        """Root-namespace bodies for (thread_id, checkpoint_id) pairs, in batches of 400."""
        found: dict[tuple[str, str], HeadRow] = {}
        for start in range(0, len(keys), 400):
            chunk = keys[start:start + 400]
            pairs = ", ".join(f"(:t{i}, :c{i})" for i in range(len(chunk)))
            params = {f"t{i}": t for i, (t, _) in enumerate(chunk)}
            params.update({f"c{i}": c for i, (_, c) in enumerate(chunk)})
            rows = self._all(f"WITH k(t, c) AS (VALUES {pairs}) "
                             "SELECT x.thread_id, x.checkpoint_id, x.type, x.checkpoint FROM k "
                             "JOIN checkpoints x ON x.thread_id = k.t AND x.checkpoint_ns = '' "
                             f"AND {_is_id('x.checkpoint_id', 'k.c')}", **params)
            for r in rows:
                found[(_text(r[0]), _text(r[1]))] = HeadRow(_text(r[0]), _text(r[1]), _opt(r[2]), r[3], None)
        return found

    def head_writes(self, thread_id: str | None = None) -> list[tuple[str, WriteRow]]:
        """Pending writes of every head: (thread_id, row); only ``__error__`` values are read."""
        sql = _HEAD_WRITES.format(task_path=self._task_path,
                                  where=self._where(thread_id))
        rows = self._all(sql, thread=thread_id)
        return [(_text(r[0]), WriteRow("", "", _text(r[1]), _text(r[2]), _int(r[3]), _text(r[4]), _opt(r[5]), r[6]))
                for r in rows]

    # -- checkpoints ----------------------------------------------------------------------------
    def count_checkpoints(self, thread_id: str) -> int:
        """Checkpoints of a thread in every namespace."""
        rows = self._all("SELECT COUNT(*) FROM checkpoints WHERE thread_id = :thread", thread=thread_id)
        return _int(rows[0][0])

    def list_rows(self, thread_id: str, offset: int, limit: int | None) -> list[ListRow]:
        """One page of a thread's checkpoints ordered by (checkpoint_id, namespace), no bodies.

        ``metadata.source``/``step`` are extracted in SQL; the metadata text itself is only
        returned when more is needed (a lane's first checkpoint, legacy ``writes``, bad JSON).
        """
        rows = self._all(self._listing_sql(), thread=thread_id, offset=max(0, offset),
                         limit=-1 if limit is None else max(0, limit))
        make = ListRow._make
        return [make(r) for r in rows]

    def task_outputs(self, thread_id: str, lo: str, hi: str, ns: str | None = None) -> list[TaskOutputRow]:
        """Per (checkpoint, task) the output channels written, for checkpoints lo ≤ id ≤ hi
        (of namespace ``ns`` only, when given: a range of the primary key, not a scan of the
        thread's writes).

        One row per task, not per write; control writes and the null task are left out, so a
        task appears here iff it finished (LangGraph's rule).
        """
        space, space_params = self._in_space(ns)
        rows = self._all(
            "SELECT COALESCE(CAST(w.checkpoint_ns AS TEXT), ''), CAST(w.checkpoint_id AS TEXT), "
            f"COALESCE(CAST({self._task_path} AS TEXT), ''), "
            "group_concat(CAST(w.channel AS TEXT), :sep), CAST(w.task_id AS TEXT) FROM writes w "
            f"WHERE w.thread_id = :thread {space}"
            "AND w.checkpoint_id BETWEEN :lo AND :hi "
            "AND w.task_id != :null_task AND w.channel NOT IN "
            "('__error__', '__error_source_node__', '__interrupt__', '__resume__') "
            "GROUP BY w.checkpoint_ns, w.checkpoint_id, w.task_id",
            thread=thread_id, lo=lo, hi=hi, sep=CHANNEL_SEP, null_task=NULL_TASK_ID,
            **space_params)
        make = TaskOutputRow._make
        return [make(r) for r in rows]

    def child_counts(self, thread_id: str, lo: str, hi: str) -> dict[tuple[str, str], int]:
        """(namespace, parent id) → number of children, for parents lo ≤ id ≤ hi with several."""
        rows = self._all("SELECT checkpoint_ns, parent_checkpoint_id, COUNT(*) FROM checkpoints "
                         "WHERE thread_id = :thread AND parent_checkpoint_id BETWEEN :lo AND :hi "
                         "GROUP BY checkpoint_ns, parent_checkpoint_id HAVING COUNT(*) > 1",
                         thread=thread_id, lo=lo, hi=hi)
        return {(_text(r[0]), _text(r[1])): _int(r[2]) for r in rows}

    def position(self, thread_id: str, ns: str, checkpoint_id: str) -> int | None:
        """The seq of a checkpoint (its rank in the listing order), None if it does not exist.
        Ranked by the id as stored: one held as a BLOB lists after every text id."""
        rows = self._all(
            "WITH m(id) AS (SELECT checkpoint_id FROM checkpoints WHERE thread_id = :thread "
            f"AND checkpoint_ns = :ns AND {_is_id('checkpoint_id', ':cid')} LIMIT 1) "
            "SELECT (SELECT COUNT(*) FROM checkpoints, m WHERE thread_id = :thread "
            "AND (checkpoint_id < m.id OR (checkpoint_id = m.id AND checkpoint_ns < :ns))) FROM m",
            thread=thread_id, ns=ns, cid=checkpoint_id)
        return _int(rows[0][0]) if rows else None

    def locate(self, checkpoint_id: str) -> list[tuple[str, str]]:
        """(thread, namespace) of every checkpoint with this LangGraph checkpoint id."""
        rows = self._all("SELECT thread_id, checkpoint_ns FROM checkpoints "
                         f"WHERE {_is_id('checkpoint_id', ':cid')} LIMIT 2", cid=checkpoint_id)
        return [(_text(r[0]), _text(r[1])) for r in rows]

    def body(self, thread_id: str, ns: str, checkpoint_id: str) -> BlobRow | None:
        """One checkpoint's serialized body and metadata."""
        rows = self._all("SELECT type, checkpoint, CAST(metadata AS BLOB), parent_checkpoint_id "
                         "FROM checkpoints WHERE thread_id = :thread AND checkpoint_ns = :ns "
                         f"AND {_is_id('checkpoint_id', ':cid')}", thread=thread_id, ns=ns, cid=checkpoint_id)
        if not rows:
            return None
        r = rows[0]
        return BlobRow(_opt(r[0]), r[1], r[2], _opt(r[3]))

    def writes(self, thread_id: str, ns: str, checkpoint_id: str) -> list[WriteRow]:
        """One checkpoint's pending writes with values, in (task, idx) order."""
        rows = self._all(f"SELECT w.task_id, {self._task_path}, w.idx, w.channel, w.type, w.value "
                         "FROM writes w WHERE w.thread_id = :thread AND w.checkpoint_ns = :ns "
                         "AND w.checkpoint_id = :cid ORDER BY w.task_id, w.idx",
                         thread=thread_id, ns=ns, cid=checkpoint_id)
        return [WriteRow(ns, checkpoint_id, _text(r[0]), _text(r[1]), _int(r[2]), _text(r[3]), _opt(r[4]),
                         r[5])
                for r in rows]

    def ancestry(self, thread_id: str, ns: str, checkpoint_id: str, depth: int) -> list[tuple[str, Any]]:
        """(checkpoint id, metadata text) of the parent chain, nearest first, at most ``depth``."""
        rows = self._all(_ANCESTRY, thread=thread_id, ns=ns, cid=checkpoint_id, depth=depth)
        return [(r[0], r[1]) for r in rows]

    def channel_writes(self, thread_id: str, ns: str, channel: str,
                       checkpoint_ids: list[str]) -> list[WriteRow]:
        """Pending writes to one channel at the given checkpoints (with values)."""
        marks = ", ".join(f":c{i}" for i in range(len(checkpoint_ids)))
        params = {f"c{i}": cid for i, cid in enumerate(checkpoint_ids)}
        rows = self._all(f"SELECT w.checkpoint_id, w.task_id, {self._task_path}, w.idx, w.type, w.value "
                         "FROM writes w WHERE w.thread_id = :thread AND w.checkpoint_ns = :ns "
                         f"AND w.channel = :channel AND w.checkpoint_id IN ({marks or 'NULL'})",
                         thread=thread_id, ns=ns, channel=channel, **params)
        return [WriteRow(ns, _text(r[0]), _text(r[1]), _text(r[2]), _int(r[3]), channel, _opt(r[4]), r[5])
                for r in rows]

    def namespaces(self, thread_id: str) -> list[str]:
        """Every namespace of a thread (root first)."""
        rows = self._all("SELECT DISTINCT checkpoint_ns FROM checkpoints WHERE thread_id = :thread "
                         "ORDER BY checkpoint_ns", thread=thread_id)
        return [_text(r[0]) for r in rows]

    # -- live -----------------------------------------------------------------------------------
    origin: tuple = (0, 0, 0)

    CURSOR_KEPT_S = 1.0     # the longest a cursor is given again without counting

    def cursor(self) -> tuple:
        """(max rowid of checkpoints, max rowid of writes, how many checkpoints), read at once:
        the rowids grow with every insert; the count tells deletions (``removed``). Counting
        reads the primary key's index: ~1 ms for 50,000 checkpoints, and a walk over a big
        thread asks at every checkpoint it loads. So the last one is given again while the
        files of a store nobody is writing show no commit since it was read
        (``sqlite_ro.change_key``, taken before the query: a commit after it changes the key)
        and it is under ``CURSOR_KEPT_S`` old; a store being written is counted every time."""
        key = sqlite_ro.change_key(self.path) if self.path is not None else None
        now = time.monotonic()
        kept = self._cursor
        if key is not None and kept is not None and kept[0] == key and now - kept[1] < self.CURSOR_KEPT_S:
            return kept[2]
        rows = self._all("SELECT (SELECT COALESCE(MAX(rowid), 0) FROM checkpoints), "
                         "(SELECT COALESCE(MAX(rowid), 0) FROM writes), (SELECT COUNT(*) FROM checkpoints)")
        found = (_int(rows[0][0]), _int(rows[0][1]), _int(rows[0][2]))
        self._cursor = None if key is None else (key, now, found)
        return found

    @staticmethod
    def removed(cursor: tuple, upto: tuple, added: int) -> bool:
        """Whether checkpoints were deleted between the cursors, ``added`` rows having been
        inserted: fewer rows than before plus those. (A checkpoint saved again under its id
        is a deletion and an insert to SQLite: it reads as a deletion, and what is shown is
        read again.)"""
        return upto[2] < cursor[2] + added

    def changed_since(self, cursor: tuple, upto: tuple) -> tuple[list[tuple[str, str, str]], set[str]]:
        """Checkpoints inserted in (cursor, upto] and threads that got writes in that window."""
        cps = self._all("SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints "
                        "WHERE rowid > :lo AND rowid <= :hi ORDER BY rowid", lo=cursor[0], hi=upto[0])
        threads = self._all("SELECT DISTINCT thread_id FROM writes WHERE rowid > :lo AND rowid <= :hi",
                            lo=cursor[1], hi=upto[1])
        return ([(_text(r[0]), _text(r[1]), _text(r[2])) for r in cps], {_text(r[0]) for r in threads})
