"""The storage report of other frameworks' session stores, written by the real packages
(``tests/frameworks/write_stores.py``): totals, runs, growth and parts from their own tables."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.store import open_store
from inspector.usage.api import store_usage
from tests.frameworks.conftest import STORES, digest

# store -> SQL over the framework's own table: (checkpoint rows, bytes its framework wrote)
OWN_TABLES = {
    "adk_sqlite.db": "SELECT COUNT(*), SUM(LENGTH(CAST(event_data AS BLOB))) FROM events",
    "agents_sqlite.db": "SELECT COUNT(*), SUM(LENGTH(CAST(message_data AS BLOB))) FROM agent_messages",
    "agents_advanced.db": "SELECT COUNT(*), SUM(LENGTH(CAST(message_data AS BLOB))) FROM agent_messages",
    "crewai_checkpoints.db": "SELECT COUNT(*), SUM(LENGTH(data)) FROM checkpoints",
}


@pytest.fixture
def copy_of(tmp_path: Path):
    """A committed fixture store copied to tmp_path; checked unchanged after the test."""
    made: list[tuple[Path, str]] = []

    def copy(name: str) -> Path:
        source, target = STORES / name, tmp_path / name
        (shutil.copytree if source.is_dir() else shutil.copy2)(source, target)
        made.append((target, digest(target)))
        return target
    yield copy
    for path, before in made:
        assert digest(path) == before, f"{path.name} was changed by the report"


def _own(path: Path, sql: str) -> tuple[int, int]:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows, size = con.execute(sql).fetchone()
    finally:
        con.close()
    return int(rows), int(size)


def _adds_up(doc: dict) -> None:
    runs = doc["runs"]
    assert sum(r["bytes"] for r in runs) == doc["content_bytes"] == sum(doc["fields"].values())
    assert sum(r["checkpoints"] for r in runs) == doc["checkpoints"]
    assert [r["bytes"] for r in runs] == sorted((r["bytes"] for r in runs), reverse=True)   # biggest first


@pytest.mark.parametrize("name", sorted(OWN_TABLES))
def test_usage_of_a_sqlite_session_store_matches_its_own_tables(name: str, copy_of, capsys) -> None:
    path = copy_of(name)
    rows, size = _own(path, OWN_TABLES[name])
    assert main(["usage", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    _adds_up(doc)
    assert doc["content_bytes"] == size
    forks = 1 if name == "agents_advanced.db" else 0        # a branch's first checkpoint names shared items
    assert doc["checkpoints"] == rows + forks
    assert doc["total_bytes"] == path.stat().st_size
    with open_store(path) as store:
        counts = {r.id: r.checkpoint_count for r in store.list_runs()}
        report = store_usage(store)
    assert {r["run"]: r["checkpoints"] for r in doc["runs"]} == counts
    assert report.growth[-1][1] == size                      # growth per checkpoint ends at the total


def test_usage_of_a_crewai_folder_counts_its_snapshot_files(copy_of, capsys) -> None:
    path = copy_of("crewai_json")
    files = [p for p in path.rglob("*") if p.is_file()]
    assert main(["usage", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    _adds_up(doc)
    assert doc["total_bytes"] == sum(p.stat().st_size for p in files)
    assert doc["content_bytes"] == sum(p.stat().st_size for p in files if p.suffix == ".json")
    assert set(doc["fields"]) == {"research", "outline", "draft"}      # by the task that made the snapshot


def test_a_sessions_checkpoints_each_store_what_they_added(copy_of, capsys) -> None:
    """An ADK session is a log of events: a checkpoint stores its event, while its state size
    is the session so far; the text report names the biggest sessions and their parts."""
    path = copy_of("adk_sqlite.db")
    with open_store(path) as store:
        run = max(store.list_runs(), key=lambda r: r.checkpoint_count)
        report = store_usage(store, run.id)
        infos = store.list_checkpoints(run.id)
    detail = report.detail
    assert detail is not None and [c.seq for c in detail.checkpoints] == [i.seq for i in infos]
    assert [c.logical for c in detail.checkpoints] == [i.size for i in infos]
    assert sum(c.stored for c in detail.checkpoints) == next(r.bytes for r in report.runs if r.run == run.id)
    assert detail.checkpoints[-1].logical == sum(c.stored for c in detail.checkpoints)
    assert main(["usage", str(path), run.id]) == 0
    out = capsys.readouterr().out
    assert "on disk" in out and "BIGGEST KIND" in out and "checkpoint by checkpoint" in out
    assert out.index(report.runs[0].run) < out.index(report.runs[-1].run)
    assert main(["usage", str(path), "no-such-session"]) == 2
