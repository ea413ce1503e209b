"""prune --apply killed with SIGKILL at random moments, and pruning beside live writers."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from inspector.record import Checkpointer
from inspector.resume.fork import fork
from inspector.retention.api import apply_prune
from inspector.retention.rules import make_rules
from inspector.store import open_store
from tests.retention.stores import chat
from tests.retention.test_native_prune import integrity

KILLS = 14
BUDGET_SECONDS = 35.0


def _prune_cmd(path: Path) -> list[str]:
    return [sys.executable, "-m", "inspector", "prune", str(path), "--keep-last", "2", "--apply"]


def _env() -> dict:
    return {**os.environ, "CHECKPOINT_INSPECTOR_PRUNE_BATCH": "5"}


def _start_prune(path: Path) -> subprocess.Popen:
    """A ``prune --apply`` process, returned once it has committed its first batch (its first
    progress line): the interpreter's start-up is no part of what the kills should hit."""
    proc = subprocess.Popen(_prune_cmd(path), env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    proc.stderr.readline()
    return proc


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """12 completed runs of 40 checkpoints, forks, pins: what must survive is recorded."""
    path = tmp_path_factory.mktemp("crash") / "template.db"
    ids = []
    for n in range(12):
        with Checkpointer(path, name=f"run {n}") as cp:
            chat(cp, 40, start=n * 3)
            ids.append(cp.run_id)
    with open_store(path, readonly=False) as store:
        for n in (1, 5):
            fork(store, f"{ids[n]}:{10 + n}", reason="branch")
    from inspector.cli import main
    for n in (2, 7):
        assert main(["pin", str(path), f"{ids[n]}:{n + 4}"]) == 0
    keep = _must_keep(path)
    return path, keep


def _must_keep(path: Path) -> dict:
    """Checkpoint id -> state of everything prune may never remove."""
    out = {}
    with open_store(path) as st:
        for run in st.list_runs():
            infos = st.list_checkpoints(run.id)
            origins = [st.get_checkpoint(r.parent_checkpoint).seq for r in st.forks_of(run.id)]
            for info in infos:
                if info.seq == run.head_seq or info.pinned or any(info.seq <= s for s in origins):
                    out[info.id] = st.load(info.id).state
    return out


def _check(path: Path, keep: dict) -> None:
    integrity_ok = integrity(path)
    assert integrity_ok["reachable"] <= integrity_ok["pieces"]
    with open_store(path) as st:
        for cid, state in keep.items():
            assert st.load(cid).state == state, cid


def test_sigkill_at_random_points_loses_nothing_and_a_second_prune_finishes(template, tmp_path: Path) -> None:
    source, keep = template
    finished = tmp_path / "finished.db"
    shutil.copyfile(source, finished)
    proc = _start_prune(finished)
    started = time.monotonic()
    assert proc.wait(timeout=120) == 0
    work = time.monotonic() - started        # from the first committed batch to the end
    expected = integrity(finished)
    assert expected["reachable"] == expected["pieces"]
    rng = random.Random(1717)
    landed = 0
    deadline = time.monotonic() + BUDGET_SECONDS
    for attempt in range(KILLS):
        if time.monotonic() > deadline:
            break
        path = tmp_path / f"kill{attempt}.db"
        shutil.copyfile(source, path)
        proc = _start_prune(path)
        time.sleep(rng.uniform(0.0, work * 0.95))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            landed += 1
        proc.wait(timeout=30)
        _check(path, keep)                                # nothing to keep lost, store sound
        again = subprocess.run(_prune_cmd(path), env=_env(), capture_output=True, timeout=120, check=False)
        assert again.returncode == 0, again.stderr
        assert integrity(path) == expected                # the second prune finishes the work
        _check(path, keep)
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
    assert landed >= 5, f"only {landed} kills landed while prune ran ({work:.2f} s of work)"


def test_writers_keep_writing_while_prune_runs(template, tmp_path: Path) -> None:
    source, keep = template
    path = tmp_path / "busy.db"
    shutil.copyfile(source, path)
    errors: list[BaseException] = []
    written: list[str] = []
    stop = threading.Event()

    def writer() -> None:
        try:
            with Checkpointer(path, name="live writer") as cp:
                written.append(cp.run_id)
                step = 0
                state: dict = {"messages": [], "notes": "n" * 40, "step": 0}
                while (not stop.is_set() or step < 40) and step < 1500:
                    # the same messages as the old runs: pieces prune is collecting come back
                    state["messages"].append({"role": "user" if step % 2 else "assistant",
                                              "content": f"message {step} " * 30})
                    state["step"] = step
                    cp.save(state, kind="tool", name="step")
                    step += 1
                    time.sleep(0.001)
                written.append(str(step))
        except BaseException as err:  # the test reports it
            errors.append(err)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        proc = subprocess.run(_prune_cmd(path), env=_env(), capture_output=True, timeout=120, check=False)
    finally:
        stop.set()
        thread.join(timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert not errors, errors
    run_id, steps = written[0], int(written[1])
    _check(path, keep)
    with open_store(path) as st:
        assert st.get_run(run_id).checkpoint_count == steps
        assert len(st.load(f"{run_id}:-1").state["messages"]) == steps
    # the writer has finished: a last prune removes its history too and everything still reads
    apply_prune(path, make_rules(keep_last=2))
    figures = integrity(path)
    assert figures["reachable"] == figures["pieces"]
