"""Keep a view's current row in sight when the view gets shorter (a notice appears above it)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QAbstractItemView


class KeepCurrentVisible(QObject):
    """After the viewport of ``view`` is resized, scroll its current row back into view.

    Only a row that was in sight before the resize is brought back: a user who scrolled away
    from the selection is not pulled back to it. The scroll waits until the layout has
    settled (a 0 ms timer), so it uses the final height.
    """

    def __init__(self, view: QAbstractItemView) -> None:
        super().__init__(view)
        self.view = view
        self._timer = QTimer(self, singleShot=True, interval=0)
        self._timer.timeout.connect(self._scroll)
        self._viewport = view.viewport()    # compared by identity: no call into a view being destroyed
        self._viewport.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # Qt override
        if watched is self._viewport and isinstance(event, QResizeEvent):
            rect = self.view.visualRect(self.view.currentIndex())
            old = event.oldSize()
            if rect.isValid() and (old.height() <= 0 or (rect.bottom() >= 0 and rect.top() < old.height())):
                self._timer.start()
        return super().eventFilter(watched, event)

    def _scroll(self) -> None:
        index = self.view.currentIndex()
        if index.isValid():
            self.view.scrollTo(index, QAbstractItemView.ScrollHint.EnsureVisible)
