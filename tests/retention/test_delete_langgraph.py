"""``delete`` on real LangGraph databases: a thread goes as LangGraph's own ``delete_thread``
takes it (that method, run on a copy, is the oracle), only when allowed, after a backup, and
never while the thread is running or written to meanwhile."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from inspector.bench.langgraph import THREAD, build_thread
from inspector.cli import main
from inspector.errors import StoreError
from inspector.retention import langgraph as lg_retention
from inspector.retention.delete import apply_delete, plan_delete
from inspector.resume.status import still_working
from tests.conftest import store_files_digest
from tests.lgcorpus import copy_sqlite
from tests.store.langgraph.conftest import lg_copy, lg_master  # noqa: F401  (fixtures: the standard threads)
from tests.store.langgraph.lg_graphs import THREADS, build_graph, config, open_graph


def _rows(path: Path) -> dict[str, list[tuple]]:
    """Every row of LangGraph's two tables, in order."""
    con = sqlite3.connect(path)
    try:
        return {table: sorted(con.execute(f"SELECT * FROM {table}").fetchall(), key=repr)
                for table in ("checkpoints", "writes")}
    finally:
        con.close()


def _states(path: Path) -> dict[str, tuple]:
    """What LangGraph itself reads of each standard thread: values and next nodes."""
    graph, conn = open_graph(path)
    try:
        return {t: (graph.get_state(config(t)).values, graph.get_state(config(t)).next) for t in THREADS}
    finally:
        conn.close()


def test_a_thread_goes_as_langgraph_delete_thread_takes_it(lg_copy: Path, tmp_path: Path, capsys) -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver

    oracle = copy_sqlite(lg_copy, tmp_path / "oracle.db")
    con = sqlite3.connect(oracle, check_same_thread=False)
    SqliteSaver(con).delete_thread("thread-D")      # (a fork inside it: two branches, one namespace more)
    con.close()
    original, before = _rows(lg_copy), store_files_digest(lg_copy)
    states = _states(lg_copy)
    # a dry run says what would go and changes nothing
    assert main(["delete", str(lg_copy), "thread-D"]) == 0
    out = capsys.readouterr().out
    assert "Would delete 1 LangGraph thread" in out and "as LangGraph's delete_thread takes them" in out
    assert " of rows. Dry run: nothing was changed" in out
    plan = plan_delete(lg_copy, ["thread-D"], sized=True)
    assert plan.langgraph and plan.checkpoints == sum(1 for row in original["checkpoints"] if row[0] == "thread-D")
    # the bytes of its rows: checkpoints (body and metadata) and pending writes (their values)
    assert plan.rows_bytes == plan.to_json()["bytes"] == sum(
        len(row[5] or b"") + len(row[6] or b"") for row in original["checkpoints"] if row[0] == "thread-D") + sum(
        len(row[8] or b"") for row in original["writes"] if row[0] == "thread-D")
    # rows LangGraph wrote: not without the unlock
    assert main(["delete", str(lg_copy), "thread-D", "--apply"]) == 2
    assert "--langgraph-write" in capsys.readouterr().err
    assert store_files_digest(lg_copy) == before
    backup = tmp_path / "before-delete.db"
    assert main(["delete", str(lg_copy), "thread-D", "--apply", "--langgraph-write", "--backup", str(backup)]) == 0
    assert f"Backup written first: {backup}" in capsys.readouterr().out
    assert _rows(lg_copy) == _rows(oracle) and _rows(backup) == original
    after = _states(lg_copy)
    assert after["thread-D"] == ({}, ()) and {t: s for t, s in after.items() if t != "thread-D"} == {
        t: s for t, s in states.items() if t != "thread-D"}
    # the backup is where it says, and exists already now: the next delete refuses to overwrite it
    assert main(["delete", str(lg_copy), "thread-C", "--apply", "--langgraph-write", "--backup", str(backup)]) == 2
    assert "exists already" in capsys.readouterr().err and _rows(lg_copy) == _rows(oracle)


def test_a_running_thread_or_one_written_meanwhile_is_not_deleted(lg_copy: Path, monkeypatch) -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver

    con = sqlite3.connect(lg_copy, check_same_thread=False)
    build_thread(SqliteSaver(con), 12)      # an agent loop written seconds ago, its next step pending
    con.close()
    before = _rows(lg_copy)
    with pytest.raises(StoreError, match="is running; stop it first"):
        apply_delete(lg_copy, [THREAD], alive=still_working, langgraph_write=True)
    assert _rows(lg_copy) == before

    # LangGraph writes to the thread between the plan and the delete (here: while the backup is made)
    def backup_then_invoke(path, backup, say):
        made = original(path, backup, say)
        graph, conn = open_graph(lg_copy)
        graph.invoke({"messages": [], "priority": "low", "fail": False}, config("thread-C"))
        conn.close()
        return made
    original = lg_retention.backup_first
    monkeypatch.setattr(lg_retention, "backup_first", backup_then_invoke)
    with pytest.raises(StoreError, match="written to since the delete was planned; nothing was deleted"):
        apply_delete(lg_copy, ["thread-C"], alive=still_working, langgraph_write=True)
    graph, conn = open_graph(lg_copy)
    assert len(list(graph.get_state_history(config("thread-C")))) > 0
    conn.close()


def test_deleting_a_thread_on_postgres(pg_url: str) -> None:
    import sqlalchemy as sa
    from langgraph.checkpoint.postgres import PostgresSaver

    conninfo = pg_url.replace("postgresql+psycopg://", "postgresql://")
    with PostgresSaver.from_conn_string(conninfo) as saver:
        saver.setup()
        graph = build_graph(saver)
        for thread in ("pg-A", "pg-B"):
            graph.invoke({"messages": [], "priority": "low", "fail": False}, config(thread))
        kept = graph.get_state(config("pg-B"))
    engine = sa.create_engine(pg_url, poolclass=sa.pool.NullPool)
    tables = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")

    def count(thread: str) -> dict[str, int]:
        with engine.connect() as conn:
            return {t: conn.exec_driver_sql(f"SELECT COUNT(*) FROM {t} WHERE thread_id = %(t)s", {"t": thread}).scalar()
                    for t in tables}
    assert all(count("pg-A").values()) and all(count("pg-B").values())
    others = count("pg-B")
    done = apply_delete(pg_url, ["pg-A"], alive=still_working, langgraph_write=True)
    assert done.applied and done.langgraph and done.backup is None
    assert count("pg-A") == dict.fromkeys(tables, 0) and count("pg-B") == others
    engine.dispose()
    with PostgresSaver.from_conn_string(conninfo) as saver:
        graph = build_graph(saver)
        assert graph.get_state(config("pg-A")).values == {}
        now = graph.get_state(config("pg-B"))
        assert now.values == kept.values and now.next == kept.next


def test_a_backup_into_a_missing_folder_is_a_sentence_and_nothing_is_deleted(lg_copy: Path, tmp_path: Path,
                                                                            capsys) -> None:
    before = store_files_digest(lg_copy)
    missing = tmp_path / "no-such-folder" / "copy.bak"
    for command in (["delete", str(lg_copy), "thread-D", "--langgraph-write", "--apply"],
                    ["prune", str(lg_copy), "--keep-last", "1", "--langgraph-write", "--apply"]):
        assert main([*command, "--backup", str(missing)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "no-such-folder" in err and "does not exist" in err, err
        assert store_files_digest(lg_copy) == before and not missing.parent.exists()
