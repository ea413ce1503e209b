"""The Help menu's windows: keyboard shortcuts, the README's usage (offline), About."""

from __future__ import annotations

import email.message
import html
import importlib.metadata
import re
from collections.abc import Iterator
from pathlib import Path

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QAction, QImageReader, QKeySequence, QTextCursor, QTextDocument, QTextFragment
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from inspector import __version__
from inspector.ui.widgets.sizing import clear_size_grip, fit_to_screen

APP_NAME = "Checkpoint Inspector"
README = Path(__file__).resolve().parents[2] / "README.md"
IMAGE = re.compile(r"!\[([^\]]*)\]\(([^)\s]+)\)")     # ![alt](path) in Markdown
EMPTY_ROW = re.compile(r"^\s*\|[\s|:-]*$")             # a table row with no text in its cells
PAGE_MARGINS = 80      # the usage dialog's width less its page's: images are scaled down to the page
CELL_PADDING = 12      # an image in a table cell leaves this much of the cell's share free
# Keys that work without a menu entry (the views' own).
VIEW_KEYS = (
    ("Tab / Shift+Tab", "Move to the next / previous control or pane"),
    ("Up / Down, Page Up / Page Down", "Move through runs or checkpoints"),
    ("Home / End", "First / last checkpoint of the run"),
    ("Shift+click, Ctrl+click", "Select two checkpoints to compare them (Diff tab)"),
    ("Enter", "Open the selected run's timeline"),
)


def shortcut_rows(actions: list[QAction]) -> list[tuple[str, str]]:
    """(keys, what) for every action with a shortcut, menu order, then the views' own keys."""
    rows, seen = [], set()
    for action in actions:
        keys = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
        if not keys or keys in seen:
            continue
        seen.add(keys)
        rows.append((keys, action.text().replace("&", "").rstrip("\u2026").strip()))
    return rows + list(VIEW_KEYS)


def usage_markdown() -> str:
    """The README, from the installed package's metadata (offline), else from the source tree."""
    try:
        found = importlib.metadata.metadata("checkpoint-inspector")
        # the metadata is an email message; the README is its body (typeshed's protocol omits it)
        body = found.get_payload() if isinstance(found, email.message.Message) else None
        text = body if isinstance(body, str) else None
    except importlib.metadata.PackageNotFoundError:
        text = None
    if not text and README.is_file():
        text = README.read_text(encoding="utf-8")
    return text or f"# {APP_NAME}\n\nThe usage guide is not installed with this copy."


def _dialog(parent: QWidget | None, title: str, body: QWidget, size: tuple[int, int]) -> QDialog:
    dialog = QDialog(parent)
    dialog.setWindowTitle(title)
    dialog.setSizeGripEnabled(True)
    layout = QVBoxLayout(dialog)
    layout.addWidget(body, 1)
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
    buttons.rejected.connect(dialog.reject)
    row = QHBoxLayout()
    row.addWidget(buttons)
    layout.addLayout(row)
    clear_size_grip(dialog, row)
    fit_to_screen(dialog, *size)
    return dialog


def shortcuts_dialog(parent: QWidget | None, actions: list[QAction]) -> QDialog:
    """A resizable table of every keyboard shortcut."""
    rows = shortcut_rows(actions)
    table = QTableWidget(len(rows), 2)
    table.setObjectName("shortcutsTable")
    table.setHorizontalHeaderLabels(["Keys", "Action"])
    table.verticalHeader().hide()
    table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
    table.setWordWrap(True)
    table.setTabKeyNavigation(False)   # Tab goes on to the Close button
    for row, (keys, what) in enumerate(rows):
        table.setItem(row, 0, QTableWidgetItem(keys))
        table.setItem(row, 1, QTableWidgetItem(what))
    table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
    table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
    return _dialog(parent, "Keyboard Shortcuts", table, (560, 520))


def usage_dialog(parent: QWidget | None) -> QDialog:
    """The README as a readable, searchable page (no network): its screenshots are read from
    beside the README (``resources/screenshots``), those not there are left out."""
    browser = QTextBrowser()
    browser.setObjectName("usageBrowser")
    browser.setOpenExternalLinks(True)
    browser.setMarkdown(local_images(usage_markdown(), README.parent))
    dialog = _dialog(parent, f"{APP_NAME} \u2014 Usage", browser, (820, 640))
    fit_images(browser.document(), dialog.width() - PAGE_MARGINS)    # (the dialog fits the screen)
    return dialog


def local_images(markdown: str, base: Path) -> str:
    """``markdown`` with each image's path resolved against ``base`` (the README's folder); an
    image that is not a file there (not installed, or on the web) is left out, and so is a
    table left without any text by that."""
    def resolve(match: re.Match[str]) -> str:
        path = base / match.group(2)
        return f"![{match.group(1)}]({QUrl.fromLocalFile(str(path)).toString()})" if path.is_file() else ""

    lines = [IMAGE.sub(resolve, line) if "![" in line else line for line in markdown.split("\n")]
    return "\n".join(_drop_empty_tables(lines))


def _drop_empty_tables(lines: list[str]) -> list[str]:
    """Lines without the tables whose every cell is empty (image tables without their images)."""
    out: list[str] = []
    table: list[str] = []
    for line in [*lines, ""]:
        if line.lstrip().startswith("|"):
            table.append(line)
            continue
        if any(not EMPTY_ROW.match(row) for row in table):
            out += table
        table = []
        out.append(line)
    return out[:-1]


def fit_images(document: QTextDocument, width: int) -> None:
    """Scale the document's images down to ``width`` (shared by the columns of a table they are
    in), keeping their proportions; smaller ones stay as they are."""
    cursor = QTextCursor(document)
    for fragment in _image_fragments(document):
        image = fragment.charFormat().toImageFormat()
        size = QImageReader(QUrl(image.name()).toLocalFile()).size()
        cursor.setPosition(fragment.position())
        table = cursor.currentTable()
        room = width // table.columns() - CELL_PADDING if table is not None else width
        if 0 < room < size.width():
            image.setWidth(room)
            image.setHeight(size.height() * room / size.width())
            cursor.setPosition(fragment.position() + fragment.length(), QTextCursor.MoveMode.KeepAnchor)
            cursor.setCharFormat(image)


def _image_fragments(document: QTextDocument) -> Iterator[QTextFragment]:
    """Every fragment of ``document`` that is an image."""
    block = document.begin()
    while block.isValid():
        fragments = block.begin()
        while not fragments.atEnd():
            fragment = fragments.fragment()
            if fragment.charFormat().isImageFormat():
                yield fragment
            fragments += 1
        block = block.next()


def about_text() -> str:
    """The About box's rich text."""
    return (f"<b>{APP_NAME}</b> {html.escape(__version__)}<br>Browse, diff, fork and resume the "
            "checkpoints of long-running AI agents.<br>Stores are opened read-only: only what you ask "
            "for writes (fork, resume, prune and delete after you confirm them; Pin at once).")


def about_dialog(parent: QWidget | None) -> QDialog:
    """About, as a small dialog (not a blocking static box: tests and screenshots can drive it)."""
    browser = QTextBrowser()
    browser.setObjectName("aboutText")
    browser.setHtml(about_text())
    browser.setFrameShape(QTextBrowser.Shape.NoFrame)
    dialog = _dialog(parent, f"About {APP_NAME}", browser, (440, 200))
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, False)
    return dialog
