"""A read of a PostgreSQL store whose server freezes mid-query (its processes stopped, as a
hung host looks) gives up after the configured wait with one sentence, instead of waiting
for as long as the server stays frozen (engine._Watchdog)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Iterator

import pytest

from inspector.bench._pgserver import TempPostgres
from inspector.errors import StoreError
from inspector.record import Checkpointer
from inspector.store import open_store
from inspector.store.engine import SERVER_WAIT_ENV, guard

pytestmark = pytest.mark.postgres


def _server_pids(pg: TempPostgres) -> list[int]:
    main = int((pg.datadir / "postmaster.pid").read_text().split()[0])
    children = subprocess.run(["ps", "--ppid", str(main), "-o", "pid="], capture_output=True, text=True).stdout
    return [main, *map(int, children.split())]


def _signal(pids: list[int], sig: signal.Signals) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):    # a backend that ended meanwhile
            os.kill(pid, sig)


THAW_AFTER_S = 30.0    # a client that does not give up gets its answer then (and the test fails)


@pytest.fixture
def freeze(pg_private_server: TempPostgres) -> Iterator[threading.Event]:
    """Set the event to freeze the server; it thaws when the test ends, or after ``THAW_AFTER_S``."""
    go, done = threading.Event(), threading.Event()

    def run() -> None:
        go.wait()
        if done.is_set():
            return
        pids = _server_pids(pg_private_server)
        _signal(pids, signal.SIGSTOP)
        done.wait(THAW_AFTER_S)
        _signal(pids, signal.SIGCONT)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield go
    finally:
        done.set()
        go.set()
        thread.join()


def test_a_read_gives_up_on_a_frozen_server(pg_private_server: TempPostgres, freeze: threading.Event,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    with Checkpointer(pg_private_server.url, name="agent") as cp:
        cp.save({"step": 0})
    monkeypatch.setenv(SERVER_WAIT_ENV, "1")
    with open_store(pg_private_server.url) as store:
        assert [r.name for r in store.list_runs()] == ["agent"]
        engine = store.engine      # type: ignore[attr-defined]
        with (pytest.raises(StoreError, match="did not answer for 1 s"), guard(store.info.display),
              engine.connect() as conn):
            # the server freezes while it runs this statement: its answer does not come
            threading.Timer(0.3, freeze.set).start()
            conn.exec_driver_sql("SELECT pg_sleep(5)").all()
