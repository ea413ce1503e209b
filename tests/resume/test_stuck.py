"""Stuck diagnosis from the run's rows: heartbeat age, quiet gaps, loops, reviews; replay cost."""

from __future__ import annotations

import time
from pathlib import Path

from inspector import cli
from inspector.record import Checkpointer
from inspector.resume.replay import replay_cost
from inspector.resume.stuck import diagnose, diagnose_many, last_good_checkpoint
from inspector.store import open_store
from inspector.store.native.writer import NativeWriter
from tests.resume.helpers import run_agent

TASKS = {"goal": "g", "tasks": [
    {"id": "draft", "title": "Draft", "status": "in_progress",
     "review": {"status": "requested", "reviewer": "editor"}},
    {"id": "ask", "title": "Ask the user", "status": "blocked"}]}


def test_silent_looping_run_is_stuck_with_loop_and_review(tmp_path: Path, capsys) -> None:
    store = tmp_path / "s.db"
    cp = Checkpointer(store, name="looper", heartbeat=3600)
    try:
        cp.save({"n": 0}, kind="input", name="goal", tasks=TASKS)
        cp.save({"n": 1}, kind="llm", name="plan")
        for i in range(5):
            cp.save({"n": 2 + i}, kind="tool", name="search")
        with open_store(store) as st:
            run = st.get_run(cp.run_id)
            assert diagnose(st, run) is None                       # alive, fresh heartbeat
            later = time.time() + 100
            diag = diagnose(st, run, now=later, heartbeat_threshold=30)
            cheap = diagnose_many(st, st.list_runs(), now=later, heartbeat_threshold=30)
        assert diag.status == "stuck" and diag.owner.state == "silent"
        assert diag.loop == ("search", 5) and diag.suggested_checkpoint.seq == 1
        assert diag.last_tool.seq == 6 and diag.pending_reviews == ("Draft by editor",)
        assert diag.waiting_for == ("task Ask the user is blocked",)
        assert "\n" not in diag.summary and "#6 search" in diag.summary
        assert set(cheap) == {run.id} and cheap[run.id].pending_reviews == ()   # cheap: no snapshot read
        with open_store(store) as st:
            # heartbeat fresh enough but no checkpoint for far longer than the usual gap
            quiet = diagnose(st, run, now=time.time() + 1000, heartbeat_threshold=1e9)
        assert quiet.status == "stuck" and "no checkpoint for" in quiet.reasons[0]
    finally:
        cp.finish("completed")
    with open_store(store) as st:
        assert diagnose(st, cp.run_id, now=time.time() + 1e6) is None   # completed runs are not stuck
        assert last_good_checkpoint(st, cp.run_id).seq == 6


def test_remote_owner_is_judged_by_heartbeat_only(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    cp = Checkpointer(store, name="remote", heartbeat=3600)
    try:
        cp.save({"n": 0})
        with open_store(store, readonly=False) as st:
            writer = NativeWriter(st)
            writer.claim(cp.run_id, cp.epoch, host="elsewhere.example", pid=999999)
            writer.close()
            assert diagnose(st, cp.run_id) is None
            diag = diagnose(st, cp.run_id, now=time.time() + 60)
        assert diag.status == "stuck" and "elsewhere.example" in diag.reasons[0]
    finally:
        cp.finish("completed")


def test_replay_cost_with_an_interval(tmp_path: Path, capsys) -> None:
    store = tmp_path / "s.db"
    assert run_agent(store, "--seed", "2", "--interval", "3") == 0
    with open_store(store) as st:
        run = st.list_runs()[0]
        cps = st.list_checkpoints(run.id)
        cost = replay_cost(st, f"{run.id}:1")
        head = replay_cost(st, cps[-1])
    assert cps[2].ops == 3
    assert cost.ops_to_next == 3 and cost.steps_after == len(cps) - 2
    assert cost.ops_after == sum(c.ops for c in cps[2:]) and not cost.head
    assert "Redoes" in cost.describe() and head.head and head.steps_after == 0
    assert cli.main(["stuck", str(store)]) == 0
    assert "no stuck runs" in capsys.readouterr().out


def test_this_host_is_the_name_the_recorder_stores() -> None:
    import socket

    from inspector.resume.liveness import this_host

    assert this_host() == socket.gethostname()


def test_an_owner_that_never_beat_is_said_so() -> None:
    from inspector.model import RunInfo
    from inspector.resume.liveness import owner_of
    never = RunInfo(id="r", name="r", agent="langgraph", status="running", created=0.0, updated=0.0)
    assert owner_of(never).text == "no process has claimed the run"
    remote = RunInfo(id="r", name="r", agent="a", status="running", created=0.0, updated=0.0,
                     owner_host="elsewhere.example", owner_pid=4242)
    assert owner_of(remote).text == "pid 4242 on elsewhere.example has never sent a heartbeat"
    late = RunInfo(id="r", name="r", agent="a", status="running", created=0.0, updated=0.0, heartbeat=100.0)
    assert owner_of(late, now=190.0).text == "no process has claimed the run for 2 min"


def test_a_session_its_store_says_is_running_stays_running(tmp_path: Path) -> None:
    """A framework's session or a LangGraph database's thread has no owner process: "running"
    is its adapter's word for "written lately", and the runs list keeps it (it said "stuck" at
    once: no process had claimed it)."""
    from inspector.model import RunInfo
    from inspector.resume.status import quick_statuses
    now = time.time()
    session = RunInfo(id="s", name="s", agent="openai-agents", status="running", created=now - 5, updated=now - 5)
    assert quick_statuses([session], now=now) == {}
    assert diagnose_many_of([session]) == []
    # a native run whose owner stopped beating is still stuck
    silent = RunInfo(id="r", name="r", agent="writer", status="running", created=now - 500, updated=now - 500,
                     owner_host="elsewhere.example", owner_pid=4242, heartbeat=now - 400)
    assert quick_statuses([silent], now=now)["r"].status == "stuck"


def diagnose_many_of(runs: list) -> list:
    """The stuck diagnosis of ``runs`` without a store read (an ownerless run needs none)."""
    from inspector.resume.stuck import _diagnose_run
    return [d for r in runs if (d := _diagnose_run(None, r, time.time(), 30.0, False)) is not None]  # type: ignore[arg-type]
