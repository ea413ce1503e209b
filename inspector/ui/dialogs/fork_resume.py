"""The Fork dialog's Resume Command page: the fork's own argv, directory and environment."""

from __future__ import annotations

import html
import json
import shlex
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QFormLayout, QGroupBox, QHBoxLayout, QLabel, QLineEdit, QPushButton,
                               QVBoxLayout, QWidget)

from inspector.highlight import to_json_text
from inspector.resume.fork_spec import FlagConflict, contradicted_flags, without_arguments
from inspector.ui.dialogs.edit_review import MOD_HUE, JsonEditor
from inspector.ui.formatting import visible_html
from inspector.ui.dialogs.resume_dialog import parse_argv, parse_env
from inspector.ui.widgets.palette import accent, tint


class ForkResumeEditor(QWidget):
    """Edits the resume spec the fork will store, prefilled from the original run's.

    ``set_edited_keys`` names the keys the fork's edit changed; arguments of the command whose
    flag name matches one (``--approve-first`` for ``approve_first``) are tinted and listed,
    with a button that removes them. Signals: ``validated(ok)`` after any change.
    """

    validated = Signal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._spec: dict[str, Any] | None = None
        self._run_name = ""
        self._marked_lines: set[int] = set()
        self._keys: tuple[str, ...] = ()
        self.conflicts: tuple[FlagConflict, ...] = ()
        self.intro = QLabel(self)
        self.intro.setWordWrap(True)
        self.intro.setTextFormat(Qt.TextFormat.RichText)
        self.warning = QLabel(self)
        self.warning.setWordWrap(True)
        self.warning.setTextFormat(Qt.TextFormat.RichText)
        self.remove_button = QPushButton("Remove Flagged Arguments", self)
        self.remove_button.setToolTip("Take the highlighted flags out of the fork's command "
                                      "(a value written after a flag is left for you to check)")
        self.remove_button.clicked.connect(self._on_remove_clicked)
        warn_row = QHBoxLayout()
        warn_row.addWidget(self.warning, 1)
        warn_row.addWidget(self.remove_button, 0, Qt.AlignmentFlag.AlignTop)
        self.argv_editor = JsonEditor(parse_argv, self, gutter=False)
        self.env_editor = JsonEditor(parse_env, self, gutter=False)
        for editor in (self.argv_editor, self.env_editor):   # never squeezed to one line
            editor.keep_lines(4, 7)
        self.preview = QLabel(self)
        self.preview.setWordWrap(True)
        self.preview.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.cwd = QLineEdit(self)
        layout = QVBoxLayout(self)
        layout.addWidget(self.intro)
        layout.addLayout(warn_row)
        layout.addWidget(self._group("Command (one JSON string per argument; never run by a shell)",
                                     self.argv_editor, self.preview), 3)
        layout.addWidget(self._group("Environment (NAME: \"value\"; secret-looking names are passed "
                                     "from the launcher's environment, never stored)", self.env_editor), 2)
        form = QFormLayout()
        form.addRow("Working &directory:", self.cwd)
        layout.addLayout(form)
        self.argv_editor.validated.connect(self._on_changed)
        self.env_editor.validated.connect(self._on_changed)
        self.cwd.textChanged.connect(self._on_changed)
        self._show_conflicts()

    def _group(self, title: str, editor: QWidget, note: QLabel | None = None) -> QGroupBox:
        box = QGroupBox(title, self)
        layout = QVBoxLayout(box)
        layout.addWidget(editor, 1)
        if note is not None:
            layout.addWidget(note)
        return box

    # -- values ----------------------------------------------------------------------
    def set_original(self, spec: dict[str, Any] | None, run_name: str) -> None:
        """Prefill from the original run's resume spec (None: it has none, so neither has the fork)."""
        self._spec, self._run_name = spec, run_name
        self.setEnabled(spec is not None)
        if spec is None:
            self.intro.setText(f"“{visible_html(run_name)}” has no resume command (it was not recorded "
                               "by the recording library), so the fork cannot be resumed either.")
            return
        self.intro.setText(f"When the fork is resumed, Resume… runs <b>this</b> command: the fork keeps "
                           f"its own copy, prefilled from “{visible_html(run_name)}”. Change whatever "
                           "contradicts your edit.")
        self.argv_editor.set_text(to_json_text(list(spec.get("argv") or [])))
        self.env_editor.set_text(to_json_text(dict(spec.get("env") or {})))
        self.cwd.setText(str(spec.get("cwd") or "."))

    def set_edited_keys(self, keys: tuple[str, ...]) -> None:
        """The keys the fork's state/task edit changed (flags matching them are flagged)."""
        self._keys = keys
        self._show_conflicts()
        if self.conflicts:    # show the first flagged argument without moving the user's focus
            line = next(iter(sorted(self._marked_lines)), 0)
            self.argv_editor.view.scroll_to_line(line, center=True)

    @property
    def error(self) -> str | None:
        """Why the command cannot be stored, or None when it is valid (or there is none)."""
        if self._spec is None:
            return None
        for editor, what in ((self.argv_editor, "command"), (self.env_editor, "environment")):
            if editor.error:
                return f"The fork's resume {what}: {editor.error}"
        return None if self.cwd.text().strip() else "The fork's resume working directory is empty."

    @property
    def edited(self) -> bool:
        """True when the command, environment or directory differs from the original's."""
        return self._spec is not None and (self.argv_editor.edited or self.env_editor.edited
                                           or self.cwd.text() != str(self._spec.get("cwd") or "."))

    def spec(self) -> dict[str, Any] | None:
        """The spec the fork stores (``inherit`` kept from the original); None without one."""
        if self._spec is None or self.error is not None:
            return self._spec
        return {**self._spec, "argv": list(self.argv_editor.value), "cwd": self.cwd.text().strip(),
                "env": dict(self.env_editor.value)}

    def command_line(self) -> str:
        """The command as one shell-quoted line (for the review)."""
        spec = self.spec()
        return shlex.join(spec["argv"]) if spec else ""

    def reset(self) -> None:
        """Put the original's command, environment and directory back."""
        if self._spec is not None:
            self.set_original(self._spec, self._run_name)

    def validate(self) -> bool:
        """Check the command and environment now (not after the typing pause); True when valid."""
        if self._spec is not None:
            self.argv_editor.validate()
            self.env_editor.validate()
        return self.error is None

    # -- slots -----------------------------------------------------------------------
    def _on_changed(self, *_args: object) -> None:
        argv = self.argv_editor.value
        self.preview.setText("$ " + shlex.join(argv) if argv else "")
        self._show_conflicts()
        self.validated.emit(self.error is None)

    def _on_remove_clicked(self) -> None:
        argv = self.argv_editor.value
        if argv is None or not self.conflicts:
            return
        self.argv_editor.view.setPlainText(to_json_text(without_arguments(argv, self.conflicts)))
        self.argv_editor.validate()

    def _show_conflicts(self) -> None:
        argv = self.argv_editor.value if self._spec is not None else None
        self.conflicts = contradicted_flags(argv, self._keys) if argv else ()
        self.remove_button.setVisible(bool(self.conflicts))
        self.warning.setVisible(bool(self.conflicts))
        marks = {}
        if self.conflicts:
            hue = accent(self.palette(), MOD_HUE).name()
            items = ", ".join(f"<code>{html.escape(c.flag)}</code> (edited: <code>{html.escape(c.key)}</code>)"
                              for c in self.conflicts)
            self.warning.setText(f"<span style='color:{hue}'>⚠ The command passes {items}: a start-up "
                                 "flag named like a key you edited may contradict the edit.</span>")
            lines = self.argv_editor.text().splitlines()
            wanted = {json.dumps(c.flag) for c in self.conflicts}
            color = tint(self.palette(), MOD_HUE, 0.3)
            marks = {i: color for i, line in enumerate(lines) if line.strip().rstrip(",") in wanted}
        self._marked_lines = set(marks)
        self.argv_editor.view.set_line_marks(marks)
