"""Icons from ``resources/icons/*.svg``; monochrome ones are tinted with the palette's text colour."""

from __future__ import annotations

import functools
import logging
import sys
from pathlib import Path

from PySide6.QtCore import QByteArray, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QIcon, QIconEngine, QPainter, QPixmap
from PySide6.QtSvg import QSvgRenderer

from inspector.ui import style

log = logging.getLogger(__name__)

def find_icon_dir(source: Path = Path(__file__).resolve().parents[2], prefix: Path = Path(sys.prefix)) -> Path:
    """``resources/icons`` of a source checkout (editable installs), else where a wheel put
    them (``<prefix>/share/checkpoint-inspector/icons``, see pyproject's data-files)."""
    checkout = source / "resources" / "icons"
    installed = prefix / "share" / "checkpoint-inspector" / "icons"
    return checkout if checkout.is_dir() or not installed.is_dir() else installed


ICON_DIR = find_icon_dir()


def icon_path(name: str) -> Path:
    """The SVG file of icon ``name``."""
    return ICON_DIR / f"{name}.svg"


class _SvgEngine(QIconEngine):
    """Renders an SVG lazily at whatever size is asked for (nothing rendered up front).

    ``currentColor`` becomes ``color``, or, when it is None, the theme's text colour at the
    time of painting: an icon made before View ▸ Theme ▸ Dark is drawn light afterwards.
    """

    def __init__(self, template: str, color: str | None) -> None:
        super().__init__()
        self._template, self._color = template, color
        self._renderers: dict[str, QSvgRenderer] = {}
        self._cache: dict[tuple[int, int, int, str], QPixmap] = {}

    def _renderer(self) -> tuple[str, QSvgRenderer]:
        color = self._color or style.theme().text
        renderer = self._renderers.get(color)
        if renderer is None:
            renderer = self._renderers[color] = QSvgRenderer(QByteArray(self._template.replace("currentColor", color).encode()))
        return color, renderer

    def paint(self, painter: QPainter, rect: QRect, mode: QIcon.Mode, state: QIcon.State) -> None:
        painter.save()
        if mode == QIcon.Mode.Disabled:
            painter.setOpacity(0.4)
        self._renderer()[1].render(painter, QRectF(rect))
        painter.restore()

    def pixmap(self, size: QSize, mode: QIcon.Mode, state: QIcon.State) -> QPixmap:
        key = (size.width(), size.height(), int(mode == QIcon.Mode.Disabled), self._renderer()[0])
        cached = self._cache.get(key)
        if cached is None:
            cached = QPixmap(size)
            cached.fill(Qt.GlobalColor.transparent)
            painter = QPainter(cached)
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            self.paint(painter, QRect(0, 0, size.width(), size.height()), mode, state)
            painter.end()
            self._cache[key] = cached
        return cached

    def clone(self) -> _SvgEngine:
        return _SvgEngine(self._template, self._color)


@functools.lru_cache(maxsize=256)
def _render(name: str, color: str | None) -> QIcon:
    try:
        text = icon_path(name).read_text(encoding="utf-8")
    except OSError:
        log.debug("missing icon %s", name)
        return QIcon()
    if not QSvgRenderer(QByteArray(text.replace("currentColor", "#000000").encode())).isValid():
        return QIcon()
    return QIcon(_SvgEngine(text, color))


def icon(name: str, color: str | None = None) -> QIcon:
    """Icon ``name``; ``currentColor`` in the SVG becomes ``color`` (default: the theme's text,
    followed when the theme changes)."""
    return _render(name, color)


def kind_icon(kind: str) -> QIcon:
    """The icon of a checkpoint kind (a neutral one for unknown kinds)."""
    return icon(f"kind-{kind}") if icon_path(f"kind-{kind}").exists() else icon("kind-step")


def status_icon(status: str) -> QIcon:
    """The icon of a run status."""
    return icon(f"status-{status}") if icon_path(f"status-{status}").exists() else icon("status-interrupted")


def app_icon() -> QIcon:
    """The application icon."""
    return icon("app")


def clear_cache() -> None:
    """Forget rendered icons (after the theme changes)."""
    _render.cache_clear()
