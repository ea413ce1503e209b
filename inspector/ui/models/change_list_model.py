"""A table model over a diff's structural changes: operation, path and what changed."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor, QFontDatabase

from inspector.diff import ADDED, CHANGED, MOVED, REMOVED, Change, Move, NumberDelta, TextDelta
from inspector.diff.grouping import ItemRange, group_changes
from inspector.diff.model import number_note
from inspector.diff.preview import message_preview, preview_pair
from inspector.highlight import to_json_text
from inspector.lazy import LazyText
from inspector.ui.formatting import visible

COLUMNS = ("", "Path", "Change")
OP, PATH, WHAT = range(3)
CHANGE_ROLE = Qt.ItemDataRole.UserRole + 1
GLYPHS = {ADDED: "+", REMOVED: "−", CHANGED: "~", MOVED: "↕"}
OP_HUES = {ADDED: "#1a7f37", REMOVED: "#cf222e", CHANGED: "#9a6700", MOVED: "#0969da"}
OP_HUES_DARK = {ADDED: "#56d364", REMOVED: "#f85149", CHANGED: "#e3b341", MOVED: "#58a6ff"}
AnyIndex = QModelIndex | QPersistentModelIndex


def short_repr(value: Any, limit: int = 60) -> str:
    """A one-line compact JSON preview of a value, cut to ``limit`` characters; a chat message
    too long to show whole says what it is (``AIMessage ai-0: tool_calls write_file(…)``)."""
    if isinstance(value, LazyText):     # a huge string compared streamed: its first characters
        value = value.prefix[:limit + 1]
    if isinstance(value, (dict, list)) and len(value) > 50:
        text = f"{{{len(value):,} keys}}" if isinstance(value, dict) else f"[{len(value):,} items]"
    else:
        text = to_json_text(value, indent=None)
    if len(text) > limit and isinstance(value, dict) and (message := message_preview(value, limit, _json)):
        text = message
    text = text.replace("\n", "⏎")
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _json(value: Any) -> str:
    return to_json_text(value, indent=None)


def _both(change: Change, limit: int, gap: str = "  ") -> str:
    """``old → new`` of a changed value, told apart where the two would read the same
    (another Unicode normal form, a skin-tone modifier, a difference past the cut)."""
    old, new, note = preview_pair(change.old, change.new, lambda value: short_repr(value, limit))
    return f"{old} → {new}" + (gap + note if note else "")


def _number(change: Change, detail: NumberDelta, limit: int, gap: str = "  ") -> str:
    """``old → new  (+2)``; ``(int → float)`` for a change of type alone, no difference of NaN."""
    note = number_note(change.old, change.new, detail)
    return f"{short_repr(change.old, limit)} → {short_repr(change.new, limit)}" + (gap + note if note else "")


def change_text(change: Change | ItemRange) -> str:
    """The 'Change' column: ``old → new`` in short, or what happened to text and lists."""
    if isinstance(change, ItemRange):
        first = change.changes[0]
        value = first.new if change.op == ADDED else first.old
        return f"{change.summary}: {short_repr(value, 60)}, …"
    detail = change.detail
    if change.op == ADDED:
        return short_repr(change.new, 80)
    if change.op == REMOVED:
        return f"was {short_repr(change.old, 80)}"
    if change.op == MOVED and isinstance(detail, Move):
        return f"moved from [{detail.source}] to [{detail.target}]"
    if isinstance(detail, TextDelta):
        return f"text: +{detail.added} −{detail.removed} {detail.unit}s"
    if isinstance(detail, NumberDelta):
        return _number(change, detail, 30)
    return _both(change, 38)


def describe_change(change: Change | ItemRange) -> str:
    """A change in one line, as ``Change.describe`` says it but with its values as compact JSON
    (as the rest of the window shows values): ``+ messages[0] = {"role": "user", …}``."""
    where = change.display_path
    if isinstance(change, ItemRange):
        first = change.changes[0]
        was = "" if change.op == ADDED else " was"
        return (f"{'+' if change.op == ADDED else '-'} {where}: {change.summary}, first{was} "
                f"{short_repr(first.new if change.op == ADDED else first.old)}")
    detail = change.detail
    if change.op == ADDED:
        return f"+ {where} = {short_repr(change.new)}"
    if change.op == REMOVED:
        return f"- {where} (was {short_repr(change.old)})"
    if change.op == MOVED and isinstance(detail, Move):
        return f"↕ {where} moved from [{detail.source}] to [{detail.target}]"
    if isinstance(detail, TextDelta):
        return f"~ {where}: text, +{detail.added} -{detail.removed} {detail.unit}s"
    if isinstance(detail, NumberDelta):
        return f"~ {where}: {_number(change, detail, 60, ' ')}"
    return f"~ {where}: {_both(change, 60, ' ')}"


class ChangeListModel(QAbstractTableModel):
    """Rows are structural changes in document order, items added or removed together in one
    row (an ItemRange); filter with a QSortFilterProxyModel on PATH."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._changes: tuple[Change | ItemRange, ...] = ()
        self._dark = False
        self._mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)

    def set_changes(self, changes: tuple[Change, ...], dark: bool = False) -> None:
        """Show these changes."""
        self.beginResetModel()
        self._changes = tuple(group_changes(changes))
        self._dark = dark
        self.endResetModel()

    def set_dark(self, dark: bool) -> None:
        """The theme switched: the op glyphs take the hues that read on the new background."""
        if dark != self._dark:
            self._dark = dark
            if self._changes:
                self.dataChanged.emit(self.index(0, OP), self.index(len(self._changes) - 1, OP),
                                      [Qt.ItemDataRole.ForegroundRole])

    def change(self, row: int) -> Change | ItemRange:
        """The change (or range of added/removed items) of a row."""
        return self._changes[row]

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._changes)

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal \
                and 0 <= section < len(COLUMNS):
            return COLUMNS[section]
        return None

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._changes):
            return None
        change = self._changes[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if column == OP:
                return GLYPHS.get(change.op, "?")
            return visible(change.display_path if column == PATH else change_text(change))
        if role == CHANGE_ROLE:
            return change
        if role == Qt.ItemDataRole.ToolTipRole:
            return visible(describe_change(change), lines=True)
        if role == Qt.ItemDataRole.ForegroundRole and column in (OP, PATH):
            hues = OP_HUES_DARK if self._dark else OP_HUES
            return QColor(hues.get(change.op, "#57606a")) if column == OP else None
        if role == Qt.ItemDataRole.FontRole and column == PATH:
            return self._mono
        if role == Qt.ItemDataRole.TextAlignmentRole and column == OP:
            return int(Qt.AlignmentFlag.AlignCenter)
        return None

    def flags(self, index: AnyIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
