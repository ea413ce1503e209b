"""A non-modal message banner above the panels (errors, warnings, notices) with a close button."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QWidget

from inspector.ui import icons, style

LEVELS = {"error": ("error", "#cf222e"), "warning": ("warning", "#d4a72c"), "info": ("notice", "#2f81f7")}
INFO_TIMEOUT_MS = 8000


class Banner(QFrame):
    """Shows one message at a time; errors stay until closed, notices fade after a few seconds."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("banner")
        row = QHBoxLayout(self)
        row.setContentsMargins(10, 6, 6, 6)
        row.setSpacing(8)
        self.icon_label = QLabel(self)
        self.text_label = QLabel(self)
        self.text_label.setWordWrap(True)
        self.text_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        close = QToolButton(self)
        close.setIcon(icons.icon("close"))
        close.setToolTip("Dismiss")
        close.setAutoRaise(True)
        close.clicked.connect(self.dismiss)
        row.addWidget(self.icon_label, 0, Qt.AlignmentFlag.AlignTop)
        row.addWidget(self.text_label, 1)
        row.addWidget(close, 0, Qt.AlignmentFlag.AlignTop)
        self.level = ""
        self._timer = QTimer(self, singleShot=True, interval=INFO_TIMEOUT_MS)
        self._timer.timeout.connect(self.dismiss)
        self.hide()

    @property
    def message(self) -> str:
        """The text shown ('' when hidden)."""
        return self.text_label.text() if self.isVisible() else ""

    def show_message(self, text: str, level: str = "error") -> None:
        """Show ``text`` at ``level`` ('error', 'warning' or 'info')."""
        icon_name, hue = LEVELS.get(level, LEVELS["error"])
        self.level = level
        self.icon_label.setPixmap(icons.icon(icon_name).pixmap(16, 16))
        self.text_label.setText(text)
        style.set_themed_style(self, lambda theme: _banner_sheet(theme, hue))
        self.show()
        if level == "info":
            self._timer.start()
        else:
            self._timer.stop()

    def dismiss(self) -> None:
        """Hide the banner."""
        self._timer.stop()
        self.level = ""
        self.hide()


def _banner_sheet(theme: style.Theme, hue: str) -> str:
    bg, border, _fg = theme.pill_colors(QColor(hue))
    return (f"QFrame#banner {{ background: {bg.name(QColor.NameFormat.HexArgb)}; "
            f"border: 1px solid {border.name(QColor.NameFormat.HexArgb)}; "
            f"border-radius: 6px; margin: 6px 8px 0 8px; }}")
