"""``checkpoint-inspector bench diff`` runs end to end on tiny states and reports every figure."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from inspector.bench.diff import history_pair, nested_pair, tasks_pair
from inspector.diff import apply, diff_tasks, diff_values

ROOT = Path(__file__).resolve().parents[2]


def test_workloads_are_what_they_claim() -> None:
    a, b = history_pair(20_000)
    assert b["messages"][:-1] == a["messages"] and len(b["messages"]) == len(a["messages"]) + 1
    a, b, edited = nested_pair(200_000, fraction=0.01)
    changes = diff_values(a, b)
    # a fact whose id was edited is another fact: one removed and one added, its edits with it
    renamed = [(old, new) for agent in a["agents"] for old, new in zip(
        a["agents"][agent]["memory"]["facts"], b["agents"][agent]["memory"]["facts"], strict=True)
        if old["id"] != new["id"]]
    inside = sum(len(diff_values(old, new)) for old, new in renamed)
    assert len(changes) == edited - inside + 2 * len(renamed) and edited > 10 and apply(a, changes) == b
    a, b = tasks_pair(40, 10)
    moved = {c.task_id for c in diff_tasks(a, b)}
    assert len(moved) == 10


def test_bench_diff_json_in_a_subprocess() -> None:
    done = subprocess.run([sys.executable, "-m", "inspector", "bench", "diff", "--scale", "0.01",
                           "--repeat", "1", "--json"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert [row["pair"][0] for row in report["pairs"]] == ["1", "2", "3"]
    for row in report["pairs"]:
        assert row["changes"] > 0
        for way in ("plain", "pieces", "store", "warm"):
            assert row[f"{way}_ms"] > 0 and row[f"{way}_ratio"] > 0
            assert 0 < row[f"{way}_best_ms"] <= row[f"{way}_ms"]
        assert row["deepdiff_ms"] > 0
    assert report["pairs"][0]["changes"] == 2     # one message and the step counter
    assert {t["target"][:6] for t in report["targets"]} == {"pair 1", "pair 2"}
    assert len(report["targets"]) == 6 and all(isinstance(t["met"], bool) for t in report["targets"])
    nested = report["pairs"][1]
    assert report["targets"][1]["met"] == (nested["store_ratio"] >= 10)
