"""The inspector's live view follows a PostgreSQL store through LISTEN/NOTIFY (no polling)."""

from __future__ import annotations

import threading

import pytest

from inspector.bench._pgserver import TempPostgres
from inspector.record import Checkpointer
from inspector.store import create_store, open_store
from inspector.watch import open_change_source

pytestmark = pytest.mark.postgres


def test_change_source_of_a_postgres_store_is_listen(pg_url: str) -> None:
    create_store(pg_url).close()
    poked = threading.Event()
    with open_store(pg_url) as store:
        source = open_change_source(store, poked.set)
        assert source is not None and store.watch_paths() == []
        source.start()
        try:
            with Checkpointer(pg_url, name="poke", heartbeat=60):
                assert poked.wait(20)
        finally:
            source.stop()


def test_sqlite_store_is_watched_through_its_files(tmp_path) -> None:
    from inspector.watch import FileWatcher

    create_store(tmp_path / "s.db").close()
    with open_store(tmp_path / "s.db") as store:
        assert not hasattr(store, "listen") and store.watch_paths()
        assert isinstance(open_change_source(store, lambda: None), FileWatcher)


def test_bridge_shows_a_lost_server_and_recovers(qtbot, pg_private_server: TempPostgres) -> None:
    from inspector.ui.tasks import TaskRunner
    from inspector.ui.watch_bridge import WatchBridge

    url = pg_private_server.url
    create_store(url).close()
    store = open_store(url)
    runner = TaskRunner()
    bridge = WatchBridge(runner)
    try:
        bridge.attach(store, store.cursor())
        assert bridge.watching == "listen"
        with qtbot.waitSignal(bridge.changed, timeout=20_000) as first, \
                Checkpointer(url, name="gui", heartbeat=60) as cp:
            cp.save({"n": 1})
        assert cp.run_id in first.args[0].run_ids
        with qtbot.waitSignal(bridge.failed, timeout=20_000) as lost:
            pg_private_server.halt()
        assert "cannot reach the database" in lost.args[0].lower()   # shown in the status bar
        pg_private_server.resume()
        with qtbot.waitSignal(bridge.changed, timeout=30_000) as again, \
                Checkpointer(url, name="after restart", heartbeat=60) as cp2:
            cp2.save({"n": 2})
        assert cp2.run_id in {r for r in again.args[0].run_ids} | {c.run_id for c in again.args[0].new_checkpoints}
    finally:
        bridge.detach()
        runner.shutdown()
        store.close()
