"""A panel's content, or in its place one centred sentence (its empty state): the detail tabs
without a checkpoint say so instead of showing empty trees, toolbars and panes."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QStackedWidget, QVBoxLayout, QWidget


class EmptyState(QStackedWidget):
    """``body``, or ``label`` (a muted sentence, centred) in its place. ``filling(owner, …)``
    makes one the whole of ``owner``."""

    def __init__(self, body: QWidget, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = QLabel(text, self)
        self.label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.label.setWordWrap(True)
        self.label.setEnabled(False)     # (the palette's muted text)
        self.addWidget(body)
        self.addWidget(self.label)
        self.setCurrentWidget(self.label)

    @classmethod
    def filling(cls, owner: QWidget, body: QWidget, text: str) -> EmptyState:
        """An EmptyState as ``owner``'s only content, edge to edge."""
        state = cls(body, text, owner)
        layout = QVBoxLayout(owner)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(state)
        return state

    @property
    def showing_body(self) -> bool:
        return self.currentIndex() == 0

    def show_body(self, shown: bool = True) -> None:
        self.setCurrentIndex(0 if shown else 1)

    def show_text(self, text: str) -> None:
        """The sentence ``text`` in the body's place."""
        self.label.setText(text)
        self.setCurrentIndex(1)
