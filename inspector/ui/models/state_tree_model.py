"""A lazy tree model over a decoded JSON value: key, value preview, type and size columns.

Children are created only when a view asks for them, in batches (``fetchMore``), so a state
with a 100,000-item list opens instantly. Sizes are precomputed off the GUI thread
(``json_walk.json_sizes``) and handed in; search matches are handed in the same way.
"""

from __future__ import annotations

import logging
from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor, QFont, QFontDatabase

from inspector.lazy import LazyText, LazyValue
from inspector.highlight import theme_for
from inspector.ui.formatting import visible
from inspector.ui.models.json_walk import (fmt_bytes, format_path, is_long_text, json_sizes, preview,
                                           scalar_size, type_name)

log = logging.getLogger(__name__)
BATCH = 500
COLUMNS = ("Key", "Value", "Type", "Size")
KEY, VALUE, TYPE, SIZE = range(4)
PATH_ROLE = Qt.ItemDataRole.UserRole + 1        # tuple path
VALUE_ROLE = Qt.ItemDataRole.UserRole + 2       # the Python value
PATH_TEXT_ROLE = Qt.ItemDataRole.UserRole + 3   # ``messages[3].content``
LONG_TEXT_ROLE = Qt.ItemDataRole.UserRole + 4   # True when the value cell is elided text
TOOLTIP_CHARS = 1200
AnyIndex = QModelIndex | QPersistentModelIndex


class _Node:
    """One row: its key within the parent, the value, and the children created so far."""

    __slots__ = ("parent", "row", "key", "value", "path", "children", "_keys", "_key_rows")

    def __init__(self, parent: _Node | None, row: int, key: Any, value: Any, path: tuple) -> None:
        self.parent, self.row, self.key, self.value, self.path = parent, row, key, value, path
        self.children: list[_Node] = []
        self._keys: list | None = None
        self._key_rows: dict | None = None

    @property
    def total(self) -> int:
        """How many children the value has (loaded or not)."""
        value = self.value
        if isinstance(value, (dict, list)):
            return len(value)
        return value.length if isinstance(value, LazyValue) and value.kind != "string" else 0

    def keys(self) -> list:
        """Child keys in order (dict keys or list indices; a part read on demand: those loaded)."""
        if isinstance(self.value, LazyValue):
            return [c.key for c in self.children]
        if self._keys is None:
            value = self.value
            self._keys = list(value.keys()) if isinstance(value, dict) else list(range(self.total))
        return self._keys

    def row_of_key(self, key: Any, hints: dict | None = None) -> int | None:
        """The row of a child key (None when absent; in a part read on demand, also when not
        loaded yet and not in ``hints``: path → row)."""
        value = self.value
        if isinstance(value, list) or isinstance(value, LazyValue) and value.kind == "array":
            return key if isinstance(key, int) and 0 <= key < self.total else None
        if isinstance(value, LazyValue):
            hinted = (hints or {}).get((*self.path, key))
            if hinted is not None:
                return hinted
            self._key_rows = None   # pages arrive: the loaded keys' rows are looked up afresh
        if self._key_rows is None:
            self._key_rows = {k: i for i, k in enumerate(self.keys())}
        row = self._key_rows.get(key)
        if row is None and isinstance(key, str):   # JSON turned int keys into strings
            row = next((i for i, k in enumerate(self.keys()) if str(k) == key), None)
        return row

    def load(self, upto: int) -> None:
        """Create child nodes up to (excluding) ``upto`` (a part read on demand reads them)."""
        value = self.value
        if isinstance(value, LazyValue):
            start = len(self.children)
            for row, (key, child) in enumerate(value.entries(start, min(upto, self.total)), start):
                self.children.append(_Node(self, row, key, child, (*self.path, key)))
            return
        keys = self.keys()
        for row in range(len(self.children), min(upto, self.total)):
            key = keys[row]
            self.children.append(_Node(self, row, key, value[key], (*self.path, key)))


class _Unreadable(LazyValue):
    """What a part read on demand becomes when a page of it cannot be read: the rows read
    so far, then one row with the reason."""

    __slots__ = ("was", "loaded", "reason")

    def __init__(self, was: LazyValue, loaded: int, reason: str) -> None:
        super().__init__(was.kind, loaded + 1, was.size)
        self.was, self.loaded, self.reason = was, loaded, reason

    def entries(self, start: int, stop: int) -> list[tuple[Any, Any]]:
        return [("(unreadable)", {"__error__": self.reason})] if start <= self.loaded < stop else []

    def materialize(self) -> Any:
        return self.was.materialize()


class StateTreeModel(QAbstractItemModel):
    """Tree over one JSON value; the top-level rows are the value's keys (or the value itself)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._root = _Node(None, 0, None, {}, ())
        self._sizes: dict[int, int] = {}
        self._matches: set[tuple] = set()
        self._current: tuple | None = None
        self._hints: dict[tuple, int] = {}     # path → row in a part read on demand (search)
        self._dark = False
        self._mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)

    # -- content -------------------------------------------------------------------
    def set_value(self, value: Any, sizes: dict[int, int] | None = None) -> None:
        """Show a new value (``sizes`` from ``json_sizes(value)``)."""
        self.beginResetModel()
        if isinstance(value, (dict, list)):
            self._root = _Node(None, 0, None, value, ())
        else:
            self._root = _Node(None, 0, None, {"(value)": value}, ())
        self._root.load(BATCH)
        if not isinstance(value, (dict, list)):
            self._root.children[0].path = ()   # the single row is the value itself
        self._sizes = sizes or {}
        self._matches, self._current = set(), None
        self._hints = {}
        self.endResetModel()

    def value(self) -> Any:
        """The value shown."""
        return self._root.value

    def set_sizes(self, sizes: dict[int, int]) -> None:
        """Install sizes computed after the value was shown."""
        self._sizes = sizes
        self._emit_column_changed(SIZE)

    def set_dark(self, dark: bool) -> None:
        """Choose value colours for a dark or light palette (a theme switch repaints them)."""
        if dark != self._dark:
            self._dark = dark
            self._emit_column_changed(VALUE)
            self._emit_column_changed(KEY)     # (search matches are tinted for the palette too)

    def set_matches(self, matches: set[tuple], current: tuple | None = None,
                    rows: dict[tuple, int] | None = None) -> None:
        """Mark search matches (paths) and the current one (``rows``: where the keys on their
        paths are in the parts read on demand)."""
        self._matches, self._current = matches, current
        if rows is not None:
            self._hints = rows
        self._emit_column_changed(KEY)

    def _emit_column_changed(self, column: int) -> None:
        # Views repaint visible cells on any dataChanged; one signal for the top level is enough.
        n = len(self._root.children)
        if n:
            self.dataChanged.emit(self.index(0, column), self.index(n - 1, column))

    # -- navigation ----------------------------------------------------------------
    def node(self, index: AnyIndex) -> _Node:
        """The node behind an index (the root for an invalid index)."""
        return index.internalPointer() if index.isValid() else self._root

    def index_for_path(self, path: tuple) -> QModelIndex:
        """The index of a path, loading children on the way; invalid when it does not exist."""
        index = QModelIndex()
        node = self._root
        for key in path:
            row = node.row_of_key(key, self._hints)
            if row is None:
                return QModelIndex()
            if row >= len(node.children):
                self._load(index, node, row + 1)
                if row >= len(node.children):   # a page that could not be read
                    return QModelIndex()
            node = node.children[row]
            index = self.createIndex(row, 0, node)
        return index

    def _load(self, parent: AnyIndex, node: _Node, upto: int) -> None:
        first, last = len(node.children), min(upto, node.total) - 1
        if last < first:
            return
        if isinstance(node.value, LazyValue):
            try:    # a page read on demand: read before the rows are announced
                node.load(last + 1)
            except Exception as err:  # a damaged page (or one over a read budget) is one row saying so
                log.warning("a page of %s could not be read: %s", format_path(node.path), err)
                node.children = node.children[:first]
                node.value = _Unreadable(node.value, first, str(err) or type(err).__name__)
            last = len(node.children) - 1
            if last < first:
                return
            self.beginInsertRows(parent, first, last)
            self.endInsertRows()
        else:
            self.beginInsertRows(parent, first, last)
            node.load(last + 1)
            self.endInsertRows()
        if isinstance(node.value, LazyValue):   # a page read on demand: its containers' sizes
            for child in node.children[first:]:
                if isinstance(child.value, (dict, list)):
                    self._sizes.update(json_sizes(child.value))

    # -- QAbstractItemModel --------------------------------------------------------
    def index(self, row: int, column: int, parent: AnyIndex = QModelIndex()) -> QModelIndex:
        if column < 0 or column >= len(COLUMNS) or row < 0:
            return QModelIndex()
        node = self.node(parent)
        if row >= len(node.children):
            return QModelIndex()
        return self.createIndex(row, column, node.children[row])

    def parent(self, index: AnyIndex = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # Qt overloads parent() (QObject's) and parent(index)
        if not index.isValid():
            return QModelIndex()
        node: _Node = index.internalPointer()
        up = node.parent
        if up is None or up is self._root:
            return QModelIndex()
        return self.createIndex(up.row, 0, up)

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:
        if parent.isValid() and parent.column() != 0:
            return 0
        return len(self.node(parent).children)

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:
        return len(COLUMNS)

    def hasChildren(self, parent: AnyIndex = QModelIndex()) -> bool:
        if parent.isValid() and parent.column() != 0:
            return False
        return self.node(parent).total > 0

    def canFetchMore(self, parent: AnyIndex) -> bool:
        if parent.isValid() and parent.column() != 0:
            return False
        node = self.node(parent)
        return len(node.children) < node.total

    def fetchMore(self, parent: AnyIndex) -> None:
        if parent.isValid() and parent.column() != 0:
            return
        node = self.node(parent)
        self._load(parent, node, len(node.children) + BATCH)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole \
                and 0 <= section < len(COLUMNS):
            return COLUMNS[section]
        return None

    def flags(self, index: AnyIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        node: _Node = index.internalPointer()
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return visible(self._display(node, column))
        if role == PATH_ROLE:
            return node.path
        if role == PATH_TEXT_ROLE:
            return format_path(node.path)
        if role == VALUE_ROLE:
            return node.value
        if role == LONG_TEXT_ROLE:
            return is_long_text(node.value)
        if role == Qt.ItemDataRole.ToolTipRole:
            return visible(self._tooltip(node), lines=True)
        if role == Qt.ItemDataRole.ForegroundRole and column == VALUE:
            return self._value_color(node.value)
        if role == Qt.ItemDataRole.FontRole:
            return self._font(node, column)
        if role == Qt.ItemDataRole.BackgroundRole and node.path in self._matches:
            theme = theme_for(self._dark)
            return QColor(theme.current_match_bg if node.path == self._current else theme.match_bg)
        if role == Qt.ItemDataRole.TextAlignmentRole and column == SIZE:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def _display(self, node: _Node, column: int) -> str:
        if column == KEY:
            parent = node.parent.value if node.parent is not None else None
            listed = isinstance(parent, list) or isinstance(parent, LazyValue) and parent.kind == "array"
            return f"[{node.key}]" if listed else str(node.key)
        if column == VALUE:
            return preview(node.value)
        if column == TYPE:
            return type_name(node.value)
        value = node.value
        size = self._sizes.get(id(value)) if isinstance(value, (dict, list)) else scalar_size(value)
        return fmt_bytes(size) if size is not None else ""

    def _tooltip(self, node: _Node) -> str:
        head = format_path(node.path)
        if isinstance(node.value, LazyText):
            text = node.value.prefix[:TOOLTIP_CHARS]
            size = f"{node.value.chars:,} characters" if node.value.chars is not None else \
                f"{node.value.length:,} bytes of text"
            return f"{head}  ({size})\n\n{text}…"
        if isinstance(node.value, str) and is_long_text(node.value):
            text = node.value[:TOOLTIP_CHARS] + ("…" if len(node.value) > TOOLTIP_CHARS else "")
            return f"{head}  ({len(node.value):,} characters)\n\n{text}"
        return head

    def _value_color(self, value: Any) -> QColor | None:
        theme = theme_for(self._dark)
        if isinstance(value, (str, LazyText)):
            token = "string"
        elif isinstance(value, bool) or value is None:
            token = "keyword"
        elif isinstance(value, (int, float)):
            token = "number"
        else:
            token = "punctuation"
        color = theme.color(token)
        return QColor(color) if color else None

    def _font(self, node: _Node, column: int) -> QFont | None:
        if column == KEY and node.path == self._current and node.path in self._matches:
            font = QFont()
            font.setBold(True)
            return font
        if column == VALUE and not isinstance(node.value, (dict, list)) and \
                not (isinstance(node.value, LazyValue) and node.value.kind != "string"):
            return self._mono
        return None
