"""A status bar whose message is elided beside the permanent chips, with the full text as tooltip."""

from __future__ import annotations

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QStatusBar, QStyle, QStyleOption, QWidget


class ElidingStatusBar(QStatusBar):
    """QStatusBar cuts a long message off mid-letter under its permanent widgets; this one
    ends it with "…" where the first chip begins and shows the whole message as a tooltip."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._permanent: list[QWidget] = []
        self.messageChanged.connect(self._on_message_changed)

    def addPermanentWidget(self, widget: QWidget, stretch: int | None = 0) -> None:  # Qt override
        super().addPermanentWidget(widget, stretch or 0)
        self._permanent.append(widget)

    def message_rect(self) -> QRect:
        """Where the message is drawn: from the left margin to the first visible chip."""
        right = self.width() - 12
        for widget in self._permanent:
            if widget.isVisible():
                right = min(right, widget.x() - 2)
                break
        return QRect(6, 0, max(0, right - 6), self.height())

    def shown_message(self) -> str:
        """The message as drawn (elided to fit ``message_rect``)."""
        return self.fontMetrics().elidedText(self.currentMessage(), Qt.TextElideMode.ElideRight,
                                             self.message_rect().width())

    def paintEvent(self, event: QPaintEvent) -> None:  # Qt override
        if not self.currentMessage():
            super().paintEvent(event)
            return
        painter = QPainter(self)
        option = QStyleOption()
        option.initFrom(self)
        self.style().drawPrimitive(QStyle.PrimitiveElement.PE_PanelStatusBar, option, painter, self)
        painter.setPen(self.palette().windowText().color())
        painter.drawText(self.message_rect(), int(Qt.AlignmentFlag.AlignLeading | Qt.AlignmentFlag.AlignVCenter
                                                  | Qt.TextFlag.TextSingleLine), self.shown_message())

    def resizeEvent(self, event) -> None:  # Qt override
        super().resizeEvent(event)
        self._on_message_changed(self.currentMessage())

    def _on_message_changed(self, text: str) -> None:
        self.setToolTip(text if text and self.shown_message() != text else "")
