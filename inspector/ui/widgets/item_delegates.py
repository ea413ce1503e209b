"""Item delegates: status pills, check-progress bars, two-line run names, nested LangGraph lanes."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QPainter
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from inspector.model import RunInfo
from inspector.ui import icons, style
from inspector.ui.formatting import visible
from inspector.ui.style import Theme, mono_font

Index = QModelIndex | QPersistentModelIndex
LANE_INDENT = 14


def _panel(option: QStyleOptionViewItem, painter: QPainter, widget: QWidget | None) -> None:
    """Draw the item's background and selection like the style would."""
    style_ = widget.style() if widget is not None else None
    if style_ is not None:
        style_.drawPrimitive(QStyle.PrimitiveElement.PE_PanelItemViewItem, option, painter, widget)


def _text_color(option: QStyleOptionViewItem, theme: Theme, muted: bool = False) -> QColor:
    if option.state & QStyle.StateFlag.State_Selected:
        color = QColor(theme.highlight_text)
        if muted:
            color.setAlphaF(0.8)
        return color
    return QColor(theme.muted if muted else theme.text)


def small_font(base: QFont, delta: float = -1.0, bold: bool = False) -> QFont:
    """``base`` a little smaller (and optionally semi-bold)."""
    font = QFont(base)
    font.setPointSizeF(max(6.0, base.pointSizeF() + delta))
    if bold:
        font.setWeight(QFont.Weight.DemiBold)
    return font


def paint_pill(painter: QPainter, rect: QRect, text: str, color: QColor, font: QFont,
               selected: bool = False) -> int:
    """A tinted rounded pill with ``text``, left-aligned and vertically centred; returns its width."""
    theme = style.theme()
    bg, border, fg = theme.pill_colors(color)
    if selected:  # on the selection colour: a solid light pill keeps the status readable
        bg, border, fg = QColor("#ffffff"), QColor("#ffffff"), color.darker(125)
    metrics = QFontMetrics(font)
    width = metrics.horizontalAdvance(text) + 16
    height = metrics.height() + 4
    box = QRectF(rect.left() + 6, rect.center().y() - height / 2 + 0.5, min(width, rect.width() - 8), height)
    painter.save()
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(border)
    painter.setBrush(bg)
    painter.drawRoundedRect(box, height / 2, height / 2)
    painter.setFont(font)
    painter.setPen(fg)
    elided = metrics.elidedText(text, Qt.TextElideMode.ElideRight, int(box.width()) - 8)
    painter.drawText(box, Qt.AlignmentFlag.AlignCenter, elided)
    painter.restore()
    return width


def paint_progress(painter: QPainter, rect: QRect, passed: int, total: int,
                   option: QStyleOptionViewItem, font: QFont) -> None:
    """A slim progress bar of passed/total checks with the count beside it."""
    theme = style.theme()
    metrics = QFontMetrics(font)
    label = f"{passed}/{total}" if total else "\u2014"
    label_width = max(metrics.horizontalAdvance("00/00"), metrics.horizontalAdvance(label)) + 6
    painter.save()
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    bar = QRectF(rect.left() + 6, rect.center().y() - 2.5, max(10, rect.width() - label_width - 16), 5)
    if total:
        track = QColor(theme.border)
        if option.state & QStyle.StateFlag.State_Selected:
            track = QColor(255, 255, 255, 90)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(track)
        painter.drawRoundedRect(bar, 2.5, 2.5)
        done = QRectF(bar)
        done.setWidth(bar.width() * min(1.0, passed / total))
        fill = QColor(style.STATUS_COLORS["completed"] if passed >= total else theme.accent)
        if option.state & QStyle.StateFlag.State_Selected:
            fill = QColor("#ffffff")  # the accent would vanish into the selection colour
        painter.setBrush(fill)
        if done.width() > 0:
            painter.drawRoundedRect(done, 2.5, 2.5)
    painter.setFont(font)
    painter.setPen(_text_color(option, theme, muted=True))
    text_rect = QRect(int(bar.right()) + 6, rect.top(), label_width + 4, rect.height())
    if not total:
        text_rect = QRect(rect.left() + 6, rect.top(), rect.width() - 8, rect.height())
    painter.drawText(text_rect, int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft), label)
    painter.restore()


class StatusPillDelegate(QStyledItemDelegate):
    """Paints a status (the cell's ``role`` value, a string) as a coloured pill."""

    def __init__(self, role: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.role = role

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = ""
        _panel(opt, painter, opt.widget)
        status = index.data(self.role) or ""
        if status:
            paint_pill(painter, opt.rect, status, style.theme().status_color(status),
                       small_font(opt.font, -1.0, bold=True), bool(opt.state & QStyle.StateFlag.State_Selected))

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        metrics = QFontMetrics(small_font(option.font, -1.0, bold=True))
        return QSize(metrics.horizontalAdvance("interrupted") + 28, metrics.height() + 10)


class ProgressDelegate(QStyledItemDelegate):
    """Paints ``(passed, total)`` from ``role`` as a progress bar."""

    def __init__(self, role: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.role = role
        self._font = mono_font(-1.0)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = ""
        _panel(opt, painter, opt.widget)
        value = index.data(self.role)
        if value is not None:
            paint_progress(painter, opt.rect, value[0], value[1], opt, self._font)

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        return QSize(110, QFontMetrics(option.font).height() + 8)


class RunNameDelegate(QStyledItemDelegate):
    """Two lines: the run's name (after a warning mark when the run is damaged), then
    'forked at #seq' · agent · id (unless it is the name) in a muted smaller font."""

    def __init__(self, run_role: int, fork_seq_role: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.run_role = run_role
        self.fork_seq_role = fork_seq_role
        self._mono = mono_font(-1.5)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = ""
        _panel(opt, painter, opt.widget)
        run = index.data(self.run_role)
        if run is None:
            return
        theme = style.theme()
        rect = opt.rect.adjusted(6, 4, -6, -4)
        painter.save()
        x = rect.left()
        if run.parent_run and not _subgraph(run):
            icons.icon("branch", QColor(style.STATUS_COLORS["forked"]).name()).paint(
                painter, QRect(x, rect.top() + 1, 14, 14))
            x += 18
        if run.damaged:     # the store found rows of the run it could not read (the reason is in the tooltip)
            icons.icon("warning").paint(painter, QRect(x, rect.top() + 1, 14, 14))
            x += 18
        name_font = QFont(opt.font)
        name_font.setWeight(QFont.Weight.Medium)
        metrics = QFontMetrics(name_font)
        painter.setFont(name_font)
        painter.setPen(_text_color(opt, theme))
        line1 = QRect(x, rect.top(), rect.right() - x, metrics.height())
        painter.drawText(line1, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
                         metrics.elidedText(visible(run.name), Qt.TextElideMode.ElideRight, line1.width()))
        self._second_line(painter, opt, index, QRect(rect.left(), line1.bottom() + 2, rect.width(),
                                                     rect.bottom() - line1.bottom() - 1))
        painter.restore()

    def second_line(self, index: Index) -> list[str]:
        """The second line's parts: 'forked at #seq', the agent, the id (but a name that is the
        id, as a CrewAI flow's: it is on the first line already)."""
        run = index.data(self.run_role)
        parts = []
        if run.parent_run:
            seq = index.data(self.fork_seq_role)
            what = "subgraph from" if _subgraph(run) else "forked at"      # a LangGraph subgraph's lane is no fork
            parts.append(f"{what} #{seq}" if seq is not None else what.split()[0])
        if run.agent:
            parts.append(visible(run.agent))
        if run.id != run.name:
            parts.append(run.id)
        return parts

    def _second_line(self, painter: QPainter, opt: QStyleOptionViewItem, index: Index, rect: QRect) -> None:
        run = index.data(self.run_role)
        theme = style.theme()
        small = small_font(opt.font, -1.5)
        parts = [(text, small) for text in self.second_line(index)]
        if run.id != run.name:      # the id, last, in the monospace font ids have everywhere
            parts[-1] = (run.id, self._mono)
        painter.setPen(_text_color(opt, theme, muted=True))
        x, right = rect.left(), rect.right()
        dot = " \u00b7 "
        for i, (text, font) in enumerate(parts):
            if i:
                if right - x < QFontMetrics(small).horizontalAdvance(dot) + 24:
                    break  # no room for anything readable after the separator
                painter.setFont(small)
                painter.drawText(QRect(x, rect.top(), right - x, rect.height()),
                                 int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), dot)
                x += QFontMetrics(small).horizontalAdvance(dot)
            metrics = QFontMetrics(font)
            painter.setFont(font)
            shown = metrics.elidedText(text, Qt.TextElideMode.ElideRight, max(0, right - x))
            painter.drawText(QRect(x, rect.top(), right - x, rect.height()),
                             int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), shown)
            x += metrics.horizontalAdvance(shown)
            if x >= right:
                break

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        metrics = QFontMetrics(option.font)
        small = QFontMetrics(small_font(option.font, -1.5))
        return QSize(220, metrics.height() + small.height() + 12)


class LaneDelegate(QStyledItemDelegate):
    """Indents a row of a nested LangGraph lane (subgraph) and marks it with the lane's colour."""

    def __init__(self, lane_role: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.lane_role = lane_role

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        lane = index.data(self.lane_role) or ""
        if not lane:
            super().paint(painter, option, index)
            return
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        depth = lane.count("|") + 1
        _panel(opt, painter, opt.widget)
        stripe = style.theme().lane_color(lane)
        for level in range(depth):
            color = stripe if level == depth - 1 else QColor(style.theme().border)
            painter.fillRect(QRect(opt.rect.left() + 6 + level * LANE_INDENT, opt.rect.top() + 3, 3,
                                   opt.rect.height() - 6), color)
        opt.rect = opt.rect.adjusted(depth * LANE_INDENT + 6, 0, 0, 0)
        opt.backgroundBrush = QBrush()  # the row tint is already painted across the whole cell
        widget = opt.widget
        if widget is not None:
            widget.style().drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)


def _subgraph(run: RunInfo) -> bool:
    """A LangGraph subgraph's lane in a native store (a child run, not a fork of it)."""
    return run.fork_reason == "subgraph"
