"""Usage and prune on real LangGraph databases (SqliteSaver and PostgresSaver), checked with
LangGraph itself reading the pruned database."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from inspector.bench.langgraph import build_thread
from inspector.cli import main
from inspector.retention.api import apply_prune, plan_prune
from inspector.retention.rules import make_rules
from inspector.store import open_store
from inspector.usage.api import store_usage
from tests.conftest import store_files_digest
from tests.store.langgraph.lg_graphs import (
    THREADS,
    build_graph,
    config,
    make_database,
    open_graph,
)


@pytest.fixture(scope="module")
def lg_master(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The standard threads written by the real langgraph package (shared)."""
    return make_database(tmp_path_factory.mktemp("lg-retention") / "standard.db")


@pytest.fixture
def chat_db(tmp_path: Path, lg_master: Path) -> Path:
    """The standard threads plus one 60-step agent loop written through SqliteSaver.put."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = tmp_path / "lg.db"
    src, dst = sqlite3.connect(lg_master), sqlite3.connect(path)
    src.backup(dst)
    src.close()
    saver = SqliteSaver(dst)
    build_thread(saver, 60)
    dst.close()
    return path


def test_usage_channels_rewrites_and_our_estimate(chat_db: Path, capsys) -> None:
    before = store_files_digest(chat_db)
    assert main(["usage", str(chat_db), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert store_files_digest(chat_db) == before
    runs = {r["run"]: r for r in doc["runs"]}
    assert set(THREADS) <= set(runs) and runs["bench-thread"]["checkpoints"] == 60
    con = sqlite3.connect(chat_db)
    body = con.execute("SELECT SUM(LENGTH(checkpoint)) + SUM(LENGTH(metadata)) FROM checkpoints "
                       "WHERE thread_id = 'bench-thread'").fetchone()[0]
    writes = con.execute("SELECT SUM(LENGTH(value)) FROM writes WHERE thread_id = 'bench-thread'").fetchone()[0]
    con.close()
    assert runs["bench-thread"]["bytes"] == body + writes
    channels = {c["channel"]: c for c in doc["channels"]}
    # the history is re-written in full at every step: most of its bytes repeat the parent's
    messages = channels["messages"]
    assert messages["bytes"] == max(c["bytes"] for c in doc["channels"])
    assert 0 < messages["unchanged_bytes"] < messages["bytes"]
    assert doc["our_store_estimate"]["bytes"] < doc["total_bytes"] / 2
    assert "PieceEncoder" in doc["our_store_estimate"]["method"]
    assert main(["usage", str(chat_db), "thread-D"]) == 0
    assert "thread-D, checkpoint by checkpoint" in capsys.readouterr().out


def test_prune_needs_the_unlock_backs_up_and_langgraph_still_reads_every_thread(chat_db: Path, capsys) -> None:
    graph, conn = open_graph(chat_db)
    heads = {t: graph.get_state(config(t)) for t in THREADS}
    conn.close()
    before = store_files_digest(chat_db)
    assert main(["prune", str(chat_db), "--keep-last", "2", "--apply"]) == 2
    assert "--langgraph-write" in capsys.readouterr().err
    assert store_files_digest(chat_db) == before
    with open_store(chat_db) as store:       # (name, change) of every checkpoint, by its LangGraph id
        named = {c.id: (c.name, c.change) for t in THREADS for c in store.list_checkpoints(t)}
    planned = plan_prune(chat_db, make_rules(keep_last=2))
    # the agent loop wrote seconds ago: a live thread, kept whole; the finished threads are pruned
    assert planned.protected["live run"] == 58 and planned.protected["fork origin or its ancestor"] > 0
    assert {r.run for r in planned.runs} == set(THREADS) and planned.remove_checkpoints >= 15
    done = apply_prune(chat_db, make_rules(keep_last=2), langgraph_write=True, vacuum=True)
    assert done.remove_checkpoints == planned.remove_checkpoints and done.backup
    backup = sqlite3.connect(done.backup)
    assert backup.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert backup.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0] == done.total_checkpoints
    backup.close()
    con = sqlite3.connect(chat_db)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    orphans = con.execute("SELECT COUNT(*) FROM writes w WHERE NOT EXISTS (SELECT 1 FROM checkpoints c WHERE "
                          "c.thread_id = w.thread_id AND c.checkpoint_ns = w.checkpoint_ns "
                          "AND c.checkpoint_id = w.checkpoint_id)").fetchone()[0]
    assert con.execute("SELECT COUNT(*) FROM checkpoints WHERE thread_id = 'bench-thread'").fetchone()[0] == 60
    con.close()
    assert orphans == 0
    with open_store(chat_db) as store:
        # a kept checkpoint whose parent went (with the task writes that named its step) is
        # named as before, from its own body: not "loop"
        kept = {c.id: (c.name, c.change) for t in THREADS for c in store.list_checkpoints(t)}
        assert len(kept) >= 10 and {i: named[i] for i in kept} == kept
    graph, conn = open_graph(chat_db)
    try:
        for thread, head in heads.items():     # LangGraph sees the same heads, tasks and pending writes
            now = graph.get_state(config(thread))
            assert now.config == head.config and now.next == head.next and now.values == head.values
            assert [t.interrupts for t in now.tasks] == [t.interrupts for t in head.tasks]
        # the interrupted thread still continues from its head
        from langgraph.types import Command
        graph.invoke(Command(resume="yes"), config("thread-A"))
        assert graph.get_state(config("thread-A")).next == ()
    finally:
        conn.close()
    with open_store(chat_db) as store:
        assert store_usage(store).checkpoints < done.total_checkpoints


@pytest.mark.postgres
def test_postgres_prune_in_one_transaction_and_blob_collection(pg_url: str) -> None:
    import sqlalchemy as sa
    from langgraph.checkpoint.postgres import PostgresSaver

    conninfo = pg_url.replace("postgresql+psycopg://", "postgresql://")
    with PostgresSaver.from_conn_string(conninfo) as saver:
        saver.setup()
        build_thread(saver, 40)
        graph = build_graph(saver)
        graph.invoke({"messages": [], "priority": "high", "fail": False}, config("pg-A"))
        head = graph.get_state(config("pg-A"))
    with open_store(pg_url) as store:
        report = store_usage(store)
        assert {"bench-thread", "pg-A"} <= {r.run for r in report.runs}
        assert report.tables["checkpoint_blobs"] > 0 and report.ours is not None
    engine = sa.create_engine(pg_url, poolclass=sa.pool.NullPool)
    dangling_sql = ("SELECT COUNT(*) FROM checkpoints c, jsonb_each_text(c.checkpoint -> 'channel_versions') v "
                    "WHERE NOT EXISTS (SELECT 1 FROM checkpoint_blobs b WHERE b.thread_id = c.thread_id AND "
                    "b.checkpoint_ns = c.checkpoint_ns AND b.channel = v.key AND b.version = v.value)")
    with engine.connect() as conn:
        dangling = conn.exec_driver_sql(dangling_sql).scalar()
        blobs_before = conn.exec_driver_sql("SELECT COUNT(*) FROM checkpoint_blobs").scalar()
    done = apply_prune(pg_url, make_rules(keep_last=1), langgraph_write=True)
    # the agent loop is live (written seconds ago) and kept whole; the interrupted thread is pruned
    assert done.protected["live run"] == 39 and done.backup is None
    assert done.remove_checkpoints >= 3 and {r.run for r in done.runs} == {"pg-A"} and done.pieces > 0
    with engine.connect() as conn:
        after = conn.exec_driver_sql(dangling_sql).scalar()
        blobs_after = conn.exec_driver_sql("SELECT COUNT(*) FROM checkpoint_blobs").scalar()
    engine.dispose()
    # every version a remaining checkpoint names still has its blob (if it ever had one)
    assert after <= dangling and blobs_after == blobs_before - done.pieces
    with PostgresSaver.from_conn_string(conninfo) as saver:
        now = build_graph(saver).get_state(config("pg-A"))
        assert now.values == head.values and now.next == head.next
