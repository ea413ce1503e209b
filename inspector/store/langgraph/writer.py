"""The only SQL that writes to a LangGraph database: one forked checkpoint row (plus its blobs).

Writes go through a separate, writable engine opened for this one action; the store's own
engine stays read-only. The new row is inserted in one transaction that also checks that
its id sorts after every checkpoint of the thread — the property that makes LangGraph take it
as the thread's head — and rolls back when another writer got in first.

SQLite (SqliteSaver): ``checkpoints(…, type='msgpack', checkpoint=<msgpack>, metadata=<JSON
bytes>)``. PostgreSQL (PostgresSaver): ``checkpoints(…, checkpoint=<JSONB without
non-primitive values>, metadata=<JSONB>)`` and one ``checkpoint_blobs`` row per channel
whose value is stored outside the JSONB at a version no row has yet. No ``writes`` rows.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable

import sqlalchemy as sa

from inspector.errors import StoreError
from inspector.store.engine import guard, make_engine, parse_target


@dataclass(frozen=True)
class NewRow:
    """A checkpoint row to insert: body (msgpack bytes on SQLite, a JSON-able dict on
    PostgreSQL), metadata dict, and PostgreSQL blobs ``channel → (version, type, bytes)``."""

    checkpoint_id: str
    body: Any
    metadata: dict
    blobs: dict[str, tuple[str, str, bytes]] = field(default_factory=dict)


class ThreadMovedError(StoreError):
    """Another process wrote to the thread while the fork was being written."""


class LangGraphWriter:
    """A writable connection to a LangGraph database (SQLite or PostgreSQL), for one action."""

    def __init__(self, url: str, display: str) -> None:
        self.target = parse_target(url)
        self.display = display
        self.engine = make_engine(self.target, readonly=False)
        self.backend = self.engine.dialect.name

    def close(self) -> None:
        """Release the connection."""
        self.engine.dispose()

    def __enter__(self) -> LangGraphWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _max_id(self, conn: sa.Connection, thread_id: str) -> str | None:
        collate = ' COLLATE "C"' if self.backend == "postgresql" else ""
        row = conn.execute(sa.text(f"SELECT MAX(checkpoint_id{collate}) FROM checkpoints "
                                   "WHERE thread_id = :thread"), {"thread": thread_id}).first()
        return row[0] if row else None

    def insert_fork(self, thread_id: str, ns: str, parent_id: str | None,
                    build: Callable[[str | None], NewRow]) -> NewRow:
        """Insert the row ``build(newest id of the thread)`` returns, as the thread's new head."""
        with guard(self.display), self.engine.begin() as conn:
            if self.backend == "postgresql":   # serialise concurrent forks of one thread
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(hashtext(:thread))"), {"thread": thread_id})
            row = build(self._max_id(conn, thread_id))
            if self.backend == "sqlite":
                self._insert_sqlite(conn, thread_id, ns, parent_id, row)
            else:
                self._insert_postgres(conn, thread_id, ns, parent_id, row)
            if self._max_id(conn, thread_id) != row.checkpoint_id:
                raise ThreadMovedError(f"Thread {thread_id!r} got a newer checkpoint while the fork was "
                                       "written; nothing was changed, try again.")
        return row

    @staticmethod
    def _insert_sqlite(conn: sa.Connection, thread_id: str, ns: str, parent_id: str | None,
                       row: NewRow) -> None:
        conn.execute(sa.text(
            "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, "
            "type, checkpoint, metadata) VALUES (:thread, :ns, :cid, :parent, 'msgpack', :body, :meta)"),
            {"thread": thread_id, "ns": ns, "cid": row.checkpoint_id, "parent": parent_id,
             "body": row.body, "meta": json.dumps(row.metadata, ensure_ascii=False).encode("utf-8")})

    @staticmethod
    def _insert_postgres(conn: sa.Connection, thread_id: str, ns: str, parent_id: str | None,
                         row: NewRow) -> None:
        for channel, (version, tag, data) in row.blobs.items():
            conn.execute(sa.text(
                "INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) "
                "VALUES (:thread, :ns, :channel, :version, :type, :blob)"),
                {"thread": thread_id, "ns": ns, "channel": channel, "version": version, "type": tag,
                 "blob": data})
        conn.execute(sa.text(
            "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, "
            "checkpoint, metadata) VALUES (:thread, :ns, :cid, :parent, CAST(:body AS jsonb), "
            "CAST(:meta AS jsonb))"),
            {"thread": thread_id, "ns": ns, "cid": row.checkpoint_id, "parent": parent_id,
             "body": json.dumps(row.body, ensure_ascii=False),
             "meta": json.dumps(row.metadata, ensure_ascii=False)})
