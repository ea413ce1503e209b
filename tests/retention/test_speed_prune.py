"""Prune's deleting transactions read each batch's runs once and write one statement per table
for the whole batch: what they leave is what the rules say, however the batches fall."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import sqlalchemy as sa

from inspector.cli import main
from inspector.record import Checkpointer, Interval
from inspector.store.native import prune_sql
from tests.retention.stores import build, chat


def many_runs(target: str | Path, runs: int = 12) -> dict:
    """``build``'s runs (a fork, the fork's origin kept) and ``runs`` more of 4 to 9
    checkpoints, some of which count several operations."""
    ids = build(target)
    for n in range(runs):
        with Checkpointer(target, name=f"r{n}", interval=Interval.every(1 + n % 3)) as cp:
            for i in range((4 + n % 6) * (1 + n % 3)):
                cp.save({"n": n, "step": i, "log": ["x" * 50] * (i % 3)}, kind="tool", name="step")
    return ids


def dump(target: str | Path) -> dict:
    """The rows a prune changes, comparable across stores."""
    engine = sa.create_engine(target if "://" in str(target) else f"sqlite:///{target}")
    try:
        with engine.connect() as conn:
            return {
                "checkpoints": sorted(tuple(r) for r in conn.exec_driver_sql(
                    "SELECT id, run_id, seq, parent_id, ops, size, size_delta, change, state_hash FROM ci_checkpoints")),
                "runs": sorted(tuple(r) for r in conn.exec_driver_sql(
                    "SELECT id, head_seq, checkpoint_count FROM ci_runs")),
                "pins": sorted(tuple(r) for r in conn.exec_driver_sql("SELECT checkpoint_id FROM ci_pins")),
            }
    finally:
        engine.dispose()


def expected(before: dict, after: dict) -> None:
    """What a prune must leave, told from the rows before it: each run's kept checkpoints
    numbered 0.. in their order, each pointing at the one kept before it, counting the
    operations of the deleted ones just before it, its size change measured from its new
    parent; the run's head and count."""
    kept = {r[0] for r in after["checkpoints"]}
    now = {r[0]: r for r in after["checkpoints"]}
    for run_id, head, count in after["runs"]:
        rows = sorted((r for r in before["checkpoints"] if r[1] == run_id), key=lambda r: r[2])
        left = [r for r in rows if r[0] in kept]
        assert (head, count) == (len(left) - 1, len(left))
        ops, previous = 0, None
        for row in rows:
            if row[0] not in kept:
                ops += row[4]
                continue
            cid, _run, seq, parent, own, size, delta, _change, _state = now[row[0]]
            assert (seq, parent) == (left.index(row), previous[0] if previous else None)
            assert own == row[4] + ops
            assert delta == (size - (previous[5] if previous else 0) if ops else row[6])
            ops, previous = 0, row


@pytest.mark.parametrize("rule", [["--keep-last", "2"], ["--keep-last", "1", "--run", "r3"]])
def test_batches_of_any_size_leave_what_the_rules_say(store_url: str, rule: list[str], tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    ids = many_runs(store_url)
    assert main(["pin", store_url, f"{ids['short']}:5"]) == 0
    before = dump(store_url)
    copy = None
    if "://" not in store_url:        # the same prune in batches of 3 ids (a run's ids split)
        copy = tmp_path / "copy.db"
        shutil.copyfile(store_url, copy)
    capsys.readouterr()
    assert main(["prune", store_url, *rule, "--apply", "--json"]) == 0
    done = json.loads(capsys.readouterr().out)
    after = dump(store_url)
    assert done["remove_checkpoints"] == len(before["checkpoints"]) - len(after["checkpoints"]) > 0
    assert after["pins"] == before["pins"]
    expected(before, after)
    if copy is not None:
        monkeypatch.setattr(prune_sql, "ID_BATCH", 3)
        assert main(["prune", str(copy), *rule, "--apply", "--json"]) == 0
        assert dump(copy) == after


def test_a_batch_of_runs_is_written_in_a_few_statements(tmp_path: Path, capsys) -> None:
    """Thirty runs pruned in one batch: their rows read in one statement and each table
    written in one (a statement or more per run made a big prune take seconds of round trips)."""
    path = tmp_path / "s.db"
    for n in range(30):
        with Checkpointer(path, name=f"r{n}") as cp:
            chat(cp, 4, tasks=False)
    statements: list[str] = []

    def count(_conn, _cursor, statement, *_args) -> None:
        statements.append(statement)

    sa.event.listen(sa.Engine, "before_cursor_execute", count)
    try:
        assert main(["prune", str(path), "--keep-last", "1", "--apply", "--json"]) == 0
    finally:
        sa.event.remove(sa.Engine, "before_cursor_execute", count)
    assert json.loads(capsys.readouterr().out)["remove_checkpoints"] == 90
    writes = [s for s in statements if s.lstrip().upper().startswith(("UPDATE", "DELETE"))]
    assert len(writes) <= 8, writes


@pytest.mark.parametrize("keep", [1, 3, 7])
def test_a_dry_run_counts_in_sql_what_the_candidates_row_by_row_give(store_url: str, keep: int) -> None:
    # the dry run groups the candidates by run and roots in SQL (a million rows took 4.5 s):
    # the same runs, counts and bytes as the row-by-row candidates give
    from inspector.retention.api import plan_prune
    from inspector.retention.native import estimate
    from inspector.retention.rules import make_rules
    from inspector.store import open_store

    many_runs(store_url)
    rules = make_rules(keep_last=keep)
    plan = plan_prune(store_url, rules)
    with open_store(store_url) as store, store.engine.connect() as conn:
        found = list(prune_sql.candidates(conn, rules))
        by_run: dict = {}
        for cand in found:
            by_run[cand.run_id] = by_run.get(cand.run_id, 0) + 1
        freed = estimate(store, [(c.state_hash, c.tasks_hash) for c in found])
    assert [(r.run, r.remove) for r in plan.runs] == sorted(by_run.items(), key=lambda kv: -kv[1])
    assert plan.remove_checkpoints == len(found) > 0
    assert (plan.rows_bytes, plan.content_bytes, plan.pieces) == (freed.rows_bytes, freed.content_bytes, freed.pieces)
