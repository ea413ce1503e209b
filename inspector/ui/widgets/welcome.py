"""The page shown when no store is open: what the tool is, open buttons and recent stores."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtWidgets import (QFrame, QHBoxLayout, QLabel, QListWidget, QListWidgetItem, QPushButton,
                               QVBoxLayout, QWidget)

from inspector.ui.availability import BUILDING_DEMO, set_available
from inspector.ui import icons, style


def _centered(widget: QWidget) -> QHBoxLayout:
    row = QHBoxLayout()
    row.addStretch(1)
    row.addWidget(widget)
    row.addStretch(1)
    return row


class WelcomePage(QWidget):
    """Open buttons and the recent stores list; the window connects the signals."""

    open_requested = Signal()
    open_url_requested = Signal()
    build_demo_requested = Signal()
    recent_chosen = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        style.polish(self, "welcome")
        outer = QVBoxLayout(self)
        outer.addStretch(2)
        column = QVBoxLayout()
        column.setSpacing(10)
        logo = QLabel(self)
        logo.setPixmap(icons.app_icon().pixmap(72, 72))
        logo.setAlignment(Qt.AlignmentFlag.AlignCenter)
        title = QLabel("Checkpoint Inspector", self)
        title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        font = title.font()
        font.setPointSizeF(font.pointSizeF() * 1.6)
        font.setBold(True)
        title.setFont(font)
        self.message = QLabel("Open a checkpoint store \u2014 Checkpoint Inspector's own, a LangGraph "
                              "checkpoint database, or an OpenAI Agents, CrewAI or Google ADK session "
                              "store \u2014 to browse its runs live. You can also drop a database file "
                              "or a CrewAI storage folder here.", self)
        style.mute(self.message)
        self.message.setWordWrap(True)
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message.setFixedWidth(520)
        column.addWidget(logo)
        column.addWidget(title)
        column.addLayout(_centered(self.message))
        column.addSpacing(8)
        column.addLayout(self._buttons())
        column.addSpacing(12)
        self.recent_title = QLabel("Recent stores", self)
        style.mute(self.recent_title)
        self.recent_list = QListWidget(self)
        self.recent_list.setFixedWidth(560)
        self.recent_list.setMaximumHeight(180)
        self.recent_list.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.recent_list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.recent_list.setIconSize(QSize(16, 16))
        self.recent_list.setFrameShape(QFrame.Shape.NoFrame)
        self.recent_list.itemActivated.connect(
            lambda item: self.recent_chosen.emit(item.data(Qt.ItemDataRole.UserRole)))
        self.recent_list.itemClicked.connect(lambda item: self.recent_chosen.emit(item.data(Qt.ItemDataRole.UserRole)))
        column.addLayout(_centered(self.recent_title))
        column.addLayout(_centered(self.recent_list))
        outer.addLayout(column)
        outer.addStretch(3)
        self.set_recent([])

    def _buttons(self) -> QHBoxLayout:
        row = QHBoxLayout()
        row.addStretch(1)
        self.open_button = QPushButton(icons.icon("open", "#ffffff"), "Open store\u2026", self)
        self.open_button.setObjectName("primary")
        self.open_button.clicked.connect(self.open_requested)
        self.url_button = QPushButton(icons.icon("url"), "Open URL\u2026", self)
        self.url_button.clicked.connect(self.open_url_requested)
        self.demo_button = QPushButton(icons.icon("demo"), "Build demo store", self)
        self.demo_button.setToolTip("Run the demo agent a few times (completed, crashed, failed, "
                                    "waiting, stuck and forked runs) and open the result")
        self.demo_button.clicked.connect(self.build_demo_requested)
        for button in (self.open_button, self.url_button, self.demo_button):
            row.addWidget(button)
        row.addStretch(1)
        return row

    def set_recent(self, targets: list[str]) -> None:
        """List recently opened stores."""
        self.recent_list.clear()
        for target in targets:
            item = QListWidgetItem(icons.icon("recent"), target)
            item.setData(Qt.ItemDataRole.UserRole, target)
            item.setToolTip(target)
            self.recent_list.addItem(item)
        self.recent_title.setVisible(bool(targets))
        self.recent_list.setVisible(bool(targets))

    def set_busy(self, text: str | None) -> None:
        """Show a progress sentence instead of the usual message (None restores it)."""
        set_available(self.demo_button, text is None, BUILDING_DEMO)
        if text is not None:
            self.message.setText(text)
