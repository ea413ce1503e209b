"""One task on the board: title, progress, review pill and reviewer, checks ✓/✗/?."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QContextMenuEvent, QGuiApplication, QMouseEvent, QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QMenu, QProgressBar, QSizePolicy, QVBoxLayout, QWidget

from inspector.taskstate import NODE_TASK_PREFIX
from inspector.ui.formatting import visible, visible_html
from inspector.ui.widgets.palette import REVIEW_HUES, STATUS_HUES, accent, muted_text, theme_changed, tint

CHECK_GLYPHS = {True: ("✓", "#1a7f37"), False: ("✗", "#cf222e"), None: ("?", "#8c959f")}
REVIEW_WORDS = {"none": "", "requested": "review requested", "approved": "approved",
                "changes_requested": "changes requested"}


def review_pill(palette: QPalette, status: str) -> str:
    """Rich text of a rounded-looking pill for a review status ('' for none)."""
    word = REVIEW_WORDS.get(status, status)
    if not word:
        return ""
    hue = REVIEW_HUES.get(status, REVIEW_HUES["none"])
    return (f"<span style='background-color:{tint(palette, hue, 0.25).name()};"
            f"color:{accent(palette, hue).name()};'>&nbsp;{visible_html(word)}&nbsp;</span>")


def check_line(palette: QPalette, check: dict) -> str:
    """Rich text of one check: glyph, name and detail."""
    glyph, hue = CHECK_GLYPHS.get(check.get("passed"), CHECK_GLYPHS[None])
    detail = check.get("detail")
    muted = muted_text(palette).name()
    tail = f" <span style='color:{muted}'>— {visible_html(detail)}</span>" if detail else ""
    return (f"<span style='color:{accent(palette, hue).name()}'><b>{glyph}</b></span>&nbsp;"
            f"{visible_html(check.get('name', ''))}{tail}")


OUTPUT_CHARS = 80


def card_tooltip(task: dict) -> str:
    """Tooltip of a card: id, review with reviewer and note, checks with details."""
    review = task.get("review") or {}
    lines = [f"<b>{visible_html(task.get('title', ''))}</b> <i>({visible_html(task.get('id', ''))})</i>",
             f"status: {task.get('status')} · progress {round(100 * task.get('progress', 0))}%"]
    if review.get("status", "none") != "none":
        who = f" by {visible_html(review['reviewer'])}" if review.get("reviewer") else ""
        lines.append(f"review: {REVIEW_WORDS.get(review['status'], review['status'])}{who}")
        if review.get("note"):
            lines.append(f"note: “{visible_html(review['note'])}”")
    for check in task.get("checks") or []:
        glyph = CHECK_GLYPHS.get(check.get("passed"), CHECK_GLYPHS[None])[0]
        detail = f" — {visible_html(check['detail'])}" if check.get("detail") else ""
        lines.append(f"{glyph} {visible_html(check.get('name', ''))}{detail}")
    if task.get("agent"):
        lines.append(f"agent: {visible_html(task['agent'])}")
    if task.get("output"):
        lines.append(f"output: {visible_html(task['output'][:1500])}")
    return "<br>".join(lines)


HISTORY_TIP = "Double-click (or right-click ▸ Task History…): every checkpoint where this task changed"


def has_history(task: dict | None) -> bool:
    """Whether a task has a history to show: a LangGraph step's node task lives one step only."""
    return task is not None and not str(task.get("id", "")).startswith(NODE_TASK_PREFIX)


class TaskCard(QFrame):
    """A reusable card; ``set_task`` updates it in place (no widget churn while scrubbing).

    Signals: ``history_requested(task id)`` — double-click or its context menu.
    """

    history_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Minimum)  # width = column; height = text
        self._task: dict | None = None
        self.title = QLabel(self)
        self.title.setTextFormat(Qt.TextFormat.PlainText)   # a title is the agent's text, never markup
        self.title.setWordWrap(True)
        font = self.title.font()
        font.setBold(True)
        self.title.setFont(font)
        self.progress = QProgressBar(self)
        self.progress.setRange(0, 100)
        self.progress.setTextVisible(False)
        self.progress.setFixedHeight(6)
        self.percent = QLabel(self)
        self.percent.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.progress.setMinimumWidth(24)
        self.review = QLabel(self)
        self.review.setTextFormat(Qt.TextFormat.RichText)
        self.review.setWordWrap(True)
        self.checks = QLabel(self)
        self.checks.setTextFormat(Qt.TextFormat.RichText)
        self.checks.setWordWrap(True)
        self.output = QLabel(self)        # a task's output and agent, when the store has them (CrewAI)
        self.output.setTextFormat(Qt.TextFormat.PlainText)
        self.output.setWordWrap(False)   # one line (clipped by the column; the tooltip has it all)
        self.output.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.output.setVisible(False)
        progress_row = QHBoxLayout()
        progress_row.setSpacing(6)
        progress_row.addWidget(self.progress, 1)
        progress_row.addWidget(self.percent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 8)
        layout.setSpacing(4)
        layout.addWidget(self.title)
        layout.addLayout(progress_row)
        layout.addWidget(self.review)
        layout.addWidget(self.checks)
        layout.addWidget(self.output)
        self._apply_palette()

    @property
    def task(self) -> dict | None:
        """The task shown."""
        return self._task

    def changeEvent(self, event: QEvent) -> None:  # Qt override: a theme switch redraws the card
        super().changeEvent(event)
        if theme_changed(self, event):
            self._apply_palette()
            task, self._task = self._task, None
            if task is not None:
                self.set_task(task)

    def _apply_palette(self) -> None:
        pal = self.palette()
        pal.setColor(QPalette.ColorRole.Window, QGuiApplication.palette().color(QPalette.ColorRole.Base))
        self.setPalette(pal)
        small = self.percent.font()
        small.setPointSizeF(max(7.0, small.pointSizeF() * 0.9))
        self.percent.setFont(small)
        self.percent.setFixedWidth(self.percent.fontMetrics().horizontalAdvance("100%") + 2)
        self.checks.setFont(small)
        self.review.setFont(small)
        self.output.setFont(small)
        self.output.setStyleSheet(f"color: {muted_text(pal).name()}")

    def set_task(self, task: dict) -> None:
        """Show a (validated) task; does nothing when it is unchanged."""
        if task == self._task:
            return
        self._task = task
        pal = self.palette()
        self.title.setText(visible(str(task.get("title") or task.get("id", ""))))
        value = round(100 * float(task.get("progress") or 0.0))
        self.progress.setValue(value)
        bar = self.progress.palette()
        bar.setColor(QPalette.ColorRole.Highlight, accent(pal, STATUS_HUES.get(str(task.get("status")), "#0969da")))
        self.progress.setPalette(bar)
        self.percent.setText(f"{value}%")
        self._set_review(pal, task.get("review") or {})
        checks = task.get("checks") or []
        self.checks.setText("<br>".join(check_line(pal, c) for c in checks))
        self.checks.setVisible(bool(checks))
        output = task.get("output") or ""
        agent = task.get("agent") or ""
        text = " ".join((((f"{agent}: " if agent else "") + output) if output else "").split())
        self.output.setText(visible(text if len(text) <= OUTPUT_CHARS else text[:OUTPUT_CHARS - 1] + "…"))
        self.output.setVisible(bool(text))
        tip = card_tooltip(task)
        self.setToolTip(f"{tip}<br><i>{HISTORY_TIP}</i>" if has_history(task) else tip)

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:  # Qt override: the task's history
        if has_history(self._task) and event.button() == Qt.MouseButton.LeftButton:
            assert self._task is not None
            self.history_requested.emit(str(self._task["id"]))
            return
        super().mouseDoubleClickEvent(event)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:  # Qt override
        if not has_history(self._task):
            super().contextMenuEvent(event)
            return
        assert self._task is not None
        task_id = str(self._task["id"])
        menu = QMenu(self)
        menu.addAction("Task History\u2026", lambda: self.history_requested.emit(task_id))
        menu.exec(event.globalPos())

    def _set_review(self, pal: QPalette, review: dict) -> None:
        status = review.get("status", "none")
        pill = review_pill(pal, status)
        reviewer = review.get("reviewer")
        muted = muted_text(pal).name()
        name = visible_html(reviewer or "").replace("-", "&#8209;").replace(" ", "&nbsp;")
        who = f" <span style='color:{muted}'>{name}</span>" if reviewer and pill else ""
        self.review.setText(pill + who)
        self.review.setVisible(bool(pill))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit_wrapped()

    def _fit_wrapped(self) -> None:
        """Wrapped labels ask for the height their text needs at this width (a long title is never cut)."""
        changed = False
        for label in (self.title, self.review, self.checks):
            if not label.isHidden() and label.width() > 0:
                wanted = label.heightForWidth(label.width())
                if wanted != label.minimumHeight():
                    label.setMinimumHeight(max(0, wanted))
                    changed = True
        if changed:
            self.updateGeometry()
