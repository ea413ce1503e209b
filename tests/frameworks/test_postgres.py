"""Session stores the real packages wrote on PostgreSQL (SQLAlchemySession, DatabaseSessionService),
kept as SQL dumps by ``write_stores.py`` and loaded into a fresh database of the test server."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
import sqlalchemy as sa

from inspector.store import open_store

STORES = Path(__file__).parent / "stores"
pytestmark = pytest.mark.postgres


def _load(pg_url: str, dump: str) -> None:
    url = sa.engine.make_url(pg_url).set(drivername="postgresql")
    with psycopg.connect(url.render_as_string(hide_password=False), autocommit=True) as conn:
        conn.execute((STORES / dump).read_text())


def _table_identity(pg_url: str, table: str) -> tuple[int, int]:
    url = sa.engine.make_url(pg_url).set(drivername="postgresql")
    with psycopg.connect(url.render_as_string(hide_password=False)) as conn:
        row = conn.execute("SELECT (SELECT oid FROM pg_database WHERE datname = current_database()), "
                           "%s::regclass::oid", (table,)).fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


def test_agents_sqlalchemy_session_on_postgres(pg_url: str) -> None:
    _load(pg_url, "agents_postgres.sql")
    with open_store(pg_url) as store:
        assert store.info.kind == "openai-agents" and store.info.backend == "postgresql"
        assert {r.id: r.checkpoint_count for r in store.list_runs()} == {"pg-trip": 6, "pg-hello": 2}
        head = store.load("pg-trip:-1")
        assert [m["role"] for m in head.state["messages"]] == ["user", "assistant", "tool", "assistant",
                                                                "user", "assistant"]
        assert store.watch_paths() == [] and not store.info.capabilities.fork.available
        cursor = store.cursor()
        identity = store.identity()           # the database's and the sessions table's object ids
    assert identity is not None and identity == _table_identity(pg_url, "agent_sessions")
    engine = sa.create_engine(pg_url)
    with engine.begin() as conn:   # what SQLAlchemySession.add_items writes
        conn.execute(sa.text("INSERT INTO agent_messages (session_id, message_data) VALUES "
                             "('pg-hello', '{\"role\": \"user\", \"content\": \"again\"}')"))
    engine.dispose()
    with open_store(pg_url) as store:
        changes = store.changes_since(cursor)
        assert changes.run_ids == ("pg-hello",) and [c.id for c in changes.new_checkpoints] == ["pg-hello:2"]


def test_adk_database_session_service_on_postgres(pg_url: str) -> None:
    _load(pg_url, "adk_postgres.sql")
    with open_store(pg_url) as store:
        assert store.info.kind == "google-adk" and store.info.backend == "postgresql"
        assert {r.id for r in store.list_runs()} == {"s-groceries", "s-quick", "s-ben"}
        head = store.load("s-groceries:-1")
        assert head.state["state"]["cart"] == ["apples", "pears"]
        assert head.state["current"]["app_state"] == {"items_sold": 3}
        assert store.identity() == _table_identity(pg_url, "sessions")
        assert [c.kind for c in store.list_checkpoints("s-groceries")][:3] == ["input", "llm", "tool"]
