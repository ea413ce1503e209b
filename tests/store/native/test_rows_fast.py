"""Rows become RunInfo / CheckpointInfo by a fast path for the common case: it must give
exactly what the full field-by-field check gives, for good rows and damaged ones alike."""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path

import pytest

from inspector.store.native import rows
from inspector.store.native.reads import CHECKPOINT_COLUMNS, RUN_COLUMNS
from inspector.store.sqlite_ro import DamagedText, decode_text

GOLDEN = Path(__file__).resolve().parents[2] / "commands" / "golden" / "native.db"


def _stored(sql: str) -> list:
    conn = sqlite3.connect(f"file:{GOLDEN}?mode=ro&immutable=1", uri=True)
    conn.text_factory = decode_text
    try:
        cur = conn.execute(sql)
        make = rows.row_type(tuple(d[0] for d in cur.description))._make
        return [make(r) for r in cur.fetchall()]
    finally:
        conn.close()


BAD_VALUES = [None, "", "x", DamagedText("bad"), 1, 2**40, -(2**40), 1.5, 3.0, math.nan, math.inf, 1e12,
              True, b"\x00" * 16, b"\x01", "{}", '{"a": 1}', "[1]", "null", "{not json"]


def _variants(row: object) -> list:
    out = [row]
    for name in row._fields:
        out += [row._replace(**{name: v}) for v in BAD_VALUES]
    return out


@pytest.mark.parametrize("kind", ["runs", "checkpoints"])
def test_the_fast_path_gives_what_the_full_check_gives(kind: str) -> None:
    if kind == "runs":
        stored = _stored(f"SELECT {', '.join(RUN_COLUMNS)} FROM ci_runs")
        fast, full = rows.run_from_row, rows._run_from_fields
    else:
        stored = _stored(f"SELECT {', '.join(CHECKPOINT_COLUMNS)} FROM ci_checkpoints")
        fast, full = rows.checkpoint_from_row, rows._checkpoint_from_fields
    assert len(stored) > 5
    checked = 0
    for row in stored[:3] + stored[-2:]:
        for variant in _variants(row):
            got, want = fast(variant), full(variant)
            assert repr(got) == repr(want) and vars(got) == vars(want)
            checked += 1
    for row in stored:       # every stored row (two of them damaged)
        assert repr(fast(row)) == repr(full(row))
    assert checked > 500


def test_branch_counts_come_through_the_fast_path() -> None:
    row = _stored(f"SELECT {', '.join(CHECKPOINT_COLUMNS)} FROM ci_checkpoints")[0]
    assert rows.checkpoint_from_row(row, {row.id: 3}).branch_count == 3
    assert rows.checkpoint_from_row(row, {row.id: 3}) == rows._checkpoint_from_fields(row, {row.id: 3})


def test_a_listing_of_plain_rows_gives_what_row_by_row_gives() -> None:
    stored = _stored(f"SELECT {', '.join(CHECKPOINT_COLUMNS)} FROM ci_checkpoints")
    variants = [v for row in stored[:2] for v in _variants(row)] + stored
    names = tuple(stored[0]._fields)
    branches = {stored[0].id: 2}
    got = rows.checkpoints_from_tuples(names, [tuple(v) for v in variants], branches)
    assert [repr(g) for g in got] == [repr(rows._checkpoint_from_fields(v, branches)) for v in variants]
    assert any(g.damaged for g in got) and any(not g.damaged for g in got)
