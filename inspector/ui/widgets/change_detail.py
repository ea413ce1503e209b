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


def delta_html(delta: TextDelta, dark: bool) -> str:
    """A text delta as HTML: removed text struck through on red, added text on green."""
    theme = theme_for(dark)
    out = []
    anchored = False
    last = len(delta.segments) - 1
    for index, (tag, text) in enumerate(delta.segments):
        if tag == ELIDED:
            out.append(f"<span style='color:{theme.color('punctuation') or '#888'}'>"
                       f"⋯ {int(text):,} unchanged characters ⋯</span>")
            continue
        if tag in "-+" and not anchored:
            out.append(f"<a name='{FIRST_CHANGE}'></a>")
            anchored = True
        if len(text) > MAX_SEGMENT:
            if tag == "=" and index == 0:        # context before the first change: its end
                text = f"({len(text) - MAX_SEGMENT:,} more) …" + text[-MAX_SEGMENT:]
            elif tag == "=" and index < last:    # between changes: both ends
                half = MAX_SEGMENT // 2
                text = text[:half] + f" … ({len(text) - 2 * half:,} more) … " + text[-half:]
            else:
                text = text[:MAX_SEGMENT] + f"… ({len(text) - MAX_SEGMENT:,} more)"
        body = html.escape(text).replace("\n", "<br>")
        if tag == "-":
            out.append(f"<span style='background-color:{theme.removed_bg};color:{theme.removed_fg};"
                       f"text-decoration:line-through'>{body}</span>")
        elif tag == "+":
            out.append(f"<span style='background-color:{theme.added_bg};color:{theme.added_fg}'>{body}</span>")
        else:
            out.append(body)
    return "<div style='white-space:pre-wrap'>" + "".join(out) + "</div>"


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
