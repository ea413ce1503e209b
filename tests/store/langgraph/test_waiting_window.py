"""In the window, a LangGraph thread InspectorSaver keeps, waiting at ``interrupt()``, gets the
Interrupted banner with its question, as the same thread in a ``SqliteSaver`` file does; its
Fork and Resume stay refused (only its graph resumes it), and the banner says how to answer."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from inspector.record.langgraph import InspectorSaver
from inspector.store import open_store
from inspector.ui.availability import disabled_reason
from inspector.ui.models.timeline_model import COL_CHANGE
from tests.store.langgraph.test_waiting_lanes import CFG, FIRST, QUESTION, build
from tests.ui.conftest import fail_on_qt_warnings, isolated_settings, open_in, select_run, window  # noqa: F401 - fixtures


def test_the_window_shows_what_an_inspector_saver_thread_waits_for(window, qtbot, tmp_path: Path) -> None:
    path = tmp_path / "ours.db"
    with InspectorSaver.from_conn_string(str(path)) as saver:
        build(saver).invoke(FIRST, CFG)
    with open_store(path) as store:
        run = store.list_runs()[0]
    open_in(window, qtbot, path)
    notice = window.run_notice
    select_run(window, qtbot, run.id)
    qtbot.waitUntil(notice.isVisible, timeout=10_000)
    assert notice.status == "interrupted"
    assert f"<b>Interrupted:</b> waiting for an answer at interrupt() in node ask: {QUESTION}" \
        in notice.headline.text()
    qtbot.mouseClick(notice.more, Qt.MouseButton.LeftButton)     # Details: how it is answered
    assert notice.detail.isVisible() and "graph.invoke(Command(resume=" in notice.detail.text()
    timeline = window.timeline_panel.model      # the step that waits says what it asks
    row = timeline.row_of_seq(run.head_seq)
    assert row is not None
    assert str(timeline.index(row, COL_CHANGE).data()).startswith(f"waiting: {QUESTION} \u00b7 ")
    for action in (window.run_actions.fork, window.run_actions.resume):      # refused, saying why
        assert not action.isEnabled() and "InspectorSaver keeps" in disabled_reason(action)
