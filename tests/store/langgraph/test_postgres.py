"""The adapter on a real PostgresSaver database written by the real langgraph package.

Parity with ``PostgresSaver.list`` / ``graph.get_state``: counts, ids, next nodes, task
statuses, interrupts and values; blobs joined by channel version; writes with and without
``task_path``; live changes; and the raw fork on PostgreSQL (checkpoint_blobs rows) which
LangGraph then resumes.
"""

from __future__ import annotations

import contextlib
from typing import Any
from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from langgraph.types import Command

from inspector.errors import StoreError
from inspector.store import open_store
from inspector.store.langgraph import LangGraphStore
from inspector.store.langgraph.fork import raw_fork
from inspector.store.langgraph.ids import make_id, parse_id

from .lg_graphs import REVIEW_QUESTION, THREADS, build_graph, config, run_standard_threads

pytestmark = pytest.mark.postgres


def conninfo(url: str) -> str:
    """A libpq connection string for PostgresSaver from our SQLAlchemy URL."""
    return url.replace("postgresql+psycopg://", "postgresql://")


@contextlib.contextmanager
def pg_graph(url: str, setup: bool = False) -> Iterator[Any]:
    """The standard graph on a real PostgresSaver connected to ``url``."""
    from langgraph.checkpoint.postgres import PostgresSaver
    with PostgresSaver.from_conn_string(conninfo(url)) as saver:
        if setup:
            saver.setup()
        yield build_graph(saver)


@pytest.fixture(scope="module")
def pg_lg_url(pg_server) -> Iterator[str]:
    """A database holding the standard threads written by PostgresSaver (shared, read-only)."""
    name = pg_server.create_database()
    url = pg_server.url_for(name)
    try:
        with pg_graph(url, setup=True) as graph:
            run_standard_threads(graph)
        yield url
    finally:
        pg_server.drop_database(name)


@pytest.fixture
def pg_store(pg_lg_url: str) -> Iterator[LangGraphStore]:
    """The adapter opened read-only through ``open_store``."""
    store = open_store(pg_lg_url)
    yield store
    store.close()


@pytest.fixture
def fresh_pg(pg_url: str) -> str:
    """A fresh database with the standard threads (a test may write to it)."""
    with pg_graph(pg_url, setup=True) as graph:
        run_standard_threads(graph)
    return pg_url


def _rows(url: str, sql: str) -> list:
    engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn:
            return [tuple(r) for r in conn.exec_driver_sql(sql)]
    finally:
        engine.dispose()


def test_open_store_detects_postgres_saver(pg_store):
    assert isinstance(pg_store, LangGraphStore)
    assert pg_store.info.kind == "langgraph" and pg_store.info.backend == "postgresql"
    assert pg_store.info.read_only and pg_store.info.format_version == 9
    assert pg_store.watch_paths() == []


def test_threads_are_runs_with_the_same_statuses_as_sqlite(pg_store):
    runs = {r.id: r for r in pg_store.list_runs()}
    assert {k: r.status for k, r in runs.items()} == {
        "thread-A": "interrupted", "thread-B": "completed", "thread-C": "completed",
        "thread-D": "completed", "thread-E": "failed"}
    assert runs["thread-E"].last_error == "RuntimeError('execute failed on purpose')"
    assert runs["thread-C"].tasks_done == runs["thread-C"].tasks_total == 2   # todos blob read
    assert pg_store.count_runs() == len(THREADS)


@pytest.mark.parametrize("thread_id", sorted(THREADS))
def test_listing_and_snapshots_match_postgres_saver(pg_store, pg_lg_url, thread_id):
    with pg_graph(pg_lg_url) as graph:
        history = list(graph.checkpointer.list({"configurable": {"thread_id": thread_id}}))
        infos = pg_store.list_checkpoints(thread_id)
        assert len(infos) == len(history) == pg_store.count_checkpoints(thread_id)
        by_key = {(t.config["configurable"]["checkpoint_ns"], t.config["configurable"]["checkpoint_id"]): t
                  for t in history}
        assert {(parse_id(c.id).ns, parse_id(c.id).checkpoint_id) for c in infos} == set(by_key)
        assert [c.seq for c in infos] == list(range(len(infos)))
        for info in infos:
            key = parse_id(info.id)
            tup = by_key[(key.ns, key.checkpoint_id)]
            assert info.kind == tup.metadata["source"] and info.size > 0
            expected = graph.get_state(config(thread_id, key.checkpoint_id, key.ns))
            snap = pg_store.load(info.id)
            assert tuple(snap.meta["next"]) == expected.next, info.id
            assert snap.meta["step"] == tup.metadata["step"]
            lg_status = {t.name: ("finished" if t.result is not None else "errored" if t.error else
                                  "interrupted" if t.interrupts else "pending") for t in expected.tasks}
            assert {t["node"]: t["status"] for t in snap.meta["tasks"]} == lg_status, info.id
            _same_values(snap.state, expected.values)


def _same_values(ours: dict, theirs: dict) -> None:
    """Our plain decoded state equals LangGraph's revived values (compared by plain content).

    LangGraph shows a reducer channel that was never written as its empty default (``[]``);
    so do we (``reducers``).
    """
    assert set(ours) == set(theirs)
    for key, value in theirs.items():
        if key not in ours:
            continue
        if key == "messages":
            assert [m["content"] for m in ours[key]] == [m.content for m in value]
        elif key in ("priority", "plan", "todos", "approved", "fail"):
            assert ours[key] == value, key
        elif key == "tags":
            assert ours[key] == {"__type__": f"builtins.{type(value).__name__}", "value": sorted(value)}
        elif key == "run_uid":
            assert ours[key] == {"__type__": "uuid.UUID", "value": str(value)}
        elif key == "note":
            assert (ours[key]["text"], ours[key]["weight"]) == (value.text, value.weight)


def test_interrupt_and_blob_values_at_the_head(pg_store):
    snap = pg_store.load("thread-A:-1")
    assert snap.meta["next"] == ["review"]
    (intr,) = snap.meta["interrupts"]
    assert intr["pending"] and intr["question"] == REVIEW_QUESTION
    assert snap.state["priority"] == "high"                      # inline primitive
    assert [t["status"] for t in snap.state["todos"]] == ["in_progress", "pending"]   # blob
    assert snap.state["started"] == {"__type__": "datetime.datetime",         # ext type inside a blob
                                     "value": "2026-01-02T03:04:05+00:00"}
    assert snap.tasks["goal"] == "Write the quarterly report"


def test_subgraph_lanes_and_update_branch(pg_store):
    infos = pg_store.list_checkpoints("thread-D")
    assert {c.lane.split(":")[0] for c in infos} == {"", "planner"}
    branched = [c for c in infos if c.branch_count]
    assert len(branched) == 1
    update = next(c for c in infos if c.kind == "update")
    assert update.parent_id == branched[0].id
    assert pg_store.load(update.id).meta["next"] == ["execute"]
    names = [(c.kind, c.name) for c in pg_store.list_checkpoints("thread-C") if c.lane == ""]
    assert names == [("input", "input"), ("loop", "__start__"), ("loop", "prepare"),
                     ("loop", "planner"), ("loop", "execute")]


def test_paging_and_refs(pg_store):
    full = pg_store.list_checkpoints("thread-D")
    pages, after = [], -1
    while page := pg_store.list_checkpoints("thread-D", after_seq=after, limit=4):
        pages += page
        after = page[-1].seq
    assert pages == full
    for info in full[:6]:
        assert pg_store.get_checkpoint(info.id) == info
    assert pg_store.get_checkpoint("thread-D:-1") == full[-1]
    with pytest.raises(StoreError, match="No thread"):
        pg_store.get_run("nope")


def test_writes_without_task_path_column(fresh_pg):
    sa_engine = sa.create_engine(fresh_pg, poolclass=sa.pool.NullPool)
    with sa_engine.begin() as conn:
        conn.exec_driver_sql("ALTER TABLE checkpoint_writes DROP COLUMN task_path")
    sa_engine.dispose()
    with open_store(fresh_pg) as store:
        assert {r.id: r.status for r in store.list_runs()}["thread-E"] == "failed"
        snap = store.load("thread-A:-1")
        assert [t["status"] for t in snap.meta["tasks"]] == ["interrupted"]
        assert snap.meta["tasks"][0]["node"] == "review"   # matched with the next node
        assert len(store.list_checkpoints("thread-C")) == 9


def test_changes_since_sees_a_new_thread(fresh_pg):
    with open_store(fresh_pg) as store:
        cursor = store.cursor()
        assert store.changes_since(cursor).empty
        with pg_graph(fresh_pg) as graph:
            graph.invoke({"messages": [("user", "more")], "priority": "low"}, config("thread-F"))
        changes = store.changes_since(cursor)
        assert "thread-F" in changes.run_ids
        assert {c.run_id for c in changes.new_checkpoints} == {"thread-F"}
        assert len(changes.new_checkpoints) == store.count_checkpoints("thread-F")
        assert store.changes_since(changes.cursor).new_checkpoints == ()


def test_opening_never_writes(pg_lg_url):
    before = _rows(pg_lg_url, "SELECT (SELECT count(*) FROM checkpoints), (SELECT count(*) FROM "
                              "checkpoint_blobs), (SELECT count(*) FROM checkpoint_writes)")
    with open_store(pg_lg_url) as store:
        for run in store.list_runs():
            store.load(f"{run.id}:-1")
        # the engine itself cannot write
        with pytest.raises(sa.exc.DBAPIError, match="read-only"), store.engine.begin() as conn:
            conn.exec_driver_sql("DELETE FROM checkpoint_writes")
    after = _rows(pg_lg_url, "SELECT (SELECT count(*) FROM checkpoints), (SELECT count(*) FROM "
                             "checkpoint_blobs), (SELECT count(*) FROM checkpoint_writes)")
    assert before == after


# -- raw fork on PostgreSQL --------------------------------------------------------------------
def _before_review(store: LangGraphStore, thread: str) -> str:
    infos = store.list_checkpoints(thread)
    return next(c.id for c in infos if c.lane == "" and store.load(c.id).meta["next"] == ["review"])


def test_raw_fork_writes_blobs_and_langgraph_resumes_it(fresh_pg):
    rows_before = _rows(fresh_pg, "SELECT thread_id, checkpoint_ns, checkpoint_id, checkpoint::text, "
                                  "metadata::text FROM checkpoints ORDER BY 1, 2, 3")
    blobs_before = _rows(fresh_pg, "SELECT thread_id, checkpoint_ns, channel, version, type, blob "
                                   "FROM checkpoint_blobs ORDER BY 1, 2, 3, 4")
    with open_store(fresh_pg, readonly=False) as store:
        source = _before_review(store, "thread-A")
        todos = [{"content": "only this", "status": "pending"}]
        result = raw_fork(store, source, {"plan": "edited plan", "todos": todos},
                          reason="try a smaller plan", quiet_seconds=0)
        snap = store.load(result.checkpoint_id)
    assert snap.state["plan"] == "edited plan" and snap.state["todos"] == todos
    assert snap.meta["source"] == "update" and snap.meta["next"] == ["review"]
    assert snap.meta["langgraph_metadata"]["fork_reason"] == "try a smaller plan"
    key = parse_id(result.checkpoint_id)
    blobs_forked = _rows(fresh_pg, "SELECT thread_id, checkpoint_ns, channel, version, type, blob "
                                   "FROM checkpoint_blobs ORDER BY 1, 2, 3, 4")
    added = set(blobs_forked) - set(blobs_before)
    # todos (a list) gets a blob at its new version; plan (a string) stays inline in the JSONB
    assert [(r[0], r[2], r[3]) for r in added] == [("thread-A", "todos", snap.meta["channel_versions"]["todos"])]
    with pg_graph(fresh_pg) as graph:
        state = graph.get_state(config("thread-A"))
        assert state.config["configurable"]["checkpoint_id"] == key.checkpoint_id   # the new head
        assert state.values["todos"] == todos and state.values["plan"] == "edited plan"
        assert state.next == ("review",)
        out = graph.invoke(None, config("thread-A"))
        assert out["__interrupt__"][0].value["plan"] == "edited plan"
        final = graph.invoke(Command(resume="ok"), config("thread-A"))
    assert final["approved"] == "ok"
    assert [t["status"] for t in final["todos"]] == ["completed"]
    assert final["todos"][0]["content"] == "only this"
    # the original rows are untouched (append-only)
    rows_after = _rows(fresh_pg, "SELECT thread_id, checkpoint_ns, checkpoint_id, checkpoint::text, "
                                 "metadata::text FROM checkpoints ORDER BY 1, 2, 3")
    blobs_after = _rows(fresh_pg, "SELECT thread_id, checkpoint_ns, channel, version, type, blob "
                                  "FROM checkpoint_blobs ORDER BY 1, 2, 3, 4")
    assert set(rows_before) <= set(rows_after)
    assert set(blobs_before) <= set(blobs_after)
    assert make_id("thread-A", "", key.checkpoint_id) == result.checkpoint_id


def test_runner_answers_an_interrupt_on_postgres(fresh_pg, tmp_path, monkeypatch):
    """The graph runner with a PostgresSaver: --store gets the URL without a password."""
    import subprocess
    from pathlib import Path

    from inspector.resume.langgraph import plan_resume, start_resume
    from inspector.resume.launch import spawn
    monkeypatch.setenv("CHECKPOINT_INSPECTOR_CONFIG_DIR", str(tmp_path / "config"))
    root = Path(__file__).resolve().parents[3]
    (tmp_path / "lg_entry.py").write_text(f"import sys\nsys.path.insert(0, {str(root)!r})\n"
                                          "from tests.store.langgraph.lg_graphs import build_graph\n"
                                          "graph = build_graph(None)\n")
    with open_store(fresh_pg) as store:
        plan = plan_resume(store, "thread-A:-1", answer="pg answer", graph="lg_entry:graph",
                           cwd=str(tmp_path), quiet_seconds=0)
        store_arg = plan.argv[plan.argv.index("--store") + 1]
        assert store_arg.startswith("postgresql://") and "+psycopg" not in store_arg
        proc = spawn(start_resume(store, plan), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
        assert out.decode().strip().splitlines()[-1] == "finished"
        assert store.get_run("thread-A").status == "completed"
        assert store.load("thread-A:-1").state["approved"] == "pg answer"
