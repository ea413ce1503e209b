"""The diff of a thread written by InspectorSaver shows decoded values, as the State view does.

Its pieces hold LangGraph's serialized values (typed leaves ``{"__lg__": tag, "b": bytes}``);
``diff_checkpoints`` (the GUI Diff tab and the ``diff`` command) compares the states as the
State view shows them: messages as messages, an edit inside one as a change of its field,
LangGraph's control channels left out.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from inspector.diff import diff_checkpoints
from inspector.record.langgraph import InspectorSaver
from inspector.store import open_store
from tests.record.lg_edits import drive


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("lgdiff") / "agent.db"
    with InspectorSaver.from_conn_string(str(path)) as saver:
        drive(saver, 4)
    return path


def _leafless(value: Any) -> bool:
    if isinstance(value, dict):
        return "__lg__" not in value and all(_leafless(v) for v in value.values())
    if isinstance(value, list):
        return all(_leafless(v) for v in value)
    return not isinstance(value, bytes)


def _at(state: Any, path: tuple) -> Any:
    for part in path:
        state = state[part]
    return state


def test_diff_of_a_lane_shows_decoded_values(store_path: Path) -> None:
    with open_store(str(store_path), readonly=True) as store:
        run = next(r for r in store.list_runs() if r.name == "edits")
        cps = store.list_checkpoints(run.id)
        a, b = cps[-4], cps[-1]          # one whole turn: input, __start__, edit
        result = diff_checkpoints(store, a, b)
        new_state = store.load(b.id).state
        old_state = store.load(a.id).state
    by_path = {c.path: c for c in result.changes}
    assert by_path[("messages", 0, "content")].old.startswith("edited at")
    assert by_path[("messages", 0, "content")].new != by_path[("messages", 0, "content")].old
    assert ("messages", 1, "additional_kwargs", "seen") in by_path
    added = [c for c in result.changes if c.op == "added" and c.path[0] == "messages"]
    assert [c.new["__type__"].rsplit(".", 1)[-1] for c in added] == ["HumanMessage", "AIMessage"]
    assert added[0].new["content"] == "turn 3"
    for change in result.changes:
        assert _leafless(change.old) and _leafless(change.new), change
        assert not any(str(p).startswith(("__", "branch:")) for p in change.path), change
        # the values are the ones the State view shows
        if change.op in ("added", "changed"):
            assert _at(new_state, change.path) == change.new
        if change.op in ("removed", "changed"):
            assert _at(old_state, change.path) == change.old


def test_diff_command_prints_decoded_values(store_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "inspector", "diff", str(store_path), "edits:-4", "edits:-1"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "messages[0].content" in out.stdout and "__lg__" not in out.stdout and "b'\\x" not in out.stdout
    js = subprocess.run([sys.executable, "-m", "inspector", "diff", str(store_path), "edits:-4", "edits:-1",
                         "--json"], capture_output=True, text=True, timeout=120)
    assert js.returncode == 0, js.stderr
    assert "__lg__" not in js.stdout
    paths = [c["path"] for c in json.loads(js.stdout)["changes"]]
    assert ["messages", 0, "content"] in paths
