"""A one-line label that shortens its text to its width ("…") and keeps the whole in its tooltip."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtGui import QResizeEvent
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
