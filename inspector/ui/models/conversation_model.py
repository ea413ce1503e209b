"""A list model over a built conversation: one row per message."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QObject, QPersistentModelIndex, Qt

from inspector.diff.model import format_path
from inspector.ui.models.messages import ChatMessage, Conversation

MESSAGE_ROLE = Qt.ItemDataRole.UserRole + 1   # the ChatMessage
MATCH_ROLE = Qt.ItemDataRole.UserRole + 2     # True when the message matches the search
PATH_ROLE = Qt.ItemDataRole.UserRole + 3      # the message's path in the state (tuple)
AnyIndex = QModelIndex | QPersistentModelIndex


class ConversationModel(QAbstractListModel):
    """Rows are the messages of one Conversation; the search marks matching rows."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._conversation = Conversation((), ())
        self._matches: set[int] = set()

    def set_conversation(self, conversation: Conversation) -> None:
        """Show another conversation (resets the model)."""
        self.beginResetModel()
        self._conversation = conversation
        self._matches = set()
        self.endResetModel()

    @property
    def conversation(self) -> Conversation:
        """The conversation shown."""
        return self._conversation

    def message(self, row: int) -> ChatMessage:
        """The message of a row."""
        return self._conversation.messages[row]

    def set_matches(self, rows: set[int]) -> None:
        """Mark the rows matching a search."""
        changed = self._matches ^ rows
        self._matches = rows
        for row in changed:
            idx = self.index(row)
            self.dataChanged.emit(idx, idx, [MATCH_ROLE])

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._conversation.messages)

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._conversation.messages):
            return None
        message = self._conversation.messages[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return message.text
        if role == MESSAGE_ROLE:
            return message
        if role == MATCH_ROLE:
            return index.row() in self._matches
        if role == PATH_ROLE:
            return (*self._conversation.path, message.index)
        if role == Qt.ItemDataRole.ToolTipRole:
            return format_path((*self._conversation.path, message.index))
        return None

    def flags(self, index: AnyIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
