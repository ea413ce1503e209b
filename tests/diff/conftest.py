"""Fixtures: a real native store written by the recording library, with forks."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path

import pytest

from inspector.record import Checkpointer
from inspector.resume.fork import fork
from inspector.store import open_store


@dataclass(frozen=True)
class Lineage:
    """Where the test store is and the runs in it."""

    path: Path
    original: str      # 6 checkpoints, seq 0..5
    fork: str          # forked from original:2 with an edited state
    fork_of_fork: str  # forked from fork:0 with an edited task state
    other: str         # an unrelated run


def task_state(step: int) -> dict:
    """Tasks that move on as the run goes: draft done at step 3, review approved at step 4."""
    return {"goal": "write the report", "tasks": [
        {"id": "outline", "title": "outline", "status": "done" if step >= 1 else "in_progress",
         "checks": [{"name": "has sections", "passed": step >= 1}]},
        {"id": "draft", "title": "draft", "status": "done" if step >= 3 else "in_progress",
         "progress": min(1.0, step / 3),
         "review": {"status": "approved" if step >= 4 else "requested",
                    "reviewer": "rita" if step >= 4 else None},
         "checks": [{"name": "spelling", "passed": step >= 2}, {"name": "length", "passed": step >= 3},
                    {"name": "sources", "passed": step != 5}]}]}


def states(steps: int) -> list[dict]:
    """A chat that grows by one long message per step."""
    out, state = [], {"messages": [], "plan": "outline", "step": 0, "draft": ""}
    for step in range(steps):
        state = copy.deepcopy(state)
        state["messages"].append({"role": ("user", "assistant")[step % 2],
                                  "content": f"step {step}: " + "words and more words " * 20})
        state["step"] = step
        state["plan"] = "draft" if step >= 2 else "outline"
        state["draft"] = "".join(f"Paragraph {i} of the report, with enough text to matter.\n"
                                 for i in range(step * 3))
        out.append(state)
    return out


@pytest.fixture(scope="session")
def lineage_master(tmp_path_factory: pytest.TempPathFactory) -> Lineage:
    """Written once per session; tests only read it."""
    path = tmp_path_factory.mktemp("diff-lineage") / "store.db"
    with Checkpointer(path, name="original", agent="test", heartbeat=3600) as rec:
        for step, state in enumerate(states(6)):
            rec.save(state, kind="step", name=f"step {step}", tasks=task_state(step), force=True)
        original = rec.run_id
    with Checkpointer(path, name="other", agent="test", heartbeat=3600) as rec:
        rec.save({"unrelated": True}, force=True)
        other = rec.run_id
    with open_store(path, readonly=False) as store:
        source = store.load(f"{original}:2")
        edited = copy.deepcopy(source.state)
        edited["plan"] = "rewrite"
        edited["messages"].append({"role": "user", "content": "try again"})
        first = fork(store, f"{original}:2", reason="retry with a new plan", state=edited)
        tasks = copy.deepcopy(source.tasks)
        tasks["tasks"][1]["status"] = "blocked"
        second = fork(store, f"{first.id}:0", reason="block the draft", tasks=tasks)
    return Lineage(path, original, first.id, second.id, other)
