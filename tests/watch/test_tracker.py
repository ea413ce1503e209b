"""ChangeTracker and change sources on real native stores written by the recording library."""

from __future__ import annotations

from pathlib import Path

from inspector.record import Checkpointer
from inspector.store import open_store
from inspector.watch import ChangeTracker, FileWatcher, open_change_source


def test_poll_reports_new_checkpoints_once(store_path: Path) -> None:
    with Checkpointer(store_path, name="first", heartbeat=3600) as cp:
        cp.save({"n": 0}, kind="input", name="start")
        with open_store(store_path) as store:
            tracker = ChangeTracker(store)
            assert tracker.poll() is None
            cp.save({"n": 1}, kind="tool", name="step")
            changes = tracker.poll()
            assert changes is not None
            assert [c.seq for c in changes.new_checkpoints] == [1]
            assert cp.run_id in changes.run_ids
            assert tracker.poll() is None


def test_sqlite_store_is_watched_through_its_files(store_path: Path) -> None:
    with Checkpointer(store_path, name="first", heartbeat=3600) as cp:
        cp.save({"n": 0}, kind="input", name="start")
    with open_store(store_path) as store:
        source = open_change_source(store, lambda: None)
        assert isinstance(source, FileWatcher)
        assert {p.name for p in source.paths} == {"store.db", "store.db-wal", "store.db-shm"}
