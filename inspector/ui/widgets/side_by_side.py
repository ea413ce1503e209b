"""Two aligned, highlighted JSON texts side by side with tinted changed lines and locked scrolling."""

from __future__ import annotations

import bisect

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QLabel, QSplitter, QVBoxLayout, QWidget

from inspector.diff.window import WRAP
from inspector.highlight import SideBySide, theme_for
from inspector.highlight.sidebyside import ADDED, CHANGED, FILLER, REMOVED
from inspector.ui.widgets.elided_label import ElidedRichLabel
from inspector.ui.widgets.json_view import JsonView, PreparedText, prepare_text
from inspector.ui.widgets.palette import blend, is_dark


def prepare_sides(aligned: SideBySide, colors: dict[str, QBrush], dark: bool,
                  ) -> tuple[PreparedText, PreparedText]:
    """Highlighted documents for both aligned sides, changed lines tinted (call in a worker)."""
    out = []
    for side in (aligned.left, aligned.right):
        backgrounds = {i: colors[tag] for i, tag in enumerate(side.tags) if tag in colors}
        out.append(prepare_text(side.text, side.spans, side.paths, dark=dark, numbers=side.numbers,
                                backgrounds=backgrounds))
    return out[0], out[1]


Title = tuple[str, str, str]   # (lead as rich text, the rest as plain text, the whole as plain text)
NO_TITLE: Title = ("", "", "")


class SideBySideView(QWidget):
    """Old state on the left, new on the right; line *i* of one sits beside line *i* of the other.

    Signal ``hunk_changed(index, count)`` after ``step_hunk``.
    """

    hunk_changed = Signal(int, int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.left = JsonView(self)
        self.right = JsonView(self)
        self.left_title = ElidedRichLabel(self)    # a long step name is cut with "…" (whole in the tooltip):
        self.right_title = ElidedRichLabel(self)   # it never widens the pane, and with it the window
        self._hunks: list[int] = []
        self._hunk = -1
        self._syncing = False
        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        for title, view in ((self.left_title, self.left), (self.right_title, self.right)):
            pane = QWidget(splitter)
            column = QVBoxLayout(pane)
            column.setContentsMargins(0, 0, 0, 0)
            column.setSpacing(2)
            title.setContentsMargins(4, 0, 4, 0)
            column.addWidget(title)
            column.addWidget(view, 1)
            splitter.addWidget(pane)
        self.note = QLabel(self)
        self.note.setWordWrap(True)
        self.note.setContentsMargins(4, 0, 4, 0)
        self.note.setEnabled(False)    # muted, like the other hints
        self.note.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.note)
        layout.addWidget(splitter, 1)
        for a, b in ((self.left, self.right), (self.right, self.left)):
            a.verticalScrollBar().valueChanged.connect(
                lambda value, other=b: self._sync(other.verticalScrollBar(), value))
            a.horizontalScrollBar().valueChanged.connect(
                lambda value, other=b: self._sync(other.horizontalScrollBar(), value))

    def _sync(self, bar, value: int) -> None:
        if self._syncing:
            return
        self._syncing = True
        try:
            bar.setValue(value)
        finally:
            self._syncing = False

    def set_titles(self, left: Title, right: Title) -> None:
        """The titles above the two sides: each a rich-text lead shown whole, plain text cut to
        the width left, and the whole title in plain text (its tooltip when cut)."""
        self.left_title.set_parts(*left)
        self.right_title.set_parts(*right)

    def set_note(self, text: str) -> None:
        """A one-line note above both sides (e.g. that big states are shown in windows); "" hides it."""
        self.note.setText(text)
        self.note.setVisible(bool(text))

    def clear(self, placeholder: str = "") -> None:
        """Show nothing."""
        self.set_note("")
        self.left.clear_value(placeholder)
        self.right.clear_value("")
        self._hunks, self._hunk = [], -1

    def tag_colors(self) -> dict[str, QBrush]:
        """Line tints per alignment tag for the current palette (hand them to ``prepare_sides``);
        filler lines (where the other side has lines) are hatched."""
        pal = self.palette()
        theme = theme_for(is_dark(pal))
        base = pal.color(pal.ColorRole.Base)
        hatch = blend(base, pal.color(pal.ColorRole.Text), 0.18)
        return {ADDED: QBrush(QColor(theme.added_bg)), REMOVED: QBrush(QColor(theme.removed_bg)),
                CHANGED: QBrush(QColor(theme.changed_bg)), FILLER: QBrush(hatch, Qt.BrushStyle.BDiagPattern)}

    def set_prepared(self, aligned: SideBySide, left: PreparedText, right: PreparedText, *,
                     keep_place: bool = False) -> None:
        """Show an aligned pair whose documents ``prepare_sides`` built in a worker;
        ``keep_place``: the same texts in new colours, shown where the reader was."""
        bars = (self.right.verticalScrollBar(), self.right.horizontalScrollBar())
        place = [bar.value() for bar in bars]
        hunk = self._hunk if keep_place and self._hunk < len(aligned.hunks) else -1
        self._hunks, self._hunk = aligned.hunks, hunk
        self.left.set_prepared(left)
        self.right.set_prepared(right)
        if keep_place:
            for bar, value in zip(bars, place, strict=True):
                bar.setValue(value)     # (the left side follows)
            if hunk >= 0:
                self.hunk_changed.emit(hunk, len(self._hunks))

    def text_columns(self) -> int:
        """How many characters of a JSON string's text fit on a line of one side (its
        viewport less a scroll bar, the indent and quotes of an item two levels deep, and a
        margin)."""
        view = self.left
        if not view.isVisible():    # not laid out: its width means nothing (the text is cut again when shown)
            return WRAP
        advance = max(1, view.fontMetrics().horizontalAdvance("0"))
        bar = view.verticalScrollBar()     # counted whether it shows yet or not: the same answer before and after
        room = view.viewport().width() + (bar.width() if bar.isVisible() else 0) - bar.sizeHint().width()
        return max(20, room // advance - 12)

    @property
    def hunk_count(self) -> int:
        """How many differing hunks the texts have."""
        return len(self._hunks)

    def scroll_to_line(self, line: int) -> None:
        """Scroll both sides so an aligned line is centred (the right side gets the cursor)."""
        self.right.scroll_to_line(line)
        self._sync(self.left.verticalScrollBar(), self.right.verticalScrollBar().value())

    def scroll_to_path(self, path: tuple, prefer_left: bool = False) -> int:
        """Scroll both sides to where ``path`` is shown (the old side for removed values)."""
        first, second = (self.left, self.right) if prefer_left else (self.right, self.left)
        line = first.line_of_path(path)
        if line == 0 and path:
            line = second.line_of_path(path)
        line = self._hunk_within(line, tuple(path), first)
        self.scroll_to_line(line)
        return line

    def _hunk_within(self, line: int, path: tuple, view: JsonView) -> int:
        """The first differing line of the value at ``path`` that starts on ``line`` (a long
        string shown in many lines changes far below its first), else ``line``."""
        at = bisect.bisect_left(self._hunks, line)
        if at < len(self._hunks):
            hunk = self._hunks[at]
            shown = view.path_at_line(hunk)
            if hunk > line and shown is not None and tuple(shown[:len(path)]) == path:
                return hunk
        return line

    def step_hunk(self, backwards: bool = False) -> None:
        """Scroll to the next (or previous) differing hunk."""
        if not self._hunks:
            self.hunk_changed.emit(-1, 0)
            return
        step = -1 if backwards else 1
        self._hunk = (self._hunk + step) % len(self._hunks) if self._hunk >= 0 else (
            len(self._hunks) - 1 if backwards else 0)
        self.scroll_to_line(self._hunks[self._hunk])
        self.hunk_changed.emit(self._hunk, len(self._hunks))
