"""Message lists of a state shown as a chat: one bubble per message, styled by role."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import QFont, QFontDatabase, QFontMetrics, QGuiApplication, QPainter, QPen
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QHBoxLayout, QLabel, QListView, QMenu,
                               QStackedWidget, QStyle, QStyledItemDelegate, QStyleOptionViewItem,
                               QVBoxLayout, QWidget)

from inspector.diff.model import format_path
from inspector.model import RunInfo, Snapshot
from inspector.ui.models.conversation_model import MATCH_ROLE, MESSAGE_ROLE, PATH_ROLE, ConversationModel
from inspector.ui.models.messages import ChatMessage, Conversation, build_conversation, find_message_lists
from inspector.ui.formatting import visible
from inspector.ui.tasks import JobContext, LatestJob
from inspector.ui.widgets.palette import ROLE_HUES, accent, blend, muted_text, tint

MAX_BUBBLE_CHARS = 3000
PAD, GAP, MARGIN, RADIUS = 10, 8, 14, 10


def _prepare(state: Any, ctx: JobContext) -> tuple[list[tuple], Conversation | None]:
    paths = find_message_lists(state)
    ctx.check()
    return paths, (build_conversation(state, paths[0]) if paths else None)


def shown_text(message: ChatMessage) -> str:
    """The text a bubble shows (very long messages are cut; the full text is copied on demand)."""
    text = message.text
    if len(text) > MAX_BUBBLE_CHARS:
        text = text[:MAX_BUBBLE_CHARS] + f"… (+{len(message.text) - MAX_BUBBLE_CHARS:,} characters)"
    parts = [text] if text else []
    parts += [f"→ {call}" for call in message.calls]
    return visible("\n".join(parts), lines=True) if parts else "(empty)"


class BubbleDelegate(QStyledItemDelegate):
    """Paints a message as a rounded bubble: user right, assistant/tool left, system centred."""

    def __init__(self, view: QListView) -> None:
        super().__init__(view)
        self._view = view
        self._mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self._cache: dict[tuple[int, int], tuple[QRect, QRect, int]] = {}

    def clear_cache(self) -> None:
        """Forget computed layouts (new messages or a new width)."""
        self._cache.clear()

    def _body_font(self, option: QStyleOptionViewItem, message: ChatMessage) -> QFont:
        return self._mono if message.role == "tool" else option.font

    def _layout(self, option: QStyleOptionViewItem, message: ChatMessage) -> tuple[QRect, QRect, int]:
        """(bubble rect, text rect) relative to the row's top-left, and the header height."""
        width = max(200, self._view.viewport().width())
        key = (id(message), width)
        if key in self._cache:
            return self._cache[key]
        max_w = int(width * (0.9 if message.role == "system" else 0.78)) - 2 * MARGIN
        small = QFontMetrics(self._small_font(option.font))
        head_h = small.height() + 4
        extra_h = small.height() * len(message.extras)
        fm = QFontMetrics(self._body_font(option, message))
        text = shown_text(message)
        rect = fm.boundingRect(QRect(0, 0, max_w - 2 * PAD, 1 << 20),
                               int(Qt.TextFlag.TextWordWrap | Qt.TextFlag.TextExpandTabs), text)
        bold = QFont(self._small_font(option.font))
        bold.setBold(True)
        head_w = (QFontMetrics(bold).horizontalAdvance(message.label)
                  + small.horizontalAdvance(f"#{message.index}") + 24 + 2 * PAD)
        extra_w = max((small.horizontalAdvance(f"{k}: {v}") for k, v in message.extras), default=0)
        bubble_w = min(max_w, max(rect.width(), head_w - 2 * PAD, extra_w) + 2 * PAD)
        bubble_h = head_h + rect.height() + extra_h + 2 * PAD
        if message.role == "user":
            left = width - MARGIN - bubble_w
        elif message.role == "system":
            left = (width - bubble_w) // 2
        else:
            left = MARGIN
        bubble = QRect(left, GAP // 2, bubble_w, bubble_h)
        text_rect = QRect(left + PAD, GAP // 2 + PAD + head_h, bubble_w - 2 * PAD, rect.height())
        self._cache[key] = (bubble, text_rect, head_h)
        return self._cache[key]

    @staticmethod
    def _small_font(font: QFont) -> QFont:
        small = QFont(font)
        small.setPointSizeF(max(7.0, font.pointSizeF() * 0.85))
        return small

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        message: ChatMessage | None = index.data(MESSAGE_ROLE)
        if message is None:
            return QSize(0, 0)
        bubble, _, _ = self._layout(option, message)
        return QSize(max(200, self._view.viewport().width()) - 1, bubble.height() + GAP)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,
              index: QModelIndex | QPersistentModelIndex) -> None:
        message: ChatMessage | None = index.data(MESSAGE_ROLE)
        if message is None:
            return
        bubble, text_rect, head_h = self._layout(option, message)
        origin = option.rect.topLeft()
        bubble, text_rect = bubble.translated(origin), text_rect.translated(origin)
        pal = option.palette
        hue = ROLE_HUES.get(message.role, ROLE_HUES["other"])
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        matched = bool(index.data(MATCH_ROLE))
        edge = pal.color(pal.ColorRole.Highlight) if selected else accent(pal, hue)
        if not selected:
            edge = blend(pal.color(pal.ColorRole.Base), edge, 0.45)
        pen = QPen(edge, 2.0 if selected or matched else 1.0)
        if matched and not selected:
            pen.setColor(accent(pal, "#bf8700"))
        painter.setPen(pen)
        painter.setBrush(tint(pal, hue, 0.10 if message.role != "system" else 0.05))
        painter.drawRoundedRect(bubble.adjusted(1, 1, -1, -1), RADIUS, RADIUS)
        self._paint_header(painter, option, message, bubble, hue)
        painter.setPen(pal.color(pal.ColorRole.Text))
        font = QFont(self._body_font(option, message))
        if message.role == "system":
            font.setItalic(True)
        painter.setFont(font)
        painter.drawText(text_rect, int(Qt.TextFlag.TextWordWrap | Qt.TextFlag.TextExpandTabs),
                         shown_text(message))
        self._paint_extras(painter, option, message, text_rect)
        painter.restore()

    def _paint_header(self, painter: QPainter, option: QStyleOptionViewItem, message: ChatMessage,
                      bubble: QRect, hue: str) -> None:
        small = self._small_font(option.font)
        bold = QFont(small)
        bold.setBold(True)
        head = QRect(bubble.left() + PAD, bubble.top() + PAD - 1, bubble.width() - 2 * PAD,
                     QFontMetrics(small).height() + 3)
        painter.setFont(bold)
        painter.setPen(accent(option.palette, hue))
        painter.drawText(head, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), visible(message.label))
        painter.setFont(small)
        painter.setPen(muted_text(option.palette))
        painter.drawText(head, int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter),
                         f"#{message.index}")

    def _paint_extras(self, painter: QPainter, option: QStyleOptionViewItem, message: ChatMessage,
                      text_rect: QRect) -> None:
        if not message.extras:
            return
        small = self._small_font(option.font)
        line_h = QFontMetrics(small).height()
        painter.setFont(small)
        painter.setPen(muted_text(option.palette))
        top = text_rect.bottom() + 1
        for key, value in message.extras:
            painter.drawText(QRect(text_rect.left(), top, text_rect.width(), line_h),
                             int(Qt.AlignmentFlag.AlignLeft), visible(f"{key}: {value}"))
            top += line_h


class ConversationView(QWidget):
    """The conversation of a state: picks the message list, shows bubbles, finds text.

    Signals: ``conversation_ready(int)`` with the message count once built;
    ``reveal_requested(tuple)`` when the user asks to see a message in the tree.
    """

    conversation_ready = Signal(int)
    reveal_requested = Signal(tuple)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._state: Any = None
        self._job = LatestJob(self)
        self._job.finished.connect(self._on_job_finished)
        self._model = ConversationModel(self)
        self._picker = QComboBox(self)
        self._picker.currentIndexChanged.connect(self._on_picker_changed)
        self._list = self._make_list()
        self._empty = QLabel("No message list in this state", self)
        self._empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._empty.setEnabled(False)
        self._stack = QStackedWidget(self)
        self._stack.addWidget(self._list)
        self._stack.addWidget(self._empty)
        picker_row = QHBoxLayout()
        picker_row.setContentsMargins(6, 4, 6, 0)
        self._picker_label = QLabel("Messages in", self)
        picker_row.addWidget(self._picker_label)
        picker_row.addWidget(self._picker, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(picker_row)
        layout.addWidget(self._stack, 1)
        self._matches: list[int] = []
        self._match_pos = -1
        self._needle = ""
        self._show_picker(False)

    def _make_list(self) -> QListView:
        view = QListView(self)
        view.setModel(self._model)
        self._delegate = BubbleDelegate(view)
        view.setItemDelegate(self._delegate)
        view.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        view.setResizeMode(QListView.ResizeMode.Adjust)
        view.setLayoutMode(QListView.LayoutMode.Batched)
        view.setBatchSize(50)
        view.setUniformItemSizes(False)
        view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        view.setFrameShape(QListView.Shape.NoFrame)
        view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        view.customContextMenuRequested.connect(self._on_list_context_menu)
        view.verticalScrollBar().setSingleStep(24)
        view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        return view

    # -- public API ----------------------------------------------------------------
    @property
    def model(self) -> ConversationModel:
        """The message model (one row per message)."""
        return self._model

    @property
    def list_view(self) -> QListView:
        """The list view showing the bubbles."""
        return self._list

    def show_snapshot(self, snapshot: Snapshot | None, run: RunInfo | None = None) -> None:
        """Show the conversation of a snapshot's state (None clears)."""
        self.show_state(None if snapshot is None else snapshot.state)

    def show_state(self, state: Any) -> None:
        """Find and build the conversation of a state off the GUI thread."""
        self._state = state
        if state is None:
            self._job.cancel()
            self._apply([], None)
            return
        self._job.submit(lambda ctx: _prepare(state, ctx))

    def find_text(self, needle: str, *, backwards: bool = False) -> tuple[int, int]:
        """Select the next message containing ``needle``; returns (match index, match count)."""
        folded = needle.casefold()
        if folded != self._needle:
            self._needle = folded
            self._matches = [] if not folded else [
                row for row, m in enumerate(self._model.conversation.messages)
                if folded in m.text.casefold() or folded in m.label.casefold()
                or any(folded in c.casefold() for c in m.calls)]
            self._match_pos = -1
            self._model.set_matches(set(self._matches))
        if not self._matches:
            return -1, 0
        step = -1 if backwards else 1
        self._match_pos = (self._match_pos + step) % len(self._matches) if self._match_pos >= 0 else (
            len(self._matches) - 1 if backwards else 0)
        self.select_row(self._matches[self._match_pos])
        return self._match_pos, len(self._matches)

    def select_row(self, row: int) -> None:
        """Select a message and scroll it into view."""
        index = self._model.index(row)
        self._list.setCurrentIndex(index)
        self._list.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)

    # -- internals -----------------------------------------------------------------
    def _on_job_finished(self, result: tuple[list[tuple], Conversation | None]) -> None:
        self._apply(*result)

    def _apply(self, paths: list[tuple], conversation: Conversation | None) -> None:
        self._picker.blockSignals(True)
        self._picker.clear()
        for path in paths:
            self._picker.addItem(format_path(path), path)
        self._picker.blockSignals(False)
        self._show_picker(len(paths) > 1)
        self._set_conversation(conversation)

    def _set_conversation(self, conversation: Conversation | None) -> None:
        self._delegate.clear_cache()
        self._needle, self._matches, self._match_pos = "", [], -1
        self._model.set_conversation(conversation or Conversation((), ()))
        self._stack.setCurrentWidget(self._list if conversation else self._empty)
        self.conversation_ready.emit(self._model.rowCount())

    def _show_picker(self, visible: bool) -> None:
        self._picker.setVisible(visible)
        self._picker_label.setVisible(visible)

    def _on_picker_changed(self, row: int) -> None:
        path = self._picker.itemData(row)
        if path is not None and self._state is not None:
            self._set_conversation(build_conversation(self._state, path))

    def _on_list_context_menu(self, pos: QPoint) -> None:
        index = self._list.indexAt(pos)
        if not index.isValid():
            return
        message: ChatMessage = index.data(MESSAGE_ROLE)
        path = index.data(PATH_ROLE)
        menu = QMenu(self)
        menu.addAction("Copy message text", lambda: QGuiApplication.clipboard().setText(message.text))
        menu.addAction("Copy path", lambda: QGuiApplication.clipboard().setText(format_path(path)))
        menu.addSeparator()
        menu.addAction("Show in tree", lambda: self.reveal_requested.emit(path))
        menu.exec(self._list.viewport().mapToGlobal(pos))

    def resizeEvent(self, event) -> None:  # Qt override
        self._delegate.clear_cache()
        super().resizeEvent(event)
