"""PostgreSQL-only SQL for PostgresSaver databases: the same ``Reader`` interface as SQLite.

PostgresSaver keeps primitive channel values inline in the ``checkpoint`` JSONB and every
other value in ``checkpoint_blobs`` under ``(channel, version)``; a checkpoint's values are
"inline primitives ∪ the blobs at the versions its ``channel_versions`` names" (reference
§1.2). Bodies are therefore assembled here: ``body`` returns the JSONB re-packed as msgpack
(so the shared decoding applies unchanged) plus ``BlobRow.channel_blobs``; the blobs come
from the ``jsonb_each_text(checkpoint -> 'channel_versions')`` join in the same query, and
``head_bodies`` does that for a batch of heads at once (no query per checkpoint).

Ordering and comparisons of ids use ``COLLATE "C"`` (byte order, as SQLite compares).
The live cursor is ``(newest checkpoint id, writes activity)``: new checkpoints are found by
id (LangGraph ids are time-ordered UUIDv6); pending writes on existing checkpoints are seen
through the server's table statistics, which lag by up to a few seconds.
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa

from inspector.store.engine import guard
from inspector.store.langgraph.decode import BlobError, decode_typed, pack, unpack
from inspector.store.langgraph.ids import id_time
from inspector.store.langgraph.pregel import NULL_TASK_ID
from inspector.store.langgraph.rows import (CHANNEL_SEP, BlobRow, HeadRow, ListRow, TaskOutputRow,
                                          ThreadRow, WriteRow)
from inspector.store.langgraph.shared_queries import SharedWriteQueries

C = 'COLLATE "C"'
_BLOBS_OF = """(SELECT array_agg(bl.channel), array_agg(bl.type), array_agg(bl.blob)
    FROM jsonb_each_text({c}.checkpoint -> 'channel_versions') v
    JOIN checkpoint_blobs bl ON bl.thread_id = {c}.thread_id AND bl.checkpoint_ns = {c}.checkpoint_ns
     AND bl.channel = v.key AND bl.version = v.value {extra})"""
_BLOB_SIZE = """(SELECT COALESCE(SUM(pg_column_size(bl.blob)), 0)
    FROM jsonb_each_text({c}.checkpoint -> 'channel_versions') v
    JOIN checkpoint_blobs bl ON bl.thread_id = {c}.thread_id AND bl.checkpoint_ns = {c}.checkpoint_ns
     AND bl.channel = v.key AND bl.version = v.value)"""
_HEADS = f"""SELECT DISTINCT ON (thread_id) thread_id, checkpoint_id FROM checkpoints
WHERE checkpoint_ns = '' {{where}} ORDER BY thread_id, checkpoint_id {C} DESC"""
_LIST = f"""
SELECT c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id,
       c.metadata ->> 'source', c.metadata -> 'step',
       CASE WHEN c.parent_checkpoint_id IS NULL OR jsonb_typeof(c.metadata -> 'writes') = 'object'
            THEN c.metadata END,
       pg_column_size(c.checkpoint) + pg_column_size(c.metadata) + {_BLOB_SIZE.format(c='c')},
       CASE WHEN p.checkpoint_id IS NOT NULL THEN
            pg_column_size(p.checkpoint) + pg_column_size(p.metadata) + {_BLOB_SIZE.format(c='p')} END
FROM (SELECT * FROM checkpoints WHERE thread_id = :thread
      ORDER BY checkpoint_id {C}, checkpoint_ns {C} LIMIT :limit OFFSET :offset) c
LEFT JOIN checkpoints p ON p.thread_id = c.thread_id AND p.checkpoint_ns = c.checkpoint_ns
                       AND p.checkpoint_id = c.parent_checkpoint_id
ORDER BY c.checkpoint_id {C}, c.checkpoint_ns {C}
"""
_ANCESTRY = """
WITH RECURSIVE chain(cid, depth) AS (
  SELECT parent_checkpoint_id, 1 FROM checkpoints
  WHERE thread_id = :thread AND checkpoint_ns = :ns AND checkpoint_id = :cid
  UNION ALL
  SELECT c.parent_checkpoint_id, chain.depth + 1 FROM chain
  JOIN checkpoints c ON c.thread_id = :thread AND c.checkpoint_ns = :ns AND c.checkpoint_id = chain.cid
  WHERE chain.depth < :depth
)
SELECT chain.cid, c.metadata FROM chain
JOIN checkpoints c ON c.thread_id = :thread AND c.checkpoint_ns = :ns AND c.checkpoint_id = chain.cid
ORDER BY chain.depth
"""
RECENT_WRITES_SECONDS = 600.0


def _blob_map(channels: Any, types: Any, blobs: Any) -> dict[str, tuple[str | None, bytes | None]]:
    """channel → (type, bytes) from three parallel arrays; ``empty`` versions hold no value."""
    out: dict[str, tuple[str | None, bytes | None]] = {}
    for channel, tag, data in zip(channels or (), types or (), blobs or (), strict=False):
        if tag != "empty":
            out[channel] = (tag, bytes(data) if data is not None else None)
    return out


def _lossless(tag: str | None, data: bytes | None) -> Any:
    """A blob as a lossless value (msgpack) or its decoded form (other tags)."""
    try:
        return unpack(data) if tag == "msgpack" and data is not None else decode_typed(tag, data)
    except BlobError as err:
        return {"__error__": f"cannot decode: {err}"}


def id_floor(seconds: float) -> str:
    """The smallest UUIDv6 text at a Unix time: ids of checkpoints made after it sort higher."""
    ticks = int(seconds * 1e7) + 0x01B21DD213814000
    high, mid, low = ticks >> 28, (ticks >> 12) & 0xFFFF, ticks & 0x0FFF
    return f"{high:08x}-{mid:04x}-6{low:03x}-0000-000000000000"


class PgReader(SharedWriteQueries):
    """Runs the adapter's queries on a PostgresSaver database through a SQLAlchemy engine."""

    WRITES = "checkpoint_writes"
    WRITE_VALUE = "blob"
    ID_ORDER = C

    origin: tuple = ("", -1, 0)

    def __init__(self, engine: sa.Engine, display: str, has_task_path: bool,
                 task_channel: str | None = None) -> None:
        self.engine = engine
        self.display = display
        self.task_channel = task_channel
        self._task_path = "w.task_path" if has_task_path else "''"

    def _all(self, sql: str, **params: Any) -> list[Any]:
        with guard(self.display), self.engine.connect() as conn:
            return list(conn.execute(sa.text(sql), params).all())

    @staticmethod
    def _where(thread_id: str | None) -> str:
        return "" if thread_id is None else "AND thread_id = :thread"

    def format_version(self) -> int | None:
        """The PostgresSaver migration level (``MAX(v)`` of ``checkpoint_migrations``)."""
        try:
            rows = self._all("SELECT MAX(v) FROM checkpoint_migrations")
        except Exception:  # table absent or unreadable: not essential
            return None
        return int(rows[0][0]) if rows and rows[0][0] is not None else None

    # -- threads ------------------------------------------------------------------------------
    def threads(self, thread_id: str | None = None) -> list[ThreadRow]:
        """Every thread (or one) with first/last checkpoint ids and the checkpoint count."""
        where = "" if thread_id is None else "WHERE thread_id = :thread"
        rows = self._all(f"SELECT thread_id, MIN(checkpoint_id {C}), MAX(checkpoint_id {C}), COUNT(*) "
                         f"FROM checkpoints {where} GROUP BY thread_id", thread=thread_id)
        return [ThreadRow(r[0], r[1], r[2], int(r[3])) for r in rows]

    def heads(self, thread_id: str | None = None) -> list[HeadRow]:
        """The root-namespace head of every thread (or one) with metadata; ``blob`` is None."""
        rows = self._all(f"SELECT c.thread_id, c.checkpoint_id, c.metadata FROM ({_HEADS}) h "
                         "JOIN checkpoints c ON c.thread_id = h.thread_id AND c.checkpoint_ns = '' "
                         "AND c.checkpoint_id = h.checkpoint_id".format(where=self._where(thread_id)),
                         thread=thread_id)
        return [HeadRow(r[0], r[1], "msgpack", None, r[2]) for r in rows]

    def head_bodies(self, keys: list[tuple[str, str]]) -> dict[tuple[str, str], HeadRow]:
        """Root-namespace bodies for (thread, checkpoint) pairs, in batches of 1000.

        The body is the JSONB with every blob channel *named* in ``channel_values`` (value
        None) — enough for next nodes — and only the task channel's blob value filled in
        (every blob value when the reader has no ``task_channel``).
        """
        task_channel = self.task_channel
        extra = "" if task_channel is None else "AND bl.channel = :task_channel"
        found: dict[tuple[str, str], HeadRow] = {}
        for start in range(0, len(keys), 1000):
            chunk = keys[start:start + 1000]
            rows = self._all(
                "SELECT c.thread_id, c.checkpoint_id, c.checkpoint, "
                "(SELECT array_agg(bl.channel) FROM jsonb_each_text(c.checkpoint -> 'channel_versions') v "
                " JOIN checkpoint_blobs bl ON bl.thread_id = c.thread_id AND bl.checkpoint_ns = '' "
                " AND bl.channel = v.key AND bl.version = v.value AND bl.type <> 'empty'), "
                f"b.* FROM unnest(CAST(:threads AS text[]), CAST(:cids AS text[])) AS k(t, id) "
                "JOIN checkpoints c ON c.thread_id = k.t AND c.checkpoint_ns = '' AND c.checkpoint_id = k.id "
                f"LEFT JOIN LATERAL {_BLOBS_OF.format(c='c', extra=extra)} b ON true",
                threads=[t for t, _ in chunk], cids=[c for _, c in chunk], task_channel=task_channel)
            for r in rows:
                body = dict(r[2]) if isinstance(r[2], dict) else {}
                values = dict(body.get("channel_values") or {})
                values.update({name: None for name in r[3] or () if name not in values})
                values.update({ch: _lossless(*tv) for ch, tv in _blob_map(r[4], r[5], r[6]).items()})
                body["channel_values"] = values
                try:
                    blob: bytes | None = pack(body)
                except (TypeError, ValueError, OverflowError):   # unreadable head: status unknown
                    blob = None
                found[(r[0], r[1])] = HeadRow(r[0], r[1], "msgpack", blob, None)
        return found

    def head_writes(self, thread_id: str | None = None) -> list[tuple[str, WriteRow]]:
        """Pending writes of every head: (thread_id, row); only ``__error__`` values are read."""
        rows = self._all(
            f"SELECT w.thread_id, w.task_id, {self._task_path}, w.idx, w.channel, w.type, "
            "CASE WHEN w.channel = '__error__' THEN w.blob END "
            f"FROM checkpoint_writes w JOIN ({_HEADS.format(where=self._where(thread_id))}) h "
            "ON w.thread_id = h.thread_id AND w.checkpoint_ns = '' AND w.checkpoint_id = h.checkpoint_id "
            "ORDER BY w.thread_id, w.task_id, w.idx", thread=thread_id)
        return [(r[0], WriteRow("", "", r[1], r[2] or "", int(r[3]), r[4], r[5],
                                bytes(r[6]) if r[6] is not None else None)) for r in rows]

    # -- checkpoints ----------------------------------------------------------------------------
    def count_checkpoints(self, thread_id: str) -> int:
        """Checkpoints of a thread in every namespace."""
        return int(self._all("SELECT COUNT(*) FROM checkpoints WHERE thread_id = :thread",
                             thread=thread_id)[0][0])

    def list_rows(self, thread_id: str, offset: int, limit: int | None) -> list[ListRow]:
        """One page of a thread's checkpoints ordered by (checkpoint_id, namespace), no bodies.

        Sizes are stored bytes: the checkpoint and metadata JSONB plus the blobs it names.
        """
        rows = self._all(_LIST, thread=thread_id, offset=max(0, offset),
                         limit=None if limit is None else max(0, limit))
        return [ListRow(r[0], r[1], r[2], r[3], r[4], r[5], int(r[6] or 0),
                        None if r[7] is None else int(r[7])) for r in rows]

    def task_outputs(self, thread_id: str, lo: str, hi: str, ns: str | None = None) -> list[TaskOutputRow]:
        """Per (checkpoint, task) the output channels written, for checkpoints lo ≤ id ≤ hi
        (of namespace ``ns`` only, when given)."""
        space, space_params = self._in_space(ns)
        rows = self._all(
            f"SELECT w.checkpoint_ns, w.checkpoint_id, COALESCE(MAX({self._task_path}), ''), "
            "string_agg(w.channel, :sep), w.task_id FROM checkpoint_writes w "
            f"WHERE w.thread_id = :thread {space}"
            f"AND w.checkpoint_id {C} BETWEEN :lo AND :hi "
            "AND w.task_id <> :null_task AND w.channel NOT IN "
            "('__error__', '__error_source_node__', '__interrupt__', '__resume__') "
            "GROUP BY w.checkpoint_ns, w.checkpoint_id, w.task_id",
            thread=thread_id, lo=lo, hi=hi, sep=CHANNEL_SEP, null_task=NULL_TASK_ID,
            **space_params)
        return [TaskOutputRow(r[0], r[1], r[2], r[3], r[4]) for r in rows]

    def child_counts(self, thread_id: str, lo: str, hi: str) -> dict[tuple[str, str], int]:
        """(namespace, parent id) → number of children, for parents lo ≤ id ≤ hi with several."""
        rows = self._all("SELECT checkpoint_ns, parent_checkpoint_id, COUNT(*) FROM checkpoints "
                         f"WHERE thread_id = :thread AND parent_checkpoint_id {C} BETWEEN :lo AND :hi "
                         "GROUP BY checkpoint_ns, parent_checkpoint_id HAVING COUNT(*) > 1",
                         thread=thread_id, lo=lo, hi=hi)
        return {(r[0], r[1]): int(r[2]) for r in rows}

    def position(self, thread_id: str, ns: str, checkpoint_id: str) -> int | None:
        """The seq of a checkpoint (its rank in the listing order), None if it does not exist."""
        rows = self._all(
            "SELECT EXISTS(SELECT 1 FROM checkpoints WHERE thread_id = :thread "
            "AND checkpoint_ns = :ns AND checkpoint_id = :cid), "
            f"(SELECT COUNT(*) FROM checkpoints WHERE thread_id = :thread AND (checkpoint_id {C} < :cid "
            f"OR (checkpoint_id = :cid AND checkpoint_ns {C} < :ns)))",
            thread=thread_id, ns=ns, cid=checkpoint_id)
        return int(rows[0][1]) if rows and rows[0][0] else None

    def locate(self, checkpoint_id: str) -> list[tuple[str, str]]:
        """(thread, namespace) of every checkpoint with this LangGraph checkpoint id."""
        rows = self._all("SELECT thread_id, checkpoint_ns FROM checkpoints "
                         "WHERE checkpoint_id = :cid LIMIT 2", cid=checkpoint_id)
        return [(r[0], r[1]) for r in rows]

    def body(self, thread_id: str, ns: str, checkpoint_id: str) -> BlobRow | None:
        """One checkpoint: the JSONB re-packed as msgpack, metadata, and its channel blobs."""
        rows = self._all(f"SELECT c.checkpoint, c.metadata, c.parent_checkpoint_id, b.* FROM checkpoints c "
                         f"LEFT JOIN LATERAL {_BLOBS_OF.format(c='c', extra='')} b ON true "
                         "WHERE c.thread_id = :thread AND c.checkpoint_ns = :ns AND c.checkpoint_id = :cid",
                         thread=thread_id, ns=ns, cid=checkpoint_id)
        if not rows:
            return None
        r = rows[0]
        try:
            tag, data = "msgpack", pack(r[0])
        except (TypeError, ValueError, OverflowError):   # e.g. an integer beyond 64 bits
            tag, data = "json", json.dumps(r[0]).encode("utf-8")
        return BlobRow(tag, data, r[1], r[2], _blob_map(r[3], r[4], r[5]))

    def writes(self, thread_id: str, ns: str, checkpoint_id: str) -> list[WriteRow]:
        """One checkpoint's pending writes with values, in (task, idx) order."""
        rows = self._all(f"SELECT w.task_id, {self._task_path}, w.idx, w.channel, w.type, w.blob "
                         "FROM checkpoint_writes w WHERE w.thread_id = :thread AND w.checkpoint_ns = :ns "
                         "AND w.checkpoint_id = :cid ORDER BY w.task_id, w.idx",
                         thread=thread_id, ns=ns, cid=checkpoint_id)
        return [WriteRow(ns, checkpoint_id, r[0], r[1] or "", int(r[2]), r[3], r[4],
                         bytes(r[5]) if r[5] is not None else None) for r in rows]

    def ancestry(self, thread_id: str, ns: str, checkpoint_id: str, depth: int) -> list[tuple[str, Any]]:
        """(checkpoint id, metadata) of the parent chain, nearest first, at most ``depth``."""
        rows = self._all(_ANCESTRY, thread=thread_id, ns=ns, cid=checkpoint_id, depth=depth)
        return [(r[0], r[1]) for r in rows]

    def channel_writes(self, thread_id: str, ns: str, channel: str,
                       checkpoint_ids: list[str]) -> list[WriteRow]:
        """Pending writes to one channel at the given checkpoints (with values)."""
        rows = self._all(f"SELECT w.checkpoint_id, w.task_id, {self._task_path}, w.idx, w.type, w.blob "
                         "FROM checkpoint_writes w WHERE w.thread_id = :thread AND w.checkpoint_ns = :ns "
                         "AND w.channel = :channel AND w.checkpoint_id = ANY(CAST(:ids AS text[]))",
                         thread=thread_id, ns=ns, channel=channel, ids=list(checkpoint_ids))
        return [WriteRow(ns, r[0], r[1], r[2] or "", int(r[3]), channel, r[4],
                         bytes(r[5]) if r[5] is not None else None) for r in rows]

    def namespaces(self, thread_id: str) -> list[str]:
        """Every namespace of a thread (root first)."""
        rows = self._all(f"SELECT DISTINCT checkpoint_ns {C} FROM checkpoints WHERE thread_id = :thread "
                         "ORDER BY 1", thread=thread_id)
        return [r[0] for r in rows]

    # -- live -----------------------------------------------------------------------------------
    def cursor(self) -> tuple:
        """(newest checkpoint id, insert+update count of ``checkpoint_writes``, delete count of
        ``checkpoints``), the counts from the statistics (reported within about a second)."""
        rows = self._all(f"SELECT (SELECT COALESCE(MAX(checkpoint_id {C}), '') FROM checkpoints), "
                         "(SELECT COALESCE(SUM(n_tup_ins + n_tup_upd), 0) FROM pg_stat_user_tables "
                         "WHERE relname = 'checkpoint_writes'), "
                         "(SELECT COALESCE(SUM(n_tup_del), 0) FROM pg_stat_user_tables WHERE relname = 'checkpoints')")
        return (rows[0][0], int(rows[0][1]), int(rows[0][2]))

    @staticmethod
    def removed(cursor: tuple, upto: tuple, added: int) -> bool:
        """Whether checkpoints were deleted between the cursors (the statistics' count moved)."""
        return upto[2] != cursor[2]

    def changed_since(self, cursor: tuple, upto: tuple) -> tuple[list[tuple[str, str, str]], set[str]]:
        """Checkpoints with ids in (cursor, upto] and, when writes happened, the threads whose
        recent checkpoints (the last ten minutes before the cursor) got writes."""
        cps = self._all(f"SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints "
                        f"WHERE checkpoint_id {C} > :lo AND checkpoint_id {C} <= :hi "
                        f"ORDER BY checkpoint_id {C}", lo=cursor[0], hi=upto[0])
        threads: set[str] = set()
        if cursor[1] != upto[1]:
            floor = id_floor(max(0.0, id_time(cursor[0]) - RECENT_WRITES_SECONDS)) if cursor[0] else ""
            threads = {r[0] for r in self._all(
                f"SELECT DISTINCT thread_id FROM checkpoint_writes WHERE checkpoint_id {C} >= :floor",
                floor=floor)}
        return [(r[0], r[1], r[2]) for r in cps], threads
