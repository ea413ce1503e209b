"""``bench write`` runs its workloads against their peers and reports what the README quotes."""

from __future__ import annotations

import json

import pytest


def test_bench_write_prints_floor_w3_and_w4_with_wall_cpu_and_switches(capsys: pytest.CaptureFixture) -> None:
    from inspector.cli import main
    from inspector.codec import encoder
    unchanged = encoder._ListLayout._unchanged
    assert main(["bench", "write", "--only", "w1,floor,w3,w4", "--steps", "30", "--w3-steps", "4",
                 "--w3-sizes", "0.1", "--w4-steps", "2", "--skip-langgraph", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    floor = result["floor"]
    assert floor["steps"] == 30 and floor["raw_insert"]["median_ms"] > 0
    assert floor["ratio"] == pytest.approx(floor["ours"]["median_ms"] / floor["raw_insert"]["median_ms"])
    parts = floor["parts_us"]       # where a save goes: each part timed, inside the save
    assert 0 < parts["check"] < parts["encode"] < parts["save"] and 0 < parts["compress"] < parts["transaction"]
    assert parts["encode"] + parts["transaction"] < parts["save"]
    (w3,) = result["w3"]
    ours = w3["ours"]
    assert ours["saves"] == 4 and 0 < ours["bytes_per_save"] < 10_000
    assert ours["cpu_median_ms"] > 0 and ours["waits_per_save"] >= 0 and ours["preempted_per_save"] >= 0
    assert [r["changing"] for r in result["w4"]] == [10, 100, 1000, 10000]
    assert all(r["bytes_ratio"] > 0 and r["json_zstd"]["saves"] == 2 for r in result["w4"])
    assert encoder._ListLayout._unchanged is unchanged       # the timers are taken off again
