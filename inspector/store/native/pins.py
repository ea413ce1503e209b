"""Pinned checkpoints (``ci_pins``): SQL for pin, unpin and reading pins.

Stores made before pins existed have no ``ci_pins`` table. Readers treat that as "no pins"
and never create it (opening a store must not change it); writers create it on first use
(``ensure_table``), a plain schema addition that older readers ignore.
"""

from __future__ import annotations

import time
from collections.abc import Collection

import sqlalchemy as sa

from inspector.errors import StoreError
from inspector.model import CheckpointInfo
from inspector.store.engine import guard
from inspector.store.native.schema import checkpoints, pins
from inspector.store.native.writer import notify

TABLE = "ci_pins"


def table_exists(conn: sa.Connection, name: str = TABLE) -> bool:
    """Whether the database has table ``name`` (one catalogue query, no schema reflection)."""
    if conn.dialect.name == "sqlite":
        sql = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = :name"
    else:
        sql = "SELECT 1 FROM pg_catalog.pg_tables WHERE tablename = :name AND schemaname = ANY(current_schemas(false))"
    return conn.execute(sa.text(sql), {"name": name}).first() is not None


def ensure_table(conn: sa.Connection) -> None:
    """Create ``ci_pins`` and its index when missing (writers only)."""
    pins.create(conn, checkfirst=True)
    for index in pins.indexes:
        index.create(conn, checkfirst=True)


def pinned_ids(conn: sa.Connection, run_id: str | None = None) -> set[int]:
    """Ids of the pinned checkpoints (of one run, or of the whole store)."""
    if not table_exists(conn):
        return set()
    stmt = sa.select(pins.c.checkpoint_id)
    if run_id is not None:
        stmt = stmt.where(pins.c.run_id == run_id)
    return {int(r[0]) for r in conn.execute(stmt)}


def list_pins(engine: sa.Engine, display: str) -> list[tuple[int, str, int, float, str]]:
    """Every pin: (checkpoint id, run id, seq, pinned at, note), by run and seq."""
    with guard(display), engine.connect() as conn:
        if not table_exists(conn):
            return []
        stmt = (sa.select(pins.c.checkpoint_id, pins.c.run_id, checkpoints.c.seq, pins.c.created, pins.c.note)
                .join(checkpoints, checkpoints.c.id == pins.c.checkpoint_id)
                .order_by(pins.c.run_id, checkpoints.c.seq))
        return [(int(r[0]), r[1], int(r[2]), float(r[3]), r[4]) for r in conn.execute(stmt)]


def set_pinned(engine: sa.Engine, display: str, info: CheckpointInfo, pinned: bool, note: str = "") -> bool:
    """Pin or unpin one checkpoint; True when that changed anything (then PostgreSQL listeners
    are told, on commit, that its run changed)."""
    with guard(display), engine.begin() as conn:
        if not pinned and not table_exists(conn):
            return False
        ensure_table(conn)
        exists = conn.execute(sa.select(checkpoints.c.id).where(checkpoints.c.id == info.id)).first()
        if exists is None:
            raise StoreError(f"Checkpoint {info.run_id}:{info.seq} no longer exists in {display}.")
        found = conn.execute(sa.select(pins.c.checkpoint_id).where(pins.c.checkpoint_id == info.id)).first()
        if pinned and found is None:
            conn.execute(pins.insert().values(checkpoint_id=int(info.id), run_id=info.run_id,
                                              created=time.time(), note=note))
        elif not pinned and found is not None:
            conn.execute(pins.delete().where(pins.c.checkpoint_id == info.id))
        else:
            return False
        notify(conn, (info.run_id,))        # a window showing the run shows the pin
        return True


def delete_for(conn: sa.Connection, checkpoint_ids: Collection[int]) -> None:
    """Drop the pin rows of checkpoints being deleted (inside the caller's transaction)."""
    if checkpoint_ids and table_exists(conn):
        conn.execute(pins.delete().where(pins.c.checkpoint_id.in_(list(checkpoint_ids))))
