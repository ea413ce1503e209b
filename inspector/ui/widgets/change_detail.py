"""Both values of one structural change: old beside new, or a word/line diff for long text."""

from __future__ import annotations

import html

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QLabel, QSplitter, QStackedWidget, QTextBrowser, QVBoxLayout, QWidget

from inspector.diff import ADDED, REMOVED, Change, TextDelta
from inspector.diff.text import ELIDED
from inspector.highlight import theme_for
from inspector.ui.widgets.json_view import JsonView
from inspector.ui.widgets.palette import is_dark, muted_text, theme_changed

MAX_SEGMENT = 4000
FIRST_CHANGE = "first-change"
HANGING = 24       # px: how far the wrapped rest of a long line is indented in a line diff


def delta_html(delta: TextDelta, dark: bool) -> str:
    """A text delta as HTML: removed text struck through on red, added text on green; long
    unchanged runs keep their ends (whole lines in a line diff) and say what they leave out.
    In a line diff every line is a paragraph whose wrapped rest is indented, so a long line
    that wraps never reads as a new line."""
    theme = theme_for(dark)
    muted = f"color:{theme.color('punctuation') or '#888'}"
    styles = {"-": f"background-color:{theme.removed_bg};color:{theme.removed_fg};text-decoration:line-through",
              "+": f"background-color:{theme.added_bg};color:{theme.added_fg}", "=": ""}
    lines = delta.unit == "line"
    runs: list[tuple[str, str]] = []        # (style, text), or ("<a>", "") for the first change's anchor
    changed = [index for index, (tag, _) in enumerate(delta.segments) if tag in "-+"]
    first, last = (changed[0], changed[-1]) if changed else (len(delta.segments), -1)
    for index, (tag, text) in enumerate(delta.segments):
        if tag == ELIDED:
            runs += _left_out(muted, f"{int(text):,} unchanged characters", lines and index < len(delta.segments) - 1)
            continue
        if index == first:
            runs.append(("<a>", ""))
        if tag == "=" and len(text) > MAX_SEGMENT:
            keep_head = MAX_SEGMENT // 2 if first < index < last else MAX_SEGMENT if index > first else 0
            keep_tail = MAX_SEGMENT - keep_head if index < last else 0
            head, hidden, tail = _ends(text, keep_head, keep_tail, lines)
            count = f"{_line_count(hidden):,} unchanged lines" if lines else f"{len(hidden):,} unchanged characters"
            runs += [("", head), *_left_out(muted, count, lines and bool(tail)), ("", tail)]
            continue
        if tag != "=" and len(text) > MAX_SEGMENT:
            text = text[:MAX_SEGMENT] + f"… ({len(text) - MAX_SEGMENT:,} more characters)"
        runs.append((styles[tag], text))
    if not lines:
        return "<div style='white-space:pre-wrap'>" + "".join(_span(style, text, "<br>") for style, text in runs) + "</div>"
    paragraphs: list[str] = []
    line: list[str] = []
    for style, text in runs:
        for at, part in enumerate(text.split("\n")):
            if at:
                paragraphs.append("".join(line))
                line = []
            line.append(_span(style, part, ""))
    if any(line):
        paragraphs.append("".join(line))
    return "".join(f"<p style='margin:0;margin-left:{HANGING}px;text-indent:-{HANGING}px;white-space:pre-wrap'>"
                   f"{body or '&nbsp;'}</p>" for body in paragraphs)


def _span(style: str, text: str, newline: str) -> str:
    if style == "<a>":
        return f"<a name='{FIRST_CHANGE}'></a>"
    body = html.escape(text).replace("\n", newline)
    return f"<span style='{style}'>{body}</span>" if style and body else body


def _ends(text: str, keep_head: int, keep_tail: int, lines: bool) -> tuple[str, str, str]:
    """``text`` cut in three: about ``keep_head`` characters kept from its start and
    ``keep_tail`` from its end (cut at line ends in a line diff), and the part between."""
    head_end, tail_start = keep_head, len(text) - keep_tail
    if lines:
        cut = text.rfind("\n", 0, head_end)
        head_end = cut + 1 if cut >= 0 or not keep_head else head_end
        cut = text.find("\n", tail_start - 1, len(text)) if keep_tail else -1
        tail_start = cut + 1 if cut >= 0 else tail_start
    if tail_start <= head_end:
        return text, "", ""
    return text[:head_end], text[head_end:tail_start], text[tail_start:]


def _line_count(text: str) -> int:
    return text.count("\n") + (not text.endswith("\n"))


def _left_out(style: str, what: str, own_line: bool) -> list[tuple[str, str]]:
    """The muted mark of unchanged text not shown (on a line of its own in a line diff)."""
    return [(style, f"⋯ {what} ⋯"), ("", "\n" if own_line else "")]


class ChangeDetail(QWidget):
    """Shows the selected change; ``show_change(None)`` shows a hint."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel(self)
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.title.setContentsMargins(4, 2, 4, 2)
        self.old = JsonView(self)
        self.new = JsonView(self)
        for view in (self.old, self.new):
            view.set_gutter_visible(False)
        pair = QSplitter(Qt.Orientation.Horizontal, self)
        pair.addWidget(self.old)
        pair.addWidget(self.new)
        self.text = QTextBrowser(self)
        self.text.setOpenLinks(False)
        self._stack = QStackedWidget(self)
        self._stack.addWidget(pair)
        self._stack.addWidget(self.text)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.title)
        layout.addWidget(self._stack, 1)
        self._change: Change | None = None
        self.show_change(None)

    def show_change(self, change: Change | None) -> None:
        """Show both values of a change."""
        self._change = change
        self._show_title()
        if change is None:
            self.old.clear_value()
            self.new.clear_value()
            self._stack.setCurrentIndex(0)
            return
        if isinstance(change.detail, TextDelta):
            self.text.setHtml(delta_html(change.detail, is_dark(self.palette())))
            self._stack.setCurrentIndex(1)
            self.text.scrollToAnchor(FIRST_CHANGE)
            return
        self._stack.setCurrentIndex(0)
        if change.op == ADDED:
            self.old.clear_value("(absent before)")
        else:
            self.old.set_value(change.old)
        if change.op == REMOVED:
            self.new.clear_value("(removed)")
        else:
            self.new.set_value(change.new)

    def _show_title(self) -> None:
        muted = muted_text(self.palette()).name()
        change = self._change
        if change is None:
            self.title.setText(f"<span style='color:{muted}'>Select a change to see both values</span>")
        else:
            self.title.setText(f"<b><code>{html.escape(change.display_path)}</code></b>&nbsp;&nbsp;"
                               f"<span style='color:{muted}'>{html.escape(change.op)}</span>")

    def changeEvent(self, event: QEvent) -> None:  # Qt override: a theme switch redraws the colours
        super().changeEvent(event)       # (the two values' views highlight themselves again)
        if theme_changed(self, event):
            self._show_title()
            change = self._change
            if change is not None and isinstance(change.detail, TextDelta):
                bar = self.text.verticalScrollBar()
                at = bar.value()
                self.text.setHtml(delta_html(change.detail, is_dark(self.palette())))
                bar.setValue(at)
