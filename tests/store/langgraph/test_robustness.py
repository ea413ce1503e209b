"""Opening never writes; old, newer, foreign and corrupt files give data or one clear StoreError."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest
from langchain_core.load import dumpd
from langchain_core.messages import HumanMessage

from inspector.errors import NotAStoreError, StoreError
from inspector.store import open_store
from inspector.store.langgraph import LangGraphStore, is_langgraph_schema
from inspector.store.langgraph.decode import pack, unpack

from .conftest import open_ro
from .lg_graphs import config, open_graph


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _browse(store) -> int:
    """Touch every read path; return how many snapshots were loaded."""
    loaded = 0
    cursor = store.cursor()
    for run in store.list_runs():
        store.get_run(run.id)
        for info in store.list_checkpoints(run.id):
            store.load(info.id)
            loaded += 1
    store.changes_since(cursor)
    return loaded


def test_open_store_returns_the_langgraph_adapter(lg_master):
    with open_store(lg_master) as store:
        assert isinstance(store, LangGraphStore)
        assert store.info.kind == "langgraph" and store.info.read_only
        assert store.watch_paths() == [lg_master, Path(f"{lg_master}-wal"), Path(f"{lg_master}-shm")]
        assert len(store.list_runs()) == 5


def test_file_bytes_unchanged_after_browsing(lg_copy):
    before = _sha(lg_copy)
    with open_store(lg_copy) as store:
        assert _browse(store) > 40
    with open_ro(lg_copy, show_control=True) as store:
        _browse(store)
    assert _sha(lg_copy) == before


def test_old_writes_shape_without_task_path(lg_copy, lg_master):
    conn = sqlite3.connect(str(lg_copy))
    conn.execute("ALTER TABLE writes DROP COLUMN task_path")
    conn.commit()
    conn.close()
    with open_ro(lg_copy) as old, open_ro(lg_master) as new:
        assert old.info.format_version == 1 and new.info.format_version == 2
        assert [r.status for r in old.list_runs()] == [r.status for r in new.list_runs()]
        for thread in ("thread-A", "thread-D"):
            a, b = old.list_checkpoints(thread), new.list_checkpoints(thread)
            assert [c.id for c in a] == [c.id for c in b]
            assert {c.name for c in a if c.kind == "loop"} == {"loop"}  # node names need task_path
            for x, y in zip(a, b, strict=True):
                sa_, sb = old.load(x.id), new.load(y.id)
                assert sa_.meta["next"] == sb.meta["next"]
                assert [t["status"] for t in sa_.meta["tasks"]] == [t["status"] for t in sb.meta["tasks"]]


def _insert_json_checkpoint(db: Path) -> str:
    """A legacy ``json`` row (lc envelopes, as checkpoint ≤ 1.0.9 wrote) heading a new thread."""
    cid = "1ef4f797-8335-6428-8001-8a1503f9b875"
    body = {"v": 1, "id": cid, "ts": "2024-08-01T10:00:00+00:00",
            "channel_values": {"messages": [dumpd(HumanMessage(content="hello from 2024"))],
                               "__start__": {"lc": 2, "type": "constructor",
                                             "id": ["langgraph", "types", "Send"], "args": ["a", 1]}},
            "channel_versions": {"messages": 2}, "versions_seen": {}, "pending_sends": []}
    conn = sqlite3.connect(str(db))
    conn.execute("INSERT INTO checkpoints VALUES ('legacy', '', ?, NULL, 'json', ?, ?)",
                 (cid, json.dumps(body).encode(), json.dumps({"source": "loop", "step": 1,
                                                              "writes": {"agent": {"x": 1}}})))
    conn.execute("INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, "
                 "type, value) VALUES ('legacy', '', ?, 't1', 0, 'messages', 'bytes', ?)", (cid, b"\x00\x01"))
    conn.commit()
    conn.close()
    return cid


def test_legacy_json_rows_show_lc_envelopes_as_dicts(lg_copy):
    cid = _insert_json_checkpoint(lg_copy)
    with open_ro(lg_copy) as store:
        (info,) = store.list_checkpoints("legacy")
        assert info.name == "agent"  # the old metadata "writes" key names the node
        snap = store.load(info.id)
        assert snap.state["messages"][0]["__type__"] == "langchain.schema.messages.HumanMessage"
        assert snap.state["messages"][0]["content"] == "hello from 2024"
        assert snap.meta["control_channels"]["__start__"]["__type__"] == "langgraph.types.Send"
        assert snap.meta["writes"][0]["value"] == {"__bytes__": "AAE=", "size": 2}
        assert snap.tasks["goal"] == "hello from 2024"
        assert snap.meta["checkpoint_id"] == cid


def test_newer_file_still_displays(lg_copy):
    conn = sqlite3.connect(str(lg_copy))
    conn.execute("ALTER TABLE checkpoints ADD COLUMN future_column TEXT")
    conn.execute("CREATE TABLE future_table (x)")
    head_id, head = conn.execute("SELECT checkpoint_id, checkpoint FROM checkpoints WHERE thread_id='thread-C' "
                                 "AND checkpoint_ns='' ORDER BY checkpoint_id DESC").fetchone()
    body = unpack(head)
    body["v"] = 99
    import msgpack
    body["channel_values"]["novel"] = msgpack.ExtType(42, b"\x01\x02")
    body["channel_values"]["broken"] = msgpack.ExtType(5, b"\xc1")
    conn.execute("UPDATE checkpoints SET checkpoint=? WHERE thread_id='thread-C' AND checkpoint_id=?",
                 (pack(body), head_id))
    conn.commit()
    conn.close()
    with open_store(lg_copy) as store:
        snap = store.load("thread-C:-1")
        assert snap.state["novel"] == {"__ext__": 42, "__bytes__": "AQI=", "size": 2,
                                       "note": "unknown msgpack extension type 42"}
        assert snap.state["broken"]["__ext__"] == 5 and "__error__" in snap.state["broken"]
        assert any("newer" in n for n in snap.meta["notes"])
        assert snap.state["plan"] == "draft for Tidy the wiki (refined)"
        assert store.get_run("thread-C").status == "completed"


def _sqlite_file(path: Path, ddl: list[str]) -> Path:
    conn = sqlite3.connect(str(path))
    for stmt in ddl:
        conn.execute(stmt)
    conn.commit()
    conn.close()
    return path


def test_foreign_sqlite_file_is_not_a_store(tmp_path):
    db = _sqlite_file(tmp_path / "foreign.db", ["CREATE TABLE checkpoints (id INTEGER, data BLOB)"])
    assert not is_langgraph_schema({"checkpoints": {"id", "data"}})
    with pytest.raises(NotAStoreError):
        open_store(db)
    with pytest.raises(NotAStoreError):
        open_ro(db)


def test_legacy_thread_ts_schema_is_refused_clearly(tmp_path):
    db = _sqlite_file(tmp_path / "old.db", [
        "CREATE TABLE checkpoints (thread_id TEXT, thread_ts TEXT, parent_ts TEXT, checkpoint BLOB, "
        "metadata BLOB)"])
    with pytest.raises(NotAStoreError, match="before langgraph 0.2"):
        open_store(db)


def test_postgres_layout_is_refused_clearly(tmp_path):
    db = _sqlite_file(tmp_path / "pg.db", [
        "CREATE TABLE checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, "
        "checkpoint, metadata)",
        "CREATE TABLE checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)",
        "CREATE TABLE checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, "
        "type, blob)"])
    with pytest.raises(StoreError, match="PostgreSQL"):
        open_store(db)


def test_truncated_file_gives_a_store_error(lg_copy):
    data = lg_copy.read_bytes()
    lg_copy.write_bytes(data[: len(data) // 3])
    with pytest.raises(StoreError), open_store(lg_copy) as store:
        _browse(store)


def test_corrupt_pages_give_a_store_error_not_a_traceback(lg_copy):
    data = bytearray(lg_copy.read_bytes())
    page = 4096
    for start in range(page * 2, len(data), page * 3):
        data[start + 100: start + 400] = b"\xff" * 300
    lg_copy.write_bytes(bytes(data))
    with pytest.raises(StoreError, match="corrupt"), open_store(lg_copy) as store:
        _browse(store)


def test_live_writer_changes_are_seen(lg_copy):
    with open_store(lg_copy) as store:
        cursor = store.cursor()
        assert store.changes_since(cursor).empty
        graph, conn = open_graph(lg_copy)
        try:
            from langgraph.types import Command
            graph.invoke(Command(resume="ok"), config("thread-A"))
        finally:
            conn.close()
        changes = store.changes_since(cursor)
        assert changes.run_ids == ("thread-A",)
        assert [c.name for c in changes.new_checkpoints] == ["review", "execute"]
        infos = store.list_checkpoints("thread-A")
        assert list(changes.new_checkpoints) == infos[-2:]
        assert store.get_run("thread-A").status == "completed"
        assert store.changes_since(changes.cursor).empty


def test_bad_metadata_and_missing_body_spoil_only_their_checkpoint(lg_copy):
    conn = sqlite3.connect(str(lg_copy))
    ids = [r[0] for r in conn.execute("SELECT checkpoint_id FROM checkpoints WHERE thread_id='thread-B' "
                                      "AND checkpoint_ns='' ORDER BY checkpoint_id")]
    conn.execute("UPDATE checkpoints SET metadata=? WHERE thread_id='thread-B' AND checkpoint_id=?",
                 (b"\xff\xfe{not json", ids[2]))
    conn.execute("UPDATE checkpoints SET checkpoint=NULL, type=NULL WHERE thread_id='thread-B' "
                 "AND checkpoint_id=?", (ids[3],))
    conn.execute("UPDATE writes SET idx='x' || idx, type=NULL WHERE thread_id='thread-B' AND checkpoint_id=?",
                 (ids[1],))
    conn.commit()
    conn.close()
    with open_store(lg_copy) as store:
        infos = store.list_checkpoints("thread-B")
        assert len(infos) == 10
        bad_meta = store.get_checkpoint(f"thread-B@{ids[2]}")
        assert bad_meta.kind == "step"
        assert "__error__" in store.load(bad_meta.id).meta["langgraph_metadata"]
        empty = store.load(f"thread-B@{ids[3]}")
        assert "__error__" in empty.state
        assert store.load(f"thread-B@{ids[1]}").meta["writes"]
        assert store.get_run("thread-B").status == "completed"
        assert _browse(store) > 40
