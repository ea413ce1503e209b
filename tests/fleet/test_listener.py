"""The PostgreSQL LISTEN watcher: notifications on commit, reconnect after a restart, polling fallback."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from collections.abc import Callable

import pytest

from inspector.bench._pgserver import TempPostgres
from inspector.record import Checkpointer
from inspector.store import create_store, open_store
from inspector.watch.pg_listen import PgListener, make_pg_watcher

pytestmark = pytest.mark.postgres
WAIT = 30.0


class Recorder:
    """Collects callbacks from the listener thread; tests wait on it."""

    def __init__(self) -> None:
        self.changes: list[frozenset | None] = []
        self.states: list[tuple[str, str | None]] = []
        self.cond = threading.Condition()

    def on_change(self, run_ids: frozenset | None) -> None:
        with self.cond:
            self.changes.append(run_ids)
            self.cond.notify_all()

    def on_state(self, state: str, detail: str | None) -> None:
        with self.cond:
            self.states.append((state, detail))
            self.cond.notify_all()

    def wait_for(self, predicate: Callable[[], bool], what: str) -> None:
        with self.cond:
            assert self.cond.wait_for(predicate, timeout=WAIT), f"timed out waiting for {what}: {self.states}"

    def state_names(self) -> list[str]:
        with self.cond:
            return [s for s, _ in self.states]

    def saw_run(self, run_id: str) -> bool:
        return any(c is not None and run_id in c for c in self.changes)


def started(url: str, rec: Recorder, **options: object) -> PgListener:
    listener = PgListener(url, rec.on_change, on_state=rec.on_state, **options).start()  # type: ignore[arg-type]
    rec.wait_for(lambda: listener.state == "listening", "listening")
    return listener


def test_commit_notifies_with_the_run_id(pg_url: str) -> None:
    create_store(pg_url).close()
    rec = Recorder()
    with open_store(pg_url) as store:
        listener = make_pg_watcher(store, rec.on_change, rec.on_state)
        assert listener is not None and listener.readonly
        listener.start()
        try:
            rec.wait_for(lambda: listener.state == "listening", "listening")
            with Checkpointer(pg_url, name="notified", heartbeat=60) as cp:
                rec.wait_for(lambda: rec.saw_run(cp.run_id), "the new run")
                rec.changes.clear()
                cp.save({"n": 1})
                rec.wait_for(lambda: rec.saw_run(cp.run_id), "the checkpoint")
        finally:
            listener.stop()
    assert not listener.running
    assert rec.state_names()[:2] == ["connecting", "listening"]
    assert rec.state_names()[-1] == "stopped"


def test_reconnects_after_a_restart_and_asks_for_a_reload(pg_private_server: TempPostgres) -> None:
    url = pg_private_server.url
    create_store(url).close()
    rec = Recorder()
    listener = started(url, rec, min_backoff=0.05, max_backoff=0.5)
    try:
        pg_private_server.restart()
        rec.wait_for(lambda: "disconnected" in [s for s, _ in rec.states], "the loss to be seen")
        rec.wait_for(lambda: listener.reconnects >= 1 and listener.state == "listening", "reconnection")
        assert None in rec.changes   # told to reload: notifications may have been missed meanwhile
        with Checkpointer(url, name="after restart", heartbeat=60) as cp:
            cp.save({"n": 1})
            rec.wait_for(lambda: rec.saw_run(cp.run_id), "a notification after the restart")
    finally:
        listener.stop()
    names = rec.state_names()
    lost = names.index("disconnected")
    assert "listening" in names[lost:]
    assert dict(rec.states)["disconnected"]   # the error is reported for the status bar


def test_unreachable_server_backs_off_until_stopped(tmp_path: Path) -> None:
    from inspector.bench._pgserver import free_port
    rec = Recorder()
    listener = PgListener(f"postgresql+psycopg://nobody@127.0.0.1:{free_port()}/none", rec.on_change,
                          on_state=rec.on_state, min_backoff=0.05, max_backoff=0.2).start()
    rec.wait_for(lambda: rec.state_names().count("connecting") >= 3, "several attempts")
    listener.stop()
    assert not listener.running
    assert "disconnected" in rec.state_names() and rec.state_names()[-1] == "stopped"
    assert rec.changes == []


def test_polling_fallback_reloads_periodically() -> None:
    rec = Recorder()
    listener = PgListener("postgresql://unused@127.0.0.1:1/x", rec.on_change, on_state=rec.on_state,
                          poll_only="no notifications here", poll_interval=0.05).start()
    rec.wait_for(lambda: len(rec.changes) >= 3, "three polls")
    listener.stop()
    assert rec.states[0] == ("polling", "no notifications here")
    assert set(rec.changes) == {None}


def test_no_listener_for_sqlite(tmp_path: Path) -> None:
    create_store(tmp_path / "s.db").close()
    with open_store(tmp_path / "s.db") as store:
        assert make_pg_watcher(store, lambda ids: None) is None


def test_a_failing_callback_does_not_kill_the_listener(pg_url: str) -> None:
    create_store(pg_url).close()
    rec = Recorder()
    calls = []

    def explode(run_ids: frozenset | None) -> None:
        calls.append(run_ids)
        raise RuntimeError("bug in the GUI")

    listener = PgListener(pg_url, explode, on_state=rec.on_state).start()
    try:
        rec.wait_for(lambda: listener.state == "listening", "listening")
        def wait_calls(n: int) -> None:
            deadline = time.monotonic() + WAIT
            while len(calls) < n and time.monotonic() < deadline:
                time.sleep(0.02)
            assert len(calls) >= n

        with Checkpointer(pg_url, name="a", heartbeat=60) as cp:
            wait_calls(1)   # the run's creation
            cp.save({"n": 1})
            wait_calls(2)   # still listening after the callback raised
        assert listener.running and listener.state == "listening"
    finally:
        listener.stop()
