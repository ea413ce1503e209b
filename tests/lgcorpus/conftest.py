"""Fixtures: the corpus written once per session into a SqliteSaver file and a PostgresSaver
database (never written after creation; tests that write use ``corpus_copy_sqlite`` /
``corpus_copy_pg``)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import pytest

from . import build_postgres, build_sqlite

if TYPE_CHECKING:
    from inspector.store.langgraph.channels import GraphChannels

REPO = str(Path(__file__).resolve().parents[2])


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
    target = tmp_path / "corpus-copy.db"
    src, dst = sqlite3.connect(str(corpus_sqlite)), sqlite3.connect(str(target))
    try:
        src.backup(dst)
    finally:
        dst.close()
        src.close()
    return target


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


@pytest.fixture(scope="session")
def graph_kinds() -> Callable[[str], GraphChannels]:
    """``graph_kinds(scenario name)``: the channel kinds the scenario's graph reports — the
    runner's own ``channels_report`` and the inspector's ``parse_report``, called in this process
    (the tests import the corpus graphs anyway; ``tests/resume/test_graph_channels.py`` runs the
    real runner subprocess and its cache), once per session."""
    from inspector.store.langgraph.channels import parse_report
    from inspector.store.langgraph.graph_runner import channels_report, load_graph

    from . import BY_NAME
    found: dict[str, GraphChannels] = {}

    def kinds(name: str) -> GraphChannels:
        if name not in found:
            spec = BY_NAME[name].graph
            found[name] = parse_report(spec, json.loads(json.dumps(channels_report(load_graph(spec, None), spec,
                                                                                     [REPO]))))
        return found[name]
    return kinds
