"""The Storage view's charts (pyqtgraph), each fed a ``UsageReport`` and painted in the theme."""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QResizeEvent

from inspector.humanize import fmt_size, plural
from inspector.ui import style
from inspector.ui.formatting import elide_middle, visible
from inspector.ui.widgets.time_axis import TimeAxis
from inspector.usage.report import UsageReport

pg.setConfigOptions(antialias=True)
SERIES = ("#2f81f7", "#d4762c", "#2da44e", "#8250df", "#bf3989", "#1b9aaa", "#d4a72c", "#768390")
TOP = 7
LEGEND_ROOM = 0.45        # of a chart's data height, left free above its curves for its legend
LABEL_CHARS = 40          # a bar's name, at most (longer: shortened in the middle)


class SizeAxis(pg.AxisItem):
    """An axis whose ticks read as sizes (KB, MB …)."""

    def tickStrings(self, values, scale, spacing):  # pyqtgraph override
        if self.logMode:
            return [fmt_size(round(10 ** v)) for v in values]
        return [fmt_size(int(v)) if v >= 0 else "" for v in values]

    def tickValues(self, minVal, maxVal, size):  # pyqtgraph override
        if not self.logMode:
            step, ticks = _linear_ticks(minVal, maxVal, max(3, int(size / 45)))
            return [(step, ticks)]
        # log scale: 1, 10, 100 of each size unit; 2, 5 … when the range is short; when even
        # those leave fewer than two labels (a range inside one step), plain steps between
        for steps in ((1, 10, 100), (1, 2, 5, 10, 20, 50, 100, 200, 500)):
            if steps[1] == 10 and maxVal - minVal < 3:
                continue
            ticks = [float(np.log10(m * 1024.0 ** k)) for k in range(6) for m in steps]
            shown = [v for v in ticks if minVal - 1e-9 <= v <= maxVal + 1e-9]
            if len(shown) >= 2:
                return [(1.0, shown)]
        _step, values = _linear_ticks(10.0 ** minVal, 10.0 ** maxVal, 3)
        return [(1.0, [float(np.log10(v)) for v in values if v > 0])]


def _linear_ticks(low: float, high: float, count: int) -> tuple[float, list[float]]:
    """A nice step and its ticks between ``low`` and ``high``: about ``count`` of them, at
    least three when the range has any width (a smaller nice step until they fit: a step
    rounded up to a nice value can leave one label on a short axis, the 0 at its foot hidden)."""
    if not high > low:
        return 0.0, []
    step = _nice_step((high - low) / count)
    ticks: list[float] = []
    while step > 0:
        first = np.ceil(low / step - 1e-9) * step
        ticks = [float(v) for v in np.arange(first, high + step * 1e-6, step)]
        if len(ticks) >= min(3, count):
            break
        smaller = _nice_step(step / 2.01)
        if smaller >= step:
            break
        step = smaller
    return step, ticks


def _nice_step(raw: float) -> float:
    """A tick step in bytes that reads well: 1, 2 or 5 times a power of 1024 or 10."""
    if raw <= 0:
        return 0.0
    unit = 1024 ** int(np.floor(np.log(raw) / np.log(1024))) if raw >= 1024 else 1
    scaled = raw / unit
    for nice in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000):
        if scaled <= nice:
            return float(nice * unit)
    return float(1024 * unit)


class Chart(pg.PlotWidget):
    """One titled chart with the theme's colours and a note shown when it has no data."""

    def __init__(self, title: str, *, size_axis: str | None = "left", date_axis: bool = False) -> None:
        axes = {}
        if size_axis:
            axes[size_axis] = SizeAxis(orientation=size_axis)
        if date_axis:
            axes["bottom"] = TimeAxis(orientation="bottom")
        super().__init__(axisItems=axes)
        self.title = title
        self.subject = ""        # what the chart is of (a run's name), after the title; shortened to fit
        self.fit: Callable[[], None] | None = None    # sets the ranges again when the plot area is resized
        self.setMinimumSize(240, 170)
        self.getPlotItem().getViewBox().sigResized.connect(self._refit)
        self.setMenuEnabled(False)
        self.getPlotItem().hideButtons()
        self.empty = pg.TextItem("", anchor=(0.5, 0.5))
        self.apply_theme()

    def apply_theme(self) -> None:
        """Background, axes and title in the current theme's colours."""
        t = style.theme()
        self.setBackground(t.base)
        item = self.getPlotItem()
        self._show_title()
        for name in ("left", "bottom", "right"):
            axis = item.getAxis(name)
            axis.setPen(pg.mkPen(t.border))
            axis.setTextPen(pg.mkPen(t.muted))
        item.showGrid(x=False, y=True, alpha=0.25 if not t.dark else 0.35)
        self.empty.setColor(QColor(t.muted))

    def _show_title(self) -> None:
        """The title, and the subject after it shortened in the middle to the chart's width (a
        title wider than the chart widened its plot past the frame, which cut the plot's right
        side off); the whole of it is the tooltip then. Names are shown as text, never markup."""
        font = QFont(self.font())
        font.setPointSizeF(10)
        font.setWeight(QFont.Weight.DemiBold)
        metrics = QFontMetrics(font)
        text = self.title
        if self.subject:
            head = f"{self.title} \u2014 "
            room = max(metrics.horizontalAdvance("\u2026") * 8, self.width() - 72 - metrics.horizontalAdvance(head))
            text = head + metrics.elidedText(visible(self.subject), Qt.TextElideMode.ElideMiddle, room)
        whole = f"{self.title} \u2014 {visible(self.subject)}" if self.subject else self.title
        self.setToolTip(whole if text != whole else "")
        self.getPlotItem().setTitle(
            f"<span style='color:{style.theme().text}; font-weight:600'>{html.escape(text)}</span>", size="10pt")

    def resizeEvent(self, event: QResizeEvent) -> None:  # Qt override
        super().resizeEvent(event)
        if self.__dict__.get("subject"):      # (a resize comes before ``__init__`` has set it)
            self._show_title()

    def _refit(self, *_: object) -> None:
        """The plot area changed size (the window, the title's or an axis's room): the ranges
        that depend on it are set again."""
        fit = self.__dict__.get("fit")
        if fit is not None:
            fit()

    def show_empty(self, text: str) -> None:
        """Clear the chart and say why it is empty."""
        item = self.getPlotItem()
        item.clear()
        item.hideAxis("left")
        item.hideAxis("bottom")
        self.empty.setText(text)
        item.addItem(self.empty)
        self.empty.setPos(0.5, 0.5)
        item.setXRange(0, 1)
        item.setYRange(0, 1)


def reset(chart: Chart) -> pg.PlotItem:
    """The chart's plot item cleared, linear and auto-ranged again (after an empty note)."""
    item = chart.getPlotItem()
    chart.fit = None
    item.clear()
    item.setLogMode(False, False)
    for name in ("left", "bottom"):
        item.showAxis(name)
        axis = item.getAxis(name)
        axis.setLogMode(False)
        axis.setTicks(None)
        axis.setStyle(tickLength=-5)
    if item.legend is not None:
        item.legend.clear()
    item.setLabel("bottom", "")
    item.showGrid(x=False, y=True, alpha=0.3)
    item.enableAutoRange()
    return item


def _brush(n: int) -> QColor:
    return QColor(SERIES[n % len(SERIES)])


def _label(name: str) -> str:
    """A bar's name as shown: control characters made visible, a long one shortened in the
    middle (a fork's name ends with what tells it from its origin: "(fork of #8)")."""
    return elide_middle(visible(name), LABEL_CHARS)


def _distinct(labels: list[str], ids: list[str]) -> list[str]:
    """``labels``, those shared by more than one bar followed by their run's short id."""
    seen = Counter(labels)
    return [f"{label} · {run[:8]}" if seen[label] > 1 else label for label, run in zip(labels, ids)]


def _bars(chart: Chart, labels: list[str], values: list[int], total: int) -> None:
    """Horizontal share bars, biggest on top, labelled with name and percentage."""
    item = reset(chart)
    item.showGrid(x=True, y=False, alpha=0.25)
    if not values or total <= 0:
        chart.show_empty("nothing stored yet")
        return
    t = style.theme()
    ys = np.arange(len(values))[::-1]
    item.addItem(pg.BarGraphItem(x0=np.zeros(len(values)), y=ys, height=0.6, width=np.array(values, dtype=float),
                                 brushes=[_brush(n) for n in range(len(values))], pens=[pg.mkPen(None)] * len(values)))
    top = max(values)
    for y, label, value in zip(ys, labels, values):     # the label after the bar's end
        text = pg.TextItem(f"{label}  {100 * value / total:.0f} %", color=QColor(t.text), anchor=(0, 0.5))
        text.setFont(QFont(text.textItem.font().family(), 8))
        text.setPos(value + top * 0.02, y)
        item.addItem(text)
    item.getAxis("left").setTicks([[(float(y), "") for y in ys]])
    item.getAxis("left").setStyle(tickLength=0)
    item.setYRange(-0.6, len(values) - 0.4, padding=0)
    item.setXRange(0, top * 1.9, padding=0)


def draw_growth(chart: Chart, report: UsageReport) -> None:
    """Cumulative stored bytes over time."""
    item = reset(chart)
    if len(report.growth) < 2:
        chart.show_empty("one moment in time: no growth to show")
        return
    xs = np.array([t for t, _ in report.growth])
    ys = np.array([b for _, b in report.growth], dtype=float)
    color = QColor(style.theme().accent)
    fill = QColor(color)
    fill.setAlphaF(0.22)
    item.plot(xs, ys, pen=pg.mkPen(color, width=2), fillLevel=0, brush=fill)
    item.setYRange(0, ys.max() * 1.08, padding=0)


def draw_runs(chart: Chart, report: UsageReport) -> None:
    """Share of the store per run (the biggest, the rest as one bar)."""
    runs = list(report.runs)
    labels = _distinct([_label(r.name) or r.run for r in runs[:TOP]], [r.run for r in runs[:TOP]])
    values = [r.bytes for r in runs[:TOP]]
    rest = sum(r.bytes for r in runs[TOP:])
    if rest:
        labels.append(plural(len(runs) - TOP, "other run"))
        values.append(rest)
    _bars(chart, labels, values, sum(r.bytes for r in runs))


def draw_fields(chart: Chart, report: UsageReport, run: str | None = None) -> None:
    """Share per top-level field (LangGraph channel) of the store, or of one run."""
    fields = report.fields
    if run is not None:
        found = next((r for r in report.runs if r.run == run), None)
        fields = found.fields if found is not None else {}
    items = sorted(fields.items(), key=lambda kv: -kv[1])
    labels = [_label(k) for k, _ in items[:TOP]]
    values = [v for _, v in items[:TOP]]
    rest = sum(v for _, v in items[TOP:])
    if rest:
        labels.append(f"{len(items) - TOP} other fields")
        values.append(rest)
    _bars(chart, labels, values, sum(fields.values()))


def draw_checkpoints(chart: Chart, report: UsageReport) -> None:
    """A run's state size and stored cost per checkpoint (log scale: both stay visible)."""
    item = reset(chart)
    detail = report.detail
    if detail is None or not detail.checkpoints:
        chart.show_empty("select a run")
        return
    seqs = np.array([c.seq for c in detail.checkpoints], dtype=float)
    logical = np.array([max(1, c.logical) for c in detail.checkpoints], dtype=float)
    stored = np.array([max(1, c.stored) for c in detail.checkpoints], dtype=float)
    item.setLogMode(False, True)
    item.getAxis("left").setLogMode(True)
    legend = item.legend or item.addLegend(offset=(8, 4))
    legend.setColumnCount(2)        # one row: the room above the curves stays small
    legend.setLabelTextColor(QColor(style.theme().text))
    item.plot(seqs, logical, pen=pg.mkPen(SERIES[0], width=2), name="state size")
    item.plot(seqs, stored, pen=pg.mkPen(SERIES[1], width=1.5), name="stored by it",
              symbol="o" if len(seqs) <= 60 else None, symbolSize=4, symbolBrush=SERIES[1], symbolPen=None)
    low, high = np.log10(min(logical.min(), stored.min())), np.log10(max(logical.max(), stored.max()))
    chart.fit = lambda: _legend_room(chart, float(low), float(high))
    chart.fit()


def _legend_room(chart: Chart, low: float, high: float) -> None:
    """Room above the curves for the legend (top left), which otherwise sat on them: at least
    ``LEGEND_ROOM`` of the data's height, and in a short chart as many pixels as the legend is
    tall (its two rows covered the top curve at 1024×700)."""
    item = chart.getPlotItem()
    span = max(high - low, 0.5)
    legend = 0.0
    if item.legend is not None:     # its offset, its height (not laid out yet: ~31 px a row) and a margin
        rows = -(-len(item.legend.items) // max(1, item.legend.columnCount))
        legend = 4 + max(item.legend.boundingRect().height(), 31.0 * rows) + 6
    view = item.getViewBox().height()
    bottom = low - 0.05 * span
    top = high + LEGEND_ROOM * span
    if view > legend + 40:     # laid out: the curves keep the height below the legend
        top = max(top, bottom + (high - bottom) * view / (view - legend))
    item.setYRange(bottom, top, padding=0)


def draw_score(chart: Chart, report: UsageReport) -> None:
    """Checks passed (and the total) along the run's timeline."""
    item = reset(chart)
    detail = report.detail
    if detail is None or not detail.checkpoints:
        chart.show_empty("select a run")
        return
    if not any(c.checks_total for c in detail.checkpoints):
        chart.show_empty("this run records no checks")
        return
    seqs = np.array([c.seq for c in detail.checkpoints] + [detail.checkpoints[-1].seq + 1], dtype=float)
    passed = np.array([c.checks_passed for c in detail.checkpoints], dtype=float)
    total = np.array([c.checks_total for c in detail.checkpoints], dtype=float)
    good = QColor(style.theme().positive)
    fill = QColor(good)
    fill.setAlphaF(0.2)
    item.plot(seqs, total, stepMode="center", pen=pg.mkPen(style.theme().muted, width=1, style=Qt.PenStyle.DashLine))
    # the fill and the line apart: a filled step curve draws its pen down to the fill level at
    # both ends, which read as the checks falling to 0 after the last checkpoint
    item.plot(seqs, passed, stepMode="center", pen=None, fillLevel=0, brush=fill)
    item.plot(seqs, passed, stepMode="center", pen=pg.mkPen(good, width=2))
    item.setYRange(0, max(1.0, float(total.max())) * 1.1, padding=0)


def draw_tradeoff(chart: Chart, report: UsageReport) -> None:
    """Snapshot every N: bytes written against operations a recovery replays (mean)."""
    item = reset(chart)
    points = report.detail.tradeoff if report.detail is not None else ()
    if len(points) < 2:
        chart.show_empty("select a run" if report.detail is None
                         else "the run has too few checkpoints" if report.kind == "native"
                         else "LangGraph records no operations between checkpoints" if report.kind == "langgraph"
                         else "its framework keeps every step: no interval to choose")
        return
    t = style.theme()
    xs = np.array([p.replay_mean for p in points], dtype=float)
    ys = np.array([p.write_bytes for p in points], dtype=float)
    item.plot(xs, ys, pen=pg.mkPen(SERIES[3], width=1.5), symbol="o", symbolSize=7, symbolBrush=SERIES[3],
              symbolPen=pg.mkPen(t.base))
    for p, x, y in zip(points, xs, ys):
        label = pg.TextItem(f"every {p.every}", color=QColor(t.muted), anchor=(-0.1, 1.1))
        label.setFont(QFont(label.textItem.font().family(), 8))
        label.setPos(x, y)
        item.addItem(label)
    item.setLabel("bottom", "operations replayed after a crash (mean)", color=t.muted)
    item.setXRange(0, max(1.0, float(xs.max())) * 1.25, padding=0)
    item.setYRange(0, float(ys.max()) * 1.15, padding=0)
