"""The Storage view and the prune dialog on real stores: charts from real reports, live
updates, prune preview and apply (the store underneath checked)."""

from __future__ import annotations

import contextlib
import math
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QScrollArea

from inspector.record import Checkpointer
from inspector.store import open_store
from inspector.ui.dialogs.prune_dialog import PruneDialog
from inspector.ui.session import StoreSession
from inspector.ui.widgets.storage_view import StorageView
from tests.retention.stores import chat
from tests.ui.storage_stores import check_run_detail, prune_dialog_on


@pytest.fixture
def store_copy(demo_store_master: Path, tmp_path: Path) -> Path:
    target = tmp_path / "demo.db"
    for suffix in ("", "-wal"):
        if Path(f"{demo_store_master}{suffix}").exists():
            shutil.copyfile(f"{demo_store_master}{suffix}", f"{target}{suffix}")
    return target


@contextlib.contextmanager
def _shown_view(qtbot, path: Path) -> Iterator[StorageView]:
    """A Storage view at 1024x700 on the store at ``path``, its first report drawn."""
    session = StoreSession()
    widget = StorageView(session)
    qtbot.addWidget(widget)
    widget.resize(1024, 700)
    widget.show()
    with qtbot.waitSignal(widget.report_ready, timeout=30_000):
        session.open(str(path))
    try:
        yield widget
    finally:
        session.shutdown()


@pytest.fixture
def view(qtbot, store_copy: Path):
    with _shown_view(qtbot, store_copy) as widget:
        yield widget


def test_charts_show_the_report_of_the_store_and_the_selected_run(qtbot, view: StorageView, store_copy: Path) -> None:
    report = view.report
    assert report is not None and report.total_bytes > 0 and "on disk" in view.summary.text()
    with open_store(store_copy) as st:
        run = max(st.list_runs(), key=lambda r: r.checkpoint_count)
    detail = check_run_detail(qtbot, view, run)
    bars = [i for i in view.charts["runs"].getPlotItem().items if type(i).__name__ == "BarGraphItem"]
    assert bars and len(bars[0].opts["width"]) == min(8, len(report.runs))
    assert len(view.charts["tradeoff"].getPlotItem().listDataItems()[0].getData()[0]) == len(detail.tradeoff)
    assert run.name in view.charts["checkpoints"].getPlotItem().titleLabel.text


def test_run_bars_are_told_apart_by_their_labels(view: StorageView) -> None:
    """A fork shares its origin's name up to "(fork of #8)": its bar keeps that end (a long
    name is shortened in the middle, not cut), and no two bars read the same."""
    import pyqtgraph as pg
    texts = [i.textItem.toPlainText().rsplit("  ", 1)[0] for i in view.charts["runs"].getPlotItem().items
             if isinstance(i, pg.TextItem)]
    assert len(texts) == min(8, len(view.report.runs)) and len(set(texts)) == len(texts)
    assert "report: urban beekeeping (fork of #8)" in texts and "report: river restoration" in texts


def test_the_cost_charts_legend_has_room_above_its_curves(qtbot, view: StorageView, store_copy: Path) -> None:
    """The legend sits top left, over the data's first checkpoints: the chart leaves room
    above the highest point for it (it hid the curves' start)."""
    from inspector.ui.widgets.storage_charts import LEGEND_ROOM
    with open_store(store_copy) as st:
        run = max(st.list_runs(), key=lambda r: r.checkpoint_count)
    with qtbot.waitSignal(view.report_ready, timeout=30_000) as got:
        view.set_run(run)
    points = [max(1, v) for c in got.args[0].detail.checkpoints for v in (c.logical, c.stored)]
    low, high = math.log10(min(points)), math.log10(max(points))
    top = view.charts["checkpoints"].getPlotItem().viewRange()[1][1]
    assert top >= high + LEGEND_ROOM * (high - low) * 0.99 and top > high + 0.2


def test_a_long_or_shared_bar_name_is_shortened_in_the_middle_and_given_its_run() -> None:
    from inspector.ui.widgets.storage_charts import LABEL_CHARS, _distinct, _label
    long = _label("an agent whose run names are very long indeed, and longer (fork of #12)")
    assert len(long) == LABEL_CHARS and "\u2026" in long and long.endswith("(fork of #12)")
    assert _label("two\nlines \x1b") == "two ⏎ lines \\x1b"      # (a name may hold anything)
    assert _distinct(["a", "a", "b"], ["1234567890", "abcdefghij", "x"]) == ["a · 12345678", "a · abcdefgh", "b"]


def test_live_update_after_a_write(qtbot, view: StorageView, store_copy: Path) -> None:
    before = view.report.checkpoints
    with Checkpointer(store_copy, name="new run") as cp:
        chat(cp, 3)
    view.session.bridge.poll_now()
    qtbot.waitUntil(lambda: view.report is not None and view.report.checkpoints == before + 3, timeout=30_000)


def test_prune_dialog_previews_then_applies_after_confirmation(qtbot, view: StorageView, store_copy: Path,
                                                              monkeypatch) -> None:
    info = view.session.info
    dialog = PruneDialog(info, view.session.runner)
    qtbot.addWidget(dialog)
    dialog.keep.setValue(2)
    dialog.status_boxes["failed"].setChecked(False)
    with open_store(store_copy) as st:
        total = sum(r.checkpoint_count for r in st.list_runs())
    qtbot.mouseClick(dialog.preview_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.plan is not None, timeout=30_000)
    plan = dialog.plan
    assert plan.remove_checkpoints > 0 and dialog.table.rowCount() == len(plan.runs)
    assert dialog.apply_button.isEnabled()
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Cancel)
    dialog.confirm_and_apply()
    with open_store(store_copy) as st:
        assert sum(r.checkpoint_count for r in st.list_runs()) == total      # cancelled: nothing changed
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    with qtbot.waitSignal(dialog.pruned, timeout=60_000) as done:
        dialog.confirm_and_apply()
    assert done.args[0].applied and done.args[0].remove_checkpoints == plan.remove_checkpoints
    with open_store(store_copy) as st:
        assert sum(r.checkpoint_count for r in st.list_runs()) == total - plan.remove_checkpoints
    assert "Removed" in dialog.summary.text()
    dialog.older_box.setChecked(True)
    dialog.older.setText("soon")
    dialog.preview()
    assert "not a duration" in dialog.summary.text()


def test_main_window_view_menu_opens_the_storage_dock(qtbot, store_copy: Path) -> None:
    from inspector.ui.main_window import MainWindow

    window = MainWindow(restore_settings=False)
    qtbot.addWidget(window)
    window.resize(1024, 700)
    window.show()
    with qtbot.waitSignal(window.session.opened, timeout=30_000):
        window.open_store(str(store_copy))
    storage = window.storage
    assert storage.view is None                     # built on first use only
    assert storage.toggle in window.menu_actions.view_menu.actions()
    storage.toggle.trigger()
    view = storage.view
    assert view is not None and storage.dock.isVisible()
    qtbot.waitUntil(lambda: view.report is not None, timeout=30_000)
    window.set_theme("dark")
    qtbot.waitUntil(lambda: view.charts["growth"].backgroundBrush().color().name() == "#22272e", timeout=5000)
    window.set_theme("light")
    window.session.shutdown()


def test_pyqtgraph_stays_out_of_start_up() -> None:
    import subprocess
    import sys
    code = ("import sys; from inspector.ui.app import create_app; app = create_app('light'); "
            "from inspector.ui.main_window import MainWindow; w = MainWindow(restore_settings=False); "
            "print('pyqtgraph' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False,
                         env={**__import__('os').environ, "QT_QPA_PLATFORM": "offscreen"})
    assert out.stdout.strip().splitlines()[-1] == "False", out.stderr


def test_pin_from_the_run_menu_marks_the_timeline_and_the_store(qtbot, store_copy: Path) -> None:
    from inspector.ui.main_window import MainWindow

    window = MainWindow(restore_settings=False)
    qtbot.addWidget(window)
    window.show()
    with qtbot.waitSignal(window.session.opened, timeout=30_000):
        window.open_store(str(store_copy))
    with open_store(store_copy) as st:
        run = max(st.list_runs(), key=lambda r: r.checkpoint_count)
    window.timeline_panel.show_run(run)
    window.timeline_panel.model.request_row(3)
    qtbot.waitUntil(lambda: window.timeline_panel.model.checkpoint(3) is not None, timeout=30_000)
    with qtbot.waitSignal(window.checkpoint_changed, timeout=10_000):
        window.timeline_panel.select_row(3)
    pin = window.storage.pin
    assert pin.isEnabled() and not pin.isChecked()
    pin.trigger()
    def pinned_row() -> bool:
        window.timeline_panel.model.request_row(3)
        found = window.timeline_panel.model.checkpoint(3)
        return found is not None and found.pinned
    qtbot.waitUntil(pinned_row, timeout=30_000)
    with open_store(store_copy) as st:
        assert st.get_checkpoint(f"{run.id}:3").pinned
    index = window.timeline_panel.model.index(3, 2)
    assert window.timeline_panel.model.data(index).startswith("\u2691")
    assert window.store_status.readonly_chip.text() == "read-only + your writes"    # (it said "read-only")
    window.session.shutdown()


def test_the_growth_chart_labels_times_as_clock_times_that_differ(qtbot) -> None:
    import time as _time

    from inspector.ui.widgets.storage_charts import TimeAxis

    axis = TimeAxis(orientation="bottom")
    t0 = _time.mktime((2026, 12, 1, 15, 28, 51, 0, 0, -1))
    assert axis.tickStrings([t0, t0 + 60], 1, 60) == ["15:28", "15:29"]
    assert axis.tickStrings([t0, t0 + 1], 1, 1) == ["15:28:51", "15:28:52"]
    halves = axis.tickStrings([t0, t0 + 0.5, t0 + 1], 1, 0.5)
    assert halves == ["28:51.0", "28:51.5", "28:52.0"]      # pyqtgraph's own labels read "51.000"


def test_the_growth_chart_leaves_times_no_clock_has_blank(qtbot) -> None:
    from inspector.ui.widgets.storage_charts import TimeAxis

    axis = TimeAxis(orientation="bottom")
    for spacing in (0.5, 1, 60, 86_400):
        assert axis.tickStrings([float("inf"), float("nan"), -5.0, 1e300], 1, spacing) == ["", "", "", ""]


def test_a_short_size_axis_is_labelled_at_several_heights(qtbot) -> None:
    """A step rounded up to a nice value left one label on a short axis (the trade-off chart of
    the demo store said only '20.0 KB' over 0–35 KB; its 0 sits hidden at the foot), and a log
    axis inside one 1-2-5 step had one label or none."""
    from inspector.ui.widgets.storage_charts import SizeAxis

    linear = SizeAxis(orientation="left")
    ticks = [v for _s, level in linear.tickValues(0, 35_000, 130) for v in level]
    assert [t for t in linear.tickStrings(ticks, 1, 1) if t != "0 B"] == ["10.0 KB", "20.0 KB", "30.0 KB"]
    log = SizeAxis(orientation="left")
    log.setLogMode(True)
    for low, high in ((15_000, 30_000), (21_000, 23_000), (200, 3_000)):
        ticks = [v for _s, level in log.tickValues(math.log10(low), math.log10(high), 130) for v in level]
        labels = log.tickStrings(ticks, 1, 1)
        assert len(set(labels)) >= 2, (low, high, labels)


def test_short_ranges_still_get_several_nice_ticks() -> None:
    from inspector.ui.widgets.storage_charts import _linear_ticks

    assert _linear_ticks(0, 35_000, 3)[1] == [0.0, 10_240.0, 20_480.0, 30_720.0]
    step, ticks = _linear_ticks(20_480, 20_600, 3)
    assert len(ticks) >= 3 and all(20_480 <= t <= 20_600 for t in ticks)
    assert _linear_ticks(5, 5, 3) == (0.0, [])


def test_prune_dialog_says_why_no_piece_would_be_collected(qtbot, tmp_path: Path) -> None:
    """A store with a damaged state reference: the preview's summary says that pieces would
    not be collected, why, and what to do."""
    from tests.retention.stores import build, damage_head_reference
    path = tmp_path / "damaged.db"
    damage_head_reference(path, build(path)["short"])
    session, dialog = prune_dialog_on(qtbot, path)
    dialog.keep.setValue(3)
    dialog.preview()
    qtbot.waitUntil(lambda: dialog.plan is not None, timeout=30_000)
    text = dialog.summary.text()
    assert "Would remove <b>63</b>" in text and "Unreferenced pieces would not be collected" in text
    assert "delete their runs, then prune again" in text


def _text_run_store(path: Path, name: str) -> None:
    """One run whose state is big and whose checkpoints then cost a few bytes: its cost chart
    spans several decades (the case where the legend sat on the state size's line)."""
    import random
    rnd = random.Random(9)
    text = "".join(rnd.choice("abcdefghijklmnopqrstuvwxyz \n") for _ in range(300_000))
    with Checkpointer(path, name=name, heartbeat=60) as cp:
        for step in range(12):
            cp.save({"doc": text, "step": step}, force=True)


def test_a_long_run_name_is_shortened_in_the_cost_charts_title_and_its_legend_stays_off_the_curves(
        qtbot, tmp_path: Path) -> None:
    name = "<b>nightly</b> " + "very long report name " * 8 + "(fork of #8)"
    path = tmp_path / "long.db"
    _text_run_store(path, name)
    with _shown_view(qtbot, path) as widget:
        _check_the_cost_chart(qtbot, widget, path, name)


def _check_the_cost_chart(qtbot, widget: StorageView, path: Path, name: str) -> None:
    from PySide6.QtCore import QPointF
    with open_store(path) as st:
        (run,) = st.list_runs()
    with qtbot.waitSignal(widget.report_ready, timeout=30_000) as got:
        widget.set_run(run)
    chart = widget.charts["checkpoints"]
    shown = chart.getPlotItem().titleLabel.text
    assert "\u2026" in shown and "(fork of #8)" in shown and "<b>nightly" not in shown and "&lt;b&gt;" in shown
    assert name in chart.toolTip()
    title_width = chart.getPlotItem().titleLabel.item.boundingRect().width()
    assert title_width < chart.width(), "the title fits the chart, so the plot is not widened past it"
    # the legend's bottom is above the highest point of either curve
    item = chart.getPlotItem()
    points = [max(1, v) for c in got.args[0].detail.checkpoints for v in (c.logical, c.stored)]

    def clear_of_the_curves() -> bool:     # once the window is laid out
        top = item.getViewBox().mapViewToScene(QPointF(0, math.log10(max(points)))).y()
        return item.legend.sceneBoundingRect().bottom() < top
    qtbot.waitUntil(clear_of_the_curves, timeout=5_000)
    widget.resize(1024, 560)         # a shorter window: the room follows
    qtbot.waitUntil(clear_of_the_curves, timeout=5_000)


def test_prune_names_the_selected_run_by_its_name(qtbot, store_copy: Path) -> None:
    """"Only run “report: soil carbon” (84bb8041913a)", not the bare id."""
    from inspector.ui.main_window import MainWindow
    from tests.ui.conftest import open_in, select_run

    window = MainWindow(restore_settings=False)
    qtbot.addWidget(window)
    window.show()
    open_in(window, qtbot, store_copy)
    with open_store(store_copy) as st:
        run = next(r for r in st.list_runs() if r.name == "report: soil carbon")
    select_run(window, qtbot, run.id)
    window.storage.open_prune()
    dialog = window.storage.dialog
    qtbot.addWidget(dialog)
    assert dialog.run_box.text() == f"Only run \u201creport: soil carbon\u201d ({run.id})"
    dialog.close()
    window.session.shutdown()


def test_the_storage_view_opens_on_the_selected_run(qtbot, store_copy: Path) -> None:
    """A run selected before View ▸ Storage is shown in the per-run charts at once (they
    said "select a run" while one was selected)."""
    from inspector.ui.main_window import MainWindow
    from tests.ui.conftest import open_in, select_run

    window = MainWindow(restore_settings=False)
    qtbot.addWidget(window)
    window.resize(1024, 700)
    window.show()
    open_in(window, qtbot, store_copy)
    with open_store(store_copy) as st:
        run = next(r for r in st.list_runs() if r.name == "report: soil carbon")
    select_run(window, qtbot, run.id)
    window.storage.toggle.trigger()
    view = window.storage.view
    assert view is not None and view.run is not None and view.run.id == run.id
    qtbot.waitUntil(lambda: view.report is not None and view.report.detail is not None, timeout=30_000)
    assert len(view.report.detail.checkpoints) == run.checkpoint_count
    assert run.name in view.charts["checkpoints"].getPlotItem().titleLabel.text
    window.session.shutdown()


@pytest.mark.parametrize("size", [(1024, 700), (1920, 1200)])
def test_the_storage_dock_opens_leaving_the_timeline_and_the_state_usable(qtbot, store_copy: Path, size) -> None:
    """The dock's first height is a share of the window that leaves the timeline and the
    state tree rows to read (it took 55 % at 1024x700: one timeline row, three of the tree);
    on a large window the six charts show whole."""
    from inspector.ui.main_window import MainWindow
    from inspector.ui.storage_actions import CENTRAL_KEEP, STORAGE_MIN_HEIGHT
    from tests.ui.conftest import open_in, select_run

    window = MainWindow(restore_settings=False)
    qtbot.addWidget(window)
    window.resize(*size)
    window.show()
    open_in(window, qtbot, store_copy)
    with open_store(store_copy) as st:
        run = next(r for r in st.list_runs() if r.name == "report: soil carbon")
    select_run(window, qtbot, run.id)
    window.details.set_tab("state")
    window.storage.toggle.trigger()
    view = window.storage.view
    qtbot.waitUntil(lambda: view.report is not None and view.report.detail is not None, timeout=30_000)
    dock, central = window.storage.dock, window.centralWidget()
    assert dock.isVisible() and dock.height() >= STORAGE_MIN_HEIGHT
    assert central.height() >= CENTRAL_KEEP
    tree, timeline = window.details.panels["state"].tree_view.tree, window.timeline_panel.view
    assert tree.viewport().height() >= 4 * tree.sizeHintForRow(0)
    assert timeline.viewport().height() >= 2 * timeline.sizeHintForRow(0)
    if size[1] >= 1200:     # room for charts: every chart whole, and the tree has more rows
        scroll = view.findChild(QScrollArea)
        area = scroll.viewport().rect()
        for chart in view.charts.values():
            corner = chart.mapTo(scroll.viewport(), chart.rect().bottomRight())
            assert area.contains(corner), chart
        assert tree.viewport().height() >= 10 * tree.sizeHintForRow(0)
    window.session.shutdown()
