"""Counters of a native store that contradict what they count (found by a mutation fuzzer): a
run counting -2 checkpoints with its head at -9, a score of 7 passed of -3, a checkpoint of
-100 bytes and -1 operations. They are damage, flagged on their row and not shown as values;
a run's checkpoint count and head come from its checkpoint rows where they disagree, so that
every readable checkpoint can be reached (RUN:N, RUN:-1, the window's ``--select``)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from inspector.record import Checkpointer
from inspector.store import open_reader, open_store
from inspector.store.base import CHECKPOINT_ROW, RUN_ROW

TASKS = {"goal": "g", "tasks": [{"id": "t1", "title": "one", "status": "in_progress",
                                 "checks": [{"name": "c", "passed": False}]}]}
OPENERS = {"reader": open_reader, "store": open_store}    # the read commands' reader, the window's store
CONFIG_DIR = tempfile.mkdtemp(prefix="ci-test-config-")


def _store(path: Path, *statements: str) -> str:
    """A run "base" of three checkpoints written by the recording library, then ``statements``
    run on the file; the run's id."""
    with Checkpointer(path, name="base", agent="a") as cp:
        for n in range(3):
            cp.save({"messages": ["m"] * (n + 1), "n": n}, kind="tool", name="s", tasks=TASKS)
        run_id = cp.run_id
    with sqlite3.connect(path) as conn:
        for sql in statements:
            conn.execute(sql)
    conn.close()
    return run_id


IMPOSSIBLE = ("UPDATE ci_runs SET checks_passed=7, checks_total=-3, checkpoint_count=-2, head_seq=-9",
              "UPDATE ci_checkpoints SET size=-100, size_delta=-5, ops=-1, checks_passed=9, checks_total=2 "
              "WHERE seq=1")


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "XDG_CONFIG_HOME": CONFIG_DIR, "QT_QPA_PLATFORM": "offscreen"}
    return subprocess.run([sys.executable, "-m", "inspector", *args], capture_output=True, text=True, env=env,
                          timeout=120)


@pytest.mark.parametrize("opener", OPENERS.values(), ids=OPENERS.keys())
def test_impossible_run_counters_are_damage_and_its_rows_give_the_count(tmp_path: Path, opener: Callable) -> None:
    path = tmp_path / "counts.db"
    run_id = _store(path, *IMPOSSIBLE)
    with opener(str(path)) as store:
        run = store.get_run(run_id)
        (listed,) = store.list_runs()
        (row,) = store.run_rows().rows
        reached = [store.get_checkpoint(f"{run_id}:{n}").seq for n in (0, 1, 2, -1)]
    assert (run.checkpoint_count, run.head_seq, run.checks_passed, run.checks_total) == (3, 2, 0, 0)
    assert run.damaged == ("checkpoint_count is negative (-2); head_seq is out of range (-9); checks_passed is 7 "
                           "of checks_total -3, not a score; 3 checkpoints are stored, the last #2")
    assert listed == run
    shown = dict(zip(RUN_ROW, row, strict=False))
    assert (shown["checkpoint_count"], shown["checks_passed"], shown["checks_total"]) == (3, 0, 0)
    assert shown["damaged"] == run.damaged
    assert reached == [0, 1, 2, 2]


@pytest.mark.parametrize("opener", OPENERS.values(), ids=OPENERS.keys())
def test_impossible_checkpoint_counters_are_damage_shown_as_zero(tmp_path: Path, opener: Callable) -> None:
    path = tmp_path / "counts.db"
    run_id = _store(path, *IMPOSSIBLE)
    with opener(str(path)) as store:
        rows = [dict(zip(CHECKPOINT_ROW, r, strict=False)) for r in store.checkpoint_rows(run_id)]
        infos = store.list_checkpoints(run_id)
        one = store.get_checkpoint(f"{run_id}:1")
        snap = store.load(f"{run_id}:1")
    why = "size is negative (-100); ops is negative (-1); checks_passed is 9 of checks_total 2, not a score"
    assert [r["damaged"] for r in rows] == ["", why, ""]
    assert [(r["size"], r["size_delta"], r["ops"], r["checks_passed"], r["checks_total"]) for r in rows][1] == \
        (0, -5, 0, 0, 0)             # a state may shrink: a negative size_delta is no damage
    assert [(r["checks_passed"], r["checks_total"]) for r in rows][::2] == [(0, 1), (0, 1)]
    assert infos[1] == one and (one.size, one.ops, one.checks_passed, one.checks_total, one.damaged) == \
        (0, 0, 0, 0, why)
    assert snap.problems == (f"checkpoint row: {why}",)


@pytest.mark.parametrize("opener", OPENERS.values(), ids=OPENERS.keys())
def test_a_count_below_its_rows_is_damage_and_every_checkpoint_is_reached(tmp_path: Path, opener: Callable) -> None:
    path = tmp_path / "low.db"
    run_id = _store(path, "UPDATE ci_runs SET checkpoint_count=1")
    with opener(str(path)) as store:
        run = store.get_run(run_id)
        (listed,) = store.list_runs()
        (row,) = store.run_rows().rows
        reached = [store.get_checkpoint(f"{run_id}:{n}").seq for n in (2, -1, -3)]
    assert (run.checkpoint_count, run.head_seq) == (3, 2)
    assert run.damaged == "checkpoint_count is 1 but head_seq is 2; 3 checkpoints are stored, the last #2"
    assert listed == run and row[RUN_ROW.index("checkpoint_count")] == 3
    assert reached == [2, 2, 0]


def test_one_run_is_checked_against_its_rows_even_when_its_counters_agree(tmp_path: Path) -> None:
    """Count and head that agree with each other but not with the rows (a listing of every
    run does not count each one's rows; reading one run does)."""
    path = tmp_path / "agreeing.db"
    run_id = _store(path, "UPDATE ci_runs SET checkpoint_count=1, head_seq=0")
    with open_reader(str(path)) as store:
        run = store.get_run(run_id)
        head = store.get_checkpoint(f"{run_id}:-1")
    assert (run.checkpoint_count, run.head_seq, head.seq) == (3, 2, 2)
    assert run.damaged == "checkpoint_count is 1 and head_seq 0, but 3 checkpoints are stored, the last #2"


@pytest.mark.parametrize("opener", OPENERS.values(), ids=OPENERS.keys())
def test_good_counters_are_no_damage(tmp_path: Path, opener: Callable) -> None:
    path = tmp_path / "good.db"
    run_id = _store(path)
    with Checkpointer(path, name="empty", agent="a") as cp:
        empty = cp.run_id
    with opener(str(path)) as store:
        runs = [store.get_run(run_id), store.get_run(empty), *store.list_runs()]
        rows = store.checkpoint_rows(run_id)
    assert [(r.checkpoint_count, r.head_seq, r.damaged) for r in runs[:2]] == [(3, 2, ""), (0, -1, "")]
    assert not any(r.damaged for r in runs) and not any(r[CHECKPOINT_ROW.index("damaged")] for r in rows)


def test_the_commands_show_the_counted_run_and_flag_the_damage(tmp_path: Path) -> None:
    path = tmp_path / "counts.db"
    run_id = _store(path, *IMPOSSIBLE)
    runs = _cli("runs", str(path))
    assert runs.returncode == 0, runs.stderr
    table, damaged = runs.stdout.splitlines()[1:]
    assert table.split()[4] == "3" and table.split()[-1] == "0/0"
    assert damaged.startswith(f"damaged: {run_id}: checkpoint_count is negative (-2)")
    listing = _cli("checkpoints", str(path), "base")
    assert listing.returncode == 0, listing.stderr
    assert listing.stdout.splitlines()[2].split()[6:10] == ["0", "B", "0", "0/0"]
    assert listing.stdout.splitlines()[-1].startswith("damaged: #1: size is negative (-100)")
    for ref, seq in (("base", 2), ("base:-1", 2), ("base:1", 1)):
        show = _cli("show", str(path), ref)
        assert show.returncode == 0, show.stderr
        assert show.stdout.splitlines()[:2] == [
            f"checkpoint {run_id}:{seq}  (id {seq + 1})  tool s",
            f"run {run_id} 'base': completed, 3 checkpoints" + ("" if seq == 2 else f", head {run_id}:2")]
        # the run's damage too (only runs and the window said it)
        assert "damaged: run: checkpoint_count is negative (-2)" in show.stdout
    as_json = _cli("show", str(path), "base", "--json")
    assert json.loads(as_json.stdout)["run"]["damaged"].startswith("checkpoint_count is negative (-2)")


def test_usage_leaves_an_impossible_size_out_of_its_totals(tmp_path: Path) -> None:
    path = tmp_path / "counts.db"
    _store(path, *IMPOSSIBLE)
    with open_store(path) as store:
        sizes = [c.size for c in store.list_checkpoints(store.list_runs()[0].id)]
    done = _cli("usage", str(path))
    assert done.returncode == 0, done.stderr
    # (it said "states decode to -64 B": the -100 of the damaged row added in)
    assert f"3 checkpoints in 1 run; states decode to {sizes[0] + sizes[2]} B," in done.stdout
    assert "1 checkpoint row holds values of the wrong type" in done.stdout


@pytest.mark.parametrize("statements,select", [(IMPOSSIBLE, "base:1"), (("UPDATE ci_runs SET checkpoint_count=1",),
                                                                        "base:1")], ids=["impossible", "low"])
def test_the_window_opens_on_any_readable_checkpoint(tmp_path: Path, statements: tuple, select: str) -> None:
    path = tmp_path / "store.db"
    _store(path, *statements)
    shot = tmp_path / "window.png"
    result = _cli("open", str(path), "--select", select, "--no-live", "--screenshot", str(shot))
    assert result.returncode == 0, result.stderr
    assert shot.stat().st_size > 0


def test_a_run_is_counted_from_its_rows_on_each_backend(store_url: str) -> None:
    import sqlalchemy as sa

    from inspector.store.engine import make_engine, parse_target

    with Checkpointer(store_url, name="base", agent="a") as cp:
        for n in range(3):
            cp.save({"n": n}, kind="tool", name="s")
        run_id = cp.run_id
    engine = make_engine(parse_target(store_url), readonly=False)
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE ci_runs SET checkpoint_count = -2, head_seq = -9"))
    engine.dispose()
    with open_store(store_url) as store:
        run = store.get_run(run_id)
        (listed,) = store.list_runs()
        head = store.get_checkpoint(f"{run_id}:-1")
    assert (run.checkpoint_count, run.head_seq, head.seq) == (3, 2, 2) and listed == run
    assert run.damaged == ("checkpoint_count is negative (-2); head_seq is out of range (-9); "
                           "3 checkpoints are stored, the last #2")
