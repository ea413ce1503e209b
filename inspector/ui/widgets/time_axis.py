"""A chart's time axis: one tick step for the visible span, one label format for that step, and
labels that always tell the ticks apart (pyqtgraph's date axis mixes two levels of ticks, each
with its own format, and repeats a label when ticks are closer than its format shows)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence

import pyqtgraph as pg
from PySide6.QtGui import QFont, QFontMetrics

from inspector.ui.formatting import local_time

DAY = 86_400
# tick steps in seconds, short to long: 1-2-5 below a second, then clock-friendly ones
STEPS = (*(m * 10.0 ** e for e in range(-6, 0) for m in (1, 2, 5)),
         1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 2 * 3600, 3 * 3600, 6 * 3600, 12 * 3600,
         DAY, 2 * DAY, 7 * DAY, 14 * DAY)
MONTHS = (1, 2, 3, 6, 12, 24, 60, 120, 600)     # longer steps count calendar months
MONTH = 30 * DAY        # a step at least this long is given in months
GAP = 18                # px between two labels
MIN_LABEL = 30          # px: narrower than any label


def time_ticks(low: float, high: float, width: float, text_width: Callable[[str], float]) -> tuple[float, list[float]]:
    """The shortest step whose labels fit ``width`` px side by side between ``low`` and
    ``high`` (seconds since the epoch), and its ticks; (0, []) for an empty span."""
    if not (math.isfinite(low) and math.isfinite(high) and high > low and width > 0):
        return 0.0, []
    per_px = (high - low) / width
    steps = [*((float(s), False) for s in STEPS), *((n * float(MONTH), True) for n in MONTHS)]
    ticks: list[float] = []
    step = 0.0
    for step, months in steps:
        room = step / per_px
        if room < MIN_LABEL:      # no label is that narrow: not worth formatting
            continue
        ticks = _month_ticks(low, high, round(step / MONTH)) if months else _ticks(low, high, step)
        if all(text_width(label) + GAP <= room for label in labels(ticks, step) if label):
            return step, ticks
    return step, ticks


def labels(values: Sequence[float], step: float) -> list[str]:
    """One label format for ticks ``step`` seconds apart, as precise as the step; clock times
    of ticks on more than one day, or a format that would say two ticks alike, gain the date
    (the year …). Times no clock has (a damaged store's) are ''."""
    decimals = max(0, math.ceil(-math.log10(step) - 1e-9)) if 0 < step < 1 else 0
    if step < 1:
        formats = ["%M:%S", "%H:%M:%S", "%Y-%m-%d %H:%M:%S"]
    elif step < 60:
        formats = ["%H:%M:%S", "%b %d %H:%M:%S", "%Y-%m-%d %H:%M:%S"]
    elif step < DAY:
        formats = ["%H:%M", "%b %d %H:%M", "%Y-%m-%d %H:%M", "%Y-%m-%d %H:%M %z"]
    elif step < MONTH:
        formats = ["%b %d", "%Y-%m-%d"]
    else:
        formats = ["%Y-%m", "%Y-%m-%d"]
    formats.append("%Y-%m-%d %H:%M:%S %z")
    days = {local[:3] for v in values if v > 0 and (local := local_time(v)) is not None}
    if step < DAY and len(days) > 1:       # "00:00" after "18:00" is the next day: say which
        formats = [f for f in formats if "%d" in f]
    out: list[str] = []
    for fmt in formats:
        out = [_clock(fmt, v, decimals) for v in values]
        shown = [s for s in out if s]
        if len(set(shown)) == len(shown):
            break
    return out


def _clock(fmt: str, ts: float, decimals: int = 0) -> str:
    """``ts`` as local time in ``fmt`` (then ``decimals`` of its second); '' for a time no clock
    has (a damaged store's times may be negative, infinite or years past 9999)."""
    if not ts > 0 or not math.isfinite(ts):
        return ""
    scale = 10 ** decimals
    whole, part = divmod(round(ts * scale), scale)      # rounded once: 0.99999 s is the next second
    local = local_time(whole)
    if local is None:
        return ""
    text = time.strftime(fmt, local)
    if not decimals:
        return text
    if "%z" in fmt:   # (the fraction belongs after the seconds)
        clock, _, zone = text.rpartition(" ")
        return f"{clock}.{part:0{decimals}d} {zone}"
    return f"{text}.{part:0{decimals}d}"


def _ticks(low: float, high: float, step: float) -> list[float]:
    """Multiples of ``step`` in local time (an hour step falls on the hour, a day on midnight)."""
    local = local_time(low)
    offset = float(local.tm_gmtoff) if local is not None and step >= 60 else 0.0
    first = math.ceil((low + offset) / step - 1e-9) * step - offset
    count = int((high - first) / step + 1e-9) + 1
    return [first + i * step for i in range(min(max(count, 0), 1000))]


def _month_ticks(low: float, high: float, months: int) -> list[float]:
    """The first of every ``months``-th month (local time) from ``low`` to ``high``."""
    start = local_time(low)
    if start is None:
        return []
    n = start.tm_year * 12 + start.tm_mon - 1
    n = -(-n // months) * months
    out: list[float] = []
    while len(out) < 1000:
        year, month = divmod(n, 12)
        if year > 9999:
            break
        ts = time.mktime((year, month + 1, 1, 0, 0, 0, 0, 0, -1))
        if ts > high:
            break
        if ts >= low:
            out.append(ts)
        n += months
    return out


class TimeAxis(pg.DateAxisItem):
    """pyqtgraph's date axis (its limits) with ``time_ticks`` for ticks and ``labels`` for their
    text: one level of ticks, one format, no label twice."""

    def tickValues(self, minVal, maxVal, size):  # pyqtgraph override
        metrics = getattr(self, "fontMetrics", None) or QFontMetrics(self.style.get("tickFont") or QFont())
        step, ticks = time_ticks(minVal, maxVal, size, metrics.horizontalAdvance)
        return [(step, ticks)]

    def tickStrings(self, values, scale, spacing):  # pyqtgraph override
        return labels(values, spacing)
