"""``bench cli``: each read command in a fresh process beside raw sqlite3, taking turns, with
median and minimum of wall and CPU time (a small store: the figures are not checked, the
shape of the report and the fairness of the set-up are)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.bench import cli as bench_cli

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = ["runs", "runs --json", "checkpoints", "checkpoints --json", "show"]


def _bench(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONPATH": str(ROOT)}   # its own cached store
    return subprocess.run([sys.executable, "-m", "inspector", "bench", "cli", "--runs", "60", "--checkpoints", "600",
                           "--repeat", "2", *extra], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300,
                          check=False)


def test_bench_cli_reports_median_and_min_of_wall_and_cpu_for_both_sides(tmp_path: Path) -> None:
    proc = _bench(tmp_path, "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert list(result["commands"]) == COMMANDS and result["repeat"] == 2
    for row in result["commands"].values():
        for side in ("ours_ms", "raw_ms"):
            for kind in ("wall", "cpu"):
                stats = row[side][kind]
                assert 0 < stats["min"] <= stats["median"]
        assert row["ratio"]["cpu"]["median"] == pytest.approx(row["ours_ms"]["cpu"]["median"]
                                                              / row["raw_ms"]["cpu"]["median"])
    diff = result["diff"]
    assert diff["overhead_ms"]["wall"]["median"] == pytest.approx(
        diff["fresh_ms"]["wall"]["median"] - diff["in_process_ms"]["wall"]["median"])
    assert diff["python_startup_ms"]["cpu"]["min"] > 0
    assert set(result["load_average"]) == {"before", "after"}


def test_bench_cli_prints_one_table_and_the_diff_lines(tmp_path: Path) -> None:
    proc = _bench(tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    header = next(n for n, line in enumerate(lines) if "wall ms ours / raw" in line)
    assert [line.split()[0] for line in lines[header + 1:header + 6]] == ["runs", "runs", "checkpoints",
                                                                         "checkpoints", "show"]
    assert sum(line.startswith("diff ") for line in lines) == 2 and "ours and raw taking turns" in proc.stdout


def test_a_command_that_leaves_a_log_beside_the_store_stops_the_bench(tmp_path: Path) -> None:
    # the raw peer opening the file plainly (mode=ro) leaves -wal and -shm: ours would then be
    # timed reading a store a writer is at work on, so the bench refuses to go on
    import sqlite3
    store = tmp_path / "s.db"
    with sqlite3.connect(store) as conn:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("CREATE TABLE t (x)")
    conn.close()
    bench_cli._check_clean(store)
    plain = [sys.executable, "-c", "import sqlite3, sys; c = sqlite3.connect('file:' + sys.argv[1] + '?mode=ro', "
             "uri=True); c.execute('SELECT * FROM t').fetchall()", str(store)]
    with pytest.raises(SystemExit, match="left"):
        bench_cli._times([plain], 1, store)
    for side in ("-wal", "-shm"):
        (tmp_path / f"s.db{side}").unlink(missing_ok=True)
    immutable = [plain[0], plain[1], plain[2].replace("?mode=ro'", "?mode=ro&immutable=1'"), plain[3]]
    assert bench_cli._times([immutable], 1, store)[0]["cpu"]["min"] > 0
