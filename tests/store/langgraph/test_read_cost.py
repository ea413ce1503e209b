"""What a walk over a big SqliteSaver thread pays per checkpoint: the store's cursor is counted
again only when a commit changed the files (``sqlite_ro.change_key``), and one checkpoint's
queries share one connection (``SqliteReader.held``). Real SqliteSaver writers, real commits;
"settled" files are files whose times are put a minute back, as an idle store's are."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from inspector.store import open_reader, sqlite_ro
from inspector.store.langgraph.sqlite_reader import SqliteReader
from tests.lgcorpus import sqlite_saver
from tests.lgcorpus._util import cfg
from tests.lgcorpus.forks import build

COUNT = "COUNT(*) FROM checkpoints)"


def _invoke(graph, thread: str) -> None:
    graph.invoke({"topic": "release", "mode": "act", "log": []}, cfg(thread))


@pytest.fixture
def counted(monkeypatch) -> list[str]:
    """Every query the SQLite readers run (the SQL), in order."""
    seen: list[str] = []
    run = SqliteReader._all

    def spy(self, sql, **params):
        seen.append(sql)
        return run(self, sql, **params)
    monkeypatch.setattr(SqliteReader, "_all", spy)
    return seen


class _Opened(list):
    """The read connections opened (``sqlite_ro.connect``) once ``watch`` is called."""

    def __init__(self, monkeypatch) -> None:
        super().__init__()
        self._monkeypatch = monkeypatch

    def watch(self) -> None:
        connect = sqlite_ro.connect

        def spy(*args, **kwargs):
            conn = connect(*args, **kwargs)
            self.append(conn)
            return conn
        self._monkeypatch.setattr(sqlite_ro, "connect", spy)


@pytest.fixture
def opened(monkeypatch) -> _Opened:
    return _Opened(monkeypatch)


def _counts(seen: list[str]) -> int:
    return sum(COUNT in sql for sql in seen)


def _truth(path: Path) -> tuple:
    """The cursor as a fresh connection counts it."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT (SELECT COALESCE(MAX(rowid), 0) FROM checkpoints), "
                            "(SELECT COALESCE(MAX(rowid), 0) FROM writes), "
                            "(SELECT COUNT(*) FROM checkpoints)").fetchone()
    finally:
        conn.close()


def _settle(path: Path) -> None:
    """The database's files as a store nobody wrote for a minute has them."""
    for file in (path, *sqlite_ro.sidecars(path)):
        if file.exists():
            stat = file.stat()
            os.utime(file, ns=(stat.st_atime_ns, stat.st_mtime_ns - 60 * 10**9))


def test_the_cursor_is_kept_until_a_writer_commits_inserts_or_deletions(tmp_path: Path, counted: list[str]) -> None:
    path = tmp_path / "lg.db"
    with sqlite_saver(path) as saver:       # a writer at work: its -shm is there (the shared mode)
        graph = build(saver)
        _invoke(graph, "a")
        _invoke(graph, "b")
        store = open_reader(path)
        try:
            assert sqlite_ro.mode_of(path) == sqlite_ro.SHARED
            store.cursor()
            store.cursor()
            assert _counts(counted) == 2             # just written: its time may not move again
            _settle(path)
            first = store.cursor()
            assert first == _truth(path) and store.cursor() == first and store.cursor() == first
            assert _counts(counted) == 3             # settled, nothing committed: counted once
            _invoke(graph, "c")                       # inserts
            moved = store.cursor()
            assert moved == _truth(path) and moved[0] > first[0] and _counts(counted) == 4
            _settle(path)
            assert store.cursor() == moved and store.cursor() == moved and _counts(counted) == 5
            saver.delete_thread("a")                  # deletions alone: no rowid grows
            after = store.cursor()
            assert after == _truth(path) and after[2] < moved[2] and _counts(counted) == 6
            assert store.changes_since(moved).removed
        finally:
            store.close()


def test_a_deletion_in_rollback_journal_mode_that_keeps_the_size_moves_it(tmp_path: Path, counted: list[str]) -> None:
    """No -wal, no -shm (read as an immutable snapshot until the files change)."""
    path = tmp_path / "lg.db"
    with sqlite_saver(path) as saver:
        graph = build(saver)
        _invoke(graph, "a")
        _invoke(graph, "b")
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.close()
    assert sqlite_ro.mode_of(path) == sqlite_ro.IMMUTABLE
    _settle(path)
    store = open_reader(path)
    try:
        first = store.cursor()
        assert store.cursor() == first and _counts(counted) == 1
        size = path.stat().st_size
        conn = sqlite3.connect(path)
        conn.execute("DELETE FROM checkpoints WHERE thread_id = 'a'")
        conn.commit()
        conn.close()
        assert path.stat().st_size == size
        after = store.cursor()
        assert after == _truth(path) and after[2] < first[2] and _counts(counted) == 2
    finally:
        store.close()


def test_the_cursor_is_counted_again_after_a_while(tmp_path: Path, counted: list[str], monkeypatch) -> None:
    path = tmp_path / "lg.db"
    with sqlite_saver(path) as saver:
        _invoke(build(saver), "a")
    _settle(path)
    store = open_reader(path)
    try:
        store.cursor()
        store.cursor()
        assert _counts(counted) == 1
        monkeypatch.setattr(SqliteReader, "CURSOR_KEPT_S", 0.0)
        store.cursor()
        assert _counts(counted) == 2
    finally:
        store.close()


def _open(path: Path, how: str):
    """The store as the read commands open it (sqlite3 alone) or as the app does (an engine)."""
    if how == "reader":
        return open_reader(path)
    from inspector.store import open_store
    return open_store(path, readonly=True)


@pytest.mark.parametrize("how", ["reader", "engine"])
def test_a_checkpoints_queries_share_one_connection_closed_after_it(tmp_path: Path, opened, how: str) -> None:
    path = tmp_path / "lg.db"
    with sqlite_saver(path) as saver:
        graph = build(saver)
        _invoke(graph, "a")
        store = _open(path, how)
        try:
            infos = store.list_checkpoints("a")
            assert len(infos) > 3
            opened.watch()
            snaps = [store.load(info.id) for info in infos]
            # one connection a checkpoint (before: one a query, four or more a checkpoint)
            assert len(opened) == len(infos)
            assert all(_closed(conn) for conn in opened)      # a writer's -shm: none kept open
            # the same states as LangGraph's own history, newest first
            history = list(graph.get_state_history(cfg("a")))
            assert [s.state for s in reversed(snaps)] == [_plain(h.values) for h in history]
        finally:
            store.close()


@pytest.mark.parametrize("how", ["reader", "engine"])
def test_a_query_failing_in_a_held_block_gives_its_connection_back(tmp_path: Path, how: str) -> None:
    from inspector.errors import StoreError
    path = tmp_path / "lg.db"
    with sqlite_saver(path) as saver:
        _invoke(build(saver), "a")
        store = _open(path, how)
        try:
            reader = store.reader
            with reader.held():
                held = reader._held.conn
                with pytest.raises(StoreError):
                    reader._all("SELECT nothing FROM no_such_table")
                assert getattr(reader._held, "conn", None) is None
                assert held.closed if how == "engine" else _closed(held)
                assert reader.count_checkpoints("a") > 0         # the block goes on, on a new one
            assert getattr(reader._held, "conn", None) is None
        finally:
            store.close()


def _closed(conn) -> bool:
    try:
        conn.execute("SELECT 1")
    except sqlite3.ProgrammingError:
        return True
    return False


def _plain(values: dict) -> dict:
    return dict(values)


def test_channel_views_of_delta_channels_and_the_standard_threads(tmp_path: Path, lg_master: Path) -> None:
    """``load_channel_view`` as ``load_state_view`` shows each channel, on a DeltaChannel thread
    (its values rebuilt from the writes between snapshots) and on the standard threads
    (messages, interrupts, subgraphs)."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    from tests.lgcorpus.test_key_diff import _channel_views_checked

    from .lg_graphs import build_delta_graph, config
    path = tmp_path / "delta.db"
    conn = sqlite3.connect(str(path), check_same_thread=False)
    build_delta_graph(SqliteSaver(conn)).invoke({"n": 0}, config("d"))
    conn.close()
    assert _channel_views_checked(str(path))[1] > 5
    assert _channel_views_checked(str(lg_master))[1] > 20


@pytest.mark.parametrize("how", ["reader", "engine"])
def test_a_walk_holds_one_connection(tmp_path: Path, opened, how: str) -> None:
    from inspector.diff.history import value_history
    path = tmp_path / "lg.db"
    with sqlite_saver(path) as saver:       # a writer's -shm: connections are closed after use
        graph = build(saver)
        _invoke(graph, "a")
        store = _open(path, how)
        try:
            count = len(store.list_checkpoints("a"))
            opened.watch()
            events = value_history(store, "a", ("log",))
            assert len(events) >= 2 and count > 3
            assert len(opened) == 1 and _closed(opened[0])
        finally:
            store.close()


@pytest.mark.parametrize("how", ["reader", "engine"])
def test_a_held_snapshot_connection_is_replaced_when_a_writer_changes_the_files(tmp_path: Path, how: str) -> None:
    """A clean store (no -wal, no -shm) is read on an immutable connection, which trusts its
    cache while the files stay as they were: held for a walk, it is replaced at the first
    query after a writer changed them, and the block reads what the writer wrote."""
    path = tmp_path / "lg.db"
    with sqlite_saver(path) as saver:
        _invoke(build(saver), "a")
    assert sqlite_ro.mode_of(path) == sqlite_ro.IMMUTABLE
    store = _open(path, how)
    try:
        with store.reading():
            before = store.load("a:-1")
            with sqlite_saver(path) as saver:
                graph = build(saver)
                _invoke(graph, "b")
                graph.update_state(cfg("a"), {"mode": "skip"})     # a new head for thread a
                assert store.list_checkpoints("a")[-1].seq > before.info.seq
                head = store.load("a:-1")
                assert head.state == dict(graph.get_state(cfg("a")).values) != before.state
    finally:
        store.close()


@pytest.mark.parametrize("how", ["reader", "engine"])
def test_a_snapshot_connection_sees_a_write_of_the_same_size_whose_time_was_put_back(tmp_path: Path, how: str) -> None:
    """A rollback-journal store rewritten in place to the same size, its modification time then
    restored (as a copy tool or a backup restore may leave it): the inode change time, which
    no one can put back, tells the readers the file changed."""
    path = tmp_path / "lg.db"
    with sqlite_saver(path) as saver:
        _invoke(build(saver), "a")
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.close()
    _settle(path)
    assert sqlite_ro.mode_of(path) == sqlite_ro.IMMUTABLE
    store = _open(path, how)
    try:
        infos = store.list_checkpoints("a")
        assert store.load(infos[-1].id).info.id == infos[-1].id
        stat = path.stat()
        conn = sqlite3.connect(path)
        conn.execute("UPDATE checkpoints SET thread_id = 'z' WHERE thread_id = 'a'")   # same length
        conn.commit()
        conn.close()
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        assert (path.stat().st_size, path.stat().st_mtime_ns) == (stat.st_size, stat.st_mtime_ns)
        assert [i.seq for i in store.list_checkpoints("z")] == [i.seq for i in infos]
        assert store.list_checkpoints("a") == []
    finally:
        store.close()


def test_a_walk_reads_each_namespaces_head_once(tmp_path: Path, counted: list[str]) -> None:
    """Whether a checkpoint is its namespace's head (its pending writes are then applied) comes
    from the head's id, read once while the store does not change, not from a query per
    checkpoint; after a writer's new head, it is read again and the old head is no longer one."""
    path = tmp_path / "lg.db"
    with sqlite_saver(path) as saver:
        graph = build(saver)
        _invoke(graph, "a")
        store = open_reader(path)
        try:
            infos = store.list_checkpoints("a")
            counted.clear()
            with store.reading():
                snaps = [store.load(info.id) for info in infos]
            heads = [sql for sql in counted if "MAX(checkpoint_id" in sql and "checkpoint_ns = :ns" in sql]
            assert len(heads) == 1 and len(snaps) > 3
            assert not any("> :cid" in sql for sql in counted)     # (no "is a newer one there?" per checkpoint)
            history = list(graph.get_state_history(cfg("a")))
            assert [s.state for s in reversed(snaps)] == [_plain(h.values) for h in history]
            old_head = store.load("a:-1")
            graph.update_state(cfg("a"), {"mode": "skip"})
            new_head = store.load("a:-1")
            assert new_head.info.seq > old_head.info.seq
            assert new_head.state == _plain(graph.get_state(cfg("a")).values)
            assert store.load(old_head.info.id).state == _plain(history[0].values)
        finally:
            store.close()
