"""The timeline's columns fit the window: no sideways scrolling at 1024 wide, nothing sparse when large."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from inspector.store import open_store
from inspector.ui.main_window import MainWindow
from inspector.ui.models.timeline_model import COL_CHANGE, COL_CHECKS, COL_DELTA, COL_NAME, COL_SIZE
from tests.ui.conftest import open_in, select_run


def _longest_run(store: Path):
    with open_store(store) as st:
        return max(st.list_runs(), key=lambda r: r.checkpoint_count)


def _on_longest_run(qtbot, demo_store: Path, size: tuple[int, int]) -> MainWindow:
    """A window of ``size`` on the demo store's longest run, its timeline laid out without
    sideways scrolling."""
    window = MainWindow(restore_settings=False)
    qtbot.addWidget(window)
    window.resize(*size)
    window.show()
    open_in(window, qtbot, demo_store)
    select_run(window, qtbot, _longest_run(demo_store).id)
    view = window.timeline_panel.view
    qtbot.waitUntil(lambda: view.horizontalScrollBar().maximum() == 0, timeout=5_000)
    return window


@pytest.mark.parametrize("size", [(1024, 700), (1600, 1000)], ids=["1024x700", "1600x1000"])
def test_timeline_columns_fit_without_sideways_scrolling(qtbot, demo_store: Path, size) -> None:
    window = _on_longest_run(qtbot, demo_store, size)
    view = window.timeline_panel.view
    header = view.horizontalHeader()
    metrics = view.fontMetrics()
    for col in (COL_SIZE, COL_DELTA, COL_CHECKS, COL_CHANGE):
        assert not header.isSectionHidden(col)
        assert header.sectionViewportPosition(col) + header.sectionSize(col) <= view.viewport().width()
    assert header.sectionSize(COL_NAME) >= metrics.horizontalAdvance("write_file notes")
    assert header.sectionSize(COL_CHANGE) >= metrics.horizontalAdvance("+1 msg · +1 log")
    if size[0] >= 1600:   # large: every column shown, the text columns get the room
        assert not any(header.isSectionHidden(c) for c in range(header.count()))
        # (Kind and Gap are as wide as their longest texts, "resume" and "+59 min 59 s")
        assert header.sectionSize(COL_CHANGE) >= 230
    # the window narrower again: still no sideways scrolling
    window.resize(1024, 700)
    qtbot.waitUntil(lambda: view.horizontalScrollBar().maximum() == 0, timeout=5_000)
    window.close()


def test_a_narrow_timeline_shows_kinds_as_icons_and_elides_names(qtbot, demo_store: Path) -> None:
    window = MainWindow(restore_settings=False)
    qtbot.addWidget(window)
    window.resize(1024, 700)
    window.show()
    open_in(window, qtbot, demo_store)
    select_run(window, qtbot, _longest_run(demo_store).id)
    splitter = window.main_splitter
    splitter.setSizes([580, 444])    # the runs list dragged wide
    panel = window.timeline_panel
    view, model = panel.view, panel.model
    qtbot.waitUntil(lambda: model.compact_kind, timeout=5_000)
    header = view.horizontalHeader()
    qtbot.waitUntil(lambda: 0 < header.length() <= view.viewport().width(), timeout=5_000)
    assert model.headerData(1, Qt.Orientation.Horizontal) == ""
    index = model.index(1, 1)
    assert model.data(index) == "" and model.data(index, 3)   # no word, a tooltip still names it
    window.resize(1600, 1000)
    qtbot.waitUntil(lambda: not model.compact_kind, timeout=5_000)
    assert model.data(index) == model.data(index, 3).split("\n")[0].split(" ")[1]
    window.close()


@pytest.mark.parametrize("size", [(1024, 700), (1920, 1200)], ids=["1024x700", "1920x1200"])
def test_kind_and_gap_columns_hold_their_longest_texts(qtbot, demo_store: Path, size) -> None:
    """"resume" and "+6 min 05 s" read whole wherever the columns are shown (they read "resu…"
    and "+6 min …" even at 1920 wide)."""
    from inspector.model import CHECKPOINT_KINDS
    from inspector.ui.models.timeline_model import COL_GAP, COL_KIND

    window = _on_longest_run(qtbot, demo_store, size)
    view = window.timeline_panel.view
    header, metrics = view.horizontalHeader(), view.fontMetrics()
    text_room = 12          # a cell's margins on both sides
    if not header.isSectionHidden(COL_KIND) and not window.timeline_panel.model.compact_kind:
        icon = view.iconSize().width() if view.iconSize().width() > 0 else 16
        longest = max(metrics.horizontalAdvance(k) for k in CHECKPOINT_KINDS)
        assert header.sectionSize(COL_KIND) >= icon + longest + text_room
    if size[0] >= 1920:
        assert not header.isSectionHidden(COL_GAP)
    if not header.isSectionHidden(COL_GAP):
        assert header.sectionSize(COL_GAP) >= metrics.horizontalAdvance("+59 min 59 s") + text_room
    window.close()
