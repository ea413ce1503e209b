"""The Storage panel: why the open store is the size it is, in charts, live; and prune.

Every report is computed by ``inspector.usage`` in the session's task runner (never on the
GUI thread); a newer request (another run, another store, Refresh) supersedes an older one.
While the panel is visible, every write to the store schedules a new report: the session's
``written``, not its ``changed``, since a prune's piece collection, a VACUUM or a WAL
checkpoint change the totals and no listed row. A steady writer still gets a report every
``LIVE_DEBOUNCE_MS`` or so (the wait is not restarted by each write, and a report being
computed is finished, then followed by one more); hidden, the panel only notes that it is stale.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from inspector.ui.availability import NO_STORE, set_available
from inspector.humanize import fmt_size, plural
from inspector.model import RunInfo
from inspector.ui import style
from inspector.ui.session import StoreSession
from inspector.ui.widgets.elided_label import ElidedLabel
from inspector.ui.widgets.store_status import kind_name
from inspector.ui.widgets import storage_charts as charts
from inspector.usage.frameworks import LOG_KINDS
from inspector.usage.report import UsageReport

LIVE_DEBOUNCE_MS = 2500
PARTS = {"native": "field", "langgraph": "channel"}     # what a store's bytes are split by (else: see _draw)
PRUNABLE = ("native", "langgraph")      # the kinds prune knows (other frameworks delete their own sessions)
KEY = "storage-report"


def compute(store: Any, run_id: str | None) -> UsageReport:
    """The report (worker thread)."""
    from inspector.usage.api import store_usage
    return store_usage(store, run_id)


class StorageView(QWidget):
    """Summary line, six charts in a grid that reflows with the width, Refresh and Prune…."""

    prune_requested = Signal()
    report_ready = Signal(object)     # UsageReport (tests and the prune dialog use it)

    def __init__(self, session: StoreSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.run: RunInfo | None = None
        self.report: UsageReport | None = None
        self._stale = True
        self._measuring = False     # a report is being computed
        self._again = False         # the store was written meanwhile: measure once more after it
        self._columns = 0
        self.summary = QLabel("Open a store to see where its bytes go.")
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.notes = ElidedLabel()      # what the figures leave out: one line, all of it in its tooltip
        style.mute(self.notes)
        self.notes.hide()
        self.refresh_button = QPushButton("Refresh")
        self.prune_button = QPushButton("Prune\u2026")
        self.refresh_button.clicked.connect(self.refresh)
        self.prune_button.clicked.connect(self.prune_requested)
        self.charts = {
            "growth": charts.Chart("Store growth", date_axis=True),
            "runs": charts.Chart("Share by run", size_axis="bottom"),
            "fields": charts.Chart("Share by field", size_axis="bottom"),
            "checkpoints": charts.Chart("State size and stored cost per checkpoint"),
            "score": charts.Chart("Checks passed over the timeline", size_axis=None),
            "tradeoff": charts.Chart("Interval trade-off: bytes written vs replay"),
        }
        self._build()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(LIVE_DEBOUNCE_MS)
        self._timer.timeout.connect(self._on_timer_timeout)
        session.opened.connect(lambda _info: self.store_opened())
        session.closed.connect(self._on_store_switched)
        session.written.connect(self._on_session_written)
        self._set_enabled(False)

    # -- construction ------------------------------------------------------------------
    def _build(self) -> None:
        header = self.header = QFrame()
        style.polish(header, "panel_header")
        row = QHBoxLayout(header)
        row.setContentsMargins(10, 6, 8, 6)
        title = style.bold(QLabel("Storage"))
        row.addWidget(title)
        text = QVBoxLayout()
        text.setSpacing(0)
        text.addWidget(self.summary)
        text.addWidget(self.notes)
        row.addLayout(text, 1)
        row.addWidget(self.refresh_button)
        row.addWidget(self.prune_button)
        self.grid = QGridLayout()
        self.grid.setContentsMargins(8, 8, 8, 8)
        self.grid.setSpacing(8)
        body = QWidget()
        body.setLayout(self.grid)
        scroll = self.charts_area = QScrollArea()   # a short dock scrolls the charts instead of growing the window
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(body)
        scroll.hide()                      # no store, no charts (empty axes would mean nothing)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(header)
        layout.addWidget(scroll, 1)
        layout.addStretch(0)
        self._reflow()

    def _reflow(self) -> None:
        columns = 3 if self.width() >= 1100 else 2 if self.width() >= 560 else 1
        if columns == self._columns:
            return
        self._columns = columns
        for n, chart in enumerate(self.charts.values()):
            self.grid.removeWidget(chart)
            self.grid.addWidget(chart, n // columns, n % columns)
        for c in range(3):
            self.grid.setColumnStretch(c, 1 if c < columns else 0)

    def resizeEvent(self, event: Any) -> None:  # Qt override
        super().resizeEvent(event)
        self._reflow()

    def showEvent(self, event: Any) -> None:  # Qt override
        super().showEvent(event)
        if self._stale and self.session.store is not None:
            self.refresh()

    # -- public --------------------------------------------------------------------------
    def store_opened(self, run: RunInfo | None = None) -> None:
        """A store was opened (or is open when the view is built, ``run`` selected in it):
        measure it, with ``run``'s checkpoints in the per-run charts."""
        self._on_store_switched(run)

    def changeEvent(self, event: Any) -> None:  # Qt override
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self.apply_theme()

    def set_run(self, run: RunInfo | None) -> None:
        """Show ``run``'s checkpoints in the per-run charts."""
        if (run.id if run else None) == (self.run.id if self.run else None):
            return
        self.run = run
        self._schedule(now=True)

    def refresh(self) -> None:
        """Compute a new report in the background."""
        store = self.session.store
        if store is None:
            return
        self._stale = False
        self._measuring, self._again = True, False
        run_id = self.run.id if self.run is not None else None
        set_available(self.refresh_button, False, "measuring the store; the report comes in a moment.")
        self.summary.setText(self.summary.text() if self.report else "Measuring the store \u2026")
        generation = self.session.generation
        self.session.runner.run(lambda: compute(store, run_id),
                                lambda report: self._on_report(generation, report),
                                self._on_failed, key=KEY)

    def apply_theme(self) -> None:
        """Repaint every chart in the current theme."""
        style.polish(self.header, "panel_header")
        style.mute(self.notes)
        for chart in self.charts.values():
            chart.apply_theme()
        if self.report is not None:
            self._draw(self.report)

    # -- slots ---------------------------------------------------------------------------
    def _schedule(self, now: bool = False) -> None:
        self._stale = True
        if self.isVisible():
            if now:
                self._timer.stop()
                self.refresh()
            elif not self._timer.isActive():
                self._timer.start()

    def _on_store_switched(self, run: RunInfo | None = None) -> None:
        self.report = None
        self.run = run
        self._set_enabled(self.session.store is not None)
        self.summary.setText("Measuring the store \u2026" if self.session.store else "Open a store to see where its bytes go.")
        self.notes.hide()
        self.charts_area.setVisible(self.session.store is not None)
        for chart in self.charts.values():
            chart.show_empty("")
        self._schedule(now=True)

    def _on_session_written(self) -> None:
        self._schedule()

    def _on_timer_timeout(self) -> None:
        if self._measuring:         # a big store's report takes long: finish it, then measure again
            self._again = True
        else:
            self.refresh()

    def _measured(self) -> None:
        self._measuring = False
        set_available(self.refresh_button, True)
        if self._again:
            self._again = False
            self._schedule()

    def _on_report(self, generation: int, report: UsageReport) -> None:
        self._measured()
        if not self.session.is_current(generation):
            return
        self.report = report
        self._draw(report)
        self.report_ready.emit(report)

    def _on_failed(self, message: str) -> None:
        self._measured()
        self.notes.hide()
        self.summary.setText(f"<span style='color:{style.theme().negative}'>The store could not be measured: "
                             f"{message}</span>")

    def _set_enabled(self, enabled: bool) -> None:
        set_available(self.refresh_button, enabled, NO_STORE)
        info = self.session.info
        if info is not None and info.kind not in PRUNABLE:
            set_available(self.prune_button, False, f"prune removes checkpoints from Checkpoint Inspector stores and "
                                                    f"LangGraph databases; this {kind_name(info)} store's framework "
                                                    "deletes its own sessions.")
        else:
            set_available(self.prune_button, enabled, NO_STORE)

    # -- drawing ---------------------------------------------------------------------------
    def _draw(self, report: UsageReport) -> None:
        self.summary.setText(summary_text(report))
        self.notes.set_full_text(" ".join(report.notes))
        self.notes.setVisible(bool(report.notes))
        charts.draw_growth(self.charts["growth"], report)
        charts.draw_runs(self.charts["runs"], report)
        parts = self.charts["fields"]
        parts.title = f"Share by {PARTS.get(report.kind) or ('checkpoint kind' if report.kind in LOG_KINDS else 'step')}"
        parts.apply_theme()
        charts.draw_fields(parts, report)
        run_name = self.run.name if self.run is not None else ""
        cost = self.charts["checkpoints"]
        cost.title = "State size and stored cost" if run_name else "State size and stored cost per checkpoint"
        cost.subject = run_name
        cost.apply_theme()
        charts.draw_checkpoints(cost, report)
        charts.draw_score(self.charts["score"], report)
        charts.draw_tradeoff(self.charts["tradeoff"], report)


def summary_text(report: UsageReport) -> str:
    """One line: on disk, free pages, content vs rows, and for LangGraph our estimate (the
    report's notes go below it, in ``StorageView.notes``)."""
    parts = [f"<b>{fmt_size(report.total_bytes)}</b> on disk"]
    if report.free_bytes:
        parts.append(f"{fmt_size(report.free_bytes)} free pages")
    parts.append(f"{plural(report.checkpoints, 'checkpoint')} in {plural(len(report.runs), 'run')}")
    if report.kind in PRUNABLE:
        parts.append(f"states decode to {fmt_size(report.logical_bytes)}")
        parts.append(f"stored: {fmt_size(report.content_bytes)} content + {fmt_size(report.rows_bytes)} rows")
    else:       # another framework's sessions: the data it wrote (no content/rows split)
        parts.append(f"session data: {fmt_size(report.content_bytes)}")
    if report.ours is not None:
        parts.append(f"in this project's store: about {fmt_size(report.ours.bytes)}")
    return " \u00b7 ".join(parts)
