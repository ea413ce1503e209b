"""Fixtures: a real SqliteSaver database written by the real langgraph package."""

from __future__ import annotations

import shutil
from pathlib import Path
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from inspector.store.langgraph import LangGraphStore
from tests.lgcorpus import copy_sqlite

from .lg_graphs import make_database


def open_ro(path: Path, **options) -> LangGraphStore:
    """Our adapter on a read-only engine, as open_store builds it."""
    engine = sa.create_engine(f"sqlite:///file:{path}?mode=ro&uri=true")
    return LangGraphStore(engine, str(path), **options)


@pytest.fixture(scope="session")
def lg_master(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The standard threads database (shared; never written after creation)."""
    return make_database(tmp_path_factory.mktemp("lg") / "standard.db")


@pytest.fixture
def lg_copy(lg_master: Path, tmp_path: Path) -> Path:
    """A private copy of the standard database a test may modify."""
    return copy_sqlite(lg_master, tmp_path / "copy.db")


@pytest.fixture
def lg_store(lg_master: Path) -> Iterator[LangGraphStore]:
    """The adapter opened read-only on the standard database."""
    store = open_ro(lg_master)
    yield store
    store.close()


@pytest.fixture
def lg_graph(lg_master: Path) -> Iterator[object]:
    """A real SqliteSaver-backed graph on the standard database (for comparisons)."""
    from .lg_graphs import open_graph
    graph, conn = open_graph(lg_master)
    yield graph
    conn.close()


def copy_file(src: Path, dst: Path) -> Path:
    """Plain file copy (used where a byte-identical copy matters)."""
    shutil.copyfile(src, dst)
    return dst
