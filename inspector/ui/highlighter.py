"""Paint pygments spans: baked into a document in a worker, or by a QSyntaxHighlighter.

Read-only views get documents baked off the GUI thread (``bake_document``); editable views
use ``SpanHighlighter``, from precomputed spans or lexing each line live.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from PySide6.QtCore import QThread, QTimer
from PySide6.QtGui import (QBrush, QColor, QFont, QSyntaxHighlighter, QTextBlockFormat, QTextCharFormat,
                           QTextCursor, QTextDocument, QTextLayout)
from PySide6.QtWidgets import QPlainTextDocumentLayout

from inspector.highlight import Span, Theme, line_spans, theme_for

BATCH_SECONDS = 0.012   # time spent re-highlighting per event-loop turn (keeps the GUI fluid)


def text_formats(theme: Theme) -> dict[str, QTextCharFormat]:
    """One character format per token type of a theme."""
    formats: dict[str, QTextCharFormat] = {}
    for token, color in theme.tokens.items():
        fmt = QTextCharFormat()
        fmt.setForeground(QColor(color))
        if token in theme.bold:
            fmt.setFontWeight(QFont.Weight.DemiBold)
        formats[token] = fmt
    return formats


def bake_document(text: str, lines: list[list[Span]], *, dark: bool, font: QFont,
                  backgrounds: Mapping[int, QColor | QBrush] | None = None,
                  gui_thread: QThread | None = None) -> QTextDocument:
    """A plain-text document with the spans (and line backgrounds) already applied.

    Safe to call in a worker thread: the document has no parent, and when ``gui_thread``
    is given it is moved there at the end, ready for ``QPlainTextEdit.setDocument``. This
    keeps the cost of big texts (building blocks, formatting 100,000 lines) off the GUI
    thread, which then only swaps documents.
    """
    doc = QTextDocument()
    doc.setDocumentLayout(QPlainTextDocumentLayout(doc))
    doc.setDefaultFont(font)
    doc.setUndoRedoEnabled(False)
    doc.setPlainText(text)
    if backgrounds:   # before the spans: a block format change must not disturb them
        _paint_backgrounds(doc, backgrounds)
    formats = text_formats(theme_for(dark))
    new_range = QTextLayout.FormatRange
    block = doc.firstBlock()
    for spans in lines:
        if not block.isValid():
            break
        if spans:
            ranges = []
            for start, length, token in spans:
                fmt = formats.get(token)
                if fmt is not None:
                    item = new_range()
                    item.start, item.length, item.format = start, length, fmt
                    ranges.append(item)
            block.layout().setFormats(ranges)
        block = block.next()
    if gui_thread is not None:
        doc.moveToThread(gui_thread)
    return doc


def _paint_backgrounds(doc: QTextDocument, backgrounds: Mapping[int, QColor | QBrush]) -> None:
    cursor = QTextCursor(doc)
    by_brush: dict[int, QTextBlockFormat] = {}
    for line, brush in sorted(backgrounds.items()):
        fmt = by_brush.get(id(brush))
        if fmt is None:
            fmt = by_brush[id(brush)] = QTextBlockFormat()
            fmt.setBackground(brush)
        block = doc.findBlockByNumber(line)
        if block.isValid():
            cursor.setPosition(block.position())
            cursor.setBlockFormat(fmt)


class SpanHighlighter(QSyntaxHighlighter):
    """Paints per-line spans computed off the GUI thread.

    In *live* mode (an editable document) each block is lexed on its own when it changes,
    which is exact for pretty-printed JSON where no token spans two lines.
    """

    def __init__(self, document: QTextDocument, *, dark: bool = False, live: bool = False) -> None:
        super().__init__(document)
        self._lines: list[list[Span]] | None = None
        self._live = live
        self._formats = text_formats(theme_for(dark))
        self._pending: int | None = None   # next block number of an incremental rehighlight
        self._timer = QTimer(self)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._on_timer_timeout)

    def set_dark(self, dark: bool) -> None:
        """Switch colours for a dark or light palette."""
        self._formats = text_formats(theme_for(dark))
        self._start_incremental()

    def set_live(self, live: bool) -> None:
        """Lex lines as they are edited (True) or paint precomputed spans only (False)."""
        self._live = live
        if live:
            self._lines = None
        self._start_incremental()

    def clear_spans(self) -> None:
        """Forget the spans (call before replacing the document text)."""
        self._timer.stop()
        self._pending = None
        self._lines = None

    def set_line_spans(self, lines: list[list[Span]]) -> None:
        """Install spans for the current text (one list per line) and repaint in batches."""
        self._lines = lines
        self._start_incremental()

    @property
    def pending(self) -> bool:
        """True while an incremental rehighlight is still running."""
        return self._pending is not None

    def _start_incremental(self) -> None:
        self._pending = 0
        self._timer.start()

    def _on_timer_timeout(self) -> None:
        doc = self.document()
        if doc is None or self._pending is None:
            self._timer.stop()
            return
        block = doc.findBlockByNumber(self._pending)
        deadline = time.monotonic() + BATCH_SECONDS
        while block.isValid() and time.monotonic() < deadline:
            self.rehighlightBlock(block)
            block = block.next()
        if block.isValid():
            self._pending = block.blockNumber()
        else:
            self._pending = None
            self._timer.stop()

    def highlightBlock(self, text: str) -> None:  # Qt override
        """Apply the spans of the current block."""
        if self._live:
            spans = line_spans(text) if text.strip() else []
        else:
            lines = self._lines
            number = self.currentBlock().blockNumber()
            if lines is None or number >= len(lines):
                return
            spans = lines[number]
        formats = self._formats
        for start, length, token in spans:
            fmt = formats.get(token)
            if fmt is not None:
                self.setFormat(start, length, fmt)
