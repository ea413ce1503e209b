"""Status-bar widgets naming the open store: path, kind, backend, read-only, live state."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QHBoxLayout, QLabel, QWidget

from inspector.model import StoreInfo
from inspector.ui import style
from inspector.ui.formatting import elide_middle
from inspector.ui.style import mono_font

KIND_NAMES = {"native": "native", "langgraph": "LangGraph"}
BACKEND_NAMES = {"sqlite": "SQLite", "postgresql": "PostgreSQL"}


def kind_name(info: StoreInfo) -> str:
    """The kind as people read it ('LangGraph', 'CrewAI (JSON)', a third party's label…)."""
    return KIND_NAMES.get(info.kind) or info.label or info.kind


def describe(info: StoreInfo) -> str:
    """'native · SQLite · read-only' for titles and tooltips."""
    parts = [kind_name(info), BACKEND_NAMES.get(info.backend, info.backend)]
    parts.append("read-only" if info.read_only else "writable")
    return " \u00b7 ".join(parts)


def info_live(info: StoreInfo) -> bool:
    """True when the store's adapter offers live updates."""
    return info.capabilities.live.available


def capability_text(info: StoreInfo) -> str:
    """What the store's adapter offers, one line per action (the kind chip's tooltip)."""
    lines = [f"{kind_name(info)} store"]
    for action in ("fork", "resume", "live"):
        cap = info.capabilities.get(action)
        label = {"fork": "Fork", "resume": "Resume", "live": "Live updates"}[action]
        lines.append(f"{label}: {'yes' if cap.available else 'no'}" + (f" — {cap.reason}" if cap.reason else ""))
    return "\n".join(lines)


class _Chip(QLabel):
    def set_chip(self, text: str, hue: str) -> None:
        self.setText(text)
        style.set_themed_style(self, lambda theme: _chip_sheet(theme, hue))
        self.setVisible(bool(text))


def _chip_sheet(theme: style.Theme, hue: str) -> str:
    bg, border, fg = theme.pill_colors(QColor(hue))
    return (f"QLabel {{ background: {bg.name(QColor.NameFormat.HexArgb)}; color: {fg.name()};"
            f" border: 1px solid {border.name(QColor.NameFormat.HexArgb)};"
            f" border-radius: 8px; padding: 0px 7px; }}")


class StoreStatus(QWidget):
    """The permanent right-hand part of the status bar."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 6, 0)
        row.setSpacing(6)
        self.path_label = QLabel(self)
        self.path_label.setFont(mono_font(-1.0))
        self.path_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.kind_chip = _Chip(self)
        self.backend_chip = _Chip(self)
        self.readonly_chip = _Chip(self)
        self.live_chip = _Chip(self)
        self.notice_chip = _Chip(self)     # how the store is read, when the user should know
        for widget in (self.path_label, self.kind_chip, self.backend_chip, self.readonly_chip, self.live_chip,
                       self.notice_chip):
            row.addWidget(widget)
        self.info: StoreInfo | None = None
        self.gone = False
        self.unreachable = ""     # why the last poll failed, until one succeeds ('' when it answers)
        self._live, self._how = False, ""   # whether and how the store is watched (``set_live``)
        self.set_store(None)

    def set_store(self, info: StoreInfo | None) -> None:
        """Describe the open store (None: nothing open)."""
        self.info = info
        self.gone = False
        self.unreachable = ""
        if info is None:
            self.path_label.setText("no store open")
            self.path_label.setToolTip("")
            for chip in (self.kind_chip, self.backend_chip, self.readonly_chip, self.live_chip, self.notice_chip):
                chip.set_chip("", "#768390")
            return
        note = "" if not info.notice else "read from a copy" if "private copy" in info.notice else "log not read"
        self.notice_chip.set_chip(note, "#d4a72c" if note != "log not read" else "#cf222e")
        self.notice_chip.setToolTip(info.notice)
        self.path_label.setText(elide_middle(info.display, 64))
        self.path_label.setToolTip(f"{info.display}\n{describe(info)}")
        self.kind_chip.set_chip(kind_name(info), "#0969da" if info.kind == "native" else "#8250df")
        self.kind_chip.setToolTip(capability_text(info))
        self.backend_chip.set_chip(BACKEND_NAMES.get(info.backend, info.backend), "#768390")
        self.readonly_chip.set_chip("read-only" if info.read_only else "writable",
                                    "#1a7f37" if info.read_only else "#d4762c")
        self.readonly_chip.setToolTip("Nothing in this store has been changed by this window"
                                      if info.read_only else "Opened for writing")

    def note_write(self) -> None:
        """This window wrote to the store (a confirmed fork, resume, pin, prune or delete): the
        badge says so."""
        if self.info is None:
            return
        self.readonly_chip.set_chip("read-only + your writes" if self.info.read_only else "writable", "#d4762c")
        self.readonly_chip.setToolTip("Browsing is read-only; this window wrote to the store when you "
                                      "confirmed a fork, a resume, a pin, a prune or a delete (through a "
                                      "separate writer).")

    def set_opening(self, display: str) -> None:
        """A store is being opened (its first runs may already be listed)."""
        self.set_store(None)
        self.path_label.setText(f"opening {elide_middle(display, 56)} \u2026")
        self.path_label.setToolTip(display)

    def set_gone(self) -> None:
        """The store's file was deleted or moved away under the window: the live badge says
        so (what is listed was read before; nothing more can be read)."""
        if self.info is None:
            return
        self.gone = True
        self.live_chip.set_chip("store gone", "#cf222e")
        self.live_chip.setToolTip(f"{self.info.display} is no longer there (deleted or moved): what is listed "
                                  "was read before. A store put back at that path is opened again.")

    def set_unreachable(self, message: str) -> None:
        """A poll for changes failed (``message`` says why): the live badge says the list is not
        updating until ``set_reachable``; the watcher keeps asking meanwhile."""
        if self.info is None or self.gone:
            return
        self.unreachable = message
        self.set_live(self._live, self._how)

    def set_reachable(self) -> None:
        """A poll succeeded again after ``set_unreachable``: the badge says live again."""
        if self.unreachable:
            self.unreachable = ""
            self.set_live(self._live, self._how)

    def set_live(self, live: bool, how: str = "") -> None:
        """Show whether the store is watched ('files', 'listen', 'poll')."""
        self._live, self._how = live, how
        if self.gone and self.info is not None:
            return      # watching a file that is not there: the badge keeps saying so
        if self.info is None:
            self.live_chip.set_chip("", "#768390")
            return
        if not info_live(self.info):
            self.live_chip.set_chip("no live updates", "#768390")
            self.live_chip.setToolTip(self.info.capabilities.live.reason)
            return
        if live and self.unreachable:
            server = self.info.backend != "sqlite"
            self.live_chip.set_chip("reconnecting \u2026" if server else "not updating", "#cf222e")
            when = "at the next change to its files (or F5)" if how == "files" else "every few seconds"
            self.live_chip.setToolTip(f"{self.unreachable}\nWhat is listed was read before; the store is "
                                      f"asked again {when}, and the list updates once it answers.")
            return
        self.live_chip.set_chip("\u25cf live" if live else "paused", "#2da44e" if live else "#768390")
        self.live_chip.setToolTip({"files": "Watching the database files for changes",
                                   "listen": "Listening for change notifications",
                                   "poll": "Checking for changes every 2 seconds"}.get(how, "Not watching for changes"))
