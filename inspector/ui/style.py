"""Look and feel: Fusion with a light or dark palette, status/kind colours and a small QSS."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass

import shiboken6

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QFontDatabase, QGuiApplication, QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import QApplication, QLabel, QSplitter, QSplitterHandle, QWidget

STATUS_COLORS = {
    "running": "#2f81f7",
    "completed": "#2da44e",
    "failed": "#cf222e",
    "crashed": "#d1242f",
    "stuck": "#d4a72c",
    "forked": "#8250df",
    "interrupted": "#768390",
    "unknown": "#768390",
}
LANE_COLORS = ("#2f81f7", "#bf3989", "#d4762c", "#1b9aaa", "#8250df", "#2da44e")


@dataclass(frozen=True)
class Theme:
    """The colours widgets and delegates paint with (derived from the palette in use)."""

    dark: bool
    window: str
    base: str
    alt_base: str
    text: str
    muted: str
    border: str
    accent: str
    highlight_text: str
    positive: str
    negative: str

    def status_color(self, status: str) -> QColor:
        """The colour of a run status."""
        return QColor(STATUS_COLORS.get(status, STATUS_COLORS["unknown"]))

    def pill_colors(self, color: QColor) -> tuple[QColor, QColor, QColor]:
        """Background, border and text colours of a tinted pill in ``color``."""
        bg = QColor(color)
        bg.setAlphaF(0.26 if self.dark else 0.14)
        border = QColor(color)
        border.setAlphaF(0.55 if self.dark else 0.45)
        text = color.lighter(145) if self.dark else color.darker(135)
        return bg, border, text

    def lane_color(self, lane: str) -> QColor:
        """A stable colour for a LangGraph subgraph lane."""
        return QColor(LANE_COLORS[sum(lane.encode()) % len(LANE_COLORS)])


LIGHT = Theme(dark=False, window="#f6f8fa", base="#ffffff", alt_base="#f6f8fa", text="#1f2328",
              muted="#656d76", border="#d0d7de", accent="#0969da", highlight_text="#ffffff",
              positive="#1a7f37", negative="#cf222e")
DARK = Theme(dark=True, window="#1c2128", base="#22272e", alt_base="#262c36", text="#d8dee4",
             muted="#8b949e", border="#3d444d", accent="#4493f8", highlight_text="#ffffff",
             positive="#57ab5a", negative="#f47067")

_current = LIGHT


def theme() -> Theme:
    """The theme in use."""
    return _current


def system_prefers_dark() -> bool:
    """True when the desktop asks for a dark colour scheme."""
    hints = QGuiApplication.styleHints()
    scheme = getattr(hints, "colorScheme", None)
    return scheme is not None and scheme() == Qt.ColorScheme.Dark


def _palette(t: Theme) -> QPalette:
    pal = QPalette()
    roles = {
        QPalette.ColorRole.Window: t.window, QPalette.ColorRole.WindowText: t.text,
        QPalette.ColorRole.Base: t.base, QPalette.ColorRole.AlternateBase: t.alt_base,
        QPalette.ColorRole.Text: t.text, QPalette.ColorRole.Button: t.window,
        QPalette.ColorRole.ButtonText: t.text, QPalette.ColorRole.ToolTipBase: t.base,
        QPalette.ColorRole.ToolTipText: t.text, QPalette.ColorRole.Highlight: t.accent,
        QPalette.ColorRole.HighlightedText: t.highlight_text, QPalette.ColorRole.Link: t.accent,
        QPalette.ColorRole.PlaceholderText: t.muted, QPalette.ColorRole.Mid: t.border,
        QPalette.ColorRole.Midlight: t.border, QPalette.ColorRole.Light: t.base,
        QPalette.ColorRole.Dark: t.border, QPalette.ColorRole.Shadow: t.border,
        QPalette.ColorRole.BrightText: t.negative,
    }
    for role, color in roles.items():
        pal.setColor(role, QColor(color))
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.WindowText, QPalette.ColorRole.ButtonText):
        pal.setColor(QPalette.ColorGroup.Disabled, role, QColor(t.muted))
    return pal


# Style sheets are applied to a few widgets only, never to the whole application: an
# application style sheet makes Qt re-polish every widget through QStyleSheetStyle, which
# cost 100-300 ms of start-up here. The palette and Fusion do the rest.
_QSS = {
    "toolbar": """
        QToolBar {{ background: {window}; border: none; border-bottom: 1px solid {border};
                   padding: 3px 6px; spacing: 4px; }}
        QToolBar::separator {{ background: {border}; width: 1px; margin: 4px 6px; }}
        QToolButton {{ padding: 4px 8px; border-radius: 6px; border: 1px solid transparent; }}
        QToolButton:hover {{ background: {alt_base}; border-color: {border}; }}
        QToolButton:checked {{ background: {alt_base}; border-color: {border}; }}
    """,
    "filter_bar": """
        QLineEdit {{ background: {base}; border: 1px solid {border}; border-radius: 6px; padding: 4px 6px; }}
        QLineEdit:focus {{ border: 1px solid {accent}; }}
        QToolButton {{ padding: 4px 6px; border-radius: 6px; border: 1px solid transparent; }}
        QToolButton:hover {{ background: {alt_base}; border-color: {border}; }}
        QToolButton:checked {{ background: {alt_base}; border-color: {border}; }}
        QToolButton::menu-indicator {{ image: none; width: 0; }}
    """,
    "header": """
        QHeaderView {{ background: {window}; border: none; }}
        QHeaderView::section {{ background: {window}; color: {muted}; border: none;
                               border-bottom: 1px solid {border}; border-right: 1px solid {border};
                               padding: 7px 6px 4px 6px; font-weight: 600; }}
        QHeaderView::section:last {{ border-right: none; }}
        QHeaderView::up-arrow, QHeaderView::down-arrow {{ subcontrol-origin: padding;
                               subcontrol-position: top center; width: 10px; height: 6px; }}
    """,
    "panel_header": """
        QFrame {{ background: {window}; border: none; border-bottom: 1px solid {border}; }}
        QLabel {{ border: none; background: transparent; }}
    """,
    "scrubber": """
        QFrame {{ background: {window}; border: none; border-top: 1px solid {border}; }}
        QLabel {{ border: none; background: transparent; }}
        QSlider {{ background: transparent; border: none; }}
        QSlider::groove:horizontal {{ height: 4px; background: {border}; border-radius: 2px; }}
        QSlider::sub-page:horizontal {{ background: {accent}; border-radius: 2px; }}
        QSlider::handle:horizontal {{ background: {base}; border: 2px solid {accent};
                                     width: 10px; height: 10px; margin: -5px 0; border-radius: 7px; }}
    """,
    "tab_bar": """
        QTabBar {{ background: {window}; }}
        QTabBar::tab {{ background: transparent; color: {muted}; padding: 6px 14px;
                       border: none; border-bottom: 2px solid transparent; }}
        QTabBar::tab:selected {{ color: {text}; border-bottom: 2px solid {accent}; }}
        QTabBar::tab:hover {{ color: {text}; }}
    """,
    "status_bar": """
        QStatusBar {{ background: {window}; border-top: 1px solid {border}; color: {muted}; }}
        QStatusBar::item {{ border: none; }}
    """,
    "panel": """
        QHeaderView::section {{ background: {window}; color: {muted}; border: none;
                               border-bottom: 1px solid {border}; border-right: 1px solid {border};
                               padding: 4px 6px; font-weight: 600; }}
        QLineEdit {{ background: {base}; border: 1px solid {border}; border-radius: 6px; padding: 3px 6px; }}
        QLineEdit:focus {{ border: 1px solid {accent}; }}
        QPushButton, QToolButton {{ padding: 4px 10px; border-radius: 6px; border: 1px solid transparent;
                                   background: transparent; }}
        QPushButton:hover, QToolButton:hover {{ background: {alt_base}; border-color: {border}; }}
        QPushButton:checked, QToolButton:checked {{ background: {alt_base}; border-color: {border}; }}
    """,
    "welcome": """
        QPushButton {{ padding: 6px 16px; border-radius: 6px; border: 1px solid {border}; background: {base}; }}
        QPushButton:hover {{ border-color: {accent}; }}
        QPushButton#primary {{ background: {accent}; color: {highlight_text}; border-color: {accent}; }}
        QListWidget {{ background: transparent; }}
    """,
}


_themed: weakref.WeakKeyDictionary[QWidget, Callable[[Theme], str]] = weakref.WeakKeyDictionary()


def set_themed_style(widget: QWidget, make: Callable[[Theme], str]) -> None:
    """Give ``widget`` the style sheet ``make(theme)`` now and again after every theme switch.

    A style sheet holds colours, not roles: one written in the light theme would stay light
    after View ▸ Theme ▸ Dark. Every sheet made from theme colours goes through here.
    """
    _themed[widget] = make
    widget.setStyleSheet(make(_current))


def _restyle_all() -> None:
    for widget, make in list(_themed.items()):
        if shiboken6.isValid(widget):
            widget.setStyleSheet(make(_current))


def polish(widget: QWidget, kind: str) -> None:
    """Give ``widget`` (and its children) the small style sheet ``kind`` in the current theme."""
    set_themed_style(widget, lambda t: _QSS[kind].format(
        **{f: getattr(t, f) for f in t.__dataclass_fields__ if f != "dark"}))


def mute(label: QLabel) -> QLabel:
    """Draw a label in the theme's muted text colour."""
    pal = label.palette()
    pal.setColor(QPalette.ColorRole.WindowText, QColor(_current.muted))
    label.setPalette(pal)
    return label


def bold(label: QLabel) -> QLabel:
    """Draw a label in a semi-bold font (panel titles)."""
    font = label.font()
    font.setWeight(QFont.Weight.DemiBold)
    label.setFont(font)
    return label


class ThinSplitter(QSplitter):
    """A splitter whose handle is a 1-pixel line in the theme's border colour."""

    def createHandle(self) -> QSplitterHandle:
        return _LineHandle(self.orientation(), self)


class _LineHandle(QSplitterHandle):
    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.fillRect(self.rect(), QColor(_current.border))


def apply_theme(app: QApplication, mode: str = "auto") -> Theme:
    """Use Fusion with the light or dark theme (``mode``: auto, light or dark)."""
    global _current, _mode
    _mode = mode if mode in ("light", "dark") else "auto"
    dark = system_prefers_dark() if mode == "auto" else mode == "dark"
    _current = DARK if dark else LIGHT
    app.setStyle("Fusion")
    app.setPalette(_palette(_current))
    _restyle_all()
    return _current


_mode = "auto"


def current_mode() -> str:
    """The theme mode last applied: auto, light or dark."""
    return _mode


def mono_font(point_delta: float = 0.0) -> QFont:
    """The system fixed-width font (for ids, seqs and sizes)."""
    font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    if point_delta:
        font.setPointSizeF(max(6.0, font.pointSizeF() + point_delta))
    return font
