"""The growth of a LangGraph SqliteSaver database counts each checkpoint's pending writes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from inspector.store import open_store
from inspector.usage.api import store_usage
from tests.store.langgraph.lg_graphs import make_database


@pytest.fixture(scope="module")
def lg_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The standard threads (interrupts and resumes: pending writes) written by real langgraph."""
    return make_database(tmp_path_factory.mktemp("lg-growth") / "standard.db")


def test_the_growth_chart_ends_at_the_checkpoints_and_their_writes(lg_db: Path) -> None:
    con = sqlite3.connect(lg_db)
    try:
        rows = con.execute("SELECT SUM(LENGTH(checkpoint) + COALESCE(LENGTH(metadata), 0)) FROM checkpoints").fetchone()[0]
        writes = con.execute("SELECT SUM(LENGTH(value)) FROM writes").fetchone()[0]
    finally:
        con.close()
    assert writes > 1000                    # the database holds pending writes
    with open_store(lg_db) as store:
        report = store_usage(store)
    assert report.growth[-1][1] == rows + writes
    assert report.content_bytes + report.rows_bytes == rows + writes
    assert all(b <= c for (_, b), (_, c) in zip(report.growth, report.growth[1:]))
