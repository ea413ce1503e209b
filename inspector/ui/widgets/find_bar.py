"""A compact find field with previous/next buttons and a match counter (Ctrl+F focuses it)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QStyle, QToolButton, QWidget

from inspector.humanize import plural
from inspector.ui.availability import set_available

DEBOUNCE_MS = 180


class FindBar(QWidget):
    """Emits ``search_changed(text)`` (debounced) and ``step_requested(backwards)``.

    Enter steps forward, Shift+Enter backward, Escape clears. The owner reports results with
    ``set_result(index, count)``.
    """

    search_changed = Signal(str)
    step_requested = Signal(bool)

    def __init__(self, parent: QWidget | None = None, placeholder: str = "Find") -> None:
        super().__init__(parent)
        self.field = QLineEdit(self)
        self.field.setPlaceholderText(placeholder)
        self.field.setClearButtonEnabled(True)
        self.field.setMinimumWidth(110)   # 1024x700: the State tab must fit beside the runs
        self.field.installEventFilter(self)
        self._count = QLabel("", self)
        self._count.setMinimumWidth(40)
        self._count.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self._count.setEnabled(False)
        self._prev = self._button(QStyle.StandardPixmap.SP_ArrowUp, "Previous match (Shift+Enter)", True)
        self._next = self._button(QStyle.StandardPixmap.SP_ArrowDown, "Next match (Enter)", False)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self._count)
        layout.addWidget(self.field, 1)
        layout.addWidget(self._prev)
        layout.addWidget(self._next)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self._on_timer_timeout)
        self.field.textChanged.connect(self._on_field_text_changed)

    def install_shortcut(self, owner: QWidget) -> QShortcut:
        """Make Ctrl+F inside ``owner`` focus the field."""
        shortcut = QShortcut(QKeySequence.StandardKey.Find, owner)
        shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        shortcut.activated.connect(self.focus_field)
        return shortcut

    def focus_field(self) -> None:
        """Focus the field and select its text."""
        self.field.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.field.selectAll()

    def text(self) -> str:
        """The current search text."""
        return self.field.text()

    def set_result(self, index: int, count: int) -> None:
        """Show ``index+1 of count`` (or 'No matches')."""
        if not self.field.text():
            self._count.setText("")
        elif count == 0:
            self._count.setText("No matches")
        else:
            self._count.setText(f"{index + 1} of {count}" if index >= 0 else plural(count, "match", "matches"))
        why = "no matches; type text that occurs here." if self.field.text() else "type the text to find first."
        set_available(self._prev, count > 0, why)
        set_available(self._next, count > 0, why)

    def flush(self) -> None:
        """Emit a pending debounced search now."""
        if self._timer.isActive():
            self._timer.stop()
            self._on_timer_timeout()

    def _button(self, icon: QStyle.StandardPixmap, tip: str, backwards: bool) -> QToolButton:
        button = QToolButton(self)
        button.setIcon(self.style().standardIcon(icon))
        button.setToolTip(tip)
        button.setAutoRaise(True)
        set_available(button, False, "type the text to find first.")
        button.clicked.connect(lambda: self._step(backwards))
        return button

    def _step(self, backwards: bool) -> None:
        self.flush()
        self.step_requested.emit(backwards)

    def _on_field_text_changed(self, _text: str) -> None:
        self._timer.start()

    def _on_timer_timeout(self) -> None:
        self.search_changed.emit(self.field.text())

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # Qt override
        if watched is self.field and event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            key = event.key()
            if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                backwards = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
                self._step(backwards)
                return True
            if key == Qt.Key.Key_Escape:
                self.field.clear()
                self.flush()
                return True
        return super().eventFilter(watched, event)
