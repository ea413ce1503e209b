"""The generic fork/resume (CLI and GUI entry points) hand LangGraph stores to their adapter."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector import cli
from inspector.errors import NotResumableError
from inspector.resume.edits import EditError
from inspector.resume.fork import fork_checkpoint
from inspector.resume.resume import plan_resume
from inspector.store import open_store
from tests.store.langgraph.lg_graphs import make_database


@pytest.fixture
def lg_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh LangGraph SqliteSaver database written by the real langgraph package."""
    monkeypatch.setenv("CHECKPOINT_INSPECTOR_CONFIG_DIR", str(tmp_path / "config"))
    return make_database(tmp_path / "lg.db")


def test_langgraph_fork_and_resume_are_dispatched(lg_db: Path, capsys) -> None:
    with open_store(lg_db, readonly=False) as store:
        head = store.list_checkpoints("thread-C")[-1]
        with pytest.raises(EditError, match="task state is derived"):
            fork_checkpoint(store, head.id, reason="x", tasks={"goal": "", "tasks": []})
        with pytest.raises(NotResumableError):     # fresh thread or no graph: the adapter refuses
            plan_resume(store, head.id)
    # the thread was written a moment ago: the LangGraph adapter refuses to fork it yet
    assert cli.main(["fork", str(lg_db), str(head.id), "--set", "fail=true", "--reason", "x"]) == 2
    assert "may still be running" in capsys.readouterr().err
