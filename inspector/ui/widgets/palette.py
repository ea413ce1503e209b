"""Palette helpers shared by the panels: darkness, blending and role colours for chat and status."""

from __future__ import annotations

from PySide6.QtCore import QEvent
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QWidget

# Hues (not exact colours): the final colour is blended with the palette base so it reads
# well on light and dark palettes alike.
STATUS_HUES = {"pending": "#8c959f", "in_progress": "#0969da", "blocked": "#bf8700",
               "done": "#1a7f37", "failed": "#cf222e"}
REVIEW_HUES = {"none": "#8c959f", "requested": "#bf8700", "approved": "#1a7f37",
               "changes_requested": "#cf222e"}
ROLE_HUES = {"user": "#0969da", "assistant": "#8250df", "tool": "#bf8700", "system": "#57606a",
             "other": "#57606a"}


def is_dark(palette: QPalette) -> bool:
    """True when the palette's window colour is dark."""
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


def blend(a: QColor, b: QColor, t: float) -> QColor:
    """``a`` moved a fraction ``t`` towards ``b``."""
    return QColor.fromRgbF(a.redF() + (b.redF() - a.redF()) * t,
                           a.greenF() + (b.greenF() - a.greenF()) * t,
                           a.blueF() + (b.blueF() - a.blueF()) * t, 1.0)


def tint(palette: QPalette, hue: str, amount: float = 0.14) -> QColor:
    """A background tint of ``hue`` over the palette's base colour."""
    return blend(palette.color(QPalette.ColorRole.Base), QColor(hue), amount * (1.6 if is_dark(palette) else 1.0))


def accent(palette: QPalette, hue: str) -> QColor:
    """``hue`` adjusted for legible text or strokes on the palette (lighter on dark palettes)."""
    color = QColor(hue)
    return color.lighter(150) if is_dark(palette) else color


def _luminance(color: QColor) -> float:
    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    return 0.2126 * channel(color.redF()) + 0.7152 * channel(color.greenF()) + 0.0722 * channel(color.blueF())


def readable_on(fill: QColor) -> QColor:
    """White or near-black, whichever reads better on ``fill`` (text over a progress chunk, a pill)."""
    light, dark = QColor("#ffffff"), QColor("#0d1117")
    lum = _luminance(fill)
    return light if (1.05 / (lum + 0.05)) >= ((lum + 0.05) / (_luminance(dark) + 0.05)) else dark


def muted_text(palette: QPalette) -> QColor:
    """Secondary text colour (placeholder text role, or text blended towards the base)."""
    return blend(palette.color(QPalette.ColorRole.Text), palette.color(QPalette.ColorRole.Base), 0.4)


def theme_changed(widget: QWidget, event: QEvent) -> bool:
    """True once per theme switch for ``widget`` (its own palette changes are not counted).

    A widget that tints its palette from the application's must tint it again after a
    switch; it sets a palette in doing so, which is a palette change too: the application
    palette's key, remembered per widget, tells the two apart.
    """
    if event.type() not in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
        return False
    key = QGuiApplication.palette().cacheKey()
    if widget.property("ci_theme_key") == key:
        return False
    widget.setProperty("ci_theme_key", key)
    return True
