"""Every LangGraph command of the README's "Using it with LangGraph" section works exactly as
written: the commands are read from README.md and run, in order, as the user would (the
installed ``checkpoint-inspector`` script, in the folder holding ``my_agent/graph.py`` and
``checkpoints.db``); the thread then stands where LangGraph says it should."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from inspector.store.langgraph.fork import DEFAULT_QUIET_SECONDS

from .readme_agent import SOURCE

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_commands() -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Using it with LangGraph", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    lines = [ln.split("  #", 1)[0].strip() for ln in block.splitlines()]
    return [ln for ln in lines if ln.startswith("checkpoint-inspector ")]


def _executable() -> str:
    found = shutil.which("checkpoint-inspector", path=str(Path(sys.executable).parent)) \
        or shutil.which("checkpoint-inspector")
    if not found:
        pytest.skip("the checkpoint-inspector script is not installed (pip install -e .)")
    return found


def test_readme_langgraph_commands_run_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    commands = readme_commands()
    assert len(commands) >= 3 and any("--answer" in c for c in commands)
    (tmp_path / "my_agent").mkdir()
    (tmp_path / "my_agent" / "__init__.py").write_text("")
    (tmp_path / "my_agent" / "graph.py").write_text(SOURCE)
    sys.path.insert(0, str(tmp_path))
    try:
        from langgraph.checkpoint.sqlite import SqliteSaver
        import importlib
        module = importlib.import_module("my_agent.graph")
        conn = sqlite3.connect(str(tmp_path / "checkpoints.db"), check_same_thread=False)
        graph = module.builder.compile(checkpointer=SqliteSaver(conn))
        graph.invoke({"priority": "high", "log": []}, {"configurable": {"thread_id": "thread-1"}})
        conn.close()
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m == "my_agent" or m.startswith("my_agent.")]:
            del sys.modules[name]
    env = dict(os.environ, CHECKPOINT_INSPECTOR_CONFIG_DIR=str(tmp_path / "config"))
    time.sleep(DEFAULT_QUIET_SECONDS + 0.2)   # as a user would come later: the thread is quiet
    exe = _executable()
    for command in commands:
        if command.split()[1] == "open":
            continue      # the desktop window (covered by the GUI tests)
        argv = [exe, *shlex.split(command)[1:]]
        done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
    conn = sqlite3.connect(str(tmp_path / "checkpoints.db"), check_same_thread=False)
    try:
        sys.path.insert(0, str(tmp_path))
        from langgraph.checkpoint.sqlite import SqliteSaver
        import importlib
        module = importlib.import_module("my_agent.graph")
        state = module.builder.compile(checkpointer=SqliteSaver(conn)).get_state(
            {"configurable": {"thread_id": "thread-1"}})
    finally:
        conn.close()
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m == "my_agent" or m.startswith("my_agent.")]:
            del sys.modules[name]
    assert state.next == ()
    assert state.values["priority"] == "low" and state.values["answer"] == "approved"
    assert state.values["log"][-2:] == ["review low", "done"]
