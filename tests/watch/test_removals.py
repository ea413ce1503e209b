"""Deletions seen live: a store's ``changes_since`` says ``removed`` after a prune or a deleted
run or thread (rows gone leave nothing to find), and only then; a run gone reads as
``RunNotFoundError``. The deletions are made by the real deleters: this project's prune, and
LangGraph's own ``delete_thread`` on ``SqliteSaver``, ``PostgresSaver`` and ``InspectorSaver``."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from inspector.errors import RunNotFoundError
from inspector.record import Checkpointer
from inspector.retention.api import apply_prune
from inspector.retention.rules import make_rules
from inspector.store import open_store
from tests.frameworks.conftest import store_copy  # noqa: F401  (a fixture)
from tests.retention.stores import chat
from tests.store.langgraph.lg_graphs import make_database


def _changes_after(store, cursor, act):
    """``act()`` (a deletion made elsewhere), then the store's changes since ``cursor``."""
    act()
    return store.changes_since(cursor)


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def test_a_native_prune_reads_as_removed_and_new_checkpoints_do_not(backend: str, tmp_path: Path, request) -> None:
    target = str(tmp_path / "s.db") if backend == "sqlite" else request.getfixturevalue("pg_url")
    with Checkpointer(target, name="long") as cp:
        chat(cp, 12)
        long_run = cp.run_id
    with open_store(target) as store:
        cursor = store.cursor()
        with Checkpointer(target, name="more") as cp:      # inserts only
            chat(cp, 3)
        changes = store.changes_since(cursor)
        assert not changes.removed and changes.new_checkpoints
        changes = _changes_after(store, changes.cursor, lambda: apply_prune(target, make_rules(keep_last=4)))
        assert changes.removed
        assert store.get_run(long_run).checkpoint_count == 4      # numbered anew: 0..3
        assert [c.seq for c in store.list_checkpoints(long_run)] == [0, 1, 2, 3]
        again = store.changes_since(changes.cursor)
        assert again.empty and not again.removed


def test_a_thread_deleted_through_inspector_saver_is_gone(tmp_path: Path) -> None:
    from langgraph.graph import START, MessagesState, StateGraph

    from inspector.record.langgraph import InspectorSaver

    path = tmp_path / "chat.db"
    builder = StateGraph(MessagesState)
    builder.add_node("reply", lambda s: {"messages": [("ai", f"hi {len(s['messages'])}")]})
    builder.add_edge(START, "reply")
    with InspectorSaver.from_conn_string(str(path)) as saver:
        graph = builder.compile(checkpointer=saver)
        for thread in ("one", "two"):
            graph.invoke({"messages": [("user", "q")]}, {"configurable": {"thread_id": thread}})
    with open_store(path) as store:
        runs = {r.labels["langgraph"]["thread_id"]: r.id for r in store.list_runs()}
        gone = runs["one"]
        cursor = store.cursor()
        with InspectorSaver.from_conn_string(str(path)) as saver:
            saver.delete_thread("one")
        changes = store.changes_since(cursor)
        assert changes.removed
        with pytest.raises(RunNotFoundError):
            store.get_run(gone)
        assert [r.id for r in store.list_runs()] == [runs["two"]]


def test_a_sqlitesaver_thread_deleted_by_langgraph_is_gone(tmp_path: Path) -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = make_database(tmp_path / "lg.db")
    with open_store(path) as store:
        threads = [r.id for r in store.list_runs()]
        cursor = store.cursor()
        conn = sqlite3.connect(path, check_same_thread=False)
        try:
            # the newest thread is not the one deleted: the rowids at the top stay as they were
            victim = min(threads, key=lambda t: conn.execute(
                "SELECT MAX(rowid) FROM checkpoints WHERE thread_id = ?", (t,)).fetchone()[0])
            changes = _changes_after(store, cursor, lambda: SqliteSaver(conn).delete_thread(victim))
        finally:
            conn.close()
        assert changes.removed
        with pytest.raises(RunNotFoundError):
            store.get_run(victim)
        assert sorted(r.id for r in store.list_runs()) == sorted(t for t in threads if t != victim)
        assert not store.changes_since(changes.cursor).removed


def test_what_was_read_of_a_langgraph_thread_is_read_again_after_a_deletion(tmp_path: Path) -> None:
    # the thread-wide scans (child counts, channels written) are kept while the store's cursor
    # stays; a deletion alone (no insert) must move it, or a deleted fork would still count
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = make_database(tmp_path / "lg.db")
    with open_store(path) as store:
        kept = store._epoch()
        kept["marker"] = True
        assert store._epoch() is kept
        conn = sqlite3.connect(path, check_same_thread=False)
        try:
            SqliteSaver(conn).delete_thread("thread-A")
        finally:
            conn.close()
        assert "marker" not in store._epoch()


def test_new_langgraph_checkpoints_alone_are_not_a_removal(tmp_path: Path) -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver

    from tests.store.langgraph.lg_graphs import build_graph, config

    path = make_database(tmp_path / "lg.db")
    with open_store(path) as store:
        cursor = store.cursor()
        conn = sqlite3.connect(path, check_same_thread=False)
        try:
            build_graph(SqliteSaver(conn)).invoke({"topic": "more", "priority": "low"}, config("thread-new"))
        finally:
            conn.close()
        changes = store.changes_since(cursor)
        assert "thread-new" in changes.run_ids and not changes.removed


@pytest.mark.postgres
def test_a_postgressaver_thread_deleted_by_langgraph_is_gone(pg_url: str) -> None:
    from langgraph.checkpoint.postgres import PostgresSaver

    from tests.store.langgraph.lg_graphs import build_graph, config

    libpq = pg_url.replace("postgresql+psycopg://", "postgresql://", 1)
    with PostgresSaver.from_conn_string(libpq) as saver:
        saver.setup()
        graph = build_graph(saver)
        for thread in ("pg-one", "pg-two"):
            graph.invoke({"topic": thread, "priority": "low"}, config(thread))
    with open_store(pg_url) as store:
        cursor = store.cursor()
        with PostgresSaver.from_conn_string(libpq) as saver:
            saver.delete_thread("pg-one")
        # PostgreSQL reports its statistics (the delete count) within about a second
        deadline = time.monotonic() + 10
        changes = store.changes_since(cursor)
        while not changes.removed and time.monotonic() < deadline:
            time.sleep(0.2)
            changes = store.changes_since(cursor)
        assert changes.removed
        with pytest.raises(RunNotFoundError):
            store.get_run("pg-one")
        assert [r.id for r in store.list_runs()] == ["pg-two"]


def test_a_framework_session_shortened_or_cleared_reads_as_removed(store_copy) -> None:
    # the OpenAI Agents SDK's own deletions (its package is not installed beside this one, see
    # tests/frameworks/write_stores.py): SQLiteSession.pop_item and clear_session, as its
    # source runs them on the committed store it wrote
    path = store_copy("agents_sqlite.db")
    store_copy.modified = True
    with open_store(path) as store:
        runs = {r.id: r.checkpoint_count for r in store.list_runs()}
        cursor = store.cursor()

        def run_sql(*statements: tuple[str, tuple]) -> None:
            con = sqlite3.connect(path)
            with con:
                for sql, params in statements:
                    con.execute(sql, params)
            con.close()
        changes = _changes_after(store, cursor, lambda: run_sql(
            ("DELETE FROM agent_messages WHERE id = (SELECT id FROM agent_messages WHERE session_id = ? "
             "ORDER BY id DESC LIMIT 1)", ("trip-lisbon",))))
        assert changes.removed and "trip-lisbon" in changes.run_ids
        assert store.get_run("trip-lisbon").checkpoint_count == runs["trip-lisbon"] - 1
        changes = _changes_after(store, changes.cursor, lambda: run_sql(
            ("DELETE FROM agent_messages WHERE session_id = ?", ("quick-chat",)),
            ("DELETE FROM agent_sessions WHERE session_id = ?", ("quick-chat",))))
        assert changes.removed
        with pytest.raises(RunNotFoundError):
            store.get_run("quick-chat")
        assert not store.changes_since(changes.cursor).removed
