"""A PostgreSQL store made again under a reader (its tables dropped, a store written there
anew: a fleet's database reset) is told from the one opened, as a SQLite file put at the same
path is: the tracker says gone, then replaced (the window: tests/ui/test_gui_staleness.py)."""

from __future__ import annotations

import psycopg
import pytest

from inspector.record import Checkpointer
from inspector.store import open_store
from inspector.watch import GONE, REPLACED, ChangeTracker
from tests.retention.stores import chat

pytestmark = pytest.mark.postgres


def _reset(url: str) -> None:
    """Drop every table of the database, as a fleet's reset script would."""
    with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://", 1), autocommit=True) as conn:
        conn.execute("DROP SCHEMA public CASCADE")
        conn.execute("CREATE SCHEMA public")


def _write(url: str, name: str, steps: int = 3) -> str:
    with Checkpointer(url, name=name) as cp:
        chat(cp, steps)
        return cp.run_id


def test_the_tracker_tells_a_native_store_dropped_and_made_again(pg_url: str) -> None:
    _write(pg_url, "first")
    with open_store(pg_url) as store:
        tracker = ChangeTracker(store)
        assert tracker.identity is not None and tracker.moved() == ""
        _write(pg_url, "second")                 # writes are no replacement
        assert tracker.moved() == ""
        _reset(pg_url)
        assert tracker.moved() == GONE
        _write(pg_url, "anew")
        assert tracker.moved() == REPLACED


def test_the_tracker_tells_a_postgressaver_store_made_again(pg_url: str) -> None:
    from langgraph.checkpoint.postgres import PostgresSaver

    from tests.store.langgraph.lg_graphs import build_graph, config

    libpq = pg_url.replace("postgresql+psycopg://", "postgresql://", 1)

    def invoke(thread: str) -> None:
        with PostgresSaver.from_conn_string(libpq) as saver:
            saver.setup()
            build_graph(saver).invoke({"topic": thread, "priority": "low"}, config(thread))
    invoke("one")
    with open_store(pg_url) as store:
        tracker = ChangeTracker(store)
        assert tracker.identity is not None and tracker.moved() == ""
        invoke("two")
        assert tracker.moved() == ""
        _reset(pg_url)
        assert tracker.moved() == GONE
        invoke("three")
        assert tracker.moved() == REPLACED
