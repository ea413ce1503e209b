"""Many agent processes write one store while the inspector core reads it: nothing lost or doubled."""

from __future__ import annotations

import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from inspector.bench._fleet_worker import agent_state
from inspector.store import create_store, open_store
from inspector.watch.pg_listen import make_pg_watcher
from tests.fleet.workers import Worker

COUNT = 500


class Reader(threading.Thread):
    """The inspector core following a store live: changes_since on every signal, plus reads."""

    def __init__(self, url: str) -> None:
        super().__init__(name="fleet-reader", daemon=True)
        self.store = open_store(url)
        self.cursor = self.store.cursor()
        self.seen: list[int] = []
        self.errors: list[BaseException] = []
        self.loads = 0
        self.wake = threading.Event()
        self.stop_event = threading.Event()
        self.watcher = make_pg_watcher(self.store, lambda _ids: self.wake.set())

    def step(self) -> None:
        changes = self.store.changes_since(self.cursor)
        self.cursor = changes.cursor
        self.seen += [c.id for c in changes.new_checkpoints]
        if changes.new_checkpoints:
            newest = changes.new_checkpoints[-1]
            run = self.store.get_run(newest.run_id)
            assert self.store.load(newest.id).state == agent_state(run.name, newest.seq)
            self.loads += 1
        self.store.list_runs(limit=50)

    def run(self) -> None:
        if self.watcher is not None:
            self.watcher.start()
        try:
            while not self.stop_event.is_set():
                self.wake.wait(0.05 if self.watcher is None else 1.0)
                self.wake.clear()
                self.step()
        except BaseException as err:  # reported by the test
            self.errors.append(err)
        finally:
            if self.watcher is not None:
                self.watcher.stop()

    def finish(self) -> None:
        self.stop_event.set()
        self.wake.set()
        self.join(60)
        self.step()


def _wait_ready(workers: list[Worker], timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while any(w.run_id is None for w in workers):
        for w in workers:
            if w.proc.poll() is not None and w.run_id is None:
                w.wait(5)
                pytest.fail(f"worker {w.name} exited early ({w.proc.returncode}): {w.stderr[-2000:]}")
        assert time.monotonic() < deadline, "workers did not start in time"
        time.sleep(0.05)


@pytest.mark.slow
@pytest.mark.timeout(1200)
@pytest.mark.parametrize("backend, writers", [pytest.param("postgresql", 16, marks=pytest.mark.postgres),
                                              pytest.param("sqlite", 8)])
def test_writers_and_a_live_reader(backend: str, writers: int, tmp_path: Path,
                                   request: pytest.FixtureRequest) -> None:
    url = request.getfixturevalue("pg_url") if backend == "postgresql" else str(tmp_path / "fleet.db")
    create_store(url).close()
    workers = [Worker(url, f"agent-{i}", COUNT, "--wait-go", "--heartbeat", "1") for i in range(writers)]
    reader = None
    try:
        _wait_ready(workers)
        reader = Reader(url)
        reader.start()
        for w in workers:
            w.go()
        codes = {w.name: w.wait(1200) for w in workers}
        reader.finish()
    finally:
        for w in workers:
            w.kill()
        if reader is not None:
            reader.stop_event.set()
    failed = {n: c for n, c in codes.items() if c != 0}
    assert not failed, {n: next(w.stderr[-1500:] for w in workers if w.name == n) for n in failed}
    assert reader.errors == []

    with open_store(url) as store:
        runs = store.list_runs()
        assert sorted(r.name for r in runs) == sorted(w.name for w in workers)
        stored: list[int] = []
        for run in runs:
            cps = store.list_checkpoints(run.id)
            assert [c.seq for c in cps] == list(range(COUNT)), run.name
            assert (run.status, run.checkpoint_count, run.head_seq) == ("completed", COUNT, COUNT - 1)
            assert store.load(cps[-1].id).state == agent_state(run.name, COUNT - 1)
            stored += [c.id for c in cps]
    assert len(stored) == writers * COUNT == len(set(stored))
    doubled = [i for i, n in Counter(reader.seen).items() if n > 1]
    assert doubled == []
    assert sorted(reader.seen) == sorted(stored)   # the live view ends equal to the store
    assert reader.loads > 0
    reader.store.close()
