"""Below 1024 wide (900x650, 800x600) and at 1024x700: run names stay whole while there is room,
the status bar's message is elided beside its chips (whole in the tooltip), and the selected
timeline row stays in sight when the run notice appears above the timeline."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtGui import QFont, QFontMetrics

from inspector.store import open_store
from inspector.ui.main_window import MainWindow
from inspector.ui.models.run_tree import COL_CHECKPOINTS, COL_NAME, COL_STATUS
from inspector.ui.models.runs_model import RunRole
from inspector.ui.widgets.runs_columns import NAME_PADDING
from tests.ui.dialogs.test_resume_flow import TIMEOUT
from tests.ui.test_journeys import _window
from tests.ui.conftest import select_checkpoint

SIZES = [pytest.param((1024, 700), id="1024x700"), pytest.param((900, 650), id="900x650"),
         pytest.param((800, 600), id="800x600")]


def _names_fit(window: MainWindow) -> list[str]:
    view = window.runs_panel.view
    header = view.header()
    font = QFont(view.font())
    font.setWeight(QFont.Weight.Medium)
    metrics = QFontMetrics(font)
    room = header.sectionSize(COL_NAME) - NAME_PADDING
    model = view.model()
    names = [model.index(r, COL_NAME).data(RunRole).name for r in range(model.rowCount())]
    return [n for n in names if metrics.horizontalAdvance(n) > room]


@pytest.mark.parametrize("size", SIZES)
def test_run_names_whole_and_selected_row_in_sight(qtbot, demo_store: Path, size) -> None:
    window = _window(qtbot, size, demo_store, annotated=True)
    assert window.minimumWidth() <= 800 and window.width() == size[0]
    view = window.runs_panel.view
    header = view.header()
    qtbot.waitUntil(lambda: _names_fit(window) == [], timeout=TIMEOUT)
    assert not header.isSectionHidden(COL_STATUS)
    assert view.horizontalScrollBar().maximum() == 0          # nothing to scroll sideways
    if size[0] >= 1024:
        assert not header.isSectionHidden(COL_CHECKPOINTS)   # at 1024 the columns give way only if needed
    # the crashed run's head: the notice appears above the timeline, the row stays in sight
    with open_store(demo_store) as st:
        crashed = next(r for r in st.list_runs() if r.labels.get("seed") == 5)
    timeline = window.timeline_panel
    with qtbot.waitSignal(timeline.model.page_loaded, timeout=TIMEOUT):
        window.runs_panel.select_run(crashed.id)
    select_checkpoint(window, qtbot, -1)
    qtbot.waitUntil(lambda: window.run_notice.isVisible(), timeout=TIMEOUT)

    def in_sight() -> bool:
        rect = timeline.view.visualRect(timeline.view.currentIndex())
        return rect.isValid() and timeline.view.viewport().rect().contains(rect)
    qtbot.waitUntil(in_sight, timeout=5_000)
    assert timeline.current_checkpoint().seq == crashed.head_seq
    window.close()


def test_status_message_elided_beside_the_chips_at_1024(qtbot, demo_store: Path) -> None:
    window = _window(qtbot, (1024, 700), demo_store, annotated=True)
    bar = window.statusBar()
    long = "Opened " + "/home/someone/projects/agents/customer-support/checkpoints" * 2 + "/store.db"
    bar.showMessage(long)
    assert bar.shown_message().endswith("…") and bar.toolTip() == long
    assert bar.message_rect().right() < window.store_status.x()
    width = bar.fontMetrics().horizontalAdvance(bar.shown_message())
    assert width <= bar.message_rect().width()
    bar.showMessage("Refreshed")
    assert bar.shown_message() == "Refreshed" and bar.toolTip() == ""
    window.close()


def test_the_diff_tab_on_a_langgraph_thread_leaves_the_runs_list_its_width(window, qtbot, corpus_sqlite) -> None:
    """While a diff loads, the Compare button once showed the base's bare LangGraph id (~470 px):
    the details' minimum grew past their share and the splitter took the runs list down to
    ~240 px for good. The button says "parent" until the base is read."""
    from tests.ui.conftest import open_in, select_run
    window.resize(1024, 700)
    window.details.set_tab("diff")
    open_in(window, qtbot, corpus_sqlite)
    runs_width = window.main_splitter.sizes()[0]
    mins: list[int] = []
    panel = window.details.panels["diff"]
    for run_id in ("agent-1", "mapreduce-2", "subgraph-1"):
        with qtbot.waitSignal(window.details.snapshot_loaded, timeout=15_000):
            select_run(window, qtbot, run_id)
        mins.append(window.details.minimumSizeHint().width())
        qtbot.waitUntil(lambda: not panel.busy, timeout=15_000)
        mins.append(window.details.minimumSizeHint().width())
        assert "@" not in panel.base_button.text()                 # never a raw LangGraph id
    assert max(mins) <= 1024 - runs_width
    assert window.main_splitter.sizes()[0] == runs_width
