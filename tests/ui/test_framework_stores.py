"""The GUI on other frameworks' stores: the panels work, actions follow the adapter's capabilities
(an action it lacks is disabled and says why), and fork through CrewAI shows the exact command."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.ui.conftest import open_in, select_checkpoint, select_run

STORES = Path(__file__).parents[1] / "frameworks" / "stores"


def _copy(tmp_path: Path, name: str) -> Path:
    source = STORES / name
    target = tmp_path / name
    (shutil.copytree if source.is_dir() else shutil.copy2)(source, target)
    return target


def test_adk_store_lacks_fork_and_resume_and_says_why(window, qtbot, tmp_path: Path) -> None:
    open_in(window, qtbot, _copy(tmp_path, "adk_sqlite.db"))
    select_run(window, qtbot, "s-groceries")
    snap = select_checkpoint(window, qtbot, 2)
    assert snap.state["state"]["cart"] == ["apples"]
    actions = window.run_actions
    assert not actions.fork.isEnabled() and not actions.resume.isEnabled()
    assert "no fork" in actions.fork.toolTip() and "Runner.run_async" in actions.resume.toolTip()
    assert "Google ADK" in window.store_status.kind_chip.text()
    assert "Fork: no" in window.store_status.kind_chip.toolTip()


def test_crewai_fork_shows_the_command_and_runs_nothing_unconfirmed(window, qtbot,
                                                                     tmp_path: Path) -> None:
    path = _copy(tmp_path, "crewai_json")
    before = sorted(p.name for p in path.rglob("*.json"))
    open_in(window, qtbot, path)
    select_run(window, qtbot, "main")
    snap = select_checkpoint(window, qtbot, 0)
    assert [t["status"] for t in snap.tasks["tasks"]] == ["done", "pending", "pending"]
    actions = window.run_actions
    assert actions.fork.isEnabled() and actions.resume.isEnabled()
    asked: list[tuple[str, str]] = []

    def confirm(_parent, title: str, text: str) -> bool:
        asked.append((title, text))
        return False

    actions.confirm = confirm
    actions.fork.trigger()
    qtbot.waitUntil(lambda: bool(asked), timeout=10_000)
    title, text = asked[0]
    assert title == "Fork through crewai" and "crewai_runner.py fork --restore-from" in text
    assert "_p-none.json" in text and "working directory" in text
    assert actions.console.running() == []
    assert sorted(p.name for p in path.rglob("*.json")) == before


def test_task_cards_show_crewai_outputs(qtbot, tmp_path: Path) -> None:
    from inspector.store import open_store
    from inspector.ui.widgets.tasks_panel import TasksPanel

    with open_store(_copy(tmp_path, "crewai_checkpoints.db")) as store:
        snap, run = store.load("main:1"), store.get_run("main")
    panel = TasksPanel()
    qtbot.addWidget(panel)
    panel.resize(1000, 500)
    panel.show_snapshot(snap, run)
    done = panel.columns["done"].cards
    assert [c.title.text() for c in done] == ["research", "outline"]
    assert done[0].output.text().startswith("Researcher: Result") and not done[0].output.isHidden()
    assert "output: Result" in done[0].toolTip()
    assert [c.output.isHidden() for c in panel.columns["pending"].cards] == [True]


def test_items_the_sdk_adds_appear_live(window, qtbot, tmp_path: Path) -> None:
    import json
    import sqlite3

    path = _copy(tmp_path, "agents_sqlite.db")
    open_in(window, qtbot, path)
    select_run(window, qtbot, "quick-chat")
    timeline = window.timeline_panel
    assert timeline.model.rowCount() == 2
    conn = sqlite3.connect(path)   # the row SQLiteSession.add_items writes for a new user message
    conn.execute("INSERT INTO agent_messages (session_id, message_data) VALUES (?, ?)",
                 ("quick-chat", json.dumps({"role": "user", "content": "one more thing"})))
    conn.commit()
    conn.close()
    qtbot.waitUntil(lambda: timeline.model.rowCount() == 3, timeout=20_000)
    qtbot.waitUntil(lambda: window.runs_panel.model.run("quick-chat").status == "running", timeout=20_000)
