"""The native store, recording library, fork and resume behave the same on SQLite and PostgreSQL."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import pytest
import sqlalchemy as sa

from inspector.bench._fleet_worker import agent_state
from inspector.errors import OwnershipLost, ReadOnlyError, StoreError
from inspector.record import Checkpointer, Handoff
from inspector.resume.fork import fork
from inspector.resume.launch import spawn
from inspector.resume.resume import CONTINUE, plan_resume, start_resume
from inspector.store import open_store
from inspector.store.native.schema import blobs
from inspector.store.native.writer import NativeWriter

TASKS = {"goal": "g", "tasks": [{"id": "a", "title": "A", "status": "in_progress",
                                  "checks": [{"name": "c1", "passed": True}, {"name": "c2", "passed": None}]}]}


def stored_bytes(url: str) -> int:
    """Bytes of all stored pieces (compressed), read through the store's own engine."""
    with open_store(url) as store, store.engine.connect() as conn:
        return int(conn.execute(sa.select(sa.func.coalesce(sa.func.sum(sa.func.length(blobs.c.data)), 0))).scalar())


def test_checkpointer_round_trip(store_url: str) -> None:
    states = [{"step": i, "messages": [{"i": j, "text": f"m{j}"} for j in range(i * 10)]} for i in range(4)]
    with Checkpointer(store_url, name="round trip", agent="t") as cp:
        for i, state in enumerate(states):
            cp.save(state, kind="step", name=f"s{i}", tasks=TASKS if i == 2 else None)
        run_id = cp.run_id
    with open_store(store_url) as store:
        run = store.get_run(run_id)
        assert (run.status, run.checkpoint_count, run.head_seq) == ("completed", 4, 3)
        assert (run.checks_passed, run.checks_total) == (1, 2)
        listed = store.list_checkpoints(run_id)
        assert [c.seq for c in listed] == [0, 1, 2, 3]
        for info, state in zip(listed, states, strict=True):
            assert store.load(info.id).state == state
        assert store.load(f"{run_id}:-1").tasks["tasks"][0]["id"] == "a"
        assert store.info.backend == ("sqlite" if "://" not in store_url else "postgresql")


def test_small_change_costs_a_small_write(store_url: str) -> None:
    noise = [hashlib.sha256(f"{i}".encode()).hexdigest() for i in range(1600)]
    big = {"history": [{"i": i, "text": "".join(noise[i * 4:i * 4 + 4])} for i in range(400)],
           "step": 0}
    with Checkpointer(store_url, name="dedup") as cp:
        cp.save(big)
        after_first = stored_bytes(store_url)
        big["step"] = 1
        big["history"].append({"i": 400, "text": "one more"})
        cp.save(big)
        after_second = stored_bytes(store_url)
        cp.save(big)  # unchanged state: no new piece at all
        after_third = stored_bytes(store_url)
    assert after_first > 20_000
    assert 0 < after_second - after_first < after_first / 5   # about one chunk, not the history
    assert after_third == after_second


def test_ownership_fencing(store_url: str) -> None:
    cp = Checkpointer(store_url, name="fenced", heartbeat=60)
    try:
        cp.save({"n": 1})
        with open_store(store_url, readonly=False) as store:
            new_epoch = NativeWriter(store).take_ownership(cp.run_id, host="other", pid=1)
        assert new_epoch == cp.epoch + 1
        with pytest.raises(OwnershipLost):
            cp.save({"n": 2})
    finally:
        cp.finish("failed", "fenced")
    with open_store(store_url) as store:
        run = store.get_run(cp.run_id)
        assert (run.checkpoint_count, run.epoch, run.owner_host) == (1, new_epoch, "other")
        assert run.status == "running"   # the fenced process could not overwrite the new owner's status


def test_fork_shares_content_and_keeps_source(store_url: str) -> None:
    with Checkpointer(store_url, name="source") as cp:
        for i in range(3):
            cp.save({"step": i, "blob": "z" * 5000, "items": list(range(i * 50))})
        source = cp.run_id
    with open_store(store_url, readonly=False) as store:
        before = [(c.seq, c.state_hash) for c in store.list_checkpoints(source)]
        child = fork(store, f"{source}:1", reason="retry from 1", state={"step": 1, "blob": "edited"})
        assert (child.parent_run, child.status) == (source, "forked")
        snap = store.load(f"{child.id}:0")
        assert snap.state == {"step": 1, "blob": "edited"}
        assert snap.info.kind == "fork"
        assert [(c.seq, c.state_hash) for c in store.list_checkpoints(source)] == before
        plain = fork(store, f"{source}:2", reason="same state")
        assert store.get_checkpoint(f"{plain.id}:0").state_hash == before[2][1]
        assert {r.id for r in store.forks_of(source)} == {child.id, plain.id}


def test_resume_continues_the_run_in_a_new_process(store_url: str, tmp_path) -> None:
    done = subprocess.run([sys.executable, "-m", "inspector.bench._fleet_worker", store_url,
                           "--count", "4", "--name", "resumable"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    with open_store(store_url) as store:
        run = store.list_runs()[0]
        plan = plan_resume(store, f"{run.id}:-1")
    assert plan.mode == CONTINUE
    with open_store(store_url, readonly=False) as store:
        spec = start_resume(store, plan)
        proc = spawn(spec, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    with open_store(store_url) as store:
        after = store.get_run(run.id)
        kinds = [c.kind for c in store.list_checkpoints(run.id)]
        assert (after.epoch, after.checkpoint_count, after.status) == (run.epoch + 1, 9, "completed")
        assert kinds[4] == "resume"
        assert store.load(f"{run.id}:4").state == agent_state("resumable", 3)


def test_handoff_restores_state(store_url: str) -> None:
    with Checkpointer(store_url, name="handoff") as cp:
        cp.save({"k": 1})
        first = cp.save({"k": 2})
        run_id = cp.run_id
    with open_store(store_url, readonly=False) as store:
        epoch = NativeWriter(store).take_ownership(run_id)
    with Checkpointer(store_url, handoff=Handoff(store_url, run_id, first.id, epoch)) as again:
        assert again.resumed and again.restored_state == {"k": 2}
        again.save({"k": 3})
    with open_store(store_url) as store:
        assert [c.kind for c in store.list_checkpoints(run_id)][-2:] == ["resume", "step"]


def test_changes_since_cursor(store_url: str) -> None:
    with Checkpointer(store_url, name="live", heartbeat=60) as cp:
        cp.save({"n": 0})
        with open_store(store_url) as store:
            cursor = store.cursor()
            assert store.changes_since(cursor).empty
            added = [cp.save({"n": i}).id for i in range(1, 4)]
            changes = store.changes_since(cursor)
            assert [c.id for c in changes.new_checkpoints] == added
            assert changes.run_ids == (cp.run_id,)
            assert store.changes_since(changes.cursor).empty
            other = Checkpointer(store_url, name="second", heartbeat=60)
            other.finish()
            later = store.changes_since(changes.cursor)
            assert set(later.run_ids) == {other.run_id} and not later.new_checkpoints
            assert store.changes_since(later.cursor).empty


def test_read_only_store_refuses_writes(store_url: str) -> None:
    with Checkpointer(store_url, name="ro") as cp:
        cp.save({"n": 1})
    with open_store(store_url) as store:
        with pytest.raises(ReadOnlyError):
            NativeWriter(store)
        # refused by the database itself
        with pytest.raises((StoreError, sa.exc.DBAPIError)), store.engine.begin() as conn:
            conn.execute(blobs.delete())
        assert store.get_run(cp.run_id).checkpoint_count == 1


def test_hashed_diff_reads_pieces_in_streamed_parts(store_url: str) -> None:
    from inspector.diff import diff_checkpoints, diff_values

    old = {"facts": [{"id": i, "text": f"fact {i} " * 6, "tags": ["a", "b"]} for i in range(600)], "n": 1}
    new = {"facts": [dict(f) for f in old["facts"]], "n": 2}
    for i in range(0, 600, 41):
        new["facts"][i] = {**new["facts"][i], "text": f"edited {i}"}
    with Checkpointer(store_url, name="diff", agent="t") as cp:
        first, second = cp.save(old, force=True), cp.save(new, force=True)
    with open_store(store_url) as store:
        result = diff_checkpoints(store, first.id, second.id)
        assert result.changes == diff_values(old, new) and len(result.changes) == 16
        chunks = len(store.read_piece(first.state_hash)["facts"].chunks)
        # the edited chunks of both sides (15 edits), not the others
        assert 2 * 10 <= result.stats["pieces_read"] < 2 * chunks
        cached = list(store.stream_raw_pieces([first.state_hash, second.state_hash]))
        assert [set(p) for p in cached] == [{first.state_hash, second.state_hash}]   # kept by the diff
        store.clear_caches()
        parts = list(store.stream_raw_pieces([first.state_hash, second.state_hash], part=1))
        assert [list(p) for p in parts] == [[first.state_hash], [second.state_hash]]
