"""Live cursors miss nothing when concurrent PostgreSQL writers commit out of id order."""

from __future__ import annotations

import time

import pytest
import sqlalchemy as sa

from inspector.record import Checkpointer
from inspector.store import open_store
from inspector.store.native import live
from inspector.store.native.schema import checkpoints, runs

pytestmark = pytest.mark.postgres


def _row(run_id: str, seq: int, state_hash: bytes) -> dict:
    return dict(run_id=run_id, seq=seq, kind="step", name=f"manual {seq}", created=time.time(),
                state_hash=state_hash, size=1, size_delta=0, ops=1, change="", epoch=1)


def test_a_late_commit_below_the_cursor_is_still_reported(pg_url: str) -> None:
    with Checkpointer(pg_url, name="base", heartbeat=60) as cp:
        first = cp.save({"n": 0})
        run_id = cp.run_id
    engine = sa.create_engine(pg_url, poolclass=sa.pool.NullPool)
    try:
        with open_store(pg_url) as store:
            cursor = store.cursor()
            slow = engine.connect()
            slow_tx = slow.begin()
            slow_id = slow.execute(checkpoints.insert().values(**_row(run_id, 100, first.state_hash))
                                   .returning(checkpoints.c.id)).scalar_one()
            with engine.begin() as fast:   # a later id, committed first
                fast_id = fast.execute(checkpoints.insert().values(**_row(run_id, 101, first.state_hash))
                                       .returning(checkpoints.c.id)).scalar_one()
            assert fast_id > slow_id
            seen = store.changes_since(cursor)
            assert [c.id for c in seen.new_checkpoints] == [fast_id]
            slow_tx.commit()
            slow.close()
            late = store.changes_since(seen.cursor)
            assert [c.id for c in late.new_checkpoints] == [slow_id]
            assert late.run_ids == (run_id,)
            assert store.changes_since(late.cursor).empty
    finally:
        engine.dispose()


def test_a_run_update_committed_late_is_reported_once(pg_url: str) -> None:
    with Checkpointer(pg_url, name="a", heartbeat=60) as a:
        a.save({"n": 0})
    with Checkpointer(pg_url, name="b", heartbeat=60) as b:
        b.save({"n": 0})
    engine = sa.create_engine(pg_url, poolclass=sa.pool.NullPool)
    try:
        with open_store(pg_url) as store:
            cursor = store.cursor()
            stamp = time.time()
            slow = engine.connect()
            slow_tx = slow.begin()
            slow.execute(runs.update().where(runs.c.id == a.run_id).values(status="stuck", updated=stamp))
            with engine.begin() as fast:
                fast.execute(runs.update().where(runs.c.id == b.run_id).values(status="stuck", updated=stamp + 1))
            first = store.changes_since(cursor)
            assert first.run_ids == (b.run_id,)
            slow_tx.commit()
            slow.close()
            second = store.changes_since(first.cursor)
            assert second.run_ids == (a.run_id,)   # its stamp is older than the cursor, yet it is new
            assert store.changes_since(second.cursor).empty
    finally:
        engine.dispose()


def test_rolled_back_ids_are_given_up(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with Checkpointer(pg_url, name="base", heartbeat=60) as cp:
        first = cp.save({"n": 0})
    engine = sa.create_engine(pg_url, poolclass=sa.pool.NullPool)
    try:
        with open_store(pg_url) as store:
            cursor = store.cursor()
            with engine.connect() as conn:
                tx = conn.begin()
                conn.execute(checkpoints.insert().values(**_row(cp.run_id, 50, first.state_hash)))
                tx.rollback()
            with engine.begin() as conn:
                kept = conn.execute(checkpoints.insert().values(**_row(cp.run_id, 51, first.state_hash))
                                    .returning(checkpoints.c.id)).scalar_one()
            seen = store.changes_since(cursor)
            assert [c.id for c in seen.new_checkpoints] == [kept]
            assert [i for i, _ in seen.cursor.holes] == [kept - 1]
            monkeypatch.setattr(live, "HOLE_TTL", 0.0)
            after = store.changes_since(seen.cursor)
            assert after.empty and after.cursor.holes == ()
    finally:
        engine.dispose()
