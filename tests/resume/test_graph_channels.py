"""Channel kinds asked of the user's graph in its runner, cached until the graph's files change.

A real project folder with a real LangGraph graph (a custom reducer, a reducer written once),
a real SqliteSaver database and the real runner subprocess; nothing is mocked.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from inspector.resume.graph_channels import attach, cached_path
from inspector.store import open_store
from inspector.store.langgraph.settings import GraphSettings, save_settings

GRAPH = textwrap.dedent('''
    import operator
    from typing import Annotated, TypedDict

    from langgraph.graph import END, START, StateGraph


    def longest(current: str, new: str) -> str:
        return new if len(new) > len(current) else current


    class State(TypedDict, total=False):
        topic: str
        words: Annotated[list[str], operator.add]
        title: Annotated[str, longest]


    def plan(state):
        return {"title": "a"}


    def name(state):
        return {"title": "a longer title"}


    def fail(state):
        if state["topic"] == "fail":
            raise ValueError("no")
        return {"words": ["w"]}


    def build(checkpointer=None):
        graph = StateGraph(State)
        graph.add_node("plan", plan)
        graph.add_node("name", name)
        graph.add_node("fail", fail)
        graph.add_edge(START, "plan")
        graph.add_edge("plan", "name")
        graph.add_edge("plan", "fail")
        graph.add_edge(["name", "fail"], END)
        return graph.compile(checkpointer=checkpointer)
''')


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """(project folder with proj_graph.py, a database its graph wrote: t1 ran through, t2 failed
    in ``fail`` while ``name`` finished — its custom-reducer write is pending)."""
    monkeypatch.setenv("CHECKPOINT_INSPECTOR_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("CHECKPOINT_INSPECTOR_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "proj"
    folder.mkdir()
    (folder / "proj_graph.py").write_text(GRAPH, encoding="utf-8")
    db = tmp_path / "cp.db"
    script = ("import sqlite3, sys\nfrom langgraph.checkpoint.sqlite import SqliteSaver\nimport proj_graph\n"
              f"g = proj_graph.build(SqliteSaver(sqlite3.connect({str(db)!r}, check_same_thread=False)))\n"
              "g.invoke({'topic': 'ok'}, {'configurable': {'thread_id': 't1'}})\n"
              "try:\n    g.invoke({'topic': 'fail'}, {'configurable': {'thread_id': 't2'}})\n"
              "except ValueError:\n    pass\n")
    subprocess.run([sys.executable, "-c", script], cwd=folder, check=True, timeout=120)
    save_settings(str(db), GraphSettings(graph="proj_graph:build", cwd=str(folder)))
    return folder, db


def _get_state(folder: Path, db: Path, thread: str, step: int | None = None) -> dict:
    """LangGraph's own values (get_state, or the history entry of ``step``), in a subprocess."""
    script = ("import json, sqlite3\nfrom langgraph.checkpoint.sqlite import SqliteSaver\nimport proj_graph\n"
              f"g = proj_graph.build(SqliteSaver(sqlite3.connect({str(db)!r}, check_same_thread=False)))\n"
              f"c = {{'configurable': {{'thread_id': {thread!r}}}}}\n"
              f"step = {step!r}\n"
              "s = g.get_state(c) if step is None else next(h for h in g.get_state_history(c) "
              "if h.metadata['step'] == step)\n"
              "print(json.dumps(s.values))\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=folder, check=True, timeout=120,
                          capture_output=True, text=True)
    return dict(__import__("json").loads(done.stdout))


def test_the_graph_says_its_channel_kinds_and_the_answer_is_cached(project) -> None:
    folder, db = project
    with open_store(str(db)) as store:
        before = store.load("t1:1")
        assert "words" not in before.state and before.meta["channel_kinds"] == "inferred"
        assert attach(store) is None
        kinds = store.graph_channels.kinds("")
        assert kinds["words"].operator == "add" and kinds["title"].operator == "custom"
        assert kinds["title"].operator_name == "proj_graph.longest"
        snap = store.load("t1:1")        # written once: only the graph says it is a reducer
        assert snap.meta["step"] == 0
        assert snap.state == _get_state(folder, db, "t1", 0) == {"topic": "ok", "words": [], "title": ""}
        assert snap.meta["channel_kinds"] == "graph proj_graph:build"
    assert cached_path().is_file()
    source = folder / "proj_graph.py"
    stat = source.stat()
    source.write_text("raise ImportError('broken on purpose')\n", encoding="utf-8")
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))      # same mtime: the cache answers
    with open_store(str(db)) as store:
        assert attach(store) is None and store.load("t1:1").state["words"] == []
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10_000_000))   # edited: asked again
    with open_store(str(db)) as store:
        problem = attach(store)
        assert problem and "could not be loaded" in problem and "broken on purpose" in problem
        snap = store.load("t1:1")
        assert "words" not in snap.state and snap.meta["channel_kinds"] == "inferred"


def test_a_custom_reducer_on_the_live_head_is_combined_by_the_graph_in_its_runner(project) -> None:
    """t2's head: ``name`` finished (title → custom reducer ``longest``), ``fail`` failed. The
    graph's own reducer combines the pending write in the runner, so the head equals
    ``get_state``; answers are cached until the graph's files change; a reducer that raises
    leaves the channel as stored, with a note that says why."""
    folder, db = project
    with open_store(str(db)) as store:
        assert attach(store) is None
        combiner = store.combiner
        snap = store.load("t2:-1")
        want = _get_state(folder, db, "t2")
        assert want["title"] == "a longer title" and snap.state == want
        assert snap.meta["live"]["combined_by_graph"] == ["title"] and snap.meta["live"]["not_combined"] == []
        assert any("proj_graph.longest" in n and "run in its runner" in n for n in snap.meta["notes"])
        assert combiner.runs == 1 and store.load("t2:-1").state == want and combiner.runs == 1   # cached
        source = folder / "proj_graph.py"
        source.write_text(GRAPH.replace("    return new if len(new)", "    raise ValueError('reducer broke')\n"
                                        "    return new if len(new)"), encoding="utf-8")
        os.utime(source, ns=(source.stat().st_atime_ns, source.stat().st_mtime_ns + 10_000_000))
        broken = store.load("t2:-1")                       # the graph's files changed: asked again
        assert combiner.runs == 2
    assert broken.state["title"] == "a" and broken.meta["live"]["not_combined"] == ["title"]
    assert any("could not combine" in n and "reducer broke" in n for n in broken.meta["notes"])
    assert {k: v for k, v in broken.state.items() if k != "title"} == {k: v for k, v in want.items() if k != "title"}


def test_without_a_graph_a_custom_reducer_is_never_guessed(project) -> None:
    """No graph set for the store: kinds are inferred, nothing of the user's code runs, and
    ``title`` (which the thread's writes prove a reducer) is combined by its value's type as
    before — never by a runner."""
    folder, db = project
    save_settings(str(db), GraphSettings())
    with open_store(str(db)) as store:
        assert attach(store) is None and store.combiner is None
        snap = store.load("t2:-1")
    assert snap.meta["channel_kinds"] == "inferred" and not any("run in its runner" in n for n in snap.meta["notes"])
    assert snap.meta["live"]["combined_by_graph"] == []


def test_show_says_when_the_graph_cannot_give_channel_kinds(project, tmp_path) -> None:
    folder, db = project
    (folder / "proj_graph.py").write_text("raise ImportError('gone')\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "inspector", "show", str(db), "t1:0", "--json"],
                          capture_output=True, text=True, timeout=120, env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    assert "channel kinds are inferred" in done.stderr and "gone" in done.stderr
    sqlite3.connect(str(db)).close()
