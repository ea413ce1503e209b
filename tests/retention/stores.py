"""Real native stores for the usage and retention tests, written by the recording library."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.record import Checkpointer
from inspector.resume.fork import fork
from inspector.store import open_store


def chat(cp: Checkpointer, steps: int, start: int = 0, *, tasks: bool = True) -> None:
    """A chat state growing by one ~300-byte message per step, with a small task state."""
    state = {"messages": [], "notes": "n" * 40, "step": 0}
    for i in range(start, start + steps):
        state["messages"].append({"role": "user" if i % 2 else "assistant", "content": f"message {i} " * 30})
        state["step"] = i
        board = {"goal": "g", "tasks": [{"id": "t1", "title": "one", "status": "done" if i > steps // 2 else "pending",
                                         "checks": [{"name": "c", "passed": i > steps // 2}]}]} if tasks else None
        cp.save(state, kind="tool", name="step", tasks=board)


def build(path: Path) -> dict:
    """Two completed runs (60 and 30 steps), a fork of the first at seq 20, one pin at seq 5
    of the second; returns their ids."""
    with Checkpointer(path, name="long chat") as cp:
        chat(cp, 60)
        long_run = cp.run_id
    with Checkpointer(path, name="short chat") as cp:
        chat(cp, 30)
        short_run = cp.run_id
    with open_store(path, readonly=False) as store:
        child = fork(store, f"{long_run}:20", reason="try again")
    return {"long": long_run, "short": short_run, "fork": child.id}


@pytest.fixture
def built_store(tmp_path: Path) -> tuple[Path, dict]:
    """A new store made by ``build`` (import this fixture where it is used), with its run ids."""
    path = tmp_path / "s.db"
    return path, build(path)


def damage_head_reference(path: Path, run_id: str) -> None:
    """Make the state reference of ``run_id``'s head text (its digest in hex): a damaged row
    whose piece nobody can name any more."""
    import sqlite3

    con = sqlite3.connect(path)
    con.execute("UPDATE ci_checkpoints SET state_hash = hex(state_hash) WHERE id = "
                "(SELECT max(id) FROM ci_checkpoints WHERE run_id = ?)", (run_id,))
    con.commit()
    con.close()
