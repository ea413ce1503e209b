"""prune sees runs as ``runs`` shows them (a killed agent's run is crashed, not live), and a
checkpoint kept after pruned ones is said anew against the one kept before it."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

from inspector.cli import main
from inspector.record import Checkpointer
from inspector.record.summary import summarize
from inspector.retention.pins import set_pin
from inspector.store import open_store
from tests.retention.stores import chat
from tests.retention.test_native_prune import integrity

AGENT = """
import sys
from inspector.record import Checkpointer
from tests.retention.stores import chat
cp = Checkpointer(sys.argv[1], name=sys.argv[2], heartbeat=0.2)
chat(cp, int(sys.argv[3]))
print(cp.run_id, flush=True)
sys.stdin.read()          # alive (and beating) until killed or told to stop
"""


def start_agent(path: str, name: str, steps: int) -> tuple[subprocess.Popen, str]:
    """A real agent process recording ``steps`` checkpoints with ``Checkpointer``, left
    running; (the process, its run id)."""
    proc = subprocess.Popen([sys.executable, "-c", AGENT, str(path), name, str(steps)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, cwd=Path(__file__).parents[2])
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def shown(path: str, capsys) -> dict[str, str]:
    """Run id -> the status ``runs`` shows."""
    capsys.readouterr()
    assert main(["runs", str(path), "--json"]) == 0
    out = capsys.readouterr().out.strip()
    docs = json.loads(out) if out.startswith("[") else [json.loads(line) for line in out.splitlines()]
    return {d["id"]: d["status"] for d in docs}


def prune_json(capsys, *argv: str) -> dict:
    capsys.readouterr()
    assert main(["prune", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_killed_agents_run_is_pruned_as_crashed_and_a_live_one_is_kept(store_url: str, capsys) -> None:
    path = store_url
    with Checkpointer(path, name="done") as cp:
        chat(cp, 12)
        done = cp.run_id
    killed, dead = start_agent(path, "killed", 12)
    alive, living = start_agent(path, "alive", 12)
    try:
        os.kill(killed.pid, signal.SIGKILL)
        killed.wait()
        with open_store(path) as store:
            assert store.get_run(dead).status == "running"       # as written: nobody finished it
        assert shown(path, capsys) == {done: "completed", dead: "crashed", living: "running"}
        plan = prune_json(capsys, path, "--keep-last", "2")
        by_run = {r["run"]: r for r in plan["runs"]}
        assert set(by_run) == {done, dead} and by_run[dead]["remove"] == 10 and by_run[dead]["status"] == "crashed"
        assert plan["protected"]["live run"] == 10                # the living agent's, only
        crashed = prune_json(capsys, path, "--keep-last", "2", "--status", "crashed")
        assert [r["run"] for r in crashed["runs"]] == [dead] and crashed["remove_checkpoints"] == 10
        assert prune_json(capsys, path, "--keep-last", "2", "--status", "running")["remove_checkpoints"] == 0
        done_plan = prune_json(capsys, path, "--keep-last", "2", "--status", "crashed", "--apply")
        assert done_plan["remove_checkpoints"] == 10
        with open_store(path) as store:
            assert store.get_run(dead).checkpoint_count == 2 and store.get_run(done).checkpoint_count == 12
            assert store.get_run(living).checkpoint_count == 12
        assert shown(path, capsys)[dead] == "crashed"
        assert prune_json(capsys, path, "--keep-last", "1", "--apply")["remove_checkpoints"] == 11 + 1
        with open_store(path) as store:
            assert store.get_run(living).checkpoint_count == 12     # its owner is alive: untouched
    finally:
        for proc in (killed, alive):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    if "://" not in path:
        integrity(Path(path))


def described(path: str, run_id: str) -> list[tuple[int, str, int, int, str, int]]:
    """Each checkpoint of the run: (seq, change, ops, size_delta) as stored, then the change
    and the size delta that comparing it with its parent gives."""
    out = []
    with open_store(path) as store:
        infos = store.list_checkpoints(run_id)
        for parent, info in zip([None, *infos], infos):
            if parent is None:
                out.append((info.seq, info.change, info.ops, info.size_delta, "", info.size))
                continue
            a, b = store.load(parent.id), store.load(info.id)
            out.append((info.seq, info.change, info.ops, info.size_delta,
                        summarize(_top(a.state), _top(b.state), _lens(a.state), _lens(b.state), a.tasks, b.tasks),
                        info.size - parent.size))
    return out


def _top(state: dict) -> dict:
    """A stand-in for a top form: equal exactly where the states' top-level values are."""
    return {k: json.dumps(v, sort_keys=True) for k, v in state.items()}


def _lens(state: dict) -> dict:
    return {k: len(v) for k, v in state.items() if isinstance(v, list)}


def test_a_kept_checkpoint_after_pruned_ones_is_said_anew(store_url: str, capsys) -> None:
    path = store_url
    with Checkpointer(path, name="chat") as cp:
        chat(cp, 30)
        for n in range(5):               # some steps skipped by an interval: ops > 1
            cp.operation(n)
            chat(cp, 1, start=30 + n)
        run_id = cp.run_id
    with open_store(path) as store:
        before = {c.id: c for c in store.list_checkpoints(run_id)}
    assert main(["pin", path, f"{run_id}:10"]) == 0
    assert main(["pin", path, f"{run_id}:20"]) == 0
    capsys.readouterr()
    # #10 and #20 (pinned) and the last 3 are kept: pruned ranges before #10, #20 and #32
    assert prune_json(capsys, path, "--keep-last", "3", "--apply")["remove_checkpoints"] == 35 - 5
    rows = described(path, run_id)
    with open_store(path) as store:
        kept = store.list_checkpoints(run_id)
    assert [before[c.id].seq for c in kept] == [10, 20, 32, 33, 34]
    for (seq, change, ops, delta, said, size_delta), info in zip(rows, kept):
        old = before[info.id]
        if seq == 0:
            assert change == "" and ops == sum(c.ops for c in before.values() if c.seq <= 10) and delta == info.size
            continue
        assert change == said and delta == size_delta, seq      # against its new parent
        parent_seq = before[kept[seq - 1].id].seq       # the ops since it was written
        assert ops == sum(c.ops for c in before.values() if parent_seq < c.seq <= old.seq)
    assert "+10 msg" in rows[1][1] and before[kept[1].id].change == "+1 msg · step"    # its pruned parent's
    assert rows[3][1] == before[kept[3].id].change                  # its parent was kept: as it was
    if "://" not in path:
        integrity(Path(path))


def test_said_anew_as_the_recording_library_says_it(tmp_path: Path, capsys) -> None:
    """Pruning every other checkpoint of a run whose states change in every way a summary
    names (appends to chunked and short lists, a key added and removed, a big map, a long
    text, task transitions) gives each kept checkpoint the change a save after its new parent
    writes: the same run recorded without the pruned states is the reference."""
    states = _varied_states(16)
    full, short = tmp_path / "full.db", tmp_path / "short.db"
    for path, which in ((full, states), (short, states[::2] + states[-1:])):      # (the head is kept)
        with Checkpointer(path, name="varied") as cp:
            for state, tasks in which:
                cp.save(state, kind="step", name="s", tasks=tasks)
    with open_store(full) as store:
        run_id = store.list_runs()[0].id
    for seq in range(0, len(states), 2):
        set_pin(full, f"{run_id}:{seq}", True)
    assert prune_json(capsys, str(full), "--keep-last", "1", "--apply")["remove_checkpoints"] == len(states) // 2 - 1
    with open_store(full) as a, open_store(short) as b:
        got = [(c.change, c.size_delta) for c in a.list_checkpoints(a.list_runs()[0].id)]
        want = [(c.change, c.size_delta) for c in b.list_checkpoints(b.list_runs()[0].id)]
    assert got == want and len(got) == len(states) // 2 + 1
    assert all(ch for ch, _ in got[1:])


def _varied_states(n: int) -> list[tuple[dict, dict]]:
    out = []
    for i in range(n):
        state = {"messages": [f"message {j} " * 20 for j in range(10 + i * 3)],
                 "few": ["x" * 300] * (2 + i % 3), "big": {f"k{j}": i if j == 7 else j for j in range(100)},
                 "text": "a line of text\n" * (1200 + i * 10), "step": i}
        if i % 4 == 1:
            state["extra"] = i
        tasks = {"goal": "g", "tasks": [{"id": "t1", "title": "one", "status": "done" if i > n // 2 else "pending",
                                         "checks": [{"name": "c", "passed": i > n // 2}]}]}
        out.append((state, tasks))
    return out


def varied_store(path: Path, runs: int = 20, steps: int = 150) -> None:
    """Runs of an agent whose messages vary from a few bytes to a few KB (pieces of every
    size: the rows of small ones cost more than their bytes, big ones spill to overflow pages)."""
    rnd = random.Random(7)
    for r in range(runs):
        with Checkpointer(path, name=f"agent {r}") as cp:
            state: dict = {"messages": [], "notes": {}, "step": 0}
            for i in range(steps):
                words = rnd.randrange(2, 700)
                state["messages"].append({"role": "tool", "content": " ".join(rnd.choice(WORDS) for _ in range(words))})
                state["notes"][f"k{i % 40}"] = rnd.random()
                state["step"] = i
                cp.save(state, kind="tool", name="step")


WORDS = ("alpha", "beta", "gamma", "delta", "step", "tool", "result", "the", "of", "42", "ok", "error")


def test_the_dry_runs_estimate_is_what_vacuum_gives_back(tmp_path: Path, capsys) -> None:
    path = tmp_path / "s.db"
    varied_store(path)
    con = sqlite3.connect(path)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")      # what the file holds, not the log of its writing
    con.close()
    plan = prune_json(capsys, str(path), "--keep-last", "10")
    assert plan["remove_checkpoints"] == 20 * 140 and plan["pieces"] > 1000
    done = prune_json(capsys, str(path), "--keep-last", "10", "--apply", "--vacuum")
    freed = done["disk_before"] - done["disk_after"]
    assert abs(plan["bytes"] - freed) <= 0.1 * freed, (plan["bytes"], freed)
    assert abs(done["bytes"] - freed) <= 0.1 * freed, (done["bytes"], freed)     # --apply says it alike
    integrity(path)


def test_a_delete_dry_run_says_what_it_frees(tmp_path: Path, capsys) -> None:
    path = tmp_path / "s.db"
    varied_store(path, runs=3, steps=60)
    with open_store(path) as store:
        doomed = store.list_runs()[0]
    con = sqlite3.connect(path)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    disk = path.stat().st_size
    capsys.readouterr()
    assert main(["delete", str(path), doomed.id]) == 0
    out = capsys.readouterr().out
    assert "Would delete 1 run (60 checkpoints) and " in out and " unreferenced pieces: " in out
    assert "of rows, " in out and " of content). Dry run: nothing was changed" in out
    assert main(["delete", str(path), doomed.id, "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["bytes"] == plan["rows_bytes"] + plan["content_bytes"] and plan["pieces"] > 50
    assert main(["delete", str(path), doomed.id, "--apply", "--json"]) == 0
    done = json.loads(capsys.readouterr().out)
    assert done["pieces"] == plan["pieces"] and done["content_bytes"] == plan["content_bytes"]
    assert main(["prune", str(path), "--keep-last", "1000", "--apply", "--vacuum"]) == 0   # a VACUUM only
    freed = disk - path.stat().st_size
    assert abs(plan["bytes"] - freed) <= 0.1 * freed, (plan["bytes"], freed)
