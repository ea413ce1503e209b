"""LangGraph settings of the open store (graph entry point, Python, working directory, trust,
task channel), edited in the GUI and applied at once — what ``--graph``/``--trusted`` and the
settings file do on the command line (``inspector.store.langgraph.settings``).

Saving writes the per-store settings file (never the store) and applies the settings to the
open store: runs become resumable through the graph, and the task board follows the new task
channel, without reopening. Forks and resumes read the saved settings each time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from collections.abc import Callable

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QCheckBox, QDialog, QDialogButtonBox, QFileDialog, QFormLayout, QHBoxLayout,
                               QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget)

from inspector.errors import StoreError
from inspector.store.base import Store
from inspector.taskstate import DEFAULT_TASK_CHANNEL

MIN_WIDTH = 620        # the notes wrap in this width
EDIT_PADDING = 24      # a line edit's frame and text margins, around its placeholder


def apply_settings(store: Store, graph: str, python: str, cwd: str, trusted: bool, task_channel: str) -> str:
    """Validate, save and apply the settings to the open store; returns the settings file path.

    Raises StoreError (one sentence) for a bad entry point, a missing interpreter or folder.
    """
    from inspector.store.langgraph.settings import check_graph_spec, load_settings, save_settings
    import dataclasses
    graph, python, cwd, task_channel = graph.strip(), python.strip(), cwd.strip(), task_channel.strip()
    if graph:
        check_graph_spec(graph)
    if python and not Path(python).is_file():
        raise StoreError(f"There is no Python interpreter at {python}.")
    if cwd and not Path(cwd).is_dir():
        raise StoreError(f"The working directory {cwd} does not exist.")
    settings = dataclasses.replace(load_settings(store.info.url), graph=graph or None, python=python or None,
                                   cwd=cwd or None, trusted=trusted, task_channel=task_channel or DEFAULT_TASK_CHANNEL)
    path = save_settings(store.info.url, settings)
    apply = getattr(store, "apply_settings", None)
    if callable(apply):
        apply(graph=settings.graph, task_channel=settings.task_channel)
    return str(path)


class LangGraphSettingsDialog(QDialog):
    """Edit the open LangGraph store's settings; ``applied`` is emitted after a save."""

    applied = Signal(str)

    def __init__(self, store: Store, parent: QWidget | None = None,
                 run: Callable[..., Any] | None = None) -> None:
        super().__init__(parent)
        from inspector.store.langgraph.settings import load_settings
        self.store = store
        self.setWindowTitle(f"LangGraph Settings — {store.info.display}")
        saved = load_settings(store.info.url)
        self.graph = self._edit(saved.graph, "my_agent.graph:app — the compiled graph, as in langgraph.json",
                                "The graph forks and resumes run through, as module:attr")
        self.python = self._edit(saved.python, "your agent's Python (default: this inspector's)",
                                 "The Python of your agent's environment, where the graph's imports work")
        self.cwd = self._edit(saved.cwd, "where the graph's module imports from (default: the current folder)",
                              "The folder the graph's process starts in")
        self.trusted = QCheckBox("Trusted database: let LangGraph revive any type it names "
                                 "(no LANGGRAPH_STRICT_MSGPACK)", self)
        self.trusted.setChecked(saved.trusted)
        self.task_channel = QLineEdit(saved.task_channel or DEFAULT_TASK_CHANNEL, self)
        browse_python, browse_cwd = QPushButton("Browse\u2026", self), QPushButton("Browse\u2026", self)
        browse_python.clicked.connect(self._pick_python)
        browse_cwd.clicked.connect(self._pick_cwd)
        form = QFormLayout()
        form.addRow("&Graph:", self.graph)
        form.addRow("&Python:", self._with(self.python, browse_python))
        form.addRow("&Working directory:", self._with(self.cwd, browse_cwd))
        form.addRow("", self.trusted)
        form.addRow("&Task channel:", self.task_channel)
        note = QLabel("Forks and resumes run your graph in a separate process with this Python, in this "
                      "folder — never inside the inspector. Settings are kept per store in your "
                      "configuration folder and apply at once.", self)
        note.setWordWrap(True)
        self.error = QLabel(self)
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #c0392b;")
        self.error.hide()
        for edit in (self.graph, self.python, self.cwd, self.task_channel):
            edit.textEdited.connect(lambda _text: self.error.hide())   # a new try: the old message goes
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save
                                   | QDialogButtonBox.StandardButton.Cancel, self)
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(note)
        layout.addWidget(self.error)
        layout.addStretch(1)
        layout.addWidget(buttons)
        # as wide as its fields and the checkbox need (the layout's minimum: nothing is cut off),
        # the note wrapped to that
        width = max(MIN_WIDTH, layout.minimumSize().width())
        self.resize(width, max(layout.minimumSize().height(), layout.totalHeightForWidth(width)))

    def _edit(self, text: str | None, placeholder: str, tip: str) -> QLineEdit:
        """A line edit wide enough for its placeholder (never cut off), explained by its tooltip."""
        edit = QLineEdit(text or "", self)
        edit.setPlaceholderText(placeholder)
        edit.setToolTip(tip)
        edit.setMinimumWidth(edit.fontMetrics().horizontalAdvance(placeholder) + EDIT_PADDING)
        return edit

    def _with(self, edit: QLineEdit, button: QPushButton) -> QWidget:
        box = QWidget(self)
        row = QHBoxLayout(box)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(edit, 1)
        row.addWidget(button)
        return box

    def _pick_python(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Python interpreter", self.python.text() or str(Path.home()))
        if path:
            self.python.setText(path)

    def _pick_cwd(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Working directory", self.cwd.text() or str(Path.home()))
        if path:
            self.cwd.setText(path)

    def save(self) -> None:
        """Validate, save and apply; a problem is shown in the dialog, which stays open."""
        try:
            path = apply_settings(self.store, self.graph.text(), self.python.text(), self.cwd.text(),
                                  self.trusted.isChecked(), self.task_channel.text())
        except StoreError as err:
            self.error.setText(str(err))
            self.error.show()
            return
        self.applied.emit(path)
        self.accept()
