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
    """watchdog logs "queue_events() called when the thread is inactive" when stopped mid-event."""
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
