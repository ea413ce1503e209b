"""The database restarts in the middle of a run: the agent continues, nothing committed is lost,
and the inspector (listener and reads) reconnects by itself."""

from __future__ import annotations

import threading
import time

import pytest

from inspector.bench._fleet_worker import agent_state
from inspector.bench._pgserver import TempPostgres
from inspector.store import create_store, open_store
from inspector.watch.pg_listen import PgListener
from tests.fleet.workers import Worker

pytestmark = [pytest.mark.postgres, pytest.mark.slow]
COUNT = 300


def _wait(predicate, what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def test_agent_and_inspector_survive_server_restarts(pg_private_server: TempPostgres) -> None:
    url = pg_private_server.url
    create_store(url).close()
    states: list[str] = []
    reloads = threading.Event()
    listener = PgListener(url, lambda ids: reloads.set() if ids is None else None,
                          on_state=lambda s, _d: states.append(s), min_backoff=0.05, max_backoff=0.5).start()
    store = open_store(url)
    cursor = store.cursor()
    worker = Worker(url, "survivor", COUNT, "--each", "--delay", "0.01", "--heartbeat", "0.2")
    try:
        _wait(lambda: len(worker.committed) >= 60 or worker.proc.poll() is not None, "60 checkpoints")
        pg_private_server.restart()
        mid = len(worker.committed)
        _wait(lambda: len(worker.committed) >= mid + 60 or worker.proc.poll() is not None, "progress after restart")
        pg_private_server.restart()
        code = worker.wait(300)
        assert code == 0, worker.stderr[-3000:]
        _wait(lambda: listener.reconnects >= 1 and listener.state == "listening", "listener reconnection")
        assert reloads.is_set()
        # the inspector's store, opened before the restarts, reads again without being reopened
        run = store.get_run(worker.run_id)
        changes = store.changes_since(cursor)
    finally:
        worker.kill()
        listener.stop()
        store.close()
    committed = worker.committed
    assert committed == list(range(COUNT))     # every save returned, in order, once
    assert (run.status, run.checkpoint_count, run.head_seq) == ("completed", COUNT, COUNT - 1)
    assert sorted(c.seq for c in changes.new_checkpoints) == list(range(COUNT))
    assert "disconnected" in states and states[-1] == "stopped"
    with open_store(url) as again:
        assert again.load(f"{run.id}:-1").state == agent_state("survivor", COUNT - 1)
    assert "retrying" in worker.stderr or "unreachable" in worker.stderr   # the restarts were really hit


def test_an_agent_started_while_the_server_is_down_waits_for_it(pg_private_server: TempPostgres) -> None:
    """Creating a Checkpointer was not retried (only saves were): an agent started during a
    restart died with "Cannot reach the database"."""
    from inspector.record import Checkpointer
    url = pg_private_server.url
    create_store(url).close()
    pg_private_server.halt()
    done: dict = {}

    def agent() -> None:
        try:
            with Checkpointer(url, name="patient", retry_for=60) as cp:
                done["id"] = cp.save({"n": 1}, kind="tool", name="first").id
                done["run"] = cp.run_id
        except BaseException as err:  # the test reports it
            done["error"] = err
    thread = threading.Thread(target=agent)
    thread.start()
    time.sleep(1.5)
    assert thread.is_alive() and not done            # still waiting for the server
    pg_private_server.resume()
    thread.join(120)
    assert "error" not in done, done.get("error")
    with open_store(url) as store:
        runs = store.list_runs()
        assert [r.id for r in runs] == [done["run"]]     # one run, though its creation was retried
        assert store.load(done["id"]).state == {"n": 1}
