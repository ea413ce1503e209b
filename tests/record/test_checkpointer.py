"""The recording library: intervals, status on exit, resume spec, ownership fencing, hand-off."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

import pytest

from inspector.errors import OwnershipLost, TaskStateError
from inspector.record import Checkpointer, Handoff, Interval
from inspector.store import create_store, open_store
from inspector.store.native.writer import NativeWriter


def test_interval_every_n_counts_operations(store_path: Path) -> None:
    with Checkpointer(store_path, name="n", interval=Interval.every(3), heartbeat=60) as cp:
        written = [cp.save({"i": i}) is not None for i in range(7)]
    assert written == [False, False, True, False, False, True, False]
    with open_store(store_path) as store:
        cps = store.list_checkpoints(cp.run_id)
    # the 7th operation is flushed on exit; ops counts what a resume would replay
    assert [(c.ops, store.load(c.id).state["i"]) for c in cps] == [(3, 2), (3, 5), (1, 6)]


def test_interval_parse() -> None:
    assert Interval.parse("step") == Interval.every_step()
    assert Interval.parse("5") == Interval.every(5)
    assert Interval.parse("2.5s").seconds == 2.5
    with pytest.raises(ValueError):
        Interval.every(0)


def test_exception_marks_run_failed(store_path: Path) -> None:
    with pytest.raises(RuntimeError), Checkpointer(store_path, name="boom", heartbeat=60) as cp:
        cp.save({"x": 1})
        raise RuntimeError("tool exploded")
    with open_store(store_path) as store:
        run = store.get_run(cp.run_id)
    assert run.status == "failed" and "tool exploded" in run.last_error


def test_invalid_task_state_is_refused(store_path: Path) -> None:
    with Checkpointer(store_path, name="bad tasks", heartbeat=60) as cp, \
            pytest.raises(TaskStateError, match=r"tasks\[0\]\.status"):
        cp.save({"x": 1}, tasks={"tasks": [{"id": "a", "status": "almost"}]})


def test_resume_spec_is_captured(store_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_API_KEY", "secret-value")
    with Checkpointer(store_path, name="spec", heartbeat=60, resume_env=["MY_API_KEY"]) as cp:
        cp.save({})
    with open_store(store_path) as store:
        spec = store.get_run(cp.run_id).resume_spec
    assert spec["argv"][0] == sys.executable
    assert spec["cwd"] == os.getcwd()
    assert "MY_API_KEY" in spec["inherit"] and "MY_API_KEY" not in spec["env"]
    assert "secret-value" not in str(spec)


def test_fenced_writer_gets_ownership_lost(store_path: Path) -> None:
    first = Checkpointer(store_path, name="fenced", heartbeat=60)
    first.save({"by": "first", "n": 0})
    store = create_store(store_path)
    epoch = NativeWriter(store).take_ownership(first.run_id, host=socket.gethostname(), pid=os.getpid())
    second = Checkpointer(store_path, heartbeat=60,
                          handoff=Handoff(str(store_path), first.run_id, f"{first.run_id}:0", epoch))
    assert second.resumed and second.restored_state == {"by": "first", "n": 0}
    second.save({"by": "second", "n": 1})
    with pytest.raises(OwnershipLost, match="taken over"):
        first.save({"by": "first", "n": 1})
    with pytest.raises(OwnershipLost):
        first.save({"by": "first", "n": 2})
    first.finish("failed", "fenced")
    second.finish()
    with open_store(store_path) as ro:
        cps = ro.list_checkpoints(first.run_id)
        states = [ro.load(c.id).state for c in cps]
        run = ro.get_run(first.run_id)
    assert [c.kind for c in cps] == ["step", "resume", "step"]
    assert [s["by"] for s in states] == ["first", "first", "second"]
    assert run.status == "completed" and run.epoch == epoch
    store.close()


def test_heartbeat_refreshes(store_path: Path) -> None:
    import time
    with Checkpointer(store_path, name="beat", heartbeat=0.05) as cp:
        cp.save({})
        with open_store(store_path) as store:
            first = store.get_run(cp.run_id).heartbeat
            deadline = time.time() + 10
            while store.get_run(cp.run_id).heartbeat == first and time.time() < deadline:
                time.sleep(0.02)
            assert store.get_run(cp.run_id).heartbeat > first
