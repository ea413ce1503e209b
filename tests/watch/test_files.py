"""FileWatcher: real inotify/FSEvents on real files; write events only, start/stop-and-join."""

from __future__ import annotations

import queue
import threading
from pathlib import Path

from inspector.watch import FileWatcher


def _watch(paths: list[Path]) -> tuple[FileWatcher, queue.Queue]:
    events: queue.Queue = queue.Queue()
    watcher = FileWatcher(paths, events.put)
    watcher.start()
    return watcher, events


def test_writes_to_watched_files_are_reported_and_others_are_not(tmp_path: Path) -> None:
    db, wal, other = tmp_path / "s.db", tmp_path / "s.db-wal", tmp_path / "notes.txt"
    db.write_bytes(b"x")
    watcher, events = _watch([db, wal])
    try:
        other.write_text("not watched")
        wal.write_bytes(b"created later")
        first = events.get(timeout=10)
        assert first == wal  # the unrelated file produced nothing before it
        db.write_bytes(b"changed")
        seen = {events.get(timeout=10)}
        while seen != {db}:
            seen.add(events.get(timeout=10))
            seen.discard(wal)
    finally:
        watcher.stop()


def test_reading_a_watched_file_is_not_a_change(tmp_path: Path) -> None:
    db, sentinel = tmp_path / "s.db", tmp_path / "s.db-shm"
    db.write_bytes(b"content")
    watcher, events = _watch([db, sentinel])
    try:
        for _ in range(3):
            assert db.read_bytes() == b"content"
        sentinel.write_bytes(b"1")  # events arrive in order: a read event would come first
        assert events.get(timeout=10) == sentinel
    finally:
        watcher.stop()


def test_a_file_opened_for_writing_and_closed_unwritten_is_not_a_change(tmp_path: Path) -> None:
    """SQLite's readers open a store's -wal and -shm read-write: closing them is inotify's
    IN_CLOSE_WRITE although nothing was written. Taken for a write, every poll of an idle
    window read the store, which closed them, which woke the window again (6-7 polls a second
    on the 10,000-run store: idle CPU 1.3-1.7 % against the 1 % bar)."""
    db, wal = tmp_path / "s.db", tmp_path / "s.db-wal"
    db.write_bytes(b"content")
    wal.write_bytes(b"log")
    watcher, events = _watch([db, wal])
    try:
        for _ in range(3):
            with open(wal, "r+b") as f:     # opened for writing, nothing written
                assert f.read() == b"log"
        db.write_bytes(b"changed")  # events arrive in order: the closes would come first
        assert events.get(timeout=10) == db
    finally:
        watcher.stop()


def test_stop_joins_the_observer_thread(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    db.write_bytes(b"x")
    before = set(threading.enumerate())
    watcher, _events = _watch([db])
    assert watcher.running
    started = set(threading.enumerate()) - before
    assert started
    watcher.stop()
    assert not watcher.running
    assert not any(t.is_alive() for t in started)
    watcher.stop()  # idempotent


def test_stopping_while_a_store_is_written_logs_no_error(tmp_path: Path, caplog) -> None:
    """watchdog 7.1 logs "queue_events() called when the thread is inactive" when its emitter is
    stopped mid-event; the inspector's emitter closes its queue instead of dropping it (no filter)."""
    import logging

    db = tmp_path / "s.db"
    db.write_bytes(b"x")
    done = threading.Event()

    def write() -> None:
        n = 0
        while not done.is_set():
            n += 1
            db.write_bytes(b"y" * (n % 64 + 1))

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    caplog.set_level(logging.DEBUG, logger="watchdog")
    try:
        for _ in range(25):
            watcher, events = _watch([db])
            events.get(timeout=10)        # events are arriving while it stops
            watcher.stop()
            assert not watcher.running
    finally:
        done.set()
        writer.join(10)
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == []


WRITER = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA journal_mode=WAL")
db.execute("CREATE TABLE IF NOT EXISTS t (x)")
print("writing", flush=True)
end = time.time() + 120
while time.time() < end:
    db.execute("INSERT INTO t VALUES (randomblob(64))")
"""


def test_many_stops_while_a_writer_process_writes_leave_stderr_clean(tmp_path: Path) -> None:
    """The emitters stop without watchdog's "queue_events() called when the thread is inactive"."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    db = tmp_path / "s.db"
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(db)], stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "writing"
        env = {**os.environ, "PYTHONPATH": str(root) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        probe = subprocess.run([sys.executable, "-m", "tests.watch.quit_probe", str(db), "60"], cwd=root,
                               env=env, capture_output=True, text=True, timeout=240)
    finally:
        writer.kill()
        writer.wait()
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.startswith("60 of 60")     # every stop came while events were arriving
    assert probe.stderr == ""


def test_stopping_works_with_watchdog_6s_inotify_buffer(tmp_path: Path) -> None:
    """google-adk pins watchdog 6, whose InotifyBuffer has close() and no deactivate(): a
    watcher stopping there must close it (it raised AttributeError when the window closed)."""
    import pytest
    from inspector.watch import files
    try:
        from watchdog.observers.api import ObservedWatch
    except ImportError:
        pytest.skip("no inotify observer on this platform")
    observer = files.OBSERVER()
    emitter_class = getattr(observer, "_emitter_class", None)
    if emitter_class is None or emitter_class.__name__ != "_QuietStopEmitter":
        pytest.skip("the platform's own observer")

    class Watchdog6Buffer:        # watchdog 6.0's InotifyBuffer as far as stopping goes
        closed = False

        def close(self) -> None:
            self.closed = True

    emitter = emitter_class(queue.Queue(), ObservedWatch(str(tmp_path), recursive=False))
    buffer = Watchdog6Buffer()
    emitter._inotify = buffer
    emitter.on_thread_stop()
    assert buffer.closed
