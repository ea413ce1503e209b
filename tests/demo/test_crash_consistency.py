"""Real demo-agent processes killed with SIGKILL at random points: nothing committed is lost."""

from __future__ import annotations

import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from inspector.demo.steps import PLAN
from inspector.record import Handoff
from inspector.store import create_store, open_store
from inspector.store.native.writer import NativeWriter

AGENT = [sys.executable, "-m", "inspector.demo"]


def _wait_for_checkpoints(store: Path, proc: subprocess.Popen, minimum: int, timeout: float = 60) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None:
        if store.exists():
            try:
                with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as conn:
                    if conn.execute("select count(*) from ci_checkpoints").fetchone()[0] >= minimum:
                        return
            except sqlite3.OperationalError:
                pass
        time.sleep(0.01)


def _check_store(store: Path) -> list:
    with sqlite3.connect(store) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    with open_store(store) as st:
        runs = st.list_runs()
        for run in runs:
            cps = st.list_checkpoints(run.id)
            assert [c.seq for c in cps] == list(range(len(cps))), "no gap, no duplicate"
            for cp in cps:
                snap = st.load(cp.id)
                if cp.kind not in ("input", "final"):
                    assert snap.state["step"] == len(snap.state["log"])
        return runs


@pytest.mark.slow
def test_sigkill_at_random_points_then_resume(tmp_path: Path) -> None:
    store = tmp_path / "crash.db"
    rnd = random.Random(1234)
    killed = 0
    workspace_of: dict[str, Path] = {}    # a tool step reads files an earlier step wrote: a resume needs them
    for i in range(8):
        proc = subprocess.Popen([*AGENT, "--store", str(store), "--seed", "3", "--delay", "0.005",
                                 "--workspace", str(tmp_path / f"ws{i}")],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        existing = 0
        if store.exists():
            with sqlite3.connect(store) as conn:
                existing = conn.execute("select count(*) from ci_checkpoints").fetchone()[0]
        _wait_for_checkpoints(store, proc, existing + rnd.randint(1, 18))
        time.sleep(rnd.uniform(0, 0.02))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            killed += 1
        proc.wait(timeout=30)
        runs = _check_store(store)
        workspace_of.update({r.id: tmp_path / f"ws{i}" for r in runs if r.id not in workspace_of})
    assert killed >= 6

    # resume the last killed run to completion through the recording library's hand-off
    with open_store(store) as st:
        victim = next(r for r in st.list_runs() if r.status == "running" and r.head_seq < len(PLAN))
        head = st.get_checkpoint(f"{victim.id}:-1")
    writable = create_store(store)
    epoch = NativeWriter(writable).take_ownership(victim.id, host=socket.gethostname(), pid=None)
    writable.close()
    env = dict(os.environ, **Handoff(str(store), victim.id, head.id, epoch).to_env())
    done = subprocess.run([*AGENT, "--store", str(store), "--seed", "3", "--workspace", str(workspace_of[victim.id])],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr

    reference = tmp_path / "reference.db"
    subprocess.run([*AGENT, "--store", str(reference), "--seed", "3", "--workspace", str(tmp_path / "ref")],
                   check=True, timeout=120)
    with open_store(store) as st, open_store(reference) as ref:
        resumed_run = st.get_run(victim.id)
        assert resumed_run.status == "completed"
        final = st.load(f"{victim.id}:-1").state
        expected = ref.load(f"{ref.list_runs()[0].id}:-1").state
        assert final == expected
        assert len(final["log"]) == len(PLAN) == len(expected["log"])
        kinds = [c.kind for c in st.list_checkpoints(victim.id)]
        assert kinds.count("resume") == 1 and kinds[-1] == "final"
    _check_store(store)
