"""Widgets shared by the Fork and Resume dialogs: a JSON editor with validation, a review view."""

from __future__ import annotations

import html
from typing import Any
from collections.abc import Callable

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QLabel, QTextBrowser, QVBoxLayout, QWidget

from inspector.errors import StoreError, TaskStateError
from inspector.resume.edit_diff import EditLine
from inspector.ui.widgets.json_view import JsonView
from inspector.ui.widgets.palette import accent

OK_HUE, BAD_HUE, ADD_HUE, DEL_HUE, MOD_HUE = "#1a7f37", "#cf222e", "#1a7f37", "#cf222e", "#9a6700"
VALIDATE_DELAY_MS = 250

Parser = Callable[[str], Any]


class JsonEditor(QWidget):
    """A highlighted, editable JSON text with a status line saying whether it is valid.

    ``parser(text)`` turns the text into a value or raises StoreError / TaskStateError /
    ValueError with the reason. Validation runs shortly after typing stops (cheap parsers
    only: JSON texts of a checkpoint). Signals: ``validated(ok)`` after each check.
    """

    validated = Signal(bool)

    def __init__(self, parser: Parser, parent: QWidget | None = None, *, gutter: bool = True) -> None:
        super().__init__(parent)
        self._parser = parser
        self.view = JsonView(self, editable=True)
        self.view.set_gutter_visible(gutter)
        self.status = QLabel(self)
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.status)
        self._original = ""
        self.value: Any = None
        self.error: str | None = None
        self._timer = QTimer(self, singleShot=True, interval=VALIDATE_DELAY_MS)
        self._timer.timeout.connect(self.validate)
        self.view.textChanged.connect(self._timer.start)

    def keep_lines(self, minimum: int, preferred: int | None = None) -> None:
        """Never let a layout squeeze the text below ``minimum`` lines; ask for ``preferred`` lines.

        The minimum is set on the text view itself, not on this container: a minimum on the
        container would let its status line be drawn over the text when space runs short. The
        preferred height (the size hint) stays modest so a dialog asks for what it needs and
        its stretch factors hand out the rest.
        """
        view = self.view
        chrome = view.frameWidth() * 2 + 8
        view.setMinimumHeight(view.fontMetrics().lineSpacing() * minimum + chrome)
        view.set_preferred_height(view.fontMetrics().lineSpacing() * (preferred or minimum + 2) + chrome)


    def set_text(self, text: str) -> None:
        """Install an original text (it becomes the reference for ``edited``).

        The text must be complete (never an elided display form): it is what gets edited.
        """
        self._original = text
        self.view.set_text(text)
        self.validate()

    def text(self) -> str:
        """The current text."""
        return self.view.toPlainText()

    @property
    def original(self) -> str:
        """The text installed by ``set_text``."""
        return self._original

    @property
    def edited(self) -> bool:
        """True when the text differs from the original."""
        return self.text() != self._original

    def reset(self) -> None:
        """Put the original text back."""
        self.view.setPlainText(self._original)
        self.validate()

    def validate(self) -> bool:
        """Parse now; update the status line; emit ``validated``."""
        self._timer.stop()
        try:
            self.value, self.error = self._parser(self.text()), None
        except (StoreError, TaskStateError, ValueError) as err:
            self.value, self.error = None, str(err)
        ok = self.error is None
        hue = OK_HUE if ok else BAD_HUE
        message = ("✓ valid" + (" — edited" if self.edited else " — unchanged")) if ok else f"✗ {self.error}"
        self.status.setText(message)
        self.status.setStyleSheet(f"color: {accent(self.palette(), hue).name()};")
        self.validated.emit(ok)
        return ok


def review_html(lines: list[EditLine], palette_owner: QWidget) -> str:
    """Edit-review lines as coloured HTML (monospace)."""
    pal = palette_owner.palette()
    colors = {"+": accent(pal, ADD_HUE).name(), "-": accent(pal, DEL_HUE).name(),
              "~": accent(pal, MOD_HUE).name(), "↕": accent(pal, MOD_HUE).name()}
    out = []
    for line in lines:
        text = html.escape(line.text)
        if line.tag == "#":
            out.append(f"<div style='margin-top:8px'><b>{text}</b></div>")
        elif line.tag in ("@", " "):
            muted = pal.color(pal.ColorRole.PlaceholderText).name() if line.tag == "@" else ""
            out.append(f"<div style='color:{muted}'><code>{_keep_spaces(text)}</code></div>")
        else:
            body = text if line.tag in "~↕" else _keep_spaces(text)   # structural lines may wrap
            out.append(f"<div style='color:{colors.get(line.tag, '')}; white-space:pre-wrap'>"
                       f"<code>{body}</code></div>")
    return "".join(out)


def _keep_spaces(text: str) -> str:
    """Rich text drops leading blanks even in pre blocks: make every space non-breaking."""
    return text.replace(" ", "&nbsp;")


class ReviewView(QTextBrowser):
    """Read-only view of an edit review."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)

    def show_lines(self, lines: list[EditLine], empty: str) -> None:
        """Show review lines, or ``empty`` when there are none."""
        self.setHtml(review_html(lines, self) if lines else f"<p><i>{html.escape(empty)}</i></p>")
