"""Shared fixtures: offscreen Qt, real stores built by the real demo agent, temp stores."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("PYTHONUNBUFFERED", "1")
# caches the tests write (a graph's channel kinds…) never go to the user's cache directory
os.environ.setdefault("CHECKPOINT_INSPECTOR_CACHE_DIR", tempfile.mkdtemp(prefix="ci-test-cache-"))

pytest_plugins = ["tests.pg_plugin", "tests.lgcorpus.fixtures"]   # the LangGraph corpus: built once


def file_digest(path: Path) -> str:
    """sha256 of a file's bytes (for 'opening never writes' checks)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def blob_bytes(path: Path) -> int:
    """The bytes of the pieces a native SQLite store holds (what its saves added, compressed)."""
    import sqlite3
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT sum(length(data)) FROM ci_blobs").fetchone()[0]


def store_files_digest(path: Path) -> dict[str, str]:
    """Digests of a SQLite store and its -wal file when that holds anything.

    SQLite may create an empty -wal/-shm beside a WAL database even for a read-only
    reader (they are its shared-memory index, not store content); an empty -wal is
    therefore treated like an absent one.
    """
    out = {"db": file_digest(path)}
    wal = Path(f"{path}-wal")
    if wal.exists() and wal.stat().st_size:
        out["-wal"] = file_digest(wal)
    return out


@pytest.fixture(scope="session")
def demo_store_master(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo store built once per session by running the real demo agent (no hung process)."""
    from inspector.demo.build import build_demo_store

    path = tmp_path_factory.mktemp("demo-master") / "demo.db"
    build_demo_store(path, log=lambda _line: None, include_stuck=False)
    return path


@pytest.fixture
def demo_store(demo_store_master: Path, tmp_path: Path) -> Path:
    """A private copy of the demo store (tests may write to it)."""
    target = tmp_path / "demo.db"
    for suffix in ("", "-wal"):
        src = Path(f"{demo_store_master}{suffix}")
        if src.exists():
            shutil.copyfile(src, f"{target}{suffix}")
    return target


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    """A path for a new SQLite store."""
    return tmp_path / "store.db"
