"""The Tree page of the State tab: a lazy JSON tree, a detail pane with the full value, find."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QItemSelection, QModelIndex, QObject, QPoint, Qt, Signal
from PySide6.QtGui import QGuiApplication, QKeyEvent, QKeySequence, QResizeEvent
from PySide6.QtWidgets import (QAbstractItemView, QFileDialog, QHBoxLayout, QHeaderView, QLabel, QMenu,
                               QPlainTextEdit, QPushButton, QSizePolicy, QSplitter, QStackedWidget, QTreeView,
                               QVBoxLayout, QWidget)

from inspector.ui import icons
from inspector.ui.availability import set_available
from inspector.highlight import to_json_text
from inspector.lazy import LazyText, LazyValue, is_lazy, materialize
from inspector.diff.window import is_big
from inspector.ui.models.json_walk import format_path, json_sizes, preview, search_paths, type_name
from inspector.ui.models.state_tree_model import (KEY, PATH_ROLE, SIZE, TYPE, VALUE, VALUE_ROLE,
                                                  StateTreeModel)
from inspector.ui.tasks import LatestJob
from inspector.ui.widgets.json_view import JsonView
from inspector.ui.widgets.palette import is_dark, muted_text, theme_changed



def value_text(value: Any) -> str:
    """What "Copy value" puts on the clipboard: strings raw, everything else as JSON (a part
    read on demand is read whole first: call it in a worker for those, see ``is_lazy``)."""
    value = materialize(value)
    return value if isinstance(value, str) else to_json_text(value)


def search_lazy(value: Any, needle: str, cancel: Any) -> tuple[list[tuple], dict[tuple, int]]:
    """``search_paths`` over a state with parts read on demand: the state is built whole
    (within the read budgets) in the worker; also returns the row of every map key on the
    matches' paths (the tree has loaded only some of those rows)."""
    whole = materialize(value)
    found = search_paths(whole, needle, cancel)
    rows: dict[tuple, int] = {}
    positions: dict[int, dict] = {}
    for path in found:
        node = whole
        for depth, key in enumerate(path):
            if isinstance(node, dict):
                where = positions.get(id(node))
                if where is None:
                    where = positions[id(node)] = {k: i for i, k in enumerate(node)}
                rows[path[:depth + 1]] = where[key]
            node = node[key]
    return found, rows


PREVIEW_CHARS = 100_000     # characters of a string the detail pane shows at first (and per "Show more")
MAX_SHOWN_CHARS = 2_000_000  # beyond this, "Save full value…" (a text view of 200 MB would freeze)
DETAIL_MIN_LINES = 3          # lines of a value the detail pane keeps however short the tab


class ValueDetail(QWidget):
    """Shows one value: wrapped text for strings, highlighted JSON otherwise — bounded.

    A long string shows its first ``PREVIEW_CHARS`` characters and "Show more" (up to
    ``MAX_SHOWN_CHARS``); a big container (``inspector.diff.window.is_big``) is not formatted
    as text at all. "Copy full value" and "Save full value…" always take the whole value
    (saving is written off the GUI thread)."""

    saved = Signal(str)       # the path written by "Save full value…"
    copied = Signal(int)      # characters a worker read for "Copy full value" (parts read on demand)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel(self)
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.title.setContentsMargins(6, 4, 6, 2)
        self.title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.shown = QLabel(self)
        self.shown.setEnabled(False)
        self.more = QPushButton("Show more", self)
        self.copy = QPushButton("Copy full value", self)
        self.save = QPushButton("Save full value\u2026", self)
        for button in (self.more, self.copy, self.save):
            button.setFlat(True)
        self.more.clicked.connect(self.show_more)
        self.copy.clicked.connect(self.copy_full)
        self.save.clicked.connect(self._on_save_clicked)
        self.text = QPlainTextEdit(self)
        self.text.setReadOnly(True)
        self.json = JsonView(self)
        self._stack = QStackedWidget(self)
        self._stack.addWidget(self.text)
        self._stack.addWidget(self.json)
        # a short tab gives the tree the room: the value's text scrolls in a few lines
        self._stack.setMinimumHeight(DETAIL_MIN_LINES * self.fontMetrics().lineSpacing())
        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 4, 0)
        bar.setSpacing(4)
        bar.addWidget(self.title, 1)
        for widget in (self.shown, self.more, self.copy, self.save):
            bar.addWidget(widget)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(bar)
        layout.addWidget(self._stack, 1)
        self._value: Any = None
        self._chars = 0
        self._save_job = LatestJob(self)
        self._save_job.finished.connect(self._on_saved)
        self._save_job.failed.connect(lambda err: self.shown.setText(f"Not saved: {err}"))
        self._copy_job = LatestJob(self)
        self._copy_job.finished.connect(self._on_copied)
        self._copy_job.failed.connect(lambda err: self.shown.setText(f"Not copied: {err}"))
        self.show_value(None, None)

    def show_value(self, path: tuple | None, value: Any) -> None:
        """Show the value at ``path`` (None: a hint to select something)."""
        muted = muted_text(self.palette()).name()
        self._value, self._chars = value, 0
        self.shown.setText("")
        if path is None:
            self.title.setText(f"<span style='color:{muted}'>Select a value to see it in full</span>")
            self.text.setPlainText("")
            self._stack.setCurrentWidget(self.text)
            self._buttons(False, False)
            return
        kind = type_name(value)
        extra = f"{len(value):,} characters" if isinstance(value, str) else \
            _lazy_size(value) if isinstance(value, LazyText) else kind
        self.title.setText(f"<b><code>{format_path(path)}</code></b>"
                           f"&nbsp;&nbsp;<span style='color:{muted}'>{extra}</span>")
        if isinstance(value, (str, LazyText)):
            self._chars = min(len(_text_of(value)), PREVIEW_CHARS)
            self.text.setPlainText(_text_of(value)[:self._chars])
            self._stack.setCurrentWidget(self.text)
            self._update_shown()
        elif isinstance(value, LazyValue) or isinstance(value, (dict, list)) and is_big(value):
            self.json.clear_value(f"{preview(value)}: too big to show as text here — expand it in the tree "
                                  "above, or save it (Save full value…).")
            self._stack.setCurrentWidget(self.json)
            self._buttons(False, True)
        else:
            self.json.set_value(value)
            self._stack.setCurrentWidget(self.json)
            self._buttons(False, isinstance(value, (dict, list)) and bool(value))

    def _buttons(self, more: bool, whole: bool) -> None:
        self.more.setVisible(more)
        self.copy.setVisible(whole)
        self.save.setVisible(whole)

    def _update_shown(self) -> None:
        value = self._value
        text = _text_of(value)
        if isinstance(value, LazyText) and not value.complete:
            self.shown.setText(f"showing {self._chars:,} of {_lazy_size(value)}")
            self._buttons(self._chars < min(len(text), MAX_SHOWN_CHARS), True)
            return
        total = len(text)
        cut = self._chars < total
        self.shown.setText(f"showing {self._chars:,} of {total:,}" if cut else "")
        self._buttons(cut and self._chars < MAX_SHOWN_CHARS, cut)

    def show_more(self) -> None:
        """Show the next ``PREVIEW_CHARS`` characters of a long string."""
        value = self._value
        if not isinstance(value, (str, LazyText)):
            return
        text = _text_of(value)
        if self._chars >= min(len(text), MAX_SHOWN_CHARS):
            return
        end = min(len(text), self._chars + PREVIEW_CHARS, MAX_SHOWN_CHARS)
        cursor = self.text.textCursor()
        cursor.movePosition(cursor.MoveOperation.End)
        cursor.insertText(text[self._chars:end])
        self._chars = end
        self._update_shown()

    def copy_full(self) -> str:
        """The whole value on the clipboard (strings raw, else JSON); returns it — or, for a
        part read on demand, reads it in a worker, puts it there when read (``copied``) and
        returns ""."""
        if is_lazy(self._value):
            value = self._value
            self.shown.setText("reading the whole value\u2026")
            self._copy_job.submit(lambda ctx: value_text(value))
            return ""
        text = value_text(self._value)
        QGuiApplication.clipboard().setText(text)
        return text

    def _on_copied(self, text: str) -> None:
        QGuiApplication.clipboard().setText(text)
        self.shown.setText(f"copied {len(text):,} characters")
        self.copied.emit(len(text))

    def save_to(self, path: str) -> None:
        """Write the whole value to ``path`` in a worker (``saved(path)`` when written)."""
        value = self._value

        def write(ctx: object) -> str:
            with open(path, "w", encoding="utf-8", errors="surrogatepass") as out:
                out.write(value_text(value))
            return path
        self.shown.setText("saving\u2026")
        self._save_job.submit(write)

    def _on_saved(self, path: str) -> None:
        self.shown.setText(f"saved to {path}")
        self.saved.emit(path)

    def _on_save_clicked(self) -> None:
        suggested = "value.txt" if isinstance(self._value, (str, LazyText)) else "value.json"
        path, _ = QFileDialog.getSaveFileName(self, "Save full value", suggested)
        if path:
            self.save_to(path)


class StateTreeView(QWidget):
    """Tree of a state with copy/show-full-text actions and search.

    Signals: ``match_changed(index, count)`` after a search or step; ``matches_ready(count)``.
    """

    match_changed = Signal(int, int)
    value_history_requested = Signal(tuple)   # a value's path: where did it change in this run?
    searching = Signal(bool)     # a search that reads the whole state started (True) or ended

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = StateTreeModel(self)
        self.model.set_dark(is_dark(self.palette()))
        self.tree = self._make_tree()
        self.detail = ValueDetail(self)
        self.splitter = QSplitter(Qt.Orientation.Vertical, self)
        self.splitter.addWidget(self.tree)
        self.splitter.addWidget(self.detail)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setChildrenCollapsible(True)
        self._user_sized = False
        self.splitter.splitterMoved.connect(self._on_splitter_moved)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.splitter)
        self._sizes_job = LatestJob(self)
        self._sizes_job.finished.connect(self.model.set_sizes)
        self._search_job = LatestJob(self)
        self._search_job.finished.connect(self._on_search_finished)
        self._search_job.failed.connect(self._on_search_failed)
        self._needle = ""
        self._matches: list[tuple] = []
        self._match_pos = -1
        self._step_pending: bool | None = None

    def _make_tree(self) -> QTreeView:
        tree = QTreeView(self)
        tree.setModel(self.model)
        tree.setUniformRowHeights(True)
        tree.setAlternatingRowColors(True)
        tree.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        tree.customContextMenuRequested.connect(self._on_tree_context_menu)
        tree.selectionModel().selectionChanged.connect(self._on_selection_changed)
        tree.installEventFilter(self)
        header = tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(KEY, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(VALUE, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(TYPE, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(SIZE, QHeaderView.ResizeMode.Interactive)
        header.resizeSection(KEY, 200)
        header.resizeSection(TYPE, 96)
        header.resizeSection(SIZE, 72)
        return tree

    # -- content -------------------------------------------------------------------
    def set_value(self, value: Any) -> None:
        """Show a value, keeping expanded paths and the selected path where they still exist."""
        expanded = self._expanded_paths() if self.model.rowCount() else []
        selected = self.selected_path()
        self.model.set_value(value)
        for path in expanded:
            index = self.model.index_for_path(path)
            if index.isValid():
                self.tree.setExpanded(index, True)
        if selected is not None and self.model.index_for_path(selected).isValid():
            self.select_path(selected, center=False)
        else:
            self.detail.show_value(None, None)
        self._sizes_job.submit(lambda ctx: json_sizes(value, ctx.cancelled))
        if self._needle:
            self._start_search(self._needle, step=None)

    def _expanded_paths(self) -> list[tuple]:
        out: list[tuple] = []
        stack = [QModelIndex()]
        while stack:
            parent = stack.pop()
            for row in range(self.model.rowCount(parent)):
                index = self.model.index(row, 0, parent)
                if self.tree.isExpanded(index):
                    out.append(index.data(PATH_ROLE))
                    stack.append(index)
        return out

    def selected_path(self) -> tuple | None:
        """The path of the selected row (None when nothing is selected)."""
        index = self.tree.currentIndex()
        return index.data(PATH_ROLE) if index.isValid() and self.tree.selectionModel().hasSelection() else None

    def select_path(self, path: tuple, *, center: bool = True) -> bool:
        """Expand to, select and scroll to a path; False when the state has no such path."""
        index = self.model.index_for_path(path)
        if not index.isValid():
            return False
        parent = index.parent()
        while parent.isValid():
            self.tree.setExpanded(parent, True)
            parent = parent.parent()
        self.tree.setCurrentIndex(index)
        self.tree.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter if center
                           else QAbstractItemView.ScrollHint.EnsureVisible)
        return True

    # -- search --------------------------------------------------------------------
    def search(self, needle: str) -> None:
        """Find keys and values containing ``needle``; selects the first match when done."""
        self._needle = needle
        if not needle:
            self._search_job.cancel()
            self._matches, self._match_pos = [], -1
            self.model.set_matches(set())
            self.tree.viewport().update()
            self.match_changed.emit(-1, 0)
            return
        self._start_search(needle, step=False)

    def step(self, backwards: bool) -> None:
        """Go to the next (or previous) match."""
        if self._search_job.busy:
            self._step_pending = backwards
            return
        if not self._matches:
            self.match_changed.emit(-1, 0)
            return
        count = len(self._matches)
        if self._match_pos < 0:
            self._match_pos = count - 1 if backwards else 0
        else:
            self._match_pos = (self._match_pos + (-1 if backwards else 1)) % count
        self._show_match()

    @property
    def matches(self) -> list[tuple]:
        """The paths found by the last search, in document order."""
        return list(self._matches)

    def _start_search(self, needle: str, step: bool | None) -> None:
        value = self.model.value()
        self._step_pending = step
        if is_lazy(value):      # parts read on demand: the worker reads the state whole
            self.searching.emit(True)
            self._search_job.submit(lambda ctx: search_lazy(value, needle, ctx.cancelled))
        else:
            self._search_job.submit(lambda ctx: (search_paths(value, needle, ctx.cancelled), None))

    def _on_search_finished(self, found: tuple[list[tuple], dict | None]) -> None:
        matches, rows = found
        self.searching.emit(False)
        self._matches, self._match_pos = matches, -1
        self.model.set_matches(set(matches), rows=rows)
        self.tree.viewport().update()
        step, self._step_pending = self._step_pending, None
        if step is not None and matches:
            self.step(step)
        else:
            self.match_changed.emit(-1, len(matches))

    def _on_search_failed(self, err: object) -> None:
        """A search that had to read the whole state and could not (over a read budget)."""
        self.searching.emit(False)
        self._matches, self._match_pos, self._step_pending = [], -1, None
        self.model.set_matches(set())
        self.detail.shown.setText(f"Not searched: {err}")
        self.match_changed.emit(-1, 0)

    def _show_match(self) -> None:
        path = self._matches[self._match_pos]
        self.model.set_matches(set(self._matches), path)
        self.select_path(path)
        self.tree.viewport().update()
        self.match_changed.emit(self._match_pos, len(self._matches))

    # -- actions -------------------------------------------------------------------
    def copy_path(self, index: QModelIndex | None = None) -> str:
        """Put the path of a row (default: the current one) on the clipboard; returns it."""
        index = index if index is not None else self.tree.currentIndex()
        text = format_path(index.data(PATH_ROLE)) if index.isValid() else ""
        QGuiApplication.clipboard().setText(text)
        return text

    def copy_value(self, index: QModelIndex | None = None) -> str:
        """Put the value of a row on the clipboard (strings raw, else JSON); returns it (a
        part read on demand is read in a worker: "" is returned, the detail pane says when)."""
        index = index if index is not None else self.tree.currentIndex()
        value = index.data(VALUE_ROLE) if index.isValid() else None
        if is_lazy(value):
            self.tree.setCurrentIndex(index)
            return self.detail.copy_full()
        text = value_text(value) if index.isValid() else ""
        QGuiApplication.clipboard().setText(text)
        return text

    def show_full_text(self, index: QModelIndex | None = None) -> None:
        """Select a row and make sure the detail pane showing it in full is visible."""
        index = index if index is not None else self.tree.currentIndex()
        if not index.isValid():
            return
        self.tree.setCurrentIndex(index)
        sizes = self.splitter.sizes()
        if len(sizes) == 2 and sizes[1] < 120:
            total = sum(sizes)
            self.splitter.setSizes([total // 2, total - total // 2])
            self._user_sized = True
        self.detail.text.setFocus()

    def changeEvent(self, event: QEvent) -> None:  # Qt override: a theme switch recolours the values
        super().changeEvent(event)
        if theme_changed(self, event):
            self.model.set_dark(is_dark(self.palette()))

    def resizeEvent(self, event: QResizeEvent) -> None:  # Qt override
        super().resizeEvent(event)
        if not self._user_sized:
            self._share()

    def _share(self) -> None:
        """The tree three quarters, the value pane the rest but what it needs at least: a short
        tab (a small window, the Console open) lists rows, not an empty "Select a value"."""
        total = sum(self.splitter.sizes())
        if total > 0 and not self.detail.isHidden():
            detail = min(max(total // 4, self.detail.minimumSizeHint().height()), total // 2)
            self.splitter.setSizes([total - detail, detail])

    def _on_splitter_moved(self, _pos: int, _index: int) -> None:
        self._user_sized = True     # the user's share stays

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # Qt override
        """Ctrl+C copies the selected value, Ctrl+Shift+C its path (instead of the cell text)."""
        if (watched is self.tree and event.type() in (QEvent.Type.KeyPress, QEvent.Type.ShortcutOverride)
                and isinstance(event, QKeyEvent)):
            action = self._copy_action(event)
            if action is not None:
                if event.type() == QEvent.Type.KeyPress:
                    action()
                event.accept()
                return True
        return super().eventFilter(watched, event)

    def _copy_action(self, event: QKeyEvent):
        if event.key() != Qt.Key.Key_C:
            return None
        mods = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        ctrl = Qt.KeyboardModifier.ControlModifier
        if mods == ctrl | Qt.KeyboardModifier.ShiftModifier:
            return self.copy_path
        return self.copy_value if mods == ctrl else None

    def _on_selection_changed(self, _sel: QItemSelection, _desel: QItemSelection) -> None:
        index = self.tree.currentIndex()
        if index.isValid():
            self.detail.show_value(index.data(PATH_ROLE), index.data(VALUE_ROLE))
        else:
            self.detail.show_value(None, None)

    def _on_tree_context_menu(self, pos: QPoint) -> None:
        index = self.tree.indexAt(pos)
        if index.isValid():
            self.context_menu(index).exec(self.tree.viewport().mapToGlobal(pos))

    def context_menu(self, index: QModelIndex) -> QMenu:
        """The menu of a value's row: copy it or its path, its Value History, show it whole."""
        index = index.siblingAtColumn(KEY)
        value = index.data(VALUE_ROLE)
        menu = QMenu(self)
        menu.addAction("Copy value", lambda: self.copy_value(index)).setShortcut(QKeySequence.StandardKey.Copy)
        menu.addAction(f"Copy path  ({format_path(index.data(PATH_ROLE))})",
                       lambda: self.copy_path(index)).setShortcut(QKeySequence("Ctrl+Shift+C"))
        menu.addSeparator()
        path = index.data(PATH_ROLE)
        menu.addAction(icons.icon("recent"), "Value History\u2026",
                       lambda: self.value_history_requested.emit(tuple(path))).setToolTip(
            "Every checkpoint of this run where this value changed")
        full = menu.addAction("Show full text", lambda: self.show_full_text(index))
        set_available(full, isinstance(value, (str, LazyText)),
                      f"only for text values; this one is {type(value).__name__ if value is not None else 'null'} "
                      "(copy it with Copy value).")
        if isinstance(value, (dict, list)) and value or isinstance(value, LazyValue) and value.kind != "string":
            menu.addAction("Expand all below", lambda: self.tree.expandRecursively(index, 3))
            menu.addAction("Collapse", lambda: self.tree.collapse(index))
        return menu


def _text_of(value: Any) -> str:
    """A string, or the characters read so far of a long string read on demand."""
    return value.prefix if isinstance(value, LazyText) else value


def _lazy_size(value: LazyText) -> str:
    """How long a string read on demand is: its characters when known, else its bytes."""
    return f"{value.chars:,} characters" if value.chars is not None else f"{value.length:,} bytes of text"
