"""LangGraph journeys through the real CLI (a subprocess) on stores the real ``langgraph`` writes:
answering several pending interrupts, forking a thread InspectorSaver wrote, and threads whose
ids hold ``:`` or ``@``."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.store import open_store
from inspector.store.refs import resolve_checkpoint

GRAPH = '''
import operator
from typing import Annotated, TypedDict

from langgraph.graph import START, StateGraph
from langgraph.types import interrupt


class State(TypedDict):
    decisions: Annotated[list, operator.add]


def build(checkpointer=None):
    g = StateGraph(State)
    g.add_node("split", lambda s: {"decisions": ["split"]})
    g.add_node("ask_a", lambda s: {"decisions": ["a=" + str(interrupt({"q": "approve A?"}))]})
    g.add_node("ask_b", lambda s: {"decisions": ["b=" + str(interrupt({"q": "approve B?"}))]})
    g.add_node("done", lambda s: {"decisions": ["done"]})
    g.add_edge(START, "split")
    g.add_edge("split", "ask_a")
    g.add_edge("split", "ask_b")
    g.add_edge(["ask_a", "ask_b"], "done")
    return g.compile(checkpointer=checkpointer)


def build_nested(checkpointer=None):
    inner = StateGraph(State)
    inner.add_node("note", lambda s: {"decisions": ["inner"]})
    inner.add_edge(START, "note")
    g = StateGraph(State)
    g.add_node("sub", inner.compile())
    g.add_edge(START, "sub")
    return g.compile(checkpointer=checkpointer)
'''


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user's project (``journey_graph:build``) and a config directory of its own."""
    (tmp_path / "journey_graph.py").write_text(GRAPH)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("CHECKPOINT_INSPECTOR_CONFIG_DIR", str(tmp_path / "config"))
    return tmp_path


def _graph(db: Path):
    from langgraph.checkpoint.sqlite import SqliteSaver

    import journey_graph
    conn = sqlite3.connect(str(db), check_same_thread=False)
    return journey_graph.build(SqliteSaver(conn)), conn


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``checkpoint-inspector ARGS`` as a user runs it."""
    return subprocess.run([sys.executable, "-m", "inspector", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=180, env=dict(os.environ))


def _waiting_on_two(project: Path, thread: str = "two") -> tuple[Path, dict[str, str]]:
    """A SqliteSaver database whose thread waits on two interrupts; their ids by question."""
    db = project / "lg.db"
    graph, conn = _graph(db)
    try:
        config = {"configurable": {"thread_id": thread}}
        graph.invoke({"decisions": []}, config)
        ids = {i.value["q"]: i.id for t in graph.get_state(config).tasks for i in t.interrupts}
    finally:
        conn.close()
    assert len(ids) == 2
    return db, ids


def _state(db: Path, thread: str):
    graph, conn = _graph(db)
    try:
        return graph.get_state({"configurable": {"thread_id": thread}})
    finally:
        conn.close()


def test_two_pending_interrupts_are_listed_with_their_ids(project: Path) -> None:
    db, ids = _waiting_on_two(project)
    done = cli(project, "resume", str(db), "two:-1", "--graph", "journey_graph:build", "--yes", "--wait")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    for question, ident in ids.items():
        assert question in done.stderr and ident in done.stderr
    listed = cli(project, "checkpoints", str(db), "two", "--json")
    head = json.loads(listed.stdout)[-1]
    assert "approve A?" in head["change"] and "approve B?" in head["change"]     # (it named the first only)


def test_one_answer_for_two_interrupts_is_refused_before_anything_runs(project: Path) -> None:
    db, ids = _waiting_on_two(project)
    before = db.read_bytes()
    done = cli(project, "resume", str(db), "two:-1", "--graph", "journey_graph:build", "--answer", '"yes"',
               "--yes", "--wait")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "ambiguous" in done.stderr and all(ident in done.stderr for ident in ids.values())
    assert "running:" not in done.stdout and "RuntimeError" not in done.stdout + done.stderr
    assert db.read_bytes() == before
    done = cli(project, "resume", str(db), "two:-1", "--graph", "journey_graph:build", "--answer",
               '{"nope": 1}', "--yes", "--wait")
    assert done.returncode == 2 and "'nope' matches none" in done.stderr


def test_answers_keyed_by_id_prefix_answer_each_interrupt(project: Path) -> None:
    db, ids = _waiting_on_two(project)
    first = {ids["approve A?"][:6]: "yes"}
    done = cli(project, "resume", str(db), "two:-1", "--graph", "journey_graph:build", "--answer",
               json.dumps(first), "--yes", "--wait")
    assert done.returncode == 0, done.stdout + done.stderr
    state = _state(db, "two")
    assert [i.value["q"] for t in state.tasks for i in t.interrupts] == ["approve B?"]   # the other still waits
    done = cli(project, "resume", str(db), "two:-1", "--answer", '"no"', "--yes", "--wait")
    assert done.returncode == 0, done.stdout + done.stderr
    state = _state(db, "two")
    assert not state.next and sorted(state.values["decisions"]) == ["a=yes", "b=no", "done", "split"]


def test_the_resume_dialog_lists_every_pending_question(qtbot, project: Path) -> None:
    from inspector.ui.dialogs.resume_dialog import ResumeDialog

    db, ids = _waiting_on_two(project)
    with open_store(db) as store:
        head = store.get_checkpoint("two:-1")
    dialog = ResumeDialog(str(db), head.id)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.kind == "langgraph" and bool(dialog.langgraph.answer_check.text()), timeout=30_000)
    shown = dialog.langgraph.question.text()
    assert "approve A?" in shown and "approve B?" in shown
    assert all(ident in shown and ident in dialog.langgraph.answer.placeholderText() for ident in ids.values())
    if os.environ.get("JOURNEY_PNG"):
        dialog.resize(1024, 700)
        dialog.grab().save(os.environ["JOURNEY_PNG"])


def _inspector_saver_thread(project: Path) -> Path:
    """A native store whose thread ``two`` InspectorSaver wrote (waiting on two interrupts)."""
    from inspector.record.langgraph import InspectorSaver

    import journey_graph
    db = project / "native.db"
    with InspectorSaver.from_conn_string(str(db)) as saver:
        journey_graph.build(saver).invoke({"decisions": []}, {"configurable": {"thread_id": "two"}})
    return db


def test_a_thread_inspector_saver_keeps_is_not_forked_into_a_dead_run(project: Path) -> None:
    db = _inspector_saver_thread(project)
    with open_store(db) as store:
        runs = [r.id for r in store.list_runs()]
        lg_id = store.load(resolve_checkpoint(store, "two:1").id).meta["langgraph"]["checkpoint_id"]
    for extra in ((), ("--dry-run",)):
        done = cli(project, "fork", str(db), "two:1", "--reason", "try", "--set", 'decisions=["x"]', *extra)
        assert done.returncode == 2 and done.stdout == "", done.stdout + done.stderr
        assert "graph.update_state" in done.stderr and lg_id in done.stderr and "Traceback" not in done.stderr
    done = cli(project, "resume", str(db), "two:-1", "--yes")
    assert done.returncode == 2 and "graph.invoke(None" in done.stderr
    with open_store(db) as store:
        assert [r.id for r in store.list_runs()] == runs       # no run nothing could continue


def test_the_window_offers_no_fork_or_resume_of_such_a_thread(qtbot, project: Path) -> None:
    from inspector.ui.availability import disabled_reason
    from inspector.ui.main_window import MainWindow

    db = _inspector_saver_thread(project)
    with open_store(db) as store:
        run = resolve_checkpoint(store, "two").run_id
    window = MainWindow(restore_settings=False)
    qtbot.addWidget(window)
    window.show()
    with qtbot.waitSignal(window.session.opened, timeout=30_000):
        window.open_store(str(db))
    qtbot.waitUntil(lambda: window.runs_panel.select_run(run), timeout=30_000)
    qtbot.waitUntil(lambda: window.current_run() is not None and window.current_run().id == run, timeout=30_000)
    actions = window.run_actions
    assert not actions.fork.isEnabled() and not actions.resume.isEnabled()
    assert "graph.update_state" in disabled_reason(actions.fork)
    assert "graph.invoke(None" in disabled_reason(actions.resume) and "Fork" not in disabled_reason(actions.resume)


def _threads(project: Path, *threads: str) -> Path:
    db = project / "ids.db"
    graph, conn = _graph(db)
    try:
        for thread in threads:
            graph.invoke({"decisions": []}, {"configurable": {"thread_id": thread}})
    finally:
        conn.close()
    return db


def _shown(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.splitlines()[0]


def test_thread_ids_holding_a_colon_are_references_that_say_what_they_mean(project: Path) -> None:
    db = _threads(project, "user:42", "42", "42:2")
    assert _shown(cli(project, "show", str(db), "user:42")).startswith("checkpoint user:42:2 ")
    assert _shown(cli(project, "show", str(db), "user:42:1")).startswith("checkpoint user:42:1 ")
    assert _shown(cli(project, "show", str(db), "42:2:-1")).startswith("checkpoint 42:2:2 ")
    assert _shown(cli(project, "show", str(db), "42:#1")).startswith("checkpoint 42:1 ")
    both = cli(project, "show", str(db), "42:2")       # thread '42:2', or #2 of thread '42'
    assert both.returncode == 2 and "42:2:-1" in both.stderr and "42:#2" in both.stderr, both.stderr
    assert "Traceback" not in both.stderr


def test_thread_ids_are_printed_as_written_and_taken_back(project: Path) -> None:
    db = _threads(project, "ana@example.com", "thread with space", "ops@team:7")
    listed = cli(project, "checkpoints", str(db), "ana@example.com")
    ident = listed.stdout.splitlines()[-1].split()[1]
    assert ident.startswith("ana@example.com@") and "%" not in listed.stdout
    assert _shown(cli(project, "show", str(db), ident)).startswith("checkpoint ana@example.com:2 ")
    assert "thread with space@" in cli(project, "checkpoints", str(db), "thread with space").stdout
    for thread in ("ana@example.com", "ops@team:7"):      # the second reads as a namespace unless encoded
        forked = cli(project, "fork", str(db), f"{thread}:2", "--reason", "retry", "--set", 'decisions=["again"]',
                     "--graph", "journey_graph:build", "--force")
        assert forked.returncode == 0, forked.stdout + forked.stderr
        new = forked.stdout.strip()
        state = _state(db, thread)          # LangGraph's own head is the fork
        assert state.config["configurable"]["checkpoint_id"] == new.rpartition("@")[2]
        assert state.values["decisions"] == ["again"]
        assert _shown(cli(project, "show", str(db), new)).startswith(f"checkpoint {thread}:3 ")


def test_a_subgraph_checkpoint_is_refused_alike_by_the_cli_and_the_window(qtbot, project: Path) -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver

    from inspector.ui.availability import disabled_reason
    from inspector.ui.main_window import MainWindow

    import journey_graph
    db = project / "nested.db"
    conn = sqlite3.connect(str(db), check_same_thread=False)
    journey_graph.build_nested(SqliteSaver(conn)).invoke({"decisions": []}, {"configurable": {"thread_id": "n"}})
    conn.close()
    with open_store(db) as store:
        inside = next(c for c in store.list_checkpoints("n") if str(c.id).count("@") == 2)
    for command in (("fork", "--reason", "x", "--set", 'decisions=["y"]', "--graph", "journey_graph:build_nested"),
                    ("resume", "--graph", "journey_graph:build_nested", "--yes")):
        done = cli(project, command[0], str(db), f"n:{inside.seq}", *command[1:])
        assert done.returncode == 2 and "inside a subgraph" in done.stderr, done.stdout + done.stderr
    window = MainWindow(restore_settings=False)
    qtbot.addWidget(window)
    window.show()
    with qtbot.waitSignal(window.session.opened, timeout=30_000):
        window.open_store(str(db))
    qtbot.waitUntil(lambda: window.runs_panel.select_run("n"), timeout=30_000)
    qtbot.waitUntil(lambda: window.current_run() is not None, timeout=30_000)
    def picked() -> bool:         # (again until the timeline has loaded that row)
        window.timeline_panel.select_seq(inside.seq)
        current = window.current_checkpoint()
        return current is not None and current.id == inside.id

    qtbot.waitUntil(picked, timeout=30_000)
    actions = window.run_actions
    assert not actions.fork.isEnabled() and not actions.resume.isEnabled()
    assert "inside a subgraph" in disabled_reason(actions.fork) and "inside a subgraph" in disabled_reason(actions.resume)
    window.timeline_panel.select_seq(0)
    qtbot.waitUntil(lambda: actions.fork.isEnabled(), timeout=30_000)      # the main graph's are offered
