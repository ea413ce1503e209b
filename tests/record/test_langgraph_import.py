"""``checkpoint-inspector import``: a LangGraph database (the real corpus, SqliteSaver and
PostgresSaver) copied into a native store gives the same ``get_state_history`` through
``InspectorSaver`` as through LangGraph's own saver, and the saver continues the threads."""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
from pathlib import Path

import pytest
from langgraph.types import Command

from inspector.cli import main
from inspector.record.langgraph import InspectorSaver
from inspector.store import open_store
from tests.conftest import store_files_digest
from tests.lgcorpus import BY_NAME, SCENARIOS, open_graph, postgres_saver, sqlite_saver
from tests.record.test_langgraph_differential import _difference, _history, _rows_off_board

def _threads(corpus: Path) -> dict[str, list[str]]:
    """The corpus's threads by scenario (a thread is named for its scenario: ``react-1``),
    read from the SqliteSaver file itself (read only), so a scenario added to the corpus
    is imported and compared too."""
    with contextlib.closing(sqlite3.connect(f"file:{corpus}?mode=ro", uri=True)) as conn:
        found = sorted(t for (t,) in conn.execute("SELECT DISTINCT thread_id FROM checkpoints"))
    out = {s.name: [t for t in found if t.startswith(s.name + "-")] for s in SCENARIOS}
    assert sorted(t for ts in out.values() for t in ts) == found and all(out.values())
    return out


def _histories(saver, threads: dict[str, list[str]]) -> dict:
    out = {}
    for scenario in SCENARIOS:
        graph = open_graph(scenario, saver)
        for thread in threads[scenario.name]:
            out[thread] = _history(graph, {"configurable": {"thread_id": thread}})
    return out


@pytest.fixture(autouse=True)
def _trusted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LANGGRAPH_STRICT_MSGPACK", raising=False)


def test_dry_run_writes_nothing(corpus_sqlite: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    before = store_files_digest(corpus_sqlite)
    dst = tmp_path / "native.db"
    assert main(["import", str(corpus_sqlite), str(dst)]) == 0
    out = capsys.readouterr().out
    count = sum(map(len, _threads(corpus_sqlite).values()))
    assert f"Would copy {count} threads" in out and "Verified:" in out and "Dry run" in out
    # the sizes are whole files (a small native store is mostly its empty tables), said so
    assert "Files on disk: " in out and "(whole files, empty tables and indexes included" in out
    assert not dst.exists()
    assert store_files_digest(corpus_sqlite) == before


def test_dry_run_leaves_a_clean_sources_directory_as_it_was(corpus_sqlite: Path, tmp_path: Path) -> None:
    """A clean SqliteSaver file (WAL mode, no -wal or -shm beside it, as its saver leaves it
    when it closes) gets no file beside it from a dry run: the verification reads it as the
    inspector reads a store (before, LangGraph's saver on a ``mode=ro`` connection left an
    empty -wal and a -shm)."""
    folder = tmp_path / "src"
    folder.mkdir()
    src = folder / "lg.db"
    with contextlib.closing(sqlite3.connect(f"file:{corpus_sqlite}?mode=ro", uri=True)) as a, \
            contextlib.closing(sqlite3.connect(src)) as b:
        a.backup(b)
        assert b.execute("PRAGMA journal_mode=WAL").fetchone() == ("wal",)
    listing = {p.name: (p.stat().st_size, p.stat().st_mtime_ns, p.read_bytes()) for p in folder.iterdir()}
    assert list(listing) == ["lg.db"]
    assert main(["import", str(src), str(tmp_path / "native.db")]) == 0
    assert {p.name: (p.stat().st_size, p.stat().st_mtime_ns, p.read_bytes()) for p in folder.iterdir()} == listing


def test_import_sqlite_same_history_and_continues(corpus_sqlite: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture) -> None:
    src = tmp_path / "lg.db"
    shutil.copy(corpus_sqlite, src)
    before = store_files_digest(src)
    dst = tmp_path / "native.db"
    assert main(["import", str(src), str(dst), "--apply"]) == 0
    threads = _threads(src)
    assert f"Copied {sum(map(len, threads.values()))} threads" in capsys.readouterr().out
    assert store_files_digest(src) == before            # the source is only read
    with sqlite_saver(src) as theirs:
        expected = _histories(theirs, threads)
    with InspectorSaver.from_conn_string(str(dst)) as ours:
        got = _histories(ours, threads)
    assert got == expected, _difference(got, expected)
    # the inspector shows the copy as it showed the source: each thread's status and score in
    # the runs list, and each checkpoint's checks as its Tasks tab counts them
    with open_store(str(src)) as lg, open_store(str(dst)) as native:
        scores = {r.name: (r.status, r.tasks_done, r.tasks_total, r.checks_passed, r.checks_total)
                  for r in lg.list_runs()}
        copied = {r.name: (r.status, r.tasks_done, r.tasks_total, r.checks_passed, r.checks_total)
                  for r in native.list_runs() if " › " not in r.name}
    assert copied == scores and any(s[4] for s in scores.values())
    assert _rows_off_board(dst) == []
    # both continue the waiting thread the same way: Command(resume=…) into the subgraph
    results = []
    for opener in (lambda: sqlite_saver(src), lambda: InspectorSaver.from_conn_string(str(dst))):
        with opener() as saver:
            graph = open_graph(BY_NAME["subgraph"], saver)
            config = {"configurable": {"thread_id": "subgraph-2"}}
            graph.invoke(Command(resume={"approved": True}), config)
            results.append(_history(graph, config))
    assert results[1] == results[0], _difference(results[1], results[0])
    with open_store(str(dst)) as store:
        runs = {r.name: r for r in store.list_runs()}
        assert runs["subgraph-2"].status == "completed"
        assert runs["mapreduce-1"].owner_pid is None or runs["mapreduce-1"].status == "completed"
    # importing the same threads again is refused in one sentence
    assert main(["import", str(src), str(dst), "--apply"]) == 2
    assert "already holds thread" in capsys.readouterr().err


def test_not_a_langgraph_database(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    native = tmp_path / "native.db"
    with InspectorSaver.from_conn_string(str(native)):
        pass
    assert main(["import", str(native), str(tmp_path / "x.db")]) == 2
    err = capsys.readouterr().err
    assert "not a LangGraph checkpoint database" in err and "Traceback" not in err
    assert main(["import", str(tmp_path / "missing.db"), str(tmp_path / "x.db")]) == 2


@pytest.mark.postgres
def test_import_postgres(corpus_pg: str, corpus_sqlite: Path, tmp_path: Path,
                         capsys: pytest.CaptureFixture) -> None:
    dst = tmp_path / "native.db"
    assert main(["import", corpus_pg, str(dst), "--apply"]) == 0
    assert "Verified:" in capsys.readouterr().out
    threads = _threads(corpus_sqlite)      # the same scenarios wrote both corpora
    with postgres_saver(corpus_pg) as theirs:
        expected = _histories(theirs, threads)
    with InspectorSaver.from_conn_string(str(dst)) as ours:
        got = _histories(ours, threads)
    assert got == expected, _difference(got, expected)
    assert _rows_off_board(dst) == []


# -- legacy "json" bodies ---------------------------------------------------------------------
# LangGraph's savers wrote checkpoints and writes as ``("json", bytes)`` before the msgpack
# format; today's serializer still reads them (LangChain messages as ``lc`` constructor
# envelopes) but can no longer write them, so this database is made by hand in the layout
# SqliteSaver creates, with bodies as the old JsonPlusSerializer wrote them.
def _lc1(kind: str, **kwargs) -> dict:
    return {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", kind], "kwargs": kwargs}


def _legacy_db(path: Path) -> list[str]:
    import json
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver
    conn = sqlite3.connect(str(path))
    SqliteSaver(conn).setup()
    messages: list = []
    ids = [f"1ef4f797-8335-6428-800{n}-{n:012d}" for n in range(4)]
    for n, cid in enumerate(ids):
        messages = messages + [_lc1("HumanMessage", content=f"question {n}", type="human", id=f"h-{n}"),
                               _lc1("AIMessage", content=f"answer {n} " + "é" * 40, type="ai", id=f"a-{n}",
                                    tool_calls=[], invalid_tool_calls=[])]
        body = {"v": 1, "ts": f"2024-08-0{n + 1}T10:00:00+00:00", "id": cid,
                "channel_values": {"messages": messages, "step_count": n, "notes": {"last": n, "tags": ["x", n]},
                                   "answer": _lc1("AIMessage", content=f"answer {n}", type="ai", id=f"a-{n}")},
                "channel_versions": {"__start__": 1, "messages": n + 2, "step_count": n + 2, "notes": n + 2,
                                     "answer": n + 2},
                "versions_seen": {"__input__": {}, "agent": {"messages": n + 1}}, "pending_sends": []}
        meta = {"source": "loop", "step": n, "writes": None, "parents": {}}
        conn.execute("INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, "
                     "type, checkpoint, metadata) VALUES (?, '', ?, ?, 'json', ?, ?)",
                     ("legacy", cid, ids[n - 1] if n else None, json.dumps(body).encode(),
                      json.dumps(meta).encode()))
    # the head has a pending write of a message (a step that was interrupted)
    conn.execute("INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, "
                 "type, value) VALUES ('legacy', '', ?, 'task-1', '', 0, 'messages', 'json', ?)",
                 (ids[-1], json.dumps([_lc1("AIMessage", content="pending", type="ai", id="p-1")]).encode()))
    conn.commit()
    conn.close()
    return ids


def test_import_legacy_json_bodies(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from langchain_core.messages import AIMessage, HumanMessage
    src, dst = tmp_path / "legacy.db", tmp_path / "native.db"
    ids = _legacy_db(src)
    # LangGraph itself reads the hand-made database: the bodies are what it takes for "json"
    with sqlite_saver(src) as theirs:
        expected = list(theirs.list({"configurable": {"thread_id": "legacy"}}))
    assert [t.config["configurable"]["checkpoint_id"] for t in expected] == ids[::-1]
    head = expected[0].checkpoint["channel_values"]
    assert isinstance(head["messages"][0], HumanMessage) and isinstance(head["answer"], AIMessage)
    assert main(["import", str(src), str(dst), "--apply"]) == 0
    out = capsys.readouterr().out
    assert "Copied 1 thread (1 lane), 4 checkpoints and 1 pending write" in out, out
    assert "list the same 4 checkpoints" in out, out
    with InspectorSaver.from_conn_string(str(dst)) as ours:
        got = list(ours.list({"configurable": {"thread_id": "legacy"}}))
    assert len(got) == len(expected) == 4
    for a, b in zip(expected, got):     # every checkpoint: values, versions, metadata, parent, writes
        assert b.config == a.config and b.parent_config == a.parent_config
        assert b.checkpoint["channel_values"] == a.checkpoint["channel_values"]
        assert b.checkpoint["channel_versions"] == a.checkpoint["channel_versions"]
        assert b.checkpoint["versions_seen"] == a.checkpoint["versions_seen"]
        assert b.metadata == a.metadata
        assert b.pending_writes == a.pending_writes
    assert got[0].pending_writes[0][2][0].content == "pending"
    # the inspector shows the imported thread decoded (messages as messages)
    with open_store(str(dst), readonly=True) as store:
        run = next(r for r in store.list_runs() if r.name == "legacy")
        snap = store.load(store.list_checkpoints(run.id)[-1].id)
    assert snap.state["messages"][1]["content"].startswith("answer 0") and snap.state["step_count"] == 3
    assert snap.state["notes"] == {"last": 3, "tags": ["x", 3]}


@pytest.mark.parametrize("scenario", ["react", "subgraph", "forks", "channels"])
def test_import_names_steps_as_the_saver_does(scenario: str, tmp_path: Path) -> None:
    """An imported thread's timeline reads as the same graph written by ``InspectorSaver``:
    each step named by the node that ran and what it wrote, not by its source."""
    with sqlite_saver(tmp_path / "lg.db") as theirs:
        BY_NAME[scenario].run(theirs)
    with InspectorSaver.from_conn_string(str(tmp_path / "saver.db")) as ours:
        BY_NAME[scenario].run(ours)
    assert main(["import", str(tmp_path / "lg.db"), str(tmp_path / "imported.db"), "--apply"]) == 0

    def timelines(path: Path) -> dict:
        with open_store(str(path)) as store:
            return {(r.name, r.parent_run is not None): [(c.kind, c.name, c.change) for c in store.list_checkpoints(r.id)]
                    for r in store.list_runs()}
    imported, written = timelines(tmp_path / "imported.db"), timelines(tmp_path / "saver.db")
    assert imported.keys() == written.keys()
    for key in imported:
        assert imported[key] == written[key], [(a, b) for a, b in zip(imported[key], written[key]) if a != b]
    assert any(name not in ("input", "loop", "update", "fork") for steps in imported.values() for _, name, _ in steps)
    with open_store(str(tmp_path / "lg.db")) as store:      # read straight from SqliteSaver's rows: steps said alike
        source = {(r.name, False): [(c.kind, c.name, c.change) for c in store.list_checkpoints(r.id)
                                    if c.lane == ""] for r in store.list_runs()}
    mine = {k: v for k, v in imported.items() if not k[1]}
    assert mine.keys() == source.keys()
    for key, steps in mine.items():      # (a step waiting at an interrupt says so first when read live)
        assert [c[:2] for c in steps] == [c[:2] for c in source[key]], (key, steps, source[key])
        for ours, theirs in zip(steps, source[key], strict=True):
            assert theirs[2].endswith(ours[2]), (key, ours, theirs)
        assert all(theirs.endswith(ours) for (_, _, ours), (_, _, theirs) in zip(steps, source[key], strict=True))


def test_a_pruned_database_imports_with_its_steps_named(tmp_path: Path) -> None:
    """A LangGraph database pruned by the inspector: a kept checkpoint whose parent went is
    named from its own body on import too ("loop" before), as the LangGraph reader names it."""
    import time

    from inspector.retention.api import apply_prune
    from inspector.retention.rules import make_rules
    from tests.store.langgraph.lg_graphs import THREADS, make_database
    source = make_database(tmp_path / "lg.db")
    time.sleep(5.5)            # (a thread written in the last 5 s is live: kept whole)
    assert apply_prune(source, make_rules(keep_last=1), langgraph_write=True).remove_checkpoints > 10
    with open_store(source) as store:
        read = {t: [(c.name, c.change) for c in store.list_checkpoints(t) if not c.lane] for t in THREADS}
    assert "loop" not in {name for steps in read.values() for name, _ in steps}
    assert main(["import", str(source), str(tmp_path / "ours.db"), "--apply"]) == 0
    with open_store(tmp_path / "ours.db") as store:
        runs = {r.name: r.id for r in store.list_runs()}      # a thread's root lane: a run named as it
        imported = {t: [(c.name, c.change) for c in store.list_checkpoints(runs[t])] for t in THREADS}
    assert imported == read
