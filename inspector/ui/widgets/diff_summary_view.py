"""The head of the Diff tab: the semantic summary line, divergence, and the task changes list."""

from __future__ import annotations

import html

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QFont, QResizeEvent
from PySide6.QtWidgets import QAbstractItemView, QLabel, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from inspector.diff import DiffResult, TaskChange
from inspector.diff.lineage import describe_divergence
from inspector.diff.summary import SEPARATOR
from inspector.humanize import plural
from inspector.ui.formatting import visible
from inspector.ui.widgets.palette import accent, muted_text, theme_changed

CHECK_WORDS = {True: "✓", False: "✗", None: "?"}
MAX_VISIBLE_ROWS = 12   # task changes the list shows whole when its pane has the room (a third of the tab)
HELD_LINES = 2   # lines of the summary a short pane keeps whole (a longer one is cut below them)
KIND_HUES = {"added": "#1a7f37", "removed": "#cf222e", "status": "#0969da", "review": "#8250df",
             "check": "#1a7f37", "check_added": "#1a7f37", "check_removed": "#cf222e",
             "progress": "#57606a", "title": "#57606a", "goal": "#57606a"}
STATUS_HUES = {"done": "#1a7f37", "failed": "#cf222e", "blocked": "#bf8700"}


def _pct(value: object) -> str:
    return f"{float(value or 0):.0%}" if isinstance(value, (int, float)) or value is None else str(value)


def task_change_text(change: TaskChange) -> str:
    """One readable line for a task change (without the task's name)."""
    kind, old, new = change.kind, change.old, change.new
    if kind == "added":
        return f"new task ({new})"
    if kind == "removed":
        return f"removed (was {old})"
    if kind == "status":
        return f"{old} → {new}"
    if kind == "progress":
        return f"progress {_pct(old)} → {_pct(new)}"
    if kind == "review":
        by = f" by {change.reviewer}" if change.reviewer else ""
        return f"review {str(old).replace('_', ' ')} → {str(new).replace('_', ' ')}{by}"
    if kind == "check" and old == new:   # the verdict stayed: its detail text changed
        return f"check “{change.name}” {CHECK_WORDS.get(new, new)}: detail changed"
    if kind == "check":
        return f"check “{change.name}” {CHECK_WORDS.get(old, old)} → {CHECK_WORDS.get(new, new)}"
    if kind == "check_added":
        return f"new check “{change.name}” {CHECK_WORDS.get(new, new)}"
    if kind == "check_removed":
        return f"check “{change.name}” removed (was {CHECK_WORDS.get(old, old)})"
    if kind == "goal":
        return f"goal “{old}” → “{new}”"
    return f"{kind} {old} → {new}"


def _hue(change: TaskChange) -> str:
    if change.regression:
        return "#cf222e"
    if change.kind == "status":
        return STATUS_HUES.get(str(change.new), KIND_HUES["status"])
    if change.kind in ("check", "check_added") and change.new is False:
        return "#cf222e"
    return KIND_HUES.get(change.kind, "#57606a")


def task_change_line(change: TaskChange) -> str:
    """A change's line in the list: the task's name, then what changed (a goal has no task)."""
    text = task_change_text(change)
    return f"{change.title}: {text}" if change.title else text[:1].upper() + text[1:]


class DiffSummaryView(QWidget):
    """Summary and task changes of a DiffResult (regressions flagged red)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.summary = QLabel(self)
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        font = self.summary.font()
        font.setPointSizeF(font.pointSizeF() * 1.1)
        font.setBold(True)
        self.summary.setFont(font)
        self._plain_font = self.summary.font()
        self._plain_font.setBold(False)
        self._plain_font.setPointSizeF(self.font().pointSizeF())
        self._bold_font = font
        self.divergence = QLabel(self)
        self.divergence.setWordWrap(True)
        self.divergence.setTextFormat(Qt.TextFormat.RichText)
        self.tasks = QListWidget(self)
        self.tasks.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.tasks.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.tasks.setUniformItemSizes(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.setSpacing(4)
        layout.addWidget(self.summary)
        layout.addWidget(self.divergence)
        layout.addWidget(self.tasks)
        self._shown: DiffResult | tuple[str, bool] = ("", False)   # drawn again after a theme switch
        self.show_message("")

    def set_alone(self, alone: bool) -> None:
        """Alone in its tab (no comparison shown below it), a message sits in the middle in
        the plain type the other tabs' empty states use; above a comparison, at the top, bold."""
        self.summary.setFont(self._plain_font if alone else self._bold_font)
        self.summary.setAlignment(Qt.AlignmentFlag.AlignCenter if alone
                                  else Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)

    def show_message(self, text: str, error: bool = False) -> None:
        """Show only a message (no result)."""
        self._shown = (text, error)
        color = accent(self.palette(), "#cf222e") if error else muted_text(self.palette())
        self.summary.setText(f"<span style='color:{color.name()}'>{html.escape(text)}</span>")
        self._hold_lines()
        self.divergence.hide()
        self.tasks.clear()
        self.tasks.hide()

    def show_result(self, result: DiffResult) -> None:
        """Show the summary, where branches diverged, and each task change."""
        self._shown = result
        if not result.empty:
            self.summary.setText(html.escape(result.summary))
        else:
            # equal states may still differ in score (a LangGraph step's node tasks) and in
            # LangGraph's own channels (an input checkpoint's __start__, a branch it cleared)
            unchanged = f"{SEPARATOR}state unchanged"
            score = result.summary.removesuffix(unchanged) if result.summary.endswith(unchanged) else ""
            parts = [html.escape(score)] if score else []
            if result.hidden:
                names = ", ".join(visible(str(h)) for h in result.hidden)
                parts.append(f"<span style='color:{muted_text(self.palette()).name()}'>LangGraph's own channels "
                             f"changed: {html.escape(names)} (the Metadata tab shows them)</span>")
            self.summary.setText(SEPARATOR.join(["No differences in the state", *parts]) if parts else "No differences")
        self._hold_lines()
        self._show_divergence(result)
        self.tasks.clear()
        pal = self.palette()
        # regressions first: a short pane shows them whatever else scrolls out of sight
        for change in sorted(result.task_changes, key=lambda c: not c.regression):
            flag = "   ⚠ regression" if change.regression else ""
            item = QListWidgetItem(visible(f"{task_change_line(change)}{flag}"))
            if change.regression or change.kind in ("status", "check", "check_added"):
                item.setForeground(accent(pal, _hue(change)))   # (the others take the list's text colour)
            if change.regression:
                font = QFont(item.font())
                font.setBold(True)
                item.setFont(font)
            item.setToolTip(visible(change.describe(), lines=True))
            item.setData(Qt.ItemDataRole.UserRole, change)
            self.tasks.addItem(item)
        rows = min(len(result.task_changes), MAX_VISIBLE_ROWS)
        self.tasks.setVisible(rows > 0)
        if rows:
            row = self.tasks.sizeHintForRow(0)
            self.tasks.setMaximumHeight((row + self.tasks.spacing()) * rows + 2 * self.tasks.frameWidth() + 4)
            self.tasks.setMinimumHeight(row + 2 * self.tasks.frameWidth() + 2)   # (the summary keeps its lines first)

    def _show_divergence(self, result: DiffResult) -> None:
        ancestor, a, b = result.ancestor, result.a, result.b
        if a is None or b is None or (ancestor is not None and ancestor.id in (a.id, b.id)):
            self.divergence.hide()
            return
        text = describe_divergence(ancestor, a, b)
        if result.three_way is not None:
            both = result.three_way.both_changed
            text += (f" · {plural(len(result.three_way.to_a), 'change')} on the left branch, "
                     f"{len(result.three_way.to_b)} on the right")
            if both:
                text += f" · {plural(len(both), 'path')} changed on both"
        self.divergence.setText(f"<span style='color:{muted_text(self.palette()).name()}'>"
                                f"{html.escape(text)}</span>")
        self.divergence.show()

    def resizeEvent(self, event: QResizeEvent) -> None:  # Qt override
        super().resizeEvent(event)
        self._hold_lines()

    def _hold_lines(self) -> None:
        """The summary keeps the height of its lines (up to ``HELD_LINES``, whole lines): a
        short pane shrinks the task list (it scrolls), never cuts a line in half."""
        layout = self.layout()
        assert layout is not None   # made with its layout in __init__
        margins = layout.contentsMargins()
        width = self.width() - margins.left() - margins.right()
        if width <= 0:
            return
        line = self.summary.fontMetrics().lineSpacing()
        needed = self.summary.heightForWidth(width)
        self.summary.setMinimumHeight(min(needed, HELD_LINES * line + 2) if needed > 0 else 0)

    def changeEvent(self, event: QEvent) -> None:  # Qt override: a theme switch redraws the colours
        super().changeEvent(event)
        if theme_changed(self, event):
            shown = self._shown
            if isinstance(shown, DiffResult):
                self.show_result(shown)
            else:
                self.show_message(*shown)

    def wanted_height(self, width: int) -> int:
        """The height that shows the summary, divergence and task list in full at ``width``."""
        layout = self.layout()
        assert layout is not None   # made with its layout in __init__
        margins = layout.contentsMargins()
        inner = max(100, width - margins.left() - margins.right())
        height = margins.top() + margins.bottom() + self.summary.heightForWidth(inner)
        for widget in (self.divergence, self.tasks):
            if not widget.isHidden():
                extra = widget.heightForWidth(inner) if widget is self.divergence else widget.maximumHeight()
                height += layout.spacing() + max(extra, 0)
        return height

    def task_lines(self) -> list[str]:
        """The task change lines shown (for tests)."""
        return [self.tasks.item(i).text() for i in range(self.tasks.count())]



