"""SQLite-only SQL for SqliteSaver databases: every query the LangGraph adapter runs lives here.

All reads are batched: listing a thread's checkpoints costs three queries per page whatever
its size (rows without bodies, the parents' write summaries without values, branch counts);
no query runs per checkpoint. Bodies and write values are read only by ``body``/``writes``
(one checkpoint) and ``heads`` (one row per thread).
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from inspector.store.engine import guard
from inspector.store.langgraph.rows import BlobRow, HeadRow, ListRow, ThreadRow, WriteRow

_HEADS = """
SELECT c.thread_id, c.checkpoint_id, c.type, c.checkpoint, CAST(c.metadata AS TEXT)
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
  ON w.thread_id = h.thread_id AND w.checkpoint_ns = '' AND w.checkpoint_id = h.head
ORDER BY w.thread_id, w.task_id, w.idx
"""
_LIST = """
SELECT c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, CAST(c.metadata AS TEXT),
       COALESCE(LENGTH(c.checkpoint), 0) + COALESCE(LENGTH(c.metadata), 0),
       COALESCE(LENGTH(p.checkpoint), 0) + COALESCE(LENGTH(p.metadata), 0),
       p.checkpoint_id IS NOT NULL
FROM checkpoints c
LEFT JOIN checkpoints p ON p.thread_id = c.thread_id AND p.checkpoint_ns = c.checkpoint_ns
                       AND p.checkpoint_id = c.parent_checkpoint_id
WHERE c.thread_id = :thread
ORDER BY c.checkpoint_id, c.checkpoint_ns
LIMIT :limit OFFSET :offset
"""


def _int(value: Any) -> int:
    """SQLite columns are dynamically typed: a crafted row may hold text where a number belongs."""
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return "" if value is None else str(value)


class SqliteReader:
    """Runs the adapter's queries on a SqliteSaver database through a SQLAlchemy engine."""

    def __init__(self, engine: sa.Engine, display: str, has_task_path: bool) -> None:
        self.engine = engine
        self.display = display
        self._task_path = "w.task_path" if has_task_path else "''"

    def _all(self, sql: str, **params: Any) -> list[Any]:
        with guard(self.display), self.engine.connect() as conn:
            return list(conn.execute(sa.text(sql), params))

    @staticmethod
    def _where(thread_id: str | None, alias: str = "") -> str:
        return "" if thread_id is None else f"AND {alias}thread_id = :thread"

    # -- threads ------------------------------------------------------------------------------
    def threads(self, thread_id: str | None = None) -> list[ThreadRow]:
        """Every thread (or one) with first/last checkpoint ids and the checkpoint count."""
        where = "" if thread_id is None else "WHERE thread_id = :thread"
        rows = self._all(f"SELECT thread_id, MIN(checkpoint_id), MAX(checkpoint_id), COUNT(*) "
                         f"FROM checkpoints {where} GROUP BY thread_id", thread=thread_id)
        return [ThreadRow(_text(r[0]), _text(r[1]), _text(r[2]), _int(r[3])) for r in rows]

    def heads(self, thread_id: str | None = None) -> list[HeadRow]:
        """The root-namespace head of every thread (or one), with body and metadata."""
        rows = self._all(_HEADS.format(where=self._where(thread_id)), thread=thread_id)
        return [HeadRow(_text(r[0]), _text(r[1]), r[2], r[3], r[4]) for r in rows]

    def head_writes(self, thread_id: str | None = None) -> list[tuple[str, WriteRow]]:
        """Pending writes of every head: (thread_id, row); only ``__error__`` values are read."""
        sql = _HEAD_WRITES.format(task_path=self._task_path,
                                  where=self._where(thread_id))
        rows = self._all(sql, thread=thread_id)
        return [(_text(r[0]), WriteRow("", "", _text(r[1]), r[2] or "", _int(r[3]), _text(r[4]), r[5], r[6]))
                for r in rows]

    # -- checkpoints ----------------------------------------------------------------------------
    def count_checkpoints(self, thread_id: str) -> int:
        """Checkpoints of a thread in every namespace."""
        rows = self._all("SELECT COUNT(*) FROM checkpoints WHERE thread_id = :thread", thread=thread_id)
        return _int(rows[0][0])

    def list_rows(self, thread_id: str, offset: int, limit: int | None) -> list[ListRow]:
        """One page of a thread's checkpoints ordered by (checkpoint_id, namespace), no bodies."""
        rows = self._all(_LIST, thread=thread_id, offset=max(0, offset),
                         limit=-1 if limit is None else max(0, limit))
        return [ListRow(_text(r[0]), _text(r[1]), None if r[2] is None else _text(r[2]), r[3],
                        _int(r[4]), _int(r[5]) if r[6] else None) for r in rows]

    def write_summaries(self, thread_id: str, lo: str, hi: str) -> list[WriteRow]:
        """Pending writes (no values) of the thread's checkpoints with lo ≤ id ≤ hi."""
        rows = self._all(f"SELECT w.checkpoint_ns, w.checkpoint_id, w.task_id, {self._task_path}, "
                         "w.idx, w.channel, w.type FROM writes w WHERE w.thread_id = :thread "
                         "AND w.checkpoint_id BETWEEN :lo AND :hi", thread=thread_id, lo=lo, hi=hi)
        return [WriteRow(_text(r[0]), _text(r[1]), _text(r[2]), r[3] or "", _int(r[4]), _text(r[5]),
                         r[6], None) for r in rows]

    def child_counts(self, thread_id: str, lo: str, hi: str) -> dict[tuple[str, str], int]:
        """(namespace, parent id) → number of children, for parents lo ≤ id ≤ hi with several."""
        rows = self._all("SELECT checkpoint_ns, parent_checkpoint_id, COUNT(*) FROM checkpoints "
                         "WHERE thread_id = :thread AND parent_checkpoint_id BETWEEN :lo AND :hi "
                         "GROUP BY checkpoint_ns, parent_checkpoint_id HAVING COUNT(*) > 1",
                         thread=thread_id, lo=lo, hi=hi)
        return {(_text(r[0]), _text(r[1])): _int(r[2]) for r in rows}

    def position(self, thread_id: str, ns: str, checkpoint_id: str) -> int | None:
        """The seq of a checkpoint (its rank in the listing order), None if it does not exist."""
        rows = self._all(
            "SELECT EXISTS(SELECT 1 FROM checkpoints WHERE thread_id = :thread "
            "AND checkpoint_ns = :ns AND checkpoint_id = :cid), "
            "(SELECT COUNT(*) FROM checkpoints WHERE thread_id = :thread AND (checkpoint_id < :cid "
            "OR (checkpoint_id = :cid AND checkpoint_ns < :ns)))",
            thread=thread_id, ns=ns, cid=checkpoint_id)
        return _int(rows[0][1]) if rows and rows[0][0] else None

    def locate(self, checkpoint_id: str) -> list[tuple[str, str]]:
        """(thread, namespace) of every checkpoint with this LangGraph checkpoint id."""
        rows = self._all("SELECT thread_id, checkpoint_ns FROM checkpoints "
                         "WHERE checkpoint_id = :cid LIMIT 2", cid=checkpoint_id)
        return [(_text(r[0]), _text(r[1])) for r in rows]

    def body(self, thread_id: str, ns: str, checkpoint_id: str) -> BlobRow | None:
        """One checkpoint's serialized body and metadata."""
        rows = self._all("SELECT type, checkpoint, CAST(metadata AS TEXT), parent_checkpoint_id "
                         "FROM checkpoints WHERE thread_id = :thread AND checkpoint_ns = :ns "
                         "AND checkpoint_id = :cid", thread=thread_id, ns=ns, cid=checkpoint_id)
        if not rows:
            return None
        r = rows[0]
        return BlobRow(r[0], r[1], r[2], None if r[3] is None else _text(r[3]))

    def writes(self, thread_id: str, ns: str, checkpoint_id: str) -> list[WriteRow]:
        """One checkpoint's pending writes with values, in (task, idx) order."""
        rows = self._all(f"SELECT w.task_id, {self._task_path}, w.idx, w.channel, w.type, w.value "
                         "FROM writes w WHERE w.thread_id = :thread AND w.checkpoint_ns = :ns "
                         "AND w.checkpoint_id = :cid ORDER BY w.task_id, w.idx",
                         thread=thread_id, ns=ns, cid=checkpoint_id)
        return [WriteRow(ns, checkpoint_id, _text(r[0]), r[1] or "", _int(r[2]), _text(r[3]), r[4], r[5])
                for r in rows]

    def namespaces(self, thread_id: str) -> list[str]:
        """Every namespace of a thread (root first)."""
        rows = self._all("SELECT DISTINCT checkpoint_ns FROM checkpoints WHERE thread_id = :thread "
                         "ORDER BY checkpoint_ns", thread=thread_id)
        return [_text(r[0]) for r in rows]

    # -- live -----------------------------------------------------------------------------------
    def cursor(self) -> tuple:
        """(max rowid of checkpoints, max rowid of writes): cheap, grows with every insert."""
        rows = self._all("SELECT (SELECT COALESCE(MAX(rowid), 0) FROM checkpoints), "
                         "(SELECT COALESCE(MAX(rowid), 0) FROM writes)")
        return (_int(rows[0][0]), _int(rows[0][1]))

    def changed_since(self, cursor: tuple, upto: tuple) -> tuple[list[tuple[str, str, str]], set[str]]:
        """Checkpoints inserted in (cursor, upto] and threads that got writes in that window."""
        cps = self._all("SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints "
                        "WHERE rowid > :lo AND rowid <= :hi ORDER BY rowid", lo=cursor[0], hi=upto[0])
        threads = self._all("SELECT DISTINCT thread_id FROM writes WHERE rowid > :lo AND rowid <= :hi",
                            lo=cursor[1], hi=upto[1])
        return ([(_text(r[0]), _text(r[1]), _text(r[2])) for r in cps], {_text(r[0]) for r in threads})
