"""Window sizes that fit the screen they open on (a 1024x700 screen as much as a large one)."""

from __future__ import annotations

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QBoxLayout, QSizeGrip, QWidget

SCREEN_SHARE = 0.92   # at most this much of the available screen


def fit_to_screen(widget: QWidget, width: int, height: int) -> None:
    """Resize ``widget`` to ``width`` x ``height``, shrunk to fit the available screen area."""
    parent = widget.parentWidget()
    screen = (parent.screen() if parent is not None else None) or QGuiApplication.primaryScreen()
    if screen is not None:
        area = screen.availableGeometry()
        if parent is not None and parent.isVisible():   # and within the window that opens it
            inside = area.intersected(parent.window().frameGeometry())
            area = area if inside.isEmpty() else inside
        width = min(width, int(area.width() * SCREEN_SHARE))
        height = min(height, int(area.height() * SCREEN_SHARE))
    widget.resize(max(width, 320), max(height, 240))


def clear_size_grip(dialog: QWidget, row: QBoxLayout) -> None:
    """End ``row`` (the dialog's bottom button row) short of the size grip in the corner.

    ``setSizeGripEnabled`` puts the grip over the layout's margin, where the last button of a
    row that reaches the right edge would be drawn under it.
    """
    grip = dialog.findChild(QSizeGrip)
    layout = dialog.layout()
    if grip is None:
        return
    margin = layout.contentsMargins().right() if layout is not None else 0
    extra = grip.sizeHint().width() - margin
    if extra > 0:
        row.addSpacing(extra)
