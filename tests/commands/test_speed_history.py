"""``history`` leaves out unread the checkpoints whose state (task state) is their parent's by
hash: a long run that repeats its states compares only where they change."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.diff.checkpoints import _Reader
from inspector.record import Checkpointer


def repeating(path: Path) -> str:
    """40 checkpoints whose ``step`` changes every 10th, the task status at the 25th."""
    with Checkpointer(path, name="slow") as cp:
        for i in range(40):
            board = {"goal": "g", "tasks": [{"id": "t1", "title": "one", "status": "done" if i >= 25 else "pending"}]}
            cp.save({"step": i // 10, "notes": "n" * 100}, kind="tool", name="poll", tasks=board)
        return cp.run_id


def test_repeated_states_are_not_compared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    path = tmp_path / "s.db"
    run_id = repeating(path)
    calls = {"states": 0, "task_changes": 0}
    for name in calls:
        real = getattr(_Reader, name)

        def counted(self, *args, _real=real, _name=name, **kw):
            calls[_name] += 1
            return _real(self, *args, **kw)

        monkeypatch.setattr(_Reader, name, counted)
    assert main(["history", str(path), run_id, "--path", "step", "--json"]) == 0
    events = json.loads(capsys.readouterr().out)
    assert [e["seq"] for e in events] == [0, 10, 20, 30]
    assert [c["new"] for e in events for c in e["changes"]] == [0, 1, 2, 3]
    assert main(["history", str(path), run_id, "--json"]) == 0
    events = json.loads(capsys.readouterr().out)
    assert [e["seq"] for e in events] == [0, 25]
    assert calls == {"states": 3, "task_changes": 1}      # where they change, not 39 times each
