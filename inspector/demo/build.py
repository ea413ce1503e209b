"""Build the demo store by really running the demo agent as subprocesses."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable

from inspector.demo.paths import default_store_path  # noqa: F401  (re-exported)
from inspector.errors import StoreError
from inspector.store import open_store


@dataclass(frozen=True)
class DemoRun:
    """One agent process of the demo: its seed and the fault it simulates."""

    label: str
    args: tuple[str, ...]
    detached: bool = False


DEMO_RUNS = (
    DemoRun("completed", ("--seed", "1", "--delay", "0.02")),
    DemoRun("completed, approved at once", ("--seed", "2", "--approve-first", "--delay", "0.02")),
    DemoRun("completed, snapshot every 3 operations", ("--seed", "4", "--interval", "3", "--delay", "0.02")),
    DemoRun("crashed (SIGKILL before step 9)", ("--seed", "5", "--crash-at", "9", "--delay", "0.02")),
    DemoRun("failed (tool error in step 12)", ("--seed", "7", "--fail-at", "12", "--delay", "0.02")),
    DemoRun("review changes requested, waiting", ("--seed", "3", "--stop-at", "16", "--delay", "0.02")),
    DemoRun("stuck (hangs before step 12)", ("--seed", "6", "--hang-at", "12", "--hang-for", "900",
                                              "--heartbeat", "1"), detached=True),
)


def agent_command(store: Path, *args: str) -> list[str]:
    """The argv that runs the demo agent on ``store``."""
    return [sys.executable, "-m", "inspector.demo", "--store", str(store), *args]


def _wait_for_hang(store: Path, proc: subprocess.Popen, seqs: int, timeout: float = 60.0) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise StoreError(f"The demo agent exited early with code {proc.returncode}.")
        with open_store(store) as st:
            if any(r.head_seq >= seqs - 1 and r.labels.get("seed") == 6 for r in st.list_runs()):
                return
        time.sleep(0.1)
    raise StoreError("The demo agent did not reach its hang point in time.")


def stop_agents_of(store: Path) -> None:
    """Stop demo agents still running on ``store`` (a hung one lives 15 minutes)."""
    import psutil

    for proc in psutil.process_iter(["pid", "cmdline"]):
        cmd = proc.info.get("cmdline") or []
        if proc.pid != os.getpid() and "inspector.demo" in cmd and str(store) in cmd:
            try:
                proc.kill()
                proc.wait(timeout=5)
            except (psutil.Error, OSError):
                pass


def build_demo_store(store: Path, *, log: Callable[[str], None] = print,
                     include_stuck: bool = True) -> Path:
    """Create ``store`` from scratch with completed, crashed, failed, waiting, stuck and forked runs."""
    store = Path(store).expanduser().resolve()
    store.parent.mkdir(parents=True, exist_ok=True)
    stop_agents_of(store)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{store}{suffix}").unlink(missing_ok=True)
    from inspector.store import create_store
    create_store(store).close()
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    waiting: list[tuple[DemoRun, subprocess.Popen]] = []
    for spec in DEMO_RUNS:
        if spec.detached and not include_stuck:
            continue
        log(f"running demo agent: {spec.label}")
        out = subprocess.DEVNULL
        proc = subprocess.Popen(agent_command(store, *spec.args), env=env, stdout=out,
                                stderr=out, start_new_session=spec.detached)
        if spec.detached:
            _wait_for_hang(store, proc, seqs=12)
        else:
            waiting.append((spec, proc))
            if len(waiting) >= 2:
                _finish(waiting.pop(0))
    for item in waiting:
        _finish(item)
    _fork_demo(store, log)
    return store


def _finish(item: tuple[DemoRun, subprocess.Popen]) -> None:
    spec, proc = item
    proc.wait(timeout=120)


def _fork_demo(store: Path, log: Callable[[str], None]) -> None:
    from inspector.resume.fork import fork
    from inspector.store import create_store

    with create_store(store) as st:
        source = next(r for r in st.list_runs() if r.labels.get("seed") == 1 and not r.parent_run)
        snap = st.load(f"{source.id}:8")
        edited = dict(snap.state, approve_first=True)
        log("forking the first run at #8 with approve_first = true")
        child = fork(st, snap.info.id, state=edited, reason="try the draft without the TODO marker")
        log("resuming the fork to completion")
        from inspector.resume.resume import resume_checkpoint
        resume_checkpoint(st, f"{child.id}:-1", wait=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
