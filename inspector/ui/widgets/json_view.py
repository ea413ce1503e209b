"""A read-only (optionally editable) JSON text view: pygments highlighting, line numbers, find.

Read-only views get their text as a ``PreparedText``: formatted, lexed and turned into a
highlighted QTextDocument in a worker thread, so a state of many megabytes costs the GUI
thread only a document swap. Editable views (the Fork dialog) highlight lines live.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Mapping, Sequence
from typing import Any

from PySide6.QtCore import QCoreApplication, QEvent, QRect, QSize, Qt, Signal
from PySide6.QtGui import (QBrush, QColor, QFont, QFontDatabase, QPainter, QPaintEvent, QResizeEvent,
                           QTextCharFormat, QTextCursor, QTextDocument)
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QWidget

from inspector.highlight import (Span, elide_long_lines, json_spans, line_paths, spans_by_line,
                                 theme_for, to_json_text)
from inspector.ui.highlighter import SpanHighlighter, bake_document
from inspector.ui.tasks import JobContext, LatestJob
from inspector.ui.widgets.palette import is_dark

MAX_MARKED_MATCHES = 5000   # beyond this only the current match is marked


def mono_font() -> QFont:
    """The fixed-width font of JSON text."""
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)


def prepare_json(value: Any, ctx: JobContext | None = None) -> tuple[str, list[list[Span]], list[tuple]]:
    """Format and lex a value (pure; runs in a worker): text, per-line spans, per-line paths.

    Lines longer than ``MAX_LINE`` are shortened inside their string (see ``elide_long_lines``).
    """
    text, _cut = elide_long_lines(to_json_text(value))
    if ctx is not None:
        ctx.check()
    spans = json_spans(text, cancel=ctx.cancelled if ctx else None)
    if ctx is not None:
        ctx.check()
    return text, spans_by_line(text, spans), line_paths(text)


@dataclass
class PreparedText:
    """Everything a JsonView shows, built off the GUI thread."""

    text: str
    paths: Sequence[tuple | None]
    document: QTextDocument | None = None          # highlighted, living in the GUI thread
    lines: list[list[Span]] = field(default_factory=list)
    numbers: list[int | None] | None = None          # gutter numbers (None: no number)


def prepare_text(text: str, lines: list[list[Span]], paths: Sequence[tuple | None], *, dark: bool,
                 numbers: list[int | None] | None = None,
                 backgrounds: Mapping[int, QColor | QBrush] | None = None) -> PreparedText:
    """Bake a highlighted document for the GUI thread (call in a worker)."""
    app = QCoreApplication.instance()
    document = bake_document(text, lines, dark=dark, font=mono_font(), backgrounds=backgrounds,
                             gui_thread=app.thread() if app is not None else None)
    return PreparedText(text, paths, document, lines, numbers)


def prepare_value(value: Any, dark: bool, ctx: JobContext | None = None) -> PreparedText:
    """Format, lex and bake a value (call in a worker)."""
    text, lines, paths = prepare_json(value, ctx)
    if ctx is not None:
        ctx.check()
    return prepare_text(text, lines, paths, dark=dark)


class _Gutter(QWidget):
    """Line numbers painted beside the text."""

    def __init__(self, view: JsonView) -> None:
        super().__init__(view)
        self._view = view

    def sizeHint(self) -> QSize:  # Qt override
        return QSize(self._view.gutter_width(), 0)

    def paintEvent(self, event: QPaintEvent) -> None:  # Qt override
        self._view.paint_gutter(self, event)


class JsonView(QPlainTextEdit):
    """Highlighted JSON text. ``set_value`` formats off the GUI thread; ``find_text`` searches.

    Signals: ``text_ready()`` after new text and spans are installed; ``match_changed(index,
    count)`` after a search step (index is 0-based, -1 when nothing matched).
    """

    text_ready = Signal()
    match_changed = Signal(int, int)

    def __init__(self, parent: QWidget | None = None, *, editable: bool = False) -> None:
        super().__init__(parent)
        self.setFont(mono_font())
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setReadOnly(not editable)
        self.setTextInteractionFlags(self.textInteractionFlags() | Qt.TextInteractionFlag.TextSelectableByKeyboard)
        self._highlighter = (SpanHighlighter(self.document(), dark=is_dark(self.palette()), live=True)
                             if editable else None)
        self._job = LatestJob(self)
        self._job.finished.connect(self._on_job_finished)
        self._job.failed.connect(self._on_job_failed)
        self._value: Any = None
        self._has_value = False
        self._owned: QTextDocument | None = None   # the last document we installed
        self._paths: Sequence[tuple | None] = []
        self._numbers: list[int | None] | None = None
        self._path_index: tuple[dict, dict] | None = None
        self._needle: str | None = None
        self._matches: list[int] = []
        self._match_len = 0
        self._match_index = -1
        self._line_marks: list[QTextEdit.ExtraSelection] = []
        self._show_gutter = True
        self._preferred_height: int | None = None
        self._gutter = _Gutter(self)
        self.blockCountChanged.connect(self._update_gutter_width)
        self.updateRequest.connect(self._on_update_request)
        self._update_gutter_width()

    # -- content -------------------------------------------------------------------
    def set_value(self, value: Any) -> None:
        """Show a value as pretty JSON (formatted and highlighted in the background)."""
        self._value, self._has_value = value, True
        if self._highlighter is not None:
            self._job.submit(lambda ctx: prepare_json(value, ctx))
            return
        dark = is_dark(self.palette())
        self._job.submit(lambda ctx: prepare_value(value, dark, ctx))

    def set_text(self, text: str) -> None:
        """Show text as it is (GUI thread; editable views highlight it line by line)."""
        lines = spans_by_line(text, json_spans(text)) if self._highlighter is None else []
        self.set_prepared(PreparedText(text, line_paths(text), None, lines))

    def set_prepared(self, prepared: PreparedText) -> None:
        """Install text prepared by ``prepare_value``/``prepare_text`` (GUI thread)."""
        self._clear_search()
        self._numbers = prepared.numbers
        self._line_marks = []
        self._paths = prepared.paths
        self._path_index = None
        if self._highlighter is not None:
            self.setPlainText(prepared.text)
        else:
            document = prepared.document or bake_document(
                prepared.text, prepared.lines, dark=is_dark(self.palette()), font=mono_font())
            self._install_document(document)
        self._update_gutter_width()
        self.text_ready.emit()

    def _install_document(self, document: QTextDocument) -> None:
        document.setParent(self)
        old = self._owned
        self.setDocument(document)
        self._owned = document
        if old is not None and old is not document:
            old.deleteLater()

    def clear_value(self, placeholder: str = "") -> None:
        """Show nothing (and drop a pending format)."""
        self._job.cancel()
        self._value, self._has_value = None, False
        self._clear_search()
        self._paths = []
        self._path_index = None
        self._numbers = None
        self._line_marks = []
        self.document().setPlainText("")
        self.setPlaceholderText(placeholder)

    @property
    def busy(self) -> bool:
        """True while a value is being formatted."""
        return self._job.busy

    def path_at_line(self, line: int) -> tuple | None:
        """The JSON path of the value on a 0-based line (None when unknown)."""
        return self._paths[line] if 0 <= line < len(self._paths) else None

    def line_of_path(self, path: tuple) -> int:
        """The first line showing ``path`` (or its nearest shown ancestor); 0 when not found."""
        if self._path_index is None:
            exact: dict[tuple, int] = {}
            loose: dict[tuple, int] = {}
            for line, p in enumerate(self._paths):
                if p is None:
                    continue
                exact.setdefault(p, line)
                loose.setdefault(tuple(map(str, p)), line)
            self._path_index = (exact, loose)
        exact, loose = self._path_index
        path = tuple(path)
        while path:
            found = exact.get(path)
            if found is None:
                found = loose.get(tuple(map(str, path)))
            if found is not None:
                return found
            path = path[:-1]
        return 0

    def scroll_to_line(self, line: int, *, center: bool = True) -> None:
        """Put the cursor on a 0-based line and scroll it into view."""
        block = self.document().findBlockByNumber(max(0, line))
        cursor = QTextCursor(block)
        self.setTextCursor(cursor)
        if center:
            self.centerCursor()
        else:
            self.ensureCursorVisible()

    def set_line_marks(self, marks: dict[int, QColor]) -> None:
        """Tint whole lines (0-based line → background colour), e.g. changed lines of a diff."""
        selections = []
        doc = self.document()
        for line, color in marks.items():
            sel = QTextEdit.ExtraSelection()
            sel.cursor = QTextCursor(doc.findBlockByNumber(line))
            sel.format.setBackground(color)
            sel.format.setProperty(QTextCharFormat.Property.FullWidthSelection, True)
            selections.append(sel)
        self._line_marks = selections
        self._apply_selections()

    def set_preferred_height(self, height: int | None) -> None:
        """The height this view asks a layout for (None: Qt's default for text views)."""
        self._preferred_height = height
        self.updateGeometry()

    def sizeHint(self) -> QSize:  # Qt override
        hint = super().sizeHint()
        return hint if self._preferred_height is None else QSize(hint.width(), self._preferred_height)

    def set_gutter_visible(self, visible: bool) -> None:
        """Show or hide the line numbers."""
        self._show_gutter = visible
        self._gutter.setVisible(visible)
        self._update_gutter_width()

    # -- search --------------------------------------------------------------------
    def find_text(self, needle: str, *, backwards: bool = False, restart: bool = False) -> bool:
        """Select the next (or previous) case-insensitive match; marks all matches. Wraps around."""
        if not needle:
            self._clear_search()
            self.match_changed.emit(-1, 0)
            return False
        if restart or needle.casefold() != self._needle:
            self._collect_matches(needle)
        if not self._matches:
            self._match_index = -1
            self._apply_selections()
            self.match_changed.emit(-1, 0)
            return False
        self._step_match(backwards, restart)
        self.match_changed.emit(self._match_index, len(self._matches))
        return True

    def _collect_matches(self, needle: str) -> None:
        self._needle = needle.casefold()
        hay = self.toPlainText().casefold()
        found, pos = [], hay.find(self._needle)
        while pos != -1:
            found.append(pos)
            pos = hay.find(self._needle, pos + 1)
        self._matches, self._match_len, self._match_index = found, len(needle), -1

    def _step_match(self, backwards: bool, restart: bool) -> None:
        count = len(self._matches)
        if self._match_index < 0 or restart:
            position = self.textCursor().selectionStart() if not restart else 0
            after = [i for i, pos in enumerate(self._matches) if pos >= position]
            self._match_index = after[0] if after else 0
            if backwards:
                self._match_index = (self._match_index - 1) % count
        else:
            self._match_index = (self._match_index + (-1 if backwards else 1)) % count
        start = self._matches[self._match_index]
        cursor = QTextCursor(self.document())
        cursor.setPosition(start)
        cursor.setPosition(start + self._match_len, QTextCursor.MoveMode.KeepAnchor)
        self.setTextCursor(cursor)
        self.centerCursor()
        self._apply_selections()

    def _clear_search(self) -> None:
        self._needle = None
        self._matches, self._match_index = [], -1
        self._apply_selections()

    def _apply_selections(self) -> None:
        theme = theme_for(is_dark(self.palette()))
        selections = list(self._line_marks)
        doc = self.document()
        if len(self._matches) <= MAX_MARKED_MATCHES:
            for i, pos in enumerate(self._matches):
                selections.append(self._match_selection(doc, pos, theme.current_match_bg
                                                        if i == self._match_index else theme.match_bg))
        elif self._match_index >= 0:
            selections.append(self._match_selection(doc, self._matches[self._match_index],
                                                    theme.current_match_bg))
        self.setExtraSelections(selections)

    def _match_selection(self, doc: QTextDocument, pos: int, color: str) -> QTextEdit.ExtraSelection:
        sel = QTextEdit.ExtraSelection()
        cursor = QTextCursor(doc)
        cursor.setPosition(pos)
        cursor.setPosition(pos + self._match_len, QTextCursor.MoveMode.KeepAnchor)
        sel.cursor = cursor
        sel.format.setBackground(QColor(color))
        return sel

    # -- gutter --------------------------------------------------------------------
    def gutter_width(self) -> int:
        """Width of the line-number gutter for the current line count."""
        digits = max(3, len(str(self.blockCount())))
        if not self._show_gutter:
            return 0
        return 12 + self.fontMetrics().horizontalAdvance("9") * digits

    def _update_gutter_width(self) -> None:
        self.setViewportMargins(self.gutter_width(), 0, 0, 0)

    def _on_update_request(self, rect: QRect, dy: int) -> None:
        if dy:
            self._gutter.scroll(0, dy)
        else:
            self._gutter.update(0, rect.y(), self._gutter.width(), rect.height())

    def resizeEvent(self, event: QResizeEvent) -> None:  # Qt override
        super().resizeEvent(event)
        rect = self.contentsRect()
        self._gutter.setGeometry(QRect(rect.left(), rect.top(), self.gutter_width(), rect.height()))

    def paint_gutter(self, gutter: QWidget, event: QPaintEvent) -> None:
        """Paint the line numbers of the visible blocks."""
        painter = QPainter(gutter)
        pal = self.palette()
        painter.fillRect(event.rect(), pal.color(pal.ColorRole.AlternateBase))
        painter.setPen(pal.color(pal.ColorRole.PlaceholderText))
        block = self.firstVisibleBlock()
        top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
        height = self.fontMetrics().height()
        width = gutter.width() - 6
        numbers = self._numbers
        while block.isValid() and top <= event.rect().bottom():
            number = block.blockNumber()
            label = (numbers[number] if numbers is not None and number < len(numbers) else number + 1)
            if block.isVisible() and label is not None:
                painter.drawText(0, top, width, height, Qt.AlignmentFlag.AlignRight, str(label))
            top += round(self.blockBoundingRect(block).height())
            block = block.next()
        painter.end()

    # -- jobs ----------------------------------------------------------------------
    def _on_job_finished(self, result: PreparedText | tuple[str, list[list[Span]], list[tuple]]) -> None:
        if isinstance(result, tuple):
            text, lines, paths = result
            result = PreparedText(text, paths, None, lines)
        self.set_prepared(result)

    def _on_job_failed(self, err: BaseException) -> None:
        self.clear_value(f"Cannot show this value as JSON: {err}")

    def changeEvent(self, event: QEvent) -> None:  # Qt override
        """Re-highlight with the new colours when the palette switches between light and dark."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            if self._highlighter is not None:
                self._highlighter.set_dark(is_dark(self.palette()))
            elif self._has_value:
                self.set_value(self._value)
