"""Resume decisions: continue vs fork, live owners, refusals and confirmation."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from inspector import cli
from inspector.demo.steps import PLAN
from inspector.errors import NotResumableError, StoreError
from inspector.record import Checkpointer
from inspector.resume.resume import CONTINUE, FORK, plan_resume, start_resume
from inspector.resume.stuck import diagnose
from inspector.resume.launch import launch_exited, spawn
from inspector.store import open_store
from inspector.store.native.writer import NativeWriter
from tests.resume.helpers import final_snapshot, raw_run_dump, run_agent, start_agent, wait_for


def test_live_run_and_earlier_checkpoints_are_forked(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    live = start_agent(store, "--seed", "4", "--delay", "1.0", "--heartbeat", "0.1")   # ~20 s of work
    try:
        run = wait_for(lambda: next((r for r in _runs(store) if r.head_seq >= 1), None), what="progress")
        with open_store(store, readonly=False) as st:
            head = plan_resume(st, f"{run.id}:{st.get_run(run.id).head_seq}")
            earlier = plan_resume(st, f"{run.id}:0")
            assert head.mode == FORK and "still live" in head.why and head.owner.state == "live"
            assert earlier.mode == FORK and "not the head" in earlier.why
            argv = list(earlier.argv)
            argv[argv.index("--delay") + 1] = "0"       # the user edits the command before launch
            launch = start_resume(st, earlier, argv=argv, reason="try again from #0")
            assert launch.argv == tuple(argv)
            assert launch.forked and launch.source_run == run.id and launch.run_id != run.id
            proc = spawn(launch, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        assert proc.wait(timeout=60) == 0
        with open_store(store) as st:
            original = st.get_run(run.id)
        # the live original was never disturbed: same owner, same epoch, still running
        assert (original.status, original.epoch, original.owner_pid) == ("running", 1, live.pid)
        assert live.poll() is None
    finally:
        live.kill()
        live.wait()
    with open_store(store) as st:
        child = st.get_run(launch.run_id)
    assert (child.parent_run, child.fork_reason, child.status) == (run.id, "try again from #0", "completed")
    assert final_snapshot(store, child.id).state["log"] == [step.name for step in PLAN]


def _runs(store: Path):
    try:
        with open_store(store) as st:
            return st.list_runs()
    except StoreError:  # the agent has not created the store yet
        return []


def test_not_resumable_runs_refuse_with_the_reason(tmp_path: Path, capsys) -> None:
    store = tmp_path / "s.db"
    with Checkpointer(store, name="inference service", resumable=False,
                      not_resumable_reason="it serves live requests") as cp:
        cp.save({"served": 3})
        run_id = cp.run_id
    with open_store(store, readonly=False) as st, pytest.raises(NotResumableError, match="it serves live requests"):
        plan_resume(st, f"{run_id}:-1")
    assert cli.main(["resume", str(store), f"{run_id}:-1", "--yes"]) == 2
    assert "marked not resumable: it serves live requests" in capsys.readouterr().err


def test_run_without_resume_spec_refuses(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    with Checkpointer(store, name="no spec") as cp:
        cp.save({"x": 1})
        run_id = cp.run_id
    with open_store(store, readonly=False) as st:
        writer = NativeWriter(st)
        writer.update_run(run_id, resume_spec=None)
        writer.close()
        with pytest.raises(NotResumableError, match="no resume spec"):
            plan_resume(st, f"{run_id}:-1")


def test_nothing_runs_without_confirmation(tmp_path: Path, capsys) -> None:
    store = tmp_path / "s.db"
    assert run_agent(store, "--seed", "5", "--stop-at", "6") == 0
    run = _runs(store)[0]
    before = raw_run_dump(store, run.id)
    # pytest's stdin is not a terminal: without --yes the CLI cannot ask (a usage mistake: 2)
    assert cli.main(["resume", str(store), f"{run.id}:-1"]) == 2
    out = capsys.readouterr()
    assert "continue run" in out.out and "pass --yes" in out.err
    # a piped "y" is not a confirmation either (scripts must say --yes)
    proc = subprocess.run([sys.executable, "-m", "inspector", "resume", str(store), f"{run.id}:2"],
                          input="y\n", text=True, capture_output=True, timeout=60)
    assert proc.returncode == 2 and "no terminal to ask" in proc.stderr
    assert raw_run_dump(store, run.id) == before and len(_runs(store)) == 1


def test_plan_of_interrupted_run_continues_and_start_checks_inputs(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    assert run_agent(store, "--seed", "5", "--stop-at", "6") == 0
    run = _runs(store)[0]
    assert run.status == "interrupted"
    with open_store(store, readonly=False) as st:
        plan = plan_resume(st, f"{run.id}:-1")
        assert plan.mode == CONTINUE and plan.replay.head and plan.argv[1:3] == ("-m", "inspector.demo")
        with pytest.raises(StoreError, match="does not exist"):
            start_resume(st, plan, cwd=str(tmp_path / "missing"))
        with pytest.raises(StoreError, match="empty or malformed"):
            start_resume(st, plan, argv=[])
        with pytest.raises(StoreError, match="not a valid environment variable"):
            start_resume(st, plan, env={"A=B": "1"})
        assert st.get_run(run.id).epoch == 1          # refused before any write
        launch = start_resume(st, plan)
        assert launch.epoch == 2 and not launch.forked
        with pytest.raises(StoreError, match="changed since the resume was prepared"):
            start_resume(st, plan)                     # a stale plan is refused
        assert spawn(launch, stdout=subprocess.DEVNULL).wait(timeout=60) == 0
    assert final_snapshot(store, run.id).info.kind == "final"


def test_process_that_never_takes_over_leaves_the_run_failed(tmp_path: Path, capsys) -> None:
    store = tmp_path / "s.db"
    assert run_agent(store, "--seed", "5", "--stop-at", "3") == 0
    run = _runs(store)[0]
    with open_store(store, readonly=False) as st:
        plan = plan_resume(st, f"{run.id}:-1")
        launch = start_resume(st, plan, argv=[sys.executable, "-c", "raise SystemExit(4)"])
        assert spawn(launch).wait(timeout=60) == 4
        assert launch_exited(st, launch, 4) and not launch_exited(st, launch, 4)
    with open_store(store) as st:
        failed = st.get_run(run.id)
        assert diagnose(st, failed) is None               # failed, not stuck for ever
    assert failed.status == "failed" and "exited with code 4" in failed.last_error and failed.epoch == 2


def test_readonly_and_langgraph_like_refusals(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    assert run_agent(store, "--seed", "5", "--stop-at", "3") == 0
    run = _runs(store)[0]
    with open_store(store) as ro:
        plan = plan_resume(ro, f"{run.id}:-1")
        with pytest.raises(StoreError, match="open read-only"):
            start_resume(ro, plan)
