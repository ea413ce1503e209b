"""``checkpoint-inspector diff`` run for real in a subprocess on a store written by the recorder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .conftest import Lineage

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "inspector", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_diff_prints_summary_tasks_then_changes(lineage_master: Lineage) -> None:
    run = lineage_master.original
    done = cli("diff", str(lineage_master.path), f"{run}:2", f"{run}:3")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert f"diff {run}:2" in out.splitlines()[0]
    assert "summary: 1 task done, checks 3/4 → 4/4 · state: +1 msg, 2 changed" in out
    assert out.index("tasks (") < out.index("changes (")
    assert "~ task 'draft': in_progress → done" in out
    assert "+ messages[3] = assistant: 'step 3: words and more words" in out and "~ step: 2 → 3 (+1)" in out
    assert "{+Paragraph 6" in out     # the line diff of the draft


def test_diff_json_for_scripts(lineage_master: Lineage) -> None:
    done = cli("diff", str(lineage_master.path), f"{lineage_master.original}:5", f"{lineage_master.fork}:0",
               "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["ancestor"]["ref"] == f"{lineage_master.original}:2"
    assert data["three_way"]["both_changed"] == [["messages", 3]]
    ops = {(c["op"], c["display"]) for c in data["changes"]}
    assert ("changed", "plan") in ops
    assert all({"path", "display", "op"} <= c.keys() for c in data["changes"])


def test_fork_against_original_says_where_the_branches_diverged(lineage_master: Lineage) -> None:
    done = cli("diff", str(lineage_master.path), f"{lineage_master.original}:5", f"{lineage_master.fork}:0")
    assert done.returncode == 0, done.stderr
    assert f"The branches diverged after {lineage_master.original}:2." in done.stdout
    assert "since the common ancestor" in done.stdout and "both: messages[3]" in done.stdout


def test_bad_reference_exits_2_with_one_sentence(lineage_master: Lineage) -> None:
    done = cli("diff", str(lineage_master.path), f"{lineage_master.original}:0", "nosuchrun:3")
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("checkpoint-inspector: ") and "Traceback" not in done.stderr


def test_missing_store_exits_2(tmp_path: Path) -> None:
    done = cli("diff", str(tmp_path / "nope.db"), "a:0", "a:1")
    assert done.returncode == 2 and "does not exist" in done.stderr


def test_exit_code_option(lineage_master: Lineage) -> None:
    run = lineage_master.original
    same = cli("diff", str(lineage_master.path), f"{run}:1", f"{run}:1", "--exit-code")
    assert same.returncode == 0 and "summary: no changes" in same.stdout
    differ = cli("diff", str(lineage_master.path), f"{run}:1", f"{run}:2", "--exit-code")
    assert differ.returncode == 1


def test_items_added_together_print_as_one_line(tmp_path: Path) -> None:
    from inspector.record import Checkpointer

    store = tmp_path / "s.db"
    history = [{"role": "user", "content": f"question {i}"} for i in range(30)]
    tools = [{"role": "tool", "name": "search", "result": f"hit {i}"} for i in range(10)]
    with Checkpointer(store, name="grouped", heartbeat=60) as cp:
        cp.save({"messages": history}, force=True)
        cp.save({"messages": history[:20] + history[25:] + tools}, force=True)   # 5 cut, 10 appended
        run = cp.run_id
    done = cli("diff", str(store), f"{run}:0", f"{run}:1")
    assert done.returncode == 0, done.stderr
    assert "changes (15):" in done.stdout
    assert "  - messages[20…24]: 5 items removed, first was {'role': 'user', 'content': 'question 20'}" in done.stdout
    assert "  + messages[25…34]: 10 items added, first {'role': 'tool', 'name': 'search', 'result': 'hit 0'}" \
        in done.stdout
    limited = cli("diff", str(store), f"{run}:0", f"{run}:1", "--limit", "1")
    assert "… 10 more (use --limit 0 or --json)" in limited.stdout
    data = json.loads(cli("diff", str(store), f"{run}:0", f"{run}:1", "--json").stdout)
    assert len(data["changes"]) == 15      # scripts still get one change per item


def test_a_malformed_list_chunk_is_one_sentence_and_exit_2(tmp_path: Path) -> None:
    import sqlite3

    import msgpack

    from inspector.record import Checkpointer
    from inspector.store import open_store
    from inspector.codec import ChunkedList, digest_of, pack, unpack

    store = tmp_path / "s.db"
    with Checkpointer(store, name="bad chunk", heartbeat=60) as cp:
        cp.save({"facts": [{"id": i, "text": f"fact {i}"} for i in range(200)]}, force=True)
        second = cp.save({"facts": [{"id": i, "text": f"fact {i}!"} for i in range(200)]}, force=True)
        run = cp.run_id
    # a chunk whose frames are not bins, stored under its own (correct) digest, and a root naming it
    bad = msgpack.packb(msgpack.ExtType(3, msgpack.packb([1, 2, 3])))
    with open_store(store) as st:
        root = unpack(st.read_raw_pieces([second.state_hash])[second.state_hash])
    chunks = list(root["facts"].chunks)
    chunks[0] = chunks[0]._replace(digest=digest_of(bad), count=3)
    new_root = pack({"facts": ChunkedList(tuple(chunks))})
    with sqlite3.connect(store) as conn:
        for raw in (bad, new_root):
            conn.execute("insert or ignore into ci_blobs (hash, codec, size, data) values (?, 0, ?, ?)",
                         (digest_of(raw), len(raw), raw))
        conn.execute("update ci_checkpoints set state_hash = ? where id = ?", (digest_of(new_root), second.id))
    for args in (("diff", str(store), f"{run}:0", f"{run}:1"), ("show", str(store), f"{run}:1")):
        done = cli(*args)
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2 and len(lines) == 1, done.stderr
        assert "list chunk is malformed" in lines[0] and "Traceback" not in done.stderr


def test_diff_json_of_a_huge_string_writes_its_segments_not_both_strings(tmp_path: Path) -> None:
    from inspector.diff.text import HUGE_TEXT
    from inspector.record import Checkpointer
    text = "".join(f"line {i} of a long log\n" for i in range(HUGE_TEXT // 20))
    changed = text[:-500] + "a different ending\n"
    path = tmp_path / "huge.db"
    with Checkpointer(path, name="huge", agent="test") as recorder:
        for value in (text, changed):
            recorder.save({"log": value, "note": "short text that is long enough to get a text diff " * 2},
                          force=True)
        run = recorder.run_id
    done = cli("diff", str(path), f"{run}:0", f"{run}:1", "--json")
    assert done.returncode == 0, done.stderr
    assert len(done.stdout) < 50_000          # not two copies of a 1 MB string
    (change,) = json.loads(done.stdout)["changes"]
    assert change["display"] == "log" and change["op"] == "changed"
    assert "old" not in change and "new" not in change
    assert (change["old_length"], change["new_length"]) == (len(text), len(changed))
    detail = change["detail"]
    assert detail["kind"] == "text" and detail["elided"] is True
    kept = sum(len(t) if tag != "…" else int(t) for tag, t in detail["segments"] if tag != "+")
    assert kept == len(text)
    assert detail["segments"][-2:] == [["+", "a different ending"], ["=", "\n"]]    # the shared line end unchanged


def test_diff_json_is_written_change_by_change(tmp_path, monkeypatch) -> None:
    """`diff --json` of a million changes held every change's JSON object and the whole text
    at once (3.7 GB, a MemoryError under a 2 GB limit: found by fuzzing): it writes them one by
    one, the same bytes as encoding the whole result, in a fraction of the memory."""
    import contextlib
    import io
    import random
    import tracemalloc

    from inspector.commands._common import print_json, print_json_with_list
    from inspector.diff import diff_checkpoints, to_json
    from inspector.diff.serialize import change_json
    from inspector.record import Checkpointer
    from inspector.store import open_store
    rng = random.Random(3)
    path = tmp_path / "list.db"
    with Checkpointer(path, name="list") as cp:
        cp.save({"l": list(range(20_000)), "empty": []})
        cp.save({"l": [rng.random() for _ in range(20_000)], "empty": [], "s": "\u2028 \x1b"})
    with open_store(path) as store:
        result = diff_checkpoints(store, f"{cp.run_id}:0", f"{cp.run_id}:1")

    def written(write) -> tuple[str, int]:
        out = io.StringIO()
        tracemalloc.start()
        with contextlib.redirect_stdout(out):
            write()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return out.getvalue(), peak
    whole, whole_peak = written(lambda: print_json(to_json(result)))
    streamed, peak = written(lambda: print_json_with_list(to_json(result, changes=False), "changes",
                                                          map(change_json, result.changes)))
    assert streamed == whole and len(result.changes) > 20_000
    assert peak < whole_peak / 4, (peak, whole_peak)
    nothing, _ = written(lambda: print_json_with_list({"a": 1, "changes": [], "z": 2}, "changes", []))
    assert nothing == '{\n  "a": 1,\n  "changes": [],\n  "z": 2\n}\n'


def test_diff_json_says_the_types_of_a_value_that_prints_the_same(tmp_path: Path) -> None:
    from inspector.record import Checkpointer

    path = tmp_path / "s.db"
    with Checkpointer(path, name="typed") as cp:
        cp.save({"v": "NaN", "w": "Infinity", "b": "6162", "n": 1, "s": "same"})
        cp.save({"v": float("nan"), "w": float("inf"), "b": b"ab", "n": 2, "s": "other"})
        run = cp.run_id
    done = cli("diff", str(path), f"{run}:0", f"{run}:1", "--json")
    assert done.returncode == 0, done.stderr
    changes = {c["display"]: c for c in json.loads(done.stdout)["changes"]}
    # "NaN" → NaN printed {"old": "NaN", "new": "NaN"} and nothing else: a change that looked like none
    assert changes["v"]["old"] == changes["v"]["new"] == "NaN"
    assert (changes["v"]["old_type"], changes["v"]["new_type"]) == ("str", "float")
    assert (changes["w"]["old_type"], changes["w"]["new_type"]) == ("str", "float")
    assert (changes["b"]["old"], changes["b"]["new"], changes["b"]["new_type"]) == ("6162", "6162", "bytes")
    assert "old_type" not in changes["n"] and "old_type" not in changes["s"]     # same type: as before
