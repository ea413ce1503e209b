"""Help ▸ Open Log File: the end of the app's log in a window, with the file a click away.

The log (``ui.logfile``) holds the details behind "details are in the log": a background
job's traceback, a panel that failed to start. The dialog shows its last part read-only,
newest line at the bottom, and offers the file itself (the desktop's text editor), its
folder and its path; a desktop with no application for text files gets a sentence, not
silence.
"""

from __future__ import annotations

import html
import re
import time
from pathlib import Path

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QColor, QDesktopServices, QGuiApplication, QTextCursor, QTextFormat
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QHBoxLayout, QLabel, QPlainTextEdit, QPushButton,
                               QStackedWidget, QTextEdit, QVBoxLayout, QWidget)

from inspector.humanize import fmt_size
from inspector.ui import logfile, style

TAIL_BYTES = 256 * 1024     # the part of the file shown (the rest is one click away)
EMPTY_TEXT = ("Nothing has been logged yet.\n\nWhen something goes wrong in the background (a job that "
              "fails, a panel that cannot start), the app says \u201cdetails are in the log\u201d and the "
              "details appear here.")


def read_tail(path: Path, limit: int = TAIL_BYTES) -> tuple[str, int]:
    """The last ``limit`` bytes of ``path`` as text (from a line start) and the file's size."""
    try:
        with path.open("rb") as f:
            size = f.seek(0, 2)
            f.seek(max(0, size - limit))
            data = f.read(limit)
    except FileNotFoundError:
        return "", 0
    if size > limit:        # the first line is cut: start at the next one
        data = data[data.find(b"\n") + 1:] if b"\n" in data else data
    return data.decode("utf-8", errors="replace"), size


class LogDialog(QDialog):
    """The log file's last lines, Refresh, Open in Text Editor, Show Folder and Copy Path."""

    def __init__(self, parent: QWidget | None = None, path: Path | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Log File")
        self.path = path if path is not None else logfile.current_path()
        self.where = QLabel()
        self.where.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.where.setWordWrap(True)
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text.setFont(style.mono_font())
        self.empty = QLabel(EMPTY_TEXT)
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setMargin(40)
        self.pages = QStackedWidget()
        self.pages.addWidget(self.text)
        self.pages.addWidget(self.empty)
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.note.hide()

        self.refresh_button = QPushButton("&Refresh")
        self.editor_button = QPushButton("Open in Text &Editor")
        self.folder_button = QPushButton("Show &Folder")
        self.copy_button = QPushButton("&Copy Path")
        self.refresh_button.clicked.connect(self.refresh)
        self.editor_button.clicked.connect(self.open_in_editor)
        self.folder_button.clicked.connect(self.show_folder)
        self.copy_button.clicked.connect(self.copy_path)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)

        buttons = QHBoxLayout()
        for button in (self.refresh_button, self.editor_button, self.folder_button, self.copy_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.where)
        layout.addWidget(self.pages, 1)
        layout.addWidget(self.note)
        layout.addLayout(buttons)
        self.resize(860, 560)
        self.refresh()

    def refresh(self) -> None:
        """Read the end of the file again (it is small: at most ``TAIL_BYTES`` are read)."""
        try:
            text, size = read_tail(self.path)
        except OSError as err:
            text, size = "", 0
            self._say(f"The log file cannot be read: {err.strerror or err}.")
        rotated = sorted(self.path.parent.glob(self.path.name + ".*")) if self.path.parent.is_dir() else []
        facts = [fmt_size(size) if size else "nothing logged yet"]
        if size:
            facts.append("updated " + time.strftime("%Y-%m-%d %H:%M:%S",
                                                    time.localtime(self.path.stat().st_mtime)))
        if size > TAIL_BYTES:
            facts.append(f"the last {fmt_size(TAIL_BYTES)} shown")
        if rotated:
            facts.append(f"{len(rotated)} older file{'s' if len(rotated) > 1 else ''} beside it")
        self.where.setText(f"<b>{html.escape(str(self.path))}</b><br>{' · '.join(facts)}")
        text = text.rstrip("\n")
        self.text.setPlainText(text)
        self.text.setExtraSelections(_level_marks(self.text, text))
        self.pages.setCurrentWidget(self.text if text else self.empty)
        self.text.moveCursor(QTextCursor.MoveOperation.End)
        self.text.moveCursor(QTextCursor.MoveOperation.StartOfLine)
        self.text.ensureCursorVisible()

    def open_in_editor(self) -> bool:
        """The file in the desktop's application for text files (created if missing)."""
        if logfile.open_log_file():
            return True
        self._say("No application is set up to open text files here; the file is at the path above "
                  "(Copy Path puts it on the clipboard).")
        return False

    def show_folder(self) -> bool:
        """The log folder in the desktop's file manager."""
        folder = self.path.parent
        if folder.is_dir() and QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder))):
            return True
        self._say(f"The folder {folder} cannot be shown here; Copy Path puts the file's path on the clipboard.")
        return False

    def copy_path(self) -> None:
        """Put the file's path on the clipboard."""
        QGuiApplication.clipboard().setText(str(self.path))
        self._say("The path is on the clipboard.")

    def _say(self, message: str) -> None:
        self.note.setText(message)
        self.note.show()


_LEVEL_TINTS = {"ERROR": QColor(220, 50, 47, 46), "CRITICAL": QColor(220, 50, 47, 46),
                "WARNING": QColor(230, 160, 0, 40)}
_RECORD_START = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (\w+) ")


def _level_marks(view: QPlainTextEdit, text: str) -> list[QTextEdit.ExtraSelection]:
    """Tint the lines of errors and warnings, a traceback with the record it belongs to."""
    marks: list[QTextEdit.ExtraSelection] = []
    tint: QColor | None = None
    document = view.document()
    for number, line in enumerate(text.split("\n")):
        record = _RECORD_START.match(line)
        if record is not None:
            tint = _LEVEL_TINTS.get(record.group(1))
        if tint is None:
            continue
        mark = QTextEdit.ExtraSelection()
        mark.cursor = QTextCursor(document.findBlockByNumber(number))
        mark.format.setBackground(tint)
        mark.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
        marks.append(mark)
    return marks


def show_log(parent: QWidget | None) -> LogDialog:
    """Open the log window (not modal; a second call reads the file again into the open one)."""
    dialog = parent.findChild(LogDialog) if parent is not None else None
    if dialog is None:
        dialog = LogDialog(parent)
    else:
        dialog.refresh()
    dialog.show()
    return dialog
