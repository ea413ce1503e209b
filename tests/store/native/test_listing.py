"""Listings as plain rows (``run_rows``, ``checkpoint_rows``): on a native SQLite store SQLite
checks each row's types, and what it lets through must be exactly what the model path gives,
for every kind of damaged value in every column."""

from __future__ import annotations

import math
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from inspector.store.base import RUN_ROW, RunRows, Store
from inspector.store.native import listing
from inspector.store.native.reads import CHECKPOINT_COLUMNS, RUN_COLUMNS, SqliteNativeReader, open_sqlite_reader
from inspector.store.target import path_target

GOLDEN = Path(__file__).resolve().parents[2] / "commands" / "golden" / "native.db"
RUN = "2e1c2284c1f2"     # a run of the golden store with no damaged checkpoint

BAD_VALUES = [None, "", "x", b"\xff\xfe", 1, 0, -1, 2**31 - 2, 2**31 - 1, -(2**31), 2**40, 1.5, 3.0, -0.0,
              math.inf, -math.inf, 1e11, 99999999999.0, -99999999999.0, 1e12, True, b"\x00" * 16, b"\x01",
              "{}", '{"a": 1}', "[1]", "null", "{not json", "1", "3.0"]


def _store(tmp_path: Path, constrained: bool) -> Path:
    """A copy of the golden store; without ``constrained`` its runs and checkpoints tables
    keep no declared types or constraints, so any value is stored as it is given."""
    target = tmp_path / "store.db"
    shutil.copyfile(GOLDEN, target)
    if not constrained:
        with sqlite3.connect(target) as conn:
            for table in ("ci_runs", "ci_checkpoints"):
                conn.execute(f"ALTER TABLE {table} RENAME TO old_{table}")
                conn.execute(f"CREATE TABLE {table} AS SELECT * FROM old_{table} WHERE 0")
                columns = [r[1] for r in conn.execute(f"PRAGMA table_info(old_{table})")]
                conn.execute(f"DROP TABLE {table}")
                conn.execute(f"CREATE TABLE {table} ({', '.join(columns)})")    # no types, no constraints
                conn.execute(f"INSERT INTO {table} SELECT * FROM old_{table}")
                conn.execute(f"DROP TABLE old_{table}")
    return target


def _reader(path: Path) -> SqliteNativeReader:
    found = open_sqlite_reader(path_target(str(path)))
    assert found is not None
    return found


def _each_variant(path: Path, table: str, columns: tuple[str, ...], where: str, own: dict, check) -> tuple[int, int]:
    """Insert one stored row again (``own``: the values that keep it apart), then once with
    each column holding each bad value, run ``check`` with it in the store and take it out
    again; how many went in, and for how many ``check`` said the SQL passed the row."""
    inserted = passed = 0
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA synchronous = OFF")     # a test store: no need to wait for the disk
        stored = conn.execute(f"SELECT {', '.join(columns)} FROM {table} WHERE {where}").fetchone()
        row = {**dict(zip(columns, stored, strict=True)), **own}
        for variant in [row] + [{**row, name: value} for name in columns for value in BAD_VALUES]:
            try:
                cur = conn.execute(f"INSERT INTO {table} ({', '.join(variant)}) "
                                   f"VALUES ({', '.join('?' * len(variant))})", list(variant.values()))
                conn.commit()
            except sqlite3.Error:        # the schema refuses it: a store cannot hold it either
                conn.rollback()
                continue
            inserted += 1
            try:
                passed += check()
            finally:
                conn.execute(f"DELETE FROM {table} WHERE rowid = ?", (cur.lastrowid,))
                conn.commit()
    return inserted, passed


def _passes(path: Path, lean_of: Callable, same_as_model: Callable) -> int:
    """1 when the SQL checks let the store's listing through (``lean_of`` the cursor is not
    None; ``same_as_model`` then asserts it is what the model path gives), 0 when not."""
    reader = _reader(path)
    try:
        with reader._connection() as cur:
            lean = lean_of(cur)
        same_as_model(reader, lean)
        return int(lean is not None)
    finally:
        reader.close()


def _same_checkpoints(reader: SqliteNativeReader, lean: list | None) -> None:
    model = Store.checkpoint_rows(reader, RUN)
    assert reader.checkpoint_rows(RUN) == model
    if lean is not None:
        assert lean == model and [type(v) for r in lean for v in r] == [type(v) for r in model for v in r]


def _same_runs(reader: SqliteNativeReader, lean: RunRows | None) -> None:
    model = Store.run_rows(reader)
    got = reader.run_rows()
    assert [r[:len(RUN_ROW)] for r in got.rows] == model.rows and got.runs == model.runs
    if lean is not None:
        assert [r[:len(RUN_ROW)] for r in lean.rows] == model.rows
        assert [repr(r) for r in lean.runs] == [repr(r) for r in model.runs]


@pytest.mark.parametrize("constrained", [True, False], ids=["schema", "untyped"])
def test_checkpoint_rows_give_what_the_model_gives(tmp_path: Path, constrained: bool) -> None:
    path = _store(tmp_path, constrained)
    inserted, passed = _each_variant(
        path, "ci_checkpoints", CHECKPOINT_COLUMNS, f"run_id = '{RUN}' AND seq = 3", {"id": 900_000, "seq": 10_000},
        lambda: _passes(path, lambda cur: listing.checkpoint_rows(cur, RUN), _same_checkpoints))
    assert inserted > (250 if constrained else 500)
    assert 5 < passed < inserted        # some pass (1.0 as a time, 0 as a count …), most do not


@pytest.mark.parametrize("constrained", [True, False], ids=["schema", "untyped"])
def test_run_rows_give_what_the_model_gives(tmp_path: Path, constrained: bool) -> None:
    path = _store(tmp_path, constrained)
    inserted, passed = _each_variant(
        path, "ci_runs", RUN_COLUMNS, f"id = '{RUN}'", {"id": "variant-run"},
        lambda: _passes(path, lambda cur: listing.run_rows(cur, "", []), _same_runs))
    assert inserted > (250 if constrained else 600)
    assert 5 < passed < inserted


def test_a_filter_and_active_runs_come_through(tmp_path: Path) -> None:
    path = _store(tmp_path, True)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE ci_runs SET status = 'running', owner_pid = 1, owner_host = 'elsewhere' WHERE id = ?",
                     (RUN,))
    reader = _reader(path)
    try:
        for text in ("", "2e1", "no such run", "%"):
            got, want = reader.run_rows(text=text), Store.run_rows(reader, text=text)
            assert [r[:len(RUN_ROW)] for r in got.rows] == want.rows and got.runs == want.runs
        assert [r.id for r in reader.run_rows().runs if r.status == "running"] == [RUN]
    finally:
        reader.close()
