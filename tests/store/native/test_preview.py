"""The start-up preview: a native store's most recent runs read with sqlite3 alone, read-only."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.store import open_store
from inspector.store.native.preview import preview_runs
from tests.conftest import store_files_digest


def test_preview_lists_the_runs_like_the_store_and_writes_nothing(demo_store: Path) -> None:
    before = store_files_digest(demo_store)
    with open_store(demo_store) as store:
        for limit in (1, 3, 200):
            assert preview_runs(str(demo_store), limit) == store.list_runs(limit=limit)
    assert store_files_digest(demo_store) == before


def test_preview_needs_no_sqlalchemy(demo_store: Path) -> None:
    code = ("import sys; from inspector.store.native.preview import preview_runs; "
            f"runs = preview_runs({str(demo_store)!r}, 5); "
            "assert runs and 'sqlalchemy' not in sys.modules, sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


@pytest.mark.parametrize("content", [b"", b"\x00" * 4096, b"SQLite format 3\x00" + b"\x01" * 200,
                                     b"just text\n" * 100])
def test_anything_else_gets_no_preview(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "odd.db"
    path.write_bytes(content)
    assert preview_runs(str(path), 10) is None
    assert path.read_bytes() == content


def test_no_preview_for_urls_folders_missing_foreign_or_newer_stores(tmp_path: Path, demo_store: Path) -> None:
    assert preview_runs(f"sqlite:///{demo_store}", 10) is None
    assert preview_runs(str(tmp_path), 10) is None
    assert preview_runs(str(tmp_path / "missing.db"), 10) is None
    foreign = tmp_path / "foreign.db"
    with sqlite3.connect(foreign) as conn:
        conn.execute("create table ci_runs (id text)")   # our table name, not our store
        conn.execute("insert into ci_runs values ('x')")
    assert preview_runs(str(foreign), 10) is None
    with sqlite3.connect(demo_store) as conn:
        conn.execute("update ci_meta set value = '99' where key = 'format_version'")
    assert preview_runs(str(demo_store), 10) is None
