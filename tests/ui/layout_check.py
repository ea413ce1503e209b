"""Layout checks for GUI tests: visible sibling widgets that overlap, widgets cut off by their parent."""

from __future__ import annotations

from PySide6.QtWidgets import QAbstractScrollArea, QWidget


def _visible_children(widget: QWidget, top: QWidget) -> list[QWidget]:
    return [c for c in widget.children()
            if isinstance(c, QWidget) and not c.isWindow() and c.isVisibleTo(top)
            and c.width() > 0 and c.height() > 0]


def _name(widget: QWidget) -> str:
    text = ""
    for getter in ("text", "title"):
        value = getattr(widget, getter, None)
        if callable(value):
            try:
                text = str(value())[:30]
            except TypeError:
                continue
            break
    return f"{type(widget).__name__}({widget.objectName() or text!r})"


def overlapping_widgets(top: QWidget) -> list[str]:
    """Pairs of visible sibling widgets under ``top`` whose rectangles intersect, described."""
    found = []
    for widget in [top, *top.findChildren(QWidget)]:
        if not (widget is top or widget.isVisibleTo(top)):
            continue
        children = _visible_children(widget, top)
        for i, a in enumerate(children):
            for b in children[i + 1:]:
                if a.geometry().intersects(b.geometry()):
                    found.append(f"{_name(a)} {a.geometry().getRect()} overlaps {_name(b)} "
                                 f"{b.geometry().getRect()} in {_name(widget)}")
    return found


def cut_off_widgets(top: QWidget) -> list[str]:
    """Visible widgets under ``top`` that reach outside their parent (drawn partly or not at all).

    The contents of a scroll area's viewport may be larger than the viewport: that is scrolling.
    """
    found = []
    for widget in top.findChildren(QWidget):
        parent = widget.parentWidget()
        if widget.isWindow() or parent is None or not widget.isVisibleTo(top):
            continue
        if isinstance(parent.parentWidget(), QAbstractScrollArea) and parent is parent.parentWidget().viewport():
            continue
        if not parent.rect().contains(widget.geometry()):
            found.append(f"{_name(widget)} {widget.geometry().getRect()} outside {_name(parent)} "
                         f"{parent.rect().getRect()}")
    return found
