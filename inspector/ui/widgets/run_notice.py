"""The selected run's trouble, above its timeline: a stuck/crashed diagnosis or a failed run's error.

It is where the user looks first, so a stuck run says why it is stuck (and offers the
resume) without opening a tab; a failed run shows its error in full.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from inspector.model import RunInfo
from inspector.ui import icons, style

HUES = {"stuck": "#bf8700", "crashed": "#cf222e", "failed": "#cf222e"}
INTERRUPTED_HUE = style.STATUS_COLORS["interrupted"]
MAX_DETAIL_LINES = 6


class RunNotice(QFrame):
    """A strip for the selected run: ``show_run(run, diagnosis)``; hidden when nothing is wrong.

    Signals: ``resume_requested()`` (its button: "Resume from Last Good Checkpoint…").
    """

    resume_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("runNotice")
        self.headline = QLabel(self)
        self.headline.setObjectName("runNoticeHeadline")
        self.headline.setWordWrap(True)
        self.headline.setTextFormat(Qt.TextFormat.RichText)
        self.detail = QLabel(self)
        self.detail.setObjectName("runNoticeDetail")
        self.detail.setWordWrap(True)
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.detail.setFont(style.mono_font(-1))
        self.resume_button = QPushButton(icons.kind_icon("resume"), "Resume\u2026", self)
        self.resume_button.setToolTip("Resume from the last good checkpoint (the Resume dialog shows exactly what runs)")
        self.resume_button.clicked.connect(self.resume_requested)
        self.more = QToolButton(self)
        self.more.setText("Details")
        self.more.setCheckable(True)
        self.more.setAutoRaise(True)
        self.more.toggled.connect(self.detail.setVisible)
        text = QVBoxLayout()
        text.setSpacing(2)
        text.addWidget(self.headline)
        text.addWidget(self.detail)
        row = QHBoxLayout(self)
        row.setContentsMargins(10, 6, 8, 6)
        row.addLayout(text, 1)
        row.addWidget(self.more, 0, Qt.AlignmentFlag.AlignTop)
        row.addWidget(self.resume_button, 0, Qt.AlignmentFlag.AlignTop)
        self.status = ""
        self.hide()

    def show_run(self, run: RunInfo | None, status: str = "", diagnosis: str | None = None,
                 waiting: str = "") -> None:
        """Show what is wrong with ``run`` (``status`` as the runs list shows it), or hide.
        ``waiting``: what a LangGraph thread's head waits on at ``interrupt()`` (a line each);
        such a thread is resumed with an answer (the Resume dialog asks for it)."""
        status = status or (run.status if run is not None else "")
        if run is None or (status not in HUES and not run.last_error and not waiting):
            self.status = ""
            self.hide()
            return
        self.status = status
        if status == "interrupted" and (run.last_error or waiting) and not diagnosis:
            # the agent stopped it on purpose (waiting for a human, a budget…): its reason, not an error
            first, rest = _split(run.last_error or waiting)
            self._fill("interrupted", f"<b>Interrupted:</b> {html.escape(first)}", rest,
                       resumable=run.resumable or bool(waiting))
        elif status == "failed" or (run.last_error and not diagnosis):
            first, rest = _split(run.last_error or "The run failed without an error message.")
            self._fill("failed", f"<b>Failed:</b> {html.escape(first)}", rest, resumable=run.resumable)
        else:
            first, rest = _split(diagnosis or f"{status}: the run's owner stopped answering.")
            label, _, summary = first.partition(": ")
            summary = summary or label
            if summary.casefold().startswith(label.casefold()):   # "Stuck after #11 …": say it once
                headline = f"<b>{html.escape(summary[:len(label)])}</b>{html.escape(summary[len(label):])}"
            else:
                headline = f"<b>{html.escape(label.capitalize())}:</b> {html.escape(summary)}"
            self._fill(status, headline, rest, resumable=run.resumable)

    def _fill(self, status: str, headline: str, rest: str, *, resumable: bool) -> None:
        self.headline.setText(headline)
        self.detail.setText(rest)
        self.more.setVisible(bool(rest))
        self.detail.setVisible(bool(rest) and (self.more.isChecked() or status == "failed"))
        self.more.setChecked(self.detail.isVisible())
        self.resume_button.setVisible(resumable)
        hue = INTERRUPTED_HUE if status == "interrupted" else HUES.get(status, HUES["failed"])
        style.set_themed_style(self, lambda theme: _notice_sheet(theme, hue))
        self.show()


def _notice_sheet(theme: style.Theme, hue: str) -> str:
    bg, border, _fg = theme.pill_colors(QColor(hue))
    return (f"QFrame#runNotice {{ background: {bg.name(QColor.NameFormat.HexArgb)}; "
            f"border: 1px solid {border.name(QColor.NameFormat.HexArgb)}; "
            "border-radius: 6px; margin: 4px 6px 2px 6px; }")


def _split(text: str) -> tuple[str, str]:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return "", ""
    rest = lines[1:]
    if len(rest) > MAX_DETAIL_LINES:
        rest = rest[:MAX_DETAIL_LINES] + [f"\u2026 {len(lines) - 1 - MAX_DETAIL_LINES} more lines (Metadata tab)"]
    return lines[0], "\n".join(rest)
