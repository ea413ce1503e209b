"""The storage report of native stores written by the real recording library."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.store import open_store
from inspector.usage.api import store_usage
from inspector.usage.report import ROWS_FIELD, replay_cost
from tests.conftest import store_files_digest
from tests.retention.stores import built_store  # noqa: F401  (a fixture)


def test_report_adds_up_and_reads_nothing_it_should_not_write(built_store, capsys) -> None:
    path, ids = built_store
    before = store_files_digest(path)
    assert main(["usage", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert store_files_digest(path) == before
    con = sqlite3.connect(path)
    page_size, pages = con.execute("PRAGMA page_size").fetchone()[0], con.execute("PRAGMA page_count").fetchone()[0]
    stored = con.execute("SELECT SUM(LENGTH(data)) + 24 * COUNT(*) FROM ci_blobs").fetchone()[0]
    con.close()
    wal = Path(f"{path}-wal")
    assert doc["total_bytes"] == page_size * pages + (wal.stat().st_size if wal.exists() else 0)
    by_run = {r["run"]: r for r in doc["runs"]}
    assert set(by_run) == set(ids.values())
    assert by_run[ids["long"]]["checkpoints"] == 60 and by_run[ids["short"]]["checkpoints"] == 30
    # every piece is counted once, for the run that stored it first: the fork adds almost nothing
    content = sum(v for r in doc["runs"] for k, v in r["fields"].items() if k != ROWS_FIELD)
    assert abs(content - stored) <= 4 * len(doc["fields"]) * 91  # root pieces are split by integer shares
    assert by_run[ids["fork"]]["bytes"] < by_run[ids["short"]]["bytes"] / 5
    assert next(iter(doc["fields"])) == "messages"
    others = [v for k, v in doc["fields"].items() if k not in ("messages", ROWS_FIELD)]
    assert doc["fields"]["messages"] > 3 * max(others)
    assert "(task state)" in doc["fields"]


def test_run_detail_and_tradeoff(built_store) -> None:
    path, ids = built_store
    with open_store(path) as st:
        report = store_usage(st, ids["long"])
        run = next(r for r in report.runs if r.run == ids["long"])
    detail = report.detail
    assert detail is not None and [c.seq for c in detail.checkpoints] == list(range(60))
    assert sum(c.stored for c in detail.checkpoints) == pytest.approx(run.bytes, abs=60)
    assert all(0 < c.unique <= c.stored for c in detail.checkpoints)
    # a checkpoint that closed a list chunk (or changed the task state) shares it with the
    # next one, so it frees less than it stored; the head shares nothing with a later one
    shared = [c.seq for c in detail.checkpoints if c.unique < c.stored]
    assert 31 in shared and len(shared) >= 2 and 59 not in shared
    assert [c.checks_passed for c in detail.checkpoints][-1] == 1
    every = {t.every: t for t in detail.tradeoff}
    assert every[1].write_bytes == pytest.approx(run.bytes, abs=60) and every[1].replay_max == 0
    assert every[5].snapshots == 13 and every[5].replay_max == 4
    assert every[1].write_bytes > every[5].write_bytes > every[20].write_bytes
    with open_store(path) as st, pytest.raises(Exception, match="no run"):
        store_usage(st, "nope")


def test_replay_cost_matches_the_recording_library_figures() -> None:
    assert replay_cost([1] * 1000, list(range(0, 1000, 5)) + [999]) [0] == 4
    assert replay_cost([5] * 10, list(range(10))) == (4, 2.0)


def test_cli_text_and_bad_input(built_store, capsys, tmp_path) -> None:
    path, ids = built_store
    assert main(["usage", str(path), ids["short"]]) == 0
    out = capsys.readouterr().out
    assert "messages" in out and "Interval trade-off" in out and "on disk" in out
    assert main(["usage", str(path), "--no-pieces", "--json"]) == 0
    quick = json.loads(capsys.readouterr().out)
    assert quick["content_bytes"] > 0 and "not walked" in " ".join(quick["notes"])
    assert main(["usage", str(path), "missing-run"]) == 2
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not a database at all" * 10)
    assert main(["usage", str(junk)]) == 2
    assert "not a checkpoint store" in capsys.readouterr().err


def test_fields_of_a_state_stored_as_a_chunked_map(tmp_path: Path) -> None:
    from inspector.record import Checkpointer

    path = tmp_path / "wide.db"
    with Checkpointer(path, name="wide") as cp:
        state: dict = {f"k{i}": "v" * 50 for i in range(400)}      # big enough to be a chunked map
        state["messages"] = []
        for i in range(30):
            state["messages"].append({"c": f"m{i} " * 100})
            state[f"k{i}"] = "changed" * 20
            cp.save(state, kind="step", name="s")
    with open_store(path) as st:
        report = store_usage(st)
    assert report.fields["messages"] > 0 and report.fields["k12"] > report.fields["k300"] > 0
    content = sum(v for k, v in report.fields.items() if k != ROWS_FIELD)
    assert content == pytest.approx(report.content_bytes, rel=0.05)
    assert report.fields["(state)"] < content / 2          # only the map's own tables stay unclaimed


def test_damaged_and_missing_pieces_are_one_sentence_or_a_note(built_store, capsys) -> None:
    path, _ids = built_store
    con = sqlite3.connect(path)
    victim, other = [bytes(r[0]) for r in con.execute("SELECT hash FROM ci_blobs WHERE codec = 1 LIMIT 2")]
    con.execute("DELETE FROM ci_blobs WHERE hash = ?", (other,))
    con.commit()
    assert main(["usage", str(path), "--json"]) == 0
    assert "missing" in " ".join(json.loads(capsys.readouterr().out)["notes"])
    con.execute("UPDATE ci_blobs SET data = zeroblob(40) WHERE hash = ?", (victim,))
    con.execute("UPDATE ci_blobs SET size = 2000000000 WHERE hash != ?", (victim,))
    con.commit()
    con.close()
    assert main(["usage", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert main(["prune", str(path), "--keep-last", "1"]) == 2
