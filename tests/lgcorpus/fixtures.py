"""The LangGraph corpus written once per session for the whole suite (a plugin of
``tests/conftest.py``, so every module that needs it shares one build): a SqliteSaver file and a
PostgresSaver database, never written after creation; tests that write use
``corpus_copy_sqlite`` / ``corpus_copy_pg``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from . import build_postgres, build_sqlite, copy_sqlite


@pytest.fixture(scope="session")
def corpus_sqlite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The corpus in a SQLite file (SqliteSaver + AsyncSqliteSaver)."""
    path = tmp_path_factory.mktemp("lgcorpus") / "corpus.db"
    build_sqlite(path)
    return path


@pytest.fixture(scope="session")
def corpus_pg(pg_server) -> Iterator[str]:
    """The corpus in a PostgreSQL database (PostgresSaver + AsyncPostgresSaver); its URL."""
    name = pg_server.create_database()
    url = pg_server.url_for(name)
    build_postgres(url)
    try:
        yield url
    finally:
        pg_server.drop_database(name)


@pytest.fixture
def corpus_copy_sqlite(corpus_sqlite: Path, tmp_path: Path) -> Path:
    """A private copy of the corpus file a test may write to."""
    return copy_sqlite(corpus_sqlite, tmp_path / "corpus-copy.db")


@pytest.fixture
def corpus_copy_pg(corpus_pg: str, pg_server) -> Iterator[str]:
    """A private copy of the corpus database (CREATE DATABASE … TEMPLATE) a test may write to."""
    import sqlalchemy as sa
    import uuid
    source = sa.engine.make_url(corpus_pg).database
    name = f"t_{uuid.uuid4().hex[:12]}"
    pg_server.admin(f'CREATE DATABASE "{name}" TEMPLATE "{source}"')
    try:
        yield pg_server.url_for(name)
    finally:
        pg_server.drop_database(name)
