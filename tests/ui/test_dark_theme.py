"""Dark theme: text drawn over coloured fills stays readable (WCAG contrast)."""

from __future__ import annotations

from PySide6.QtGui import QColor, QPalette

from inspector.ui import style
from inspector.ui.widgets.tasks_panel import ScoreBar


def _luminance(color: QColor) -> float:
    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    return 0.2126 * channel(color.redF()) + 0.7152 * channel(color.greenF()) + 0.0722 * channel(color.blueF())


def contrast(a: QColor, b: QColor) -> float:
    """The WCAG contrast ratio of two colours (1 … 21)."""
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def test_score_bar_text_is_readable_on_its_fill_in_both_themes(qtbot, qapp) -> None:
    saved = (qapp.style().name(), qapp.palette(), qapp.styleSheet())
    try:
        for theme in ("dark", "light"):
            style.apply_theme(qapp, theme)
            bar = ScoreBar()
            qtbot.addWidget(bar)
            bar.set_score("goal", 10, 10, 7, 7)
            for progress in (bar.checks_bar, bar.tasks_bar):
                pal = progress.palette()
                fill, text = pal.color(QPalette.ColorRole.Highlight), pal.color(QPalette.ColorRole.HighlightedText)
                assert contrast(fill, text) >= 4.5, (theme, progress.format(), fill.name(), text.name())
    finally:
        qapp.setStyle(saved[0])
        qapp.setPalette(saved[1])
        qapp.setStyleSheet(saved[2])
