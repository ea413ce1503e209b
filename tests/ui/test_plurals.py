"""Counts of one read in the singular: "1 match", "1 checkpoint in 1 run", "1 other run"."""

from __future__ import annotations

from inspector.usage.report import RunUsage, UsageReport


def _report(runs: int, checkpoints: int) -> UsageReport:
    usage = tuple(RunUsage(f"r{n}", f"run {n}", "completed", 1, 1000 - n, 100, {}) for n in range(runs))
    return UsageReport("s.db", "native", "sqlite", 4096, 0, 0, {}, 100, 50, 100, checkpoints, usage, {})


def test_one_match(qtbot) -> None:
    from inspector.ui.widgets.find_bar import FindBar
    bar = FindBar()
    qtbot.addWidget(bar)
    bar.field.setText("budget")
    bar.set_result(-1, 1)
    assert bar._count.text() == "1 match"
    bar.set_result(-1, 2)
    assert bar._count.text() == "2 matches"


def test_one_checkpoint_in_one_run() -> None:
    from inspector.ui.widgets.storage_view import summary_text
    assert "1 checkpoint in 1 run \u00b7" in summary_text(_report(1, 1))
    assert "3 checkpoints in 2 runs" in summary_text(_report(2, 3))


def test_one_other_run(qtbot) -> None:
    import pyqtgraph as pg

    from inspector.ui.widgets import storage_charts as charts
    chart = charts.Chart("Share by run", size_axis="bottom")
    qtbot.addWidget(chart)
    charts.draw_runs(chart, _report(charts.TOP + 1, charts.TOP + 1))
    texts = [i.textItem.toPlainText() for i in chart.getPlotItem().items if isinstance(i, pg.TextItem)]
    assert any(t.startswith("1 other run ") or t == "1 other run" for t in texts), texts
    assert not any("other runs" in t for t in texts)
