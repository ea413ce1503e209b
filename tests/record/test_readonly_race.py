"""A writer that starts on a killed writer's log while a read-only reader (``readonly_shm``)
holds it open is refused ("attempt to write a readonly database") until the reader lets go:
the Checkpointer retries that, bounded and jittered, on new connections."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from inspector.record import Checkpointer
from inspector.record import checkpointer as checkpointer_module
from inspector.store import engine as engine_module
from inspector.store import open_store
from inspector.store.native.writer import NativeWriter
from tests.hostile.corpus import _killed_writer as killed_writer


def _killed_writer(path: Path) -> None:
    killed_writer(path.parent)     # 25 checkpoints of run "killed" (id r1), SIGKILLed in its -wal
    assert Path(f"{path}-shm").exists() and Path(f"{path}-wal").exists()


def _hold_reader(path: Path, seconds: float, opened: threading.Event) -> None:
    reader = sqlite3.connect(f"file:{path}?mode=ro&readonly_shm=1", uri=True, check_same_thread=False)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM ci_checkpoints").fetchone()
    opened.set()
    time.sleep(seconds)
    reader.close()


@contextlib.contextmanager
def _reader_holding(path: Path, seconds: float) -> Iterator[None]:
    """A read-only-shm reader holds the store's log for ``seconds`` (from when it is open) in a thread."""
    opened = threading.Event()
    holder = threading.Thread(target=_hold_reader, args=(path, seconds, opened))
    holder.start()
    opened.wait(10)
    try:
        yield
    finally:
        holder.join()


def test_a_writer_refused_while_a_reader_holds_the_log_retries_and_records(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    _killed_writer(path)
    # the race itself, without the Checkpointer: a plain writer is refused while the reader is open
    with _reader_holding(path, 0.8):
        plain = sqlite3.connect(path, timeout=1)
        with pytest.raises(sqlite3.OperationalError, match="readonly database"):
            plain.execute("UPDATE ci_runs SET name = name")
        plain.close()

    with _reader_holding(path, 0.8):
        t0 = time.monotonic()
        with Checkpointer(path, name="after") as cp:
            cp.save({"n": 1})
            cp.save({"n": 2})
        waited = time.monotonic() - t0
    assert waited < checkpointer_module.READONLY_RETRY_S + 5
    with open_store(path) as store:
        runs = {r.name: r for r in store.list_runs()}
        assert set(runs) == {"killed", "after"}
        assert [c.seq for c in store.list_checkpoints(runs["after"].id)] == [0, 1]
        assert [c.seq for c in store.list_checkpoints(runs["killed"].id)] == list(range(25))


def test_the_retry_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "store.db"
    _killed_writer(path)
    monkeypatch.setattr(checkpointer_module, "READONLY_RETRY_S", 0.5)
    monkeypatch.setattr(engine_module, "READONLY_RETRY_S", 0.5)
    with _reader_holding(path, 4.0):
        t0 = time.monotonic()
        with pytest.raises(Exception, match="readonly database"):
            Checkpointer(path, name="refused")
        assert time.monotonic() - t0 < 3.0


def test_a_write_from_the_app_waits_for_the_reader_too(tmp_path: Path) -> None:
    """The app's own writes (take over a run to resume it, fork, pin, prune) open a writable
    store right after the user stopped a hung agent — a killed writer's log — while the
    window's readers still poll it: the new connection waits the reader out instead of
    failing with "read-only here" (and staying refused)."""
    path = tmp_path / "store.db"
    _killed_writer(path)
    with _reader_holding(path, 0.8), open_store(path, readonly=False) as store:
        epoch = NativeWriter(store).take_ownership("r1", status="running")
    with open_store(path) as store:
        assert store.get_run("r1").epoch == epoch == 2
        assert [c.seq for c in store.list_checkpoints("r1")] == list(range(25))
