"""A run's task history (``inspector.diff.history``): every checkpoint where the task state
changed, against an oracle that loads each checkpoint whole and diffs it with its parent."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.diff.history import task_history
from inspector.diff.model import DiffCancelled
from inspector.diff.tasks import diff_tasks
from inspector.taskstate import NODE_TASK_PREFIX
from inspector.store import open_store


def _oracle(store, run_id: str, task_id: str | None) -> list[tuple[int, tuple]]:
    """Whole snapshots, each diffed with its parent's (nothing before the first)."""
    infos = [i for i in store.list_checkpoints(run_id) if not i.lane]
    tasks = {i.id: store.load(i.id).tasks for i in infos}
    out = []
    for info in infos:
        changes = diff_tasks(tasks.get(info.parent_id), tasks[info.id])
        kept = tuple(c for c in changes if task_id is None or c.task_id == task_id)
        if kept:
            out.append((info.seq, kept))
    return out


def test_every_runs_history_is_what_whole_snapshots_show(demo_store: Path) -> None:
    with open_store(demo_store) as store:
        runs = store.list_runs()
        for run in runs:
            got = [(e.checkpoint.seq, e.changes) for e in task_history(store, run.id)]
            assert got == _oracle(store, run.id, None), run.name
        paused = next(r for r in runs if r.status == "interrupted")
        draft = task_history(store, paused.id, "draft")
        assert [(e.checkpoint.seq, e.changes) for e in draft] == _oracle(store, paused.id, "draft")
        kinds = [c.kind for e in draft for c in e.changes]
        assert kinds[0] == "added" and "status" in kinds and "review" in kinds   # the reviewer's verdict is there
        review = [c for e in draft for c in e.changes if c.kind == "review"]
        assert review[-1].new == "changes_requested" and review[-1].reviewer
        assert all(c.task_id == "draft" for e in draft for c in e.changes)
        assert task_history(store, paused.id, "no-such-task") == []


def test_a_fork_starts_its_history_from_its_own_first_checkpoint(demo_store: Path) -> None:
    with open_store(demo_store) as store:
        fork = next(r for r in store.list_runs() if r.parent_run)
        events = task_history(store, fork.id)
    assert events and events[0].checkpoint.seq == 0 and any(c.kind == "added" for c in events[0].changes)


def test_a_langgraph_threads_todos_have_a_history_and_node_tasks_none(corpus_sqlite: Path) -> None:
    with open_store(corpus_sqlite) as store:
        events = task_history(store, "agent-1")
        failed = task_history(store, "mapreduce-2")      # only node tasks: no history
    changes = [c for e in events for c in e.changes]
    assert {c.task_id for c in changes if c.task_id} == {"todo-1", "todo-2"}
    assert any(c.kind == "status" and c.new == "done" for c in changes)
    assert failed == [] and not any(c.task_id.startswith(NODE_TASK_PREFIX) for c in changes)


def test_reading_a_history_can_be_cancelled(demo_store: Path) -> None:
    with open_store(demo_store) as store:
        run = store.list_runs()[0]
        seen: list[tuple[int, int]] = []
        with pytest.raises(DiffCancelled):
            task_history(store, run.id, cancel=lambda: len(seen) >= 2, progress=lambda d, t: seen.append((d, t)))
    assert seen == [(1, run.checkpoint_count), (2, run.checkpoint_count)]


@pytest.mark.parametrize("digest", [bytes(16), bytes(32)], ids=["piece missing", "row damaged"])
def test_a_damaged_checkpoint_is_said_and_the_history_goes_on(demo_store: Path, digest: bytes) -> None:
    import sqlite3
    with open_store(demo_store) as store:
        run = next(r for r in store.list_runs() if r.status == "interrupted")
        whole = task_history(store, run.id)
    hit = whole[3].checkpoint      # its task state changed: a piece of its own
    conn = sqlite3.connect(demo_store)
    with conn:
        conn.execute("UPDATE ci_checkpoints SET tasks_hash = ? WHERE run_id = ? AND seq = ?",
                     (digest, run.id, hit.seq))      # a task state that is not there / not a digest
    conn.close()
    with open_store(demo_store) as store:
        events = task_history(store, run.id)
    damaged = [e for e in events if e.problem]
    assert [e.checkpoint.seq for e in damaged] == [hit.seq] and not damaged[0].changes
    assert "missing" in damaged[0].problem or "16-byte digest" in damaged[0].problem
    # the next checkpoint is compared with the last one that could be read: its own changes
    # and those of the damaged one show there, nothing is "added" again
    after = next(e for e in events if e.checkpoint.seq > hit.seq)
    assert after.changes and not any(c.kind == "added" for c in after.changes)
    assert [e.checkpoint.seq for e in events if not e.problem] == \
        [e.checkpoint.seq for e in whole if e.checkpoint.seq != hit.seq]
