"""What the window says of a run beyond its status: a damaged run is marked in the runs list,
a CrewAI flow run (read-only) offers neither fork nor resume, and a LangGraph thread waiting at
``interrupt()`` gets the Interrupted banner with its question."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from inspector.store import open_store
from inspector.store.frameworks.crewai_flows import FLOW_WHY
from inspector.ui.dialogs.resume_dialog import ResumeDialog
from inspector.ui.models.run_tree import COL_NAME, COL_STATUS
from tests.store.langgraph.conftest import lg_copy, lg_master  # noqa: F401 - fixtures
from tests.ui.conftest import open_in, select_checkpoint, select_run

STORES = Path(__file__).parents[1] / "frameworks" / "stores"
WARNING = QColor("#d4a72c")     # the warning mark's fill (resources/icons/warning.svg)


def _damaged_agents_store(tmp_path: Path) -> Path:
    """The OpenAI Agents store with one item of ``quick-chat`` that is not UTF-8 (as
    tests/frameworks/test_damaged.py damages it)."""
    path = tmp_path / "agents_sqlite.db"
    shutil.copy2(STORES / "agents_sqlite.db", path)
    conn = sqlite3.connect(path)
    mid = conn.execute("SELECT MIN(id) FROM agent_messages WHERE session_id = 'quick-chat'").fetchone()[0]
    conn.execute("UPDATE agent_messages SET message_data = CAST(x'7b22ff41fe' AS TEXT) WHERE id = ?", (mid,))
    conn.commit()
    conn.close()
    return path


def _marked(window, run_id: str) -> bool:
    """Whether the run's name cell, as painted, holds the warning mark."""
    view = window.runs_panel.view
    index = window.runs_panel.proxy.mapFromSource(window.runs_panel.model.run_index(run_id))
    image = view.viewport().grab(view.visualRect(index)).toImage()
    return any(_near(QColor(image.pixel(x, y)), WARNING) for x in range(min(60, image.width()))
               for y in range(image.height()))


def _near(a: QColor, b: QColor) -> bool:
    return abs(a.red() - b.red()) + abs(a.green() - b.green()) + abs(a.blue() - b.blue()) < 30


def test_a_damaged_run_is_marked_in_the_runs_list_with_its_reason(window, qtbot, tmp_path: Path) -> None:
    path = _damaged_agents_store(tmp_path)
    with open_store(path) as store:
        reason = store.get_run("quick-chat").damaged
        assert "not UTF-8" in reason and not store.get_run("trip-lisbon").damaged
    open_in(window, qtbot, path)
    model = window.runs_panel.model
    for col in (COL_NAME, COL_STATUS):
        tip = model.index(model.run_index("quick-chat").row(), col).data(Qt.ItemDataRole.ToolTipRole)
        assert f"damaged: {reason}" in tip, tip
        tip = model.index(model.run_index("trip-lisbon").row(), col).data(Qt.ItemDataRole.ToolTipRole)
        assert "damaged" not in tip
    assert _marked(window, "quick-chat") and not _marked(window, "trip-lisbon")


def test_a_crewai_flow_beside_crew_checkpoints_offers_neither_fork_nor_resume(window, qtbot,
                                                                               tmp_path: Path) -> None:
    path = tmp_path / "crewai_both.db"
    shutil.copy2(STORES / "crewai_both.db", path)
    open_in(window, qtbot, path)
    with open_store(path) as store:
        flow = next(r.id for r in store.list_runs() if r.agent == "crewai flow")
    actions = window.run_actions
    select_run(window, qtbot, flow)
    select_checkpoint(window, qtbot, 1)
    for action in (actions.fork, actions.resume, actions.resume_good):
        assert not action.isEnabled(), action.text()
        assert FLOW_WHY.rstrip(".") in action.toolTip() and "fork it instead" not in action.toolTip()
    select_run(window, qtbot, "main")                   # a crew's checkpoints: both offered
    select_checkpoint(window, qtbot, 1)
    assert actions.fork.isEnabled() and actions.resume.isEnabled()


def test_a_langgraph_thread_waiting_at_an_interrupt_shows_the_banner_with_its_question(
        window, qtbot, lg_copy: Path) -> None:
    open_in(window, qtbot, lg_copy)
    notice = window.run_notice
    select_run(window, qtbot, "thread-A")
    qtbot.waitUntil(notice.isVisible, timeout=10_000)
    assert notice.status == "interrupted"
    text = notice.headline.text()
    assert "<b>Interrupted:</b>" in text and "node review: Approve the plan?" in text
    assert notice.resume_button.isVisible()
    select_run(window, qtbot, "thread-B")               # completed: no banner
    qtbot.waitUntil(lambda: not notice.isVisible(), timeout=10_000)
    select_run(window, qtbot, "thread-A")
    qtbot.waitUntil(notice.isVisible, timeout=10_000)
    actions = window.run_actions
    qtbot.mouseClick(notice.resume_button, Qt.MouseButton.LeftButton)     # the dialog that asks the answer
    qtbot.waitUntil(lambda: isinstance(actions.dialog, ResumeDialog), timeout=10_000)
    with open_store(lg_copy) as store:
        assert actions.dialog._ref == store.get_checkpoint("thread-A:-1").id
    actions.dialog.close()


def test_a_langgraph_thread_forked_and_not_run_yet_says_what_it_waits_for(window, qtbot, lg_copy: Path) -> None:
    """After a raw fork the thread is 'interrupted' (its head has nodes to run) and the window
    said nothing about it; the notice says it is a fork the graph has not run, and offers Resume."""
    from inspector.resume.langgraph import fork_langgraph

    with open_store(lg_copy, readonly=False) as store:
        fork_langgraph(store, "thread-A:2", reason="try low", edits={"priority": "low"}, raw=True, force=True)
        nodes = store.load("thread-A:-1").meta["next"]
    assert nodes
    open_in(window, qtbot, lg_copy)
    notice = window.run_notice
    select_run(window, qtbot, "thread-A")
    qtbot.waitUntil(lambda: notice.isVisible() and "fork" in notice.headline.text(), timeout=10_000)
    text = notice.headline.text()
    assert "<b>Interrupted:</b> a fork the graph has not run yet, before " + ", ".join(nodes) in text
    assert notice.resume_button.isVisible()
