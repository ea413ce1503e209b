"""``checkpoint-inspector import``: a LangGraph database (the real corpus, SqliteSaver and
PostgresSaver) copied into a native store gives the same ``get_state_history`` through
``InspectorSaver`` as through LangGraph's own saver, and the saver continues the threads."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from langgraph.types import Command

from inspector.cli import main
from inspector.record.langgraph import InspectorSaver
from inspector.store import open_store
from tests.conftest import store_files_digest
from tests.lgcorpus import BY_NAME, SCENARIOS, open_graph, postgres_saver, sqlite_saver
from tests.lgcorpus.conftest import corpus_pg, corpus_sqlite  # noqa: F401  (fixtures)
from tests.record.test_langgraph_differential import _difference, _history

THREADS = {"react": ["react-1"], "agent": ["agent-1"], "subgraph": ["subgraph-1", "subgraph-2"],
           "mapreduce": ["mapreduce-1", "mapreduce-2"], "typed": ["typed-1"],
           "durability": ["durability-sync", "durability-async", "durability-exit"], "forks": ["forks-1"]}


def _histories(saver) -> dict:
    out = {}
    for scenario in SCENARIOS:
        graph = open_graph(scenario, saver)
        for thread in THREADS[scenario.name]:
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
    assert "Would copy 12 threads" in out and "Verified:" in out and "Dry run" in out
    assert not dst.exists()
    assert store_files_digest(corpus_sqlite) == before


def test_import_sqlite_same_history_and_continues(corpus_sqlite: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture) -> None:
    src = tmp_path / "lg.db"
    shutil.copy(corpus_sqlite, src)
    before = store_files_digest(src)
    dst = tmp_path / "native.db"
    assert main(["import", str(src), str(dst), "--apply"]) == 0
    assert "Copied 12 threads" in capsys.readouterr().out
    assert store_files_digest(src) == before            # the source is only read
    with sqlite_saver(src) as theirs:
        expected = _histories(theirs)
    with InspectorSaver.from_conn_string(str(dst)) as ours:
        got = _histories(ours)
    assert got == expected, _difference(got, expected)
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
def test_import_postgres(corpus_pg: str, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    dst = tmp_path / "native.db"
    assert main(["import", corpus_pg, str(dst), "--apply"]) == 0
    assert "Verified:" in capsys.readouterr().out
    with postgres_saver(corpus_pg) as theirs:
        expected = _histories(theirs)
    with InspectorSaver.from_conn_string(str(dst)) as ours:
        got = _histories(ours)
    assert got == expected, _difference(got, expected)
