"""A one-line label that shortens its text to its width ("…") and keeps the whole in its tooltip."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtGui import QResizeEvent, QTextDocument
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget


class ElidedLabel(QLabel):
    """Plain text on one line, cut at the right with an ellipsis when it does not fit: a header
    keeps its height however long the text (wrapped, long notes pushed a panel's header out of
    a short dock). The full text is the tooltip whenever it is cut."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.full = ""
        self.set_full_text(text)

    def set_full_text(self, text: str) -> None:
        """Show ``text`` (shortened to the width)."""
        self.full = text
        self._elide()

    def resizeEvent(self, event: QResizeEvent) -> None:  # Qt override
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        shown = self.fontMetrics().elidedText(self.full, Qt.TextElideMode.ElideRight, max(0, self.width()))
        self.setText(shown)
        # rich text: Qt wraps a long tooltip only then
        self.setToolTip(f"<p>{html.escape(self.full)}</p>" if shown != self.full else "")


class ElidedRichLabel(QLabel):
    """One line: a rich-text lead shown whole (a bold #seq, a kind chip), then plain text cut
    with an ellipsis to the width left; the whole line is the tooltip whenever it is cut. It
    never widens its row: a narrow window shortens the text, never clips it mid-word."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.lead = self.tail = self.plain = ""

    def set_parts(self, lead: str, tail: str, plain: str) -> None:
        """Show ``lead`` (rich text) and ``tail`` (plain text, shortened); ``plain`` is the
        whole line as plain text, for the tooltip."""
        self.lead, self.tail, self.plain = lead, tail, plain
        self._elide()

    def resizeEvent(self, event: QResizeEvent) -> None:  # Qt override
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        lead = self._lead_width() + self.fontMetrics().horizontalAdvance(" ") if self.lead else 0
        room = self.width() - 2 * self.margin() - lead
        tail = self.fontMetrics().elidedText(self.tail, Qt.TextElideMode.ElideRight, max(0, room))
        self.setText(" ".join(part for part in (self.lead, html.escape(tail)) if part))
        cut = tail != self.tail or room < 0
        self.setToolTip(f"<p>{html.escape(self.plain)}</p>" if cut and self.plain else "")

    def _lead_width(self) -> int:
        if not self.lead:
            return 0
        doc = QTextDocument()
        doc.setDocumentMargin(0)
        doc.setDefaultFont(self.font())
        doc.setHtml(self.lead)
        return int(doc.idealWidth()) + 1
