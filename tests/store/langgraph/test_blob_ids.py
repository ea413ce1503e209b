"""A checkpoint id stored as a BLOB of its text's bytes (found by mutating stores at random):
LangGraph's SqliteSaver still reads the row (SQLite sorts it after every text id, so
``get_tuple`` takes it for the head), and so must we: at its place in the listing, by
``THREAD:N`` and ``THREAD:-1``, as the parent of the next checkpoint. SqliteSaver's own
``list`` and ``get_tuple`` on the same file are the oracle."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import create_checkpoint, empty_checkpoint
from langgraph.checkpoint.sqlite import SqliteSaver

from inspector.errors import StoreError
from inspector.store import open_store

THREAD: RunnableConfig = {"configurable": {"thread_id": "t1"}}


def _text(cid: str | bytes) -> str:
    return cid.decode() if isinstance(cid, bytes) else cid


def _saved(path: Path, blob_rowid: int) -> list[tuple[str, dict]]:
    """Three checkpoints written by the real SqliteSaver, then the id of row ``blob_rowid``
    turned into a BLOB; returns LangGraph's ``list`` of the result, oldest first."""
    conn = sqlite3.connect(str(path), check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.setup()
    cfg: RunnableConfig = {"configurable": {"thread_id": "t1", "checkpoint_ns": ""}}
    ck = empty_checkpoint()
    for step in range(3):
        ck = create_checkpoint(ck, None, step)
        ck["channel_values"] = {"step": step}
        cfg = saver.put(cfg, ck, {"source": "loop", "step": step}, {})
    conn.execute("UPDATE checkpoints SET checkpoint_id = CAST(checkpoint_id AS BLOB) WHERE rowid = ?",
                 (blob_rowid,))
    conn.commit()
    listed = [(_text(t.config["configurable"]["checkpoint_id"]), t.checkpoint["channel_values"])
              for t in saver.list(THREAD)]
    head = saver.get_tuple(THREAD)
    assert head is not None and _text(head.config["configurable"]["checkpoint_id"]) == listed[0][0]
    conn.close()
    return listed[::-1]


@pytest.mark.parametrize("blob_rowid", [1, 2, 3])
def test_a_blob_id_reads_as_langgraph_reads_it(tmp_path: Path, blob_rowid: int):
    path = tmp_path / "lg.db"
    oracle = _saved(path, blob_rowid)
    with open_store(path) as store:
        infos = store.list_checkpoints("t1")
        assert [(i.id, i.seq, i.damaged) for i in infos] == [(f"t1@{cid}", n, "") for n, (cid, _) in enumerate(oracle)]
        for n, (cid, values) in enumerate(oracle):
            info = store.get_checkpoint(f"t1:{n}")
            assert info.id == f"t1@{cid}"
            assert store.get_checkpoint(info.id).seq == n
            assert store.load(info.id).state == values
        assert store.get_checkpoint("t1:-1").id == f"t1@{oracle[-1][0]}"
        assert store.get_run("t1").checkpoint_count == 3
        # each checkpoint's parent is found (the Diff tab's "vs parent"): its size is the one
        # the change is measured from, and it is their common ancestor
        sizes = {i.id: i.size for i in infos}
        for info in infos:
            if info.parent_id is not None:
                parent = store.get_checkpoint(info.parent_id)
                assert info.size_delta == info.size - sizes[parent.id]
                assert store.common_ancestor(info, parent) == parent


def test_an_id_that_is_not_utf8_is_listed_and_says_why_it_cannot_be_read(tmp_path: Path):
    """Bytes that are no text at all: the row lists (last, as SQLite sorts it) and ``THREAD:-1``
    finds it; loading it says what is wrong instead of that it is gone."""
    path = tmp_path / "lg.db"
    oracle = _saved(path, 3)
    conn = sqlite3.connect(str(path))
    conn.execute("UPDATE checkpoints SET checkpoint_id = x'ff31' WHERE rowid = 2")
    conn.commit()
    conn.close()
    with open_store(path) as store:
        assert len(store.list_checkpoints("t1")) == 3
        assert store.get_checkpoint("t1:-1").seq == 2
        assert store.load("t1:0").state == oracle[0][1]
        assert store.load("t1:1").state == oracle[2][1]     # the text id made a BLOB in _saved
        for ref in ("t1:2", "t1:-1"):
            with pytest.raises(StoreError, match="is not UTF-8 text"):
                store.load(ref)
