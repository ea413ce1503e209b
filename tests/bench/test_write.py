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
    # every target of the workloads run, by name (W1's need SqliteSaver, skipped here; W3's needs 50 MB)
    assert list(result["targets"]) == ["W1 <= 2x its floor", "W4 <= json+zstd"]
    assert result["targets"]["W1 <= 2x its floor"] == (floor["ratio"] <= 2)


def test_bench_write_w6_long_text_against_json_zstd(capsys: pytest.CaptureFixture) -> None:
    from inspector.cli import main
    assert main(["bench", "write", "--only", "w6", "--w6-steps", "3", "--w6-sizes", "0.01,0.05", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result) == {"durability", "w6", "targets"}
    assert list(result["targets"]) == ["W6 <= json+zstd"]     # met or not: timing, not tested
    assert [r["mb"] for r in result["w6"]] == [0.01, 0.05]
    for row in result["w6"]:
        for side in ("ours", "json_zstd"):
            assert row[side]["saves"] == 3 and row[side]["bytes_per_save"] > 0
            assert row[side]["median_ms"] > 0 and row[side]["cpu_median_ms"] >= 0
        assert row["time_ratio"] > 0 and row["cpu_ratio"] > 0 and row["bytes_ratio"] > 0
    assert main(["bench", "write", "--only", "w6", "--w6-steps", "3", "--w6-sizes", "0.01,0.05"]) == 0
    out = capsys.readouterr().out
    assert "W6 long text, ~1 KB edited per save" in out and "growth 0.01 -> 0.05 MB" in out
    assert "target (<= json+zstd time and bytes at every size): " in out     # met or MISSED: timing, not tested
    assert "\ntargets: W6 <= json+zstd " in out


def test_bench_write_w6_list_the_text_in_an_item_of_a_long_list(capsys: pytest.CaptureFixture) -> None:
    from inspector.bench._write_shapes import W6_RECORDS, w6_list_state, w6_list_steps
    from inspector.cli import main
    state = w6_list_state(0.05)
    notes = state["notes"]
    assert len(notes) == W6_RECORDS and len(notes[W6_RECORDS // 2]["body"]) >= 50_000
    bodies = [s["notes"][W6_RECORDS // 2]["body"] for s in w6_list_steps(state, 3)()]
    assert len(set(bodies)) == 3 and notes[W6_RECORDS // 2]["body"] not in bodies    # edited, the original left alone
    assert main(["bench", "write", "--only", "w6l", "--w6-steps", "3", "--w6-sizes", "0.05", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["w6l"]
    assert row["ours"]["saves"] == row["json_zstd"]["saves"] == 3 and row["bytes_ratio"] > 0
    assert main(["bench", "write", "--only", "w6l", "--w6-steps", "3", "--w6-sizes", "0.05"]) == 0
    assert "W6-list long text as the body of one of 1,000 notes in a list" in capsys.readouterr().out


def test_bench_write_w6_map_edits_one_file_of_a_map_by_path(capsys: pytest.CaptureFixture) -> None:
    from inspector.bench._write_shapes import W6_RECORDS, w6_map_state, w6_map_steps
    from inspector.cli import main
    state = w6_map_state(0.05)
    files = state["files"]
    path = f"src/file_{W6_RECORDS // 2:04}.py"
    assert len(files) == W6_RECORDS and len(files[path]) >= 50_000
    texts = [s["files"][path] for s in w6_map_steps(state, 3)()]
    assert len(set(texts)) == 3 and files[path] not in texts    # edited, the original left alone
    assert main(["bench", "write", "--only", "w6m", "--w6-steps", "3", "--w6-sizes", "0.05", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    (row,) = out["w6m"]
    assert row["ours"]["saves"] == row["json_zstd"]["saves"] == 3 and row["bytes_ratio"] > 0
    assert "W6-map <= json+zstd" in out["targets"]
    assert main(["bench", "write", "--only", "w6m", "--w6-steps", "3", "--w6-sizes", "0.05"]) == 0
    assert "W6-map long text as the content of one of 1,000 files in a map by path" in capsys.readouterr().out


def test_bench_write_w7_a_window_over_a_history(capsys: pytest.CaptureFixture) -> None:
    from inspector.bench._write_shapes import w7_state, w7_steps
    from inspector.cli import main
    state = w7_state(0.05)
    first = state["messages"]
    states = [dict(s, messages=list(s["messages"])) for s in w7_steps(state, 3)()]
    assert [len(s["messages"]) for s in states] == [len(first)] * 3 and state["messages"] is first
    assert states[2]["messages"][:-3] == first[3:]         # the oldest dropped, new ones appended
    assert main(["bench", "write", "--only", "w7", "--w7-steps", "3", "--w7-sizes", "0.05", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["w7"]
    assert row["ours"]["saves"] == row["json_zstd"]["saves"] == 3 and row["bytes_ratio"] > 0
    assert main(["bench", "write", "--only", "w7", "--w7-steps", "3", "--w7-sizes", "0.05"]) == 0
    out = capsys.readouterr().out
    assert "W7 a window over a message history" in out and "target (<= json+zstd time and bytes" in out


def test_bench_write_w3_keys_removes_one_file_and_adds_one_a_save(capsys: pytest.CaptureFixture) -> None:
    from inspector.bench._write_shapes import w3_key_steps, w3_state
    from inspector.cli import main
    state = w3_state(0.05)
    names = [sorted(s) for s in w3_key_steps(state, 3)()]
    assert all(len(n) == len(state) for n in names) and len(state) == 50
    assert names[2][:3] == ["added-0000000", "added-0000001", "added-0000002"]
    assert len(set(state) - set(names[2])) == 3             # three of the first files gone
    assert main(["bench", "write", "--only", "w3k", "--w3-steps", "3", "--w3-sizes", "0.05", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["w3k"]
    assert row["ours"]["saves"] == row["json_zstd"]["saves"] == 3 and row["bytes_ratio"] > 0
    assert main(["bench", "write", "--only", "w3k", "--w3-steps", "3", "--w3-sizes", "0.05"]) == 0
    assert "W3-keys flat dict, one ~1 KB file removed and one added per save" in capsys.readouterr().out


def test_w6_text_and_its_edits() -> None:
    from inspector.bench._write_shapes import w6_state, w6_steps
    state = w6_state(0.1)
    doc = state["doc"]
    assert set(state) == {"doc", "step", "title"} and 100_000 <= len(doc) < 100_200 and doc.endswith("\n")
    lines = doc.splitlines()
    assert all(20 <= len(line) + 1 <= 100 for line in lines if line) and 0 < lines.count("") < len(lines) // 5
    docs = [(s["step"], s["doc"]) for s in w6_steps(state, 3)()]
    assert docs == [(s["step"], s["doc"]) for s in w6_steps(state, 3)()]       # the same edits each run
    assert [step for step, _ in docs] == [1, 2, 3] and state["doc"] is doc      # the original is left alone
    before = doc
    for i, (_, after) in enumerate(docs):
        assert after.endswith("\n") and after != before
        if i == 2:                                      # ~1 KB appended at the end
            assert after.startswith(before) and 1_000 <= len(after) - len(before) <= 1_100
            continue
        # ~1 KB inserted at, or one line replaced by it, a line in the middle half
        head = next(k for k, (a, b) in enumerate(zip(before, after, strict=False)) if a != b)
        assert len(before) // 5 < head < 4 * len(before) // 5 and after.endswith(before[-1_000:])
        grown = len(after) - len(before)
        if i == 0:                                      # inserted: all of the old text is still there
            assert 1_000 <= grown <= 1_100 and after.endswith(before[head:])
        else:                                           # one line (<= 100 characters) replaced
            assert 900 <= grown <= 1_100
        before = after
