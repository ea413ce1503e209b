"""The per-field shares of the usage report add up to the bytes the store holds (content and
rows), on stores written by the real recording library."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from inspector.cli import main
from inspector.record import Checkpointer
from inspector.store import open_store
from inspector.usage.api import store_usage
from inspector.usage.graph import apportion
from inspector.usage.report import OTHER_FIELD, ROWS_FIELD
from tests.retention.stores import built_store, chat  # noqa: F401  (built_store is a fixture)


def _stored_content(path: Path) -> int:
    """Every piece's stored bytes as the report counts them (data, digest and size)."""
    con = sqlite3.connect(path)
    try:
        return con.execute("SELECT SUM(LENGTH(data)) + 24 * COUNT(*) FROM ci_blobs").fetchone()[0]
    finally:
        con.close()


def test_field_shares_add_up_to_content_and_rows(built_store) -> None:
    """A root piece is shared among its fields in whole bytes: rounding each share down lost up
    to a byte per field of every checkpoint's root (81 KB of a 147 MB store)."""
    path, _ids = built_store
    with open_store(path) as store:
        report = store_usage(store)
    assert report.content_bytes == _stored_content(path)
    assert sum(report.fields.values()) == report.content_bytes + report.rows_bytes
    assert OTHER_FIELD not in report.fields        # every piece is reached from a checkpoint here
    assert report.fields[ROWS_FIELD] == report.rows_bytes


def test_pieces_no_checkpoint_reaches_are_their_own_line(tmp_path: Path, capsys) -> None:
    """Pieces left when checkpoint rows go without a prune's collection (a deletion by hand, a
    crash between writes) are stored bytes no field claims: they are the "other" line."""
    path = tmp_path / "s.db"
    with Checkpointer(path, name="kept") as cp:
        chat(cp, 20)
    with Checkpointer(path, name="dropped") as cp:
        chat(cp, 20, start=500)
        dropped = cp.run_id
    con = sqlite3.connect(path)
    con.execute("DELETE FROM ci_checkpoints WHERE run_id = ?", (dropped,))
    con.commit()
    con.close()
    with open_store(path) as store:
        report = store_usage(store)
    assert report.fields[OTHER_FIELD] > 6000        # the dropped run's messages
    assert sum(report.fields.values()) == report.content_bytes + report.rows_bytes
    assert report.content_bytes == _stored_content(path)
    assert any("no checkpoint reaches" in n for n in report.notes)
    assert main(["usage", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert sum(doc["fields"].values()) == doc["content_bytes"] + doc["rows_bytes"]
    assert main(["usage", str(path)]) == 0
    assert OTHER_FIELD in capsys.readouterr().out


def test_totals_only_report_adds_up_too(built_store) -> None:
    path, _ids = built_store
    with open_store(path) as store:
        report = store_usage(store, pieces=False)
    assert report.fields == {OTHER_FIELD: report.content_bytes, ROWS_FIELD: report.rows_bytes}


def test_apportion_gives_every_byte_once() -> None:
    split = {"a": (1, ()), "b": (1, ()), "c": (1, ())}
    assert apportion(100, split) == [34, 33, 33] and sum(apportion(7, split)) == 7
    assert apportion(10, {"a": (0, ()), "b": (0, ())}) == [5, 5]
    assert apportion(1000, {"big": (990, ()), "tiny": (3, ()), "small": (7, ())}) == [990, 3, 7]
