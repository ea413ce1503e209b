"""The Storage view's time axis labels ticks in one format that tells them apart, for spans
from a fraction of a second to years; the header keeps long notes to one line (all of them in
its tooltip)."""

from __future__ import annotations

import re
import sqlite3
import time
from pathlib import Path

import pytest
from PySide6.QtGui import QFont, QFontMetrics

from inspector.record import Checkpointer
from inspector.ui.session import StoreSession
from inspector.ui.widgets.storage_charts import TimeAxis
from inspector.ui.widgets.storage_view import StorageView
from tests.retention.stores import chat

T0 = time.mktime((2026, 12, 1, 23, 2, 17, 0, 0, -1)) + 0.13     # late in a day: long spans cross midnight
# what the labels of each kind of step look like (one format per span)
FORMATS = {
    "fraction": r"\d\d:\d\d\.\d+",
    "seconds": r"(\w{3} \d\d )?\d\d:\d\d:\d\d",
    "minutes": r"(\w{3} \d\d )?\d\d:\d\d",
    "days": r"\w{3} \d\d",
    "months": r"\d{4}-\d\d",
}


def _kind(step: float) -> str:
    if step < 1:
        return "fraction"
    return "seconds" if step < 60 else "minutes" if step < 86_400 else "days" if step < 30 * 86_400 else "months"


def _axis_labels(axis: TimeAxis, low: float, high: float, width: int) -> list[tuple[float, list[str]]]:
    """(spacing, labels) of every tick level the axis draws over ``low``..``high`` (with the
    font metrics pyqtgraph gives it before it asks for ticks)."""
    axis.fontMetrics = QFontMetrics(QFont())
    return [(spacing, axis.tickStrings(values, 1, spacing)) for spacing, values in axis.tickValues(low, high, width)]


@pytest.mark.parametrize("span", [0.004, 0.3, 2.5, 45, 600, 5 * 3600, 40 * 3600, 6 * 86_400, 120 * 86_400,
                                  3 * 365 * 86_400])
@pytest.mark.parametrize("width", [260, 440, 900])
def test_time_ticks_have_one_format_and_labels_that_differ(qtbot, span: float, width: int) -> None:
    axis = TimeAxis(orientation="bottom")
    levels = _axis_labels(axis, T0, T0 + span, width)
    assert len(levels) == 1, levels                         # one level of ticks, so one format
    spacing, labels = levels[0]
    assert len(labels) >= 2 and len(set(labels)) == len(labels), labels
    pattern = FORMATS[_kind(spacing)]
    assert all(re.fullmatch(pattern, label) for label in labels), (pattern, labels)
    if _kind(spacing) in ("seconds", "minutes"):            # a date on all of them or on none
        assert len({len(label) for label in labels}) == 1, labels
    widest = max(QFontMetrics(QFont()).horizontalAdvance(t) for t in labels)
    assert widest < spacing * width / span                  # side by side, none over the next


def test_a_run_recorded_within_a_second_is_labelled_in_fractions_that_differ(qtbot) -> None:
    """The tester's case: ticks of a run written in well under a second read "02:17.1" thrice."""
    axis = TimeAxis(orientation="bottom")
    [(spacing, labels)] = _axis_labels(axis, T0, T0 + 0.25, 430)
    assert spacing < 0.1 and labels[0].startswith("02:17.") and len(set(labels)) == len(labels) >= 3


def _store_with_notes(path: Path) -> None:
    """A native store whose usage report has notes: a run's checkpoint rows deleted behind the
    store's back (its pieces stay, reached by no checkpoint) and a piece missing."""
    for name in ("kept", "gone"):
        with Checkpointer(path, name=name) as cp:
            chat(cp, 20)
    conn = sqlite3.connect(path)
    gone = conn.execute("SELECT id FROM ci_runs WHERE name = 'gone'").fetchone()[0]
    conn.execute("DELETE FROM ci_checkpoints WHERE run_id = ?", (gone,))
    conn.execute("DELETE FROM ci_runs WHERE id = ?", (gone,))
    conn.execute("DELETE FROM ci_blobs WHERE rowid = (SELECT MAX(rowid) FROM ci_blobs)")
    conn.commit()
    conn.close()


def test_long_notes_stay_on_one_line_of_the_header_with_all_of_them_in_its_tooltip(qtbot, tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    _store_with_notes(path)
    session = StoreSession()
    view = StorageView(session)
    qtbot.addWidget(view)
    view.resize(640, 700)
    view.show()
    try:
        with qtbot.waitSignal(view.report_ready, timeout=30_000) as got:
            session.open(str(path))
        notes = " ".join(got.args[0].notes)
        assert "missing" in notes and "no checkpoint reaches" in notes
        assert "missing" not in view.summary.text() and "on disk" in view.summary.text()
        label = view.notes
        qtbot.waitUntil(lambda: label.text().endswith("\u2026"))
        assert notes.startswith(label.text()[:-1]) and notes in label.toolTip().replace("&#x27;", "'")
        line = label.fontMetrics().lineSpacing()
        assert label.height() < 2 * line
        assert view.header.height() <= view.summary.height() + label.height() + 20   # nothing cut off
        view.resize(2400, 700)                      # room for all of it: no ellipsis, no tooltip
        qtbot.waitUntil(lambda: label.text() == notes)
        assert label.toolTip() == ""
    finally:
        session.shutdown()
