"""The whole store's report added up in SQL (no Python object per checkpoint) says exactly
what the checkpoint-by-checkpoint walk says, on stores of varied shapes, SQLite and PostgreSQL."""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.record import Checkpointer
from inspector.store import open_store
from inspector.store.native import usage_sql
from inspector.usage.api import store_usage
from inspector.usage.report import UsageReport
from tests.retention.stores import build, built_store, chat  # noqa: F401  (built_store: a fixture)


def by_row(target: str | Path, run_id: str) -> UsageReport:
    """The report as the checkpoint-by-checkpoint walk makes it (a run's detail reads every
    row of the store), without that detail."""
    with open_store(target) as store:
        return dataclasses.replace(store_usage(store, run_id), detail=None)


def by_sql(target: str | Path, monkeypatch: pytest.MonkeyPatch) -> UsageReport:
    """The whole store's report, which must not read the checkpoints row by row."""
    def refused(*_args: object, **_kw: object) -> None:
        raise AssertionError("the whole store's report read every checkpoint row")

    with monkeypatch.context() as patch, open_store(target) as store:
        patch.setattr(usage_sql, "iter_checkpoints", refused)
        return store_usage(store)


def same(target: str | Path, run_id: str, monkeypatch: pytest.MonkeyPatch) -> UsageReport:
    fast = by_sql(target, monkeypatch)
    assert fast == by_row(target, run_id)
    return fast


def repeats(target: str | Path) -> list[str]:
    """Runs that save the same states again and again (idle steps), alternate between two,
    share states across runs, with and without a task state, and a run of one checkpoint."""
    board = {"goal": "g", "tasks": [{"id": "t1", "title": "one", "status": "pending"}]}
    ids = []
    with Checkpointer(target, name="idle") as cp:
        for i in range(12):
            cp.save({"step": i // 4, "notes": "x" * 200}, kind="tool", name="poll", tasks=board if i % 3 else None)
        ids.append(cp.run_id)
    with Checkpointer(target, name="ping-pong") as cp:
        for i in range(10):
            cp.save({"step": i % 2, "notes": "x" * 200}, kind="tool", name="flip", tasks=board)
        ids.append(cp.run_id)
    with Checkpointer(target, name="one") as cp:
        cp.save({"step": 0, "notes": "x" * 200}, kind="input", name="start")
        ids.append(cp.run_id)
    return ids


def interleaved(target: str | Path) -> list[str]:
    """Two runs written at the same time, one checkpoint each in turn."""
    with Checkpointer(target, name="a") as a, Checkpointer(target, name="b") as b:
        for i in range(15):
            a.save({"messages": [f"a{j}" * 40 for j in range(i)]}, kind="llm", name="a")
            b.save({"messages": [f"b{j}" * 40 for j in range(i // 2)]}, kind="llm", name="b")
        return [a.run_id, b.run_id]


@pytest.mark.parametrize("steps", [usage_sql.ROOT_STEPS, 2])
def test_forked_and_pinned_store(store_url: str, steps: int, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setattr(usage_sql, "ROOT_STEPS", steps)      # 2: most first-seen roots come from the GROUP BY
    ids = build(store_url)
    assert main(["pin", store_url, f"{ids['short']}:5"]) == 0
    capsys.readouterr()
    report = same(store_url, ids["short"], monkeypatch)
    assert {r.run: r.checkpoints for r in report.runs} == {ids["long"]: 60, ids["short"]: 30, ids["fork"]: 1}


@pytest.mark.parametrize("shape", [repeats, interleaved])
def test_repeated_and_interleaved_states(store_url: str, shape, monkeypatch: pytest.MonkeyPatch) -> None:
    ids = shape(store_url)
    report = same(store_url, ids[0], monkeypatch)
    assert len(report.growth) > 1 and report.notes == ()


def test_growth_of_short_runs_counted_without_a_full_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs of one checkpoint sit in one growth bin each; the one long run is counted by bin."""
    path = tmp_path / "s.db"
    with Checkpointer(path, name="long") as cp:
        chat(cp, 3)
        long_run = cp.run_id
    for n in range(6):
        with Checkpointer(path, name=f"short {n}") as cp:
            cp.save({"n": n}, kind="input", name="start")
    report = same(path, long_run, monkeypatch)
    assert report.growth[-1][1] == sum(r.bytes for r in report.runs)


def test_empty_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.db"
    with Checkpointer(path, name="nothing yet") as cp:
        run_id = cp.run_id
    report = same(path, run_id, monkeypatch)
    assert report.checkpoints == 0 and report.growth == ()


@pytest.mark.parametrize("damage", ["size = 'big'", "ops = 1.5", "created = 'noon'", "tasks_hash = 7",
                                    "state_hash = hex(state_hash)", "checks_total = NULL", "created = 9e999"])
def test_damaged_rows_are_told_as_before(built_store, damage: str) -> None:
    """A damaged row (a hostile file's types) makes the report read row by row, as before."""
    path, ids = built_store
    con = sqlite3.connect(path)
    con.execute("PRAGMA ignore_check_constraints = ON")
    con.execute("CREATE TABLE t AS SELECT * FROM ci_checkpoints")       # (no NOT NULL: a hostile file's)
    con.execute("DROP TABLE ci_checkpoints")
    con.execute("ALTER TABLE t RENAME TO ci_checkpoints")
    con.execute(f"UPDATE ci_checkpoints SET {damage} WHERE id = (SELECT MIN(id) + 3 FROM ci_checkpoints)")
    con.commit()
    con.close()
    with open_store(path) as store:
        fast = store_usage(store)
    assert fast == by_row(path, ids["long"])
    if damage != "created = 9e999":      # (an infinite time is no damage: its bytes go to the newest time)
        assert any("wrong type" in note for note in fast.notes)
