"""The native store on real SQLite files: round trips, dedup, versions, read-only, bad input."""

from __future__ import annotations

import itertools
import sqlite3
from collections import Counter
from pathlib import Path

import msgpack
import pytest
import sqlalchemy as sa

from inspector.errors import CorruptDataError, NewerFormatError, NotAStoreError, StoreError
from inspector.record import Checkpointer
from inspector.store import create_store, open_store
from tests.conftest import store_files_digest


def _record(path: Path, steps: int = 5, **kw) -> str:
    with Checkpointer(path, name="t", agent="test", heartbeat=60, **kw) as cp:
        state = {"messages": [], "n": 0}
        for i in range(steps):
            state["messages"].append({"role": "user", "content": f"hello {i}"})
            state["n"] = i
            cp.save(state, kind="llm", name=f"step {i}",
                    tasks={"goal": "g", "tasks": [{"id": "a", "title": "A", "status": "done" if i else "pending",
                                                   "checks": [{"name": "c", "passed": i > 2}]}]})
        return cp.run_id


def test_round_trip(store_path: Path) -> None:
    run_id = _record(store_path)
    with open_store(store_path) as store:
        run = store.get_run(run_id)
        assert (run.status, run.checkpoint_count, run.head_seq) == ("completed", 5, 4)
        assert (run.checks_passed, run.checks_total, run.tasks_done) == (1, 1, 1)
        cps = store.list_checkpoints(run_id)
        assert [c.seq for c in cps] == [0, 1, 2, 3, 4]
        assert cps[1].parent_id == cps[0].id and cps[0].parent_id is None
        snap = store.load(f"{run_id}:3")
        assert snap.state == {"messages": [{"role": "user", "content": f"hello {i}"} for i in range(4)], "n": 3}
        assert snap.tasks["tasks"][0]["checks"][0]["passed"] is True
        assert store.load(f"{run_id}:-1").info.seq == 4
        assert store.get_checkpoint(cps[2].id).seq == 2
        assert store.list_checkpoints(run_id, after_seq=2, limit=1)[0].seq == 3


def test_dedup_bytes_grow_with_change_not_state(store_path: Path) -> None:
    sizes = []
    with Checkpointer(store_path, name="d", heartbeat=60) as cp:
        state = {"history": [{"text": f"{i}:" + "q" * 2000} for i in range(300)], "counter": 0}
        for i in range(40):
            state["counter"] = i
            state["history"].append({"text": f"new {i}" + "k" * 1000})
            cp.save(state)
            with sqlite3.connect(store_path) as conn:
                sizes.append(conn.execute("select sum(length(data)) from ci_blobs").fetchone()[0])
    growth = [b - a for a, b in itertools.pairwise(sizes[10:])]
    # the state is ~600 KB; each step adds ~1 KB: the store grows by about that, not by the state
    assert max(growth) < 6_000, growth


def test_newer_format_is_a_clear_error(store_path: Path) -> None:
    _record(store_path, steps=1)
    with sqlite3.connect(store_path) as conn:
        conn.execute("update ci_meta set value='99' where key='format_version'")
    with pytest.raises(NewerFormatError, match="newer"):
        open_store(store_path)


def _history_state(n: int, edit: int | None = None) -> dict:
    facts = [{"id": i, "text": f"fact {i} " * 8} for i in range(n)]
    if edit is not None:
        facts[edit]["text"] = "edited"
    return {"facts": facts}


def _chunk_kinds(path: Path) -> Counter:
    """How many pieces of the store are of each kind of chunk: 3 list chunks with framed
    items (format 2 and 3), 5 map chunks (format 3), 0 anything else."""
    with sqlite3.connect(path) as conn:
        digests = [bytes(row[0]) for row in conn.execute("select hash from ci_blobs")]
    with open_store(path) as store:
        raw = store.read_raw_pieces(digests)
    tops = [msgpack.unpackb(piece) for piece in raw.values()]
    return Counter(top.code if isinstance(top, msgpack.ExtType) and top.code in (3, 5) else 0 for top in tops)


def _mapped_state(n: int, edit: int | None = None, key: str | None = None) -> dict:
    """A list of facts and a map of 200 files (chunked as a map from format 3 on)."""
    state = _history_state(n, edit)
    state["files"] = {f"src/module_{i}.py": f"contents of module {i}" for i in range(200)}
    if key is not None:
        state["files"][key] = "rewritten"
    return state


@pytest.mark.parametrize("writer", ["recording", "fork"])
@pytest.mark.parametrize("old_format", [1, 2, 3])
def test_an_older_store_is_read_and_raised_to_format_4_by_its_next_writer(
        store_path: Path, monkeypatch, writer, old_format) -> None:
    from inspector.codec import PieceEncoder
    from inspector.diff import diff_checkpoints
    from inspector.resume.fork import fork
    from inspector.store.native import FORMAT_VERSION

    assert FORMAT_VERSION == 4
    # a store as an older version wrote it: its format in ci_meta, its layout of pieces
    with monkeypatch.context() as old_writer:
        old_writer.setattr(PieceEncoder, "chunk_format", old_format)
        with Checkpointer(store_path, name="old", heartbeat=60) as cp:
            cp.save(_mapped_state(300), force=True)
            cp.save(_mapped_state(300, edit=7), force=True)
            run_id = cp.run_id
    with sqlite3.connect(store_path) as conn:
        conn.execute("update ci_meta set value = ? where key = 'format_version'", (str(old_format),))
    kinds = _chunk_kinds(store_path)
    assert (kinds[5] == 0) == (old_format < 3) and (kinds[3] == 0 if old_format == 1 else kinds[3] >= 5)
    before = store_files_digest(store_path)
    with open_store(store_path) as store:
        assert store.info.format_version == old_format
        assert store.load(f"{run_id}:1").state == _mapped_state(300, edit=7)
        (change,) = diff_checkpoints(store, f"{run_id}:0", f"{run_id}:1").changes
        assert change.display_path == "facts[7].text" and change.new == "edited"
    assert store_files_digest(store_path) == before, f"reading a format {old_format} store wrote to it"

    # this version writes format 4 pieces into it and marks the store so older readers refuse it
    new_state = _mapped_state(300, edit=9, key="src/module_77.py")
    if writer == "recording":
        with Checkpointer(store_path, name="new", heartbeat=60) as cp:
            cp.save(new_state, force=True)
            new_run = cp.run_id
    else:
        with open_store(store_path, readonly=False) as store:
            assert store.info.format_version == 4
            new_run = fork(store, f"{run_id}:1", reason="edit", state=new_state).id
    with sqlite3.connect(store_path) as conn:
        assert conn.execute("select value from ci_meta where key = 'format_version'").fetchone()[0] == "4"
    assert _chunk_kinds(store_path)[5] >= 3, "the map is stored in map chunks"
    with open_store(store_path) as store:
        assert store.info.format_version == 4
        assert store.load(f"{new_run}:0").state == new_state
        # an old layout against the new one, both ways: a plain dict against a chunked map
        changes = diff_checkpoints(store, f"{run_id}:1", f"{new_run}:0").changes
        assert [c.display_path for c in changes] == ["facts[7].text", "facts[9].text", "files['src/module_77.py']"]
        back = diff_checkpoints(store, f"{new_run}:0", f"{run_id}:1").changes
        assert [(c.display_path, c.new) for c in back][-1] == ("files['src/module_77.py']", "contents of module 77")


@pytest.mark.parametrize("content", [b"", b"\x00\x01garbage" * 100, b"SQLite format 3\x00" + b"\xff" * 50])
def test_not_a_store(tmp_path: Path, content: bytes) -> None:
    bad = tmp_path / "bad.db"
    bad.write_bytes(content)
    with pytest.raises(StoreError):
        open_store(bad)
    assert bad.read_bytes() == content


def test_foreign_sqlite_database(tmp_path: Path) -> None:
    foreign = tmp_path / "foreign.db"
    with sqlite3.connect(foreign) as conn:
        conn.execute("create table people (id integer primary key, name text)")
    before = foreign.read_bytes()
    with pytest.raises(NotAStoreError, match="not a checkpoint store"):
        open_store(foreign)
    assert foreign.read_bytes() == before


def test_missing_path(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="does not exist"):
        open_store(tmp_path / "nope.db")
    assert not (tmp_path / "nope.db").exists()


def test_truncated_store(store_path: Path, tmp_path: Path) -> None:
    _record(store_path, steps=30)
    with sqlite3.connect(store_path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = store_path.read_bytes()
    cut = tmp_path / "cut.db"
    cut.write_bytes(data[: len(data) // 3])
    with pytest.raises(StoreError), open_store(cut) as store:
        for run in store.list_runs():
            for cp in store.list_checkpoints(run.id):
                store.load(cp.id)


def test_corrupt_blob_is_reported_and_others_still_load(store_path: Path) -> None:
    run_id = _record(store_path, steps=3)
    with open_store(store_path) as store:
        last = store.get_checkpoint(f"{run_id}:2")
    with sqlite3.connect(store_path) as conn:
        conn.execute("update ci_blobs set data = x'00112233' where hash = ?", (last.state_hash,))
    with open_store(store_path) as store:
        with pytest.raises(CorruptDataError):
            store.load(last.id)
        assert store.load(f"{run_id}:0").state["n"] == 0


def test_raw_pieces_are_verified_and_the_raw_cache_is_bounded(store_path: Path, monkeypatch) -> None:
    from inspector.store.native import reads as native_store
    from inspector.codec import iter_digests, unpack

    run_id = _record(store_path, steps=40)
    monkeypatch.setattr(native_store, "RAW_CACHE_BYTES", 600)
    with open_store(store_path) as store:
        head = store.get_checkpoint(f"{run_id}:-1")
        root = store.read_pieces([head.state_hash])[head.state_hash]
        digests = [head.state_hash, *iter_digests(root)]
        raw = store.read_raw_pieces(digests)
        assert set(raw) == set(digests)
        assert all(unpack(raw[d]) == store.read_piece(d) for d in digests)
        assert store._raw_bytes <= 600 and sum(map(len, store._raw.values())) == store._raw_bytes
        store.clear_caches()
        assert not store._raw and not store._pieces and store._raw_bytes == 0
    with sqlite3.connect(store_path) as conn:
        conn.execute("update ci_blobs set data = x'00112233' where hash = ?", (digests[-1],))
    with open_store(store_path) as store:
        with pytest.raises(CorruptDataError):
            store.read_raw_pieces([digests[-1]])
        with pytest.raises(CorruptDataError, match="missing"):
            store.read_raw_pieces([b"\0" * 16])
        with pytest.raises(CorruptDataError):
            list(store.stream_raw_pieces(digests, part=2))
        with pytest.raises(CorruptDataError, match="missing"):
            list(store.stream_raw_pieces([digests[0], b"\0" * 16]))


@pytest.mark.parametrize("sizes", [None, (3,)], ids=["batches padded to a compiled size", "exact batches"])
def test_raw_pieces_in_several_batches(store_path: Path, monkeypatch, sizes) -> None:
    from inspector.store.native import reads as native_store
    from inspector.codec import iter_digests, unpack

    run_id = _record(store_path, steps=200)
    monkeypatch.setattr(native_store, "FETCH_BATCH", 3)
    if sizes is not None:    # the compiled IN-list sizes the batches are padded up to
        monkeypatch.setattr(native_store, "_BLOB_BATCHES", sizes)
    with open_store(store_path) as store:
        head = store.get_checkpoint(f"{run_id}:-1")
        root = store.read_pieces([head.state_hash])[head.state_hash]
        digests = [head.state_hash, *iter_digests(root)]
        store.clear_caches()
        raw = store.read_raw_pieces(digests + digests[:2])     # repeats are read once
        assert set(raw) == set(digests) and len(digests) > 3
        assert all(unpack(raw[d]) == store.read_piece(d) for d in digests)
        store.clear_caches()
        store.read_raw_pieces(digests[-2:])                    # in the cache: they come first
        parts = list(store.stream_raw_pieces(digests + digests[:2], part=3))
        assert list(parts[0]) == digests[-2:] and all(len(p) <= 3 for p in parts[1:])
        rest = digests[:-2]     # within a part, rows come in the database's order
        assert [set(p) for p in parts[1:]] == [set(rest[n:n + 3]) for n in range(0, len(rest), 3)], \
            "parts follow the order asked"
        assert all(unpack(p[d]) == store.read_piece(d) for p in parts for d in p)
        assert list(store.stream_raw_pieces(digests[-1:])) == [{digests[-1]: raw[digests[-1]]}]


def test_a_stream_left_early_drops_the_parts_not_yet_decompressed(store_path: Path, monkeypatch) -> None:
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from inspector.store.native import blobs
    from inspector.codec import iter_digests

    with Checkpointer(store_path, name="chunks", heartbeat=60) as cp:
        head = cp.save(_history_state(2000), force=True)
    with open_store(store_path) as store:
        digests = [head.state_hash]
        while len(digests) <= 20:      # down the chunk table's tree to its leaf chunks
            digests = [d for v in store.read_pieces(digests).values() for d in iter_digests(v)]
        assert len(digests) > 20
    pool, release, started = ThreadPoolExecutor(max_workers=1), threading.Event(), []
    monkeypatch.setattr(blobs, "_worker", lambda: pool)
    monkeypatch.setattr(blobs, "_THREADS", 2)
    monkeypatch.setattr(blobs, "LATER_FROM_BYTES", 1)   # these parts are small

    def later(parts):
        started.append(blobs.Later(parts))
        if len(started) == 1:       # after the first part, the worker is kept busy
            pool.submit(release.wait, 10)
        return started[-1]
    monkeypatch.setattr(blobs, "decompress_later", later)
    try:
        with open_store(store_path) as store:
            stream = store.stream_raw_pieces(digests, part=4)
            assert len(next(stream)) == 4
            stream.close()
        queued = [p.future for p in started[1:] if p.future is not None]
        assert queued and all(f.cancelled() for f in queued)
    finally:
        release.set()
        pool.shutdown()


def test_opening_and_reading_never_writes(demo_store: Path) -> None:
    before = store_files_digest(demo_store)
    with open_store(demo_store) as store:
        for run in store.list_runs():
            for cp in store.list_checkpoints(run.id):
                store.load(cp.id)
            store.changes_since(store.cursor())
    assert store_files_digest(demo_store) == before


def test_read_only_store_refuses_writes(store_path: Path) -> None:
    _record(store_path, steps=1)
    with open_store(store_path) as store, pytest.raises(sa.exc.OperationalError), store.engine.begin() as conn:
        conn.execute(sa.text("delete from ci_runs"))


def test_wal_mode_and_busy_timeout(store_path: Path) -> None:
    store = create_store(store_path)
    with store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() >= 1000
    store.close()


def test_reader_does_not_block_writer(store_path: Path) -> None:
    run_id = _record(store_path, steps=2)
    reader = open_store(store_path)
    with reader.engine.connect() as conn:
        txn = conn.begin()
        conn.execute(sa.text("select count(*) from ci_checkpoints")).scalar()
        # a long read transaction is open; a writer still commits at once
        with Checkpointer(store_path, name="w", heartbeat=60) as cp:
            cp.save({"x": 1})
        txn.rollback()
    assert any(r.name == "w" for r in reader.list_runs())
    reader.close()
    del run_id


def test_changes_since_cursor(store_path: Path) -> None:
    run_id = _record(store_path, steps=2)
    with open_store(store_path) as store:
        cursor = store.cursor()
        assert store.changes_since(cursor).new_checkpoints == ()
        with Checkpointer(store_path, name="later", heartbeat=60) as cp:
            cp.save({"a": 1})
            cp.save({"a": 2})
        changes = store.changes_since(cursor)
        assert [c.seq for c in changes.new_checkpoints] == [0, 1]
        assert cp.run_id in changes.run_ids and run_id not in changes.run_ids
        assert store.changes_since(changes.cursor).new_checkpoints == ()
