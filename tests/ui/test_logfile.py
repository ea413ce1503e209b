"""The GUI's rotating log file (platformdirs' user log directory) and Help ▸ Open Log File."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from PySide6.QtCore import QObject, QUrl, Slot
from PySide6.QtGui import QDesktopServices, QGuiApplication

from inspector.ui import logfile
from inspector.ui.dialogs.log_dialog import LogDialog, read_tail


@pytest.fixture
def state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    logfile.uninstall()
    yield tmp_path / "state"
    logfile.uninstall()


def test_errors_go_to_a_rotating_file_in_the_user_log_dir(state_home: Path) -> None:
    path = logfile.install(max_bytes=2_000)
    assert path == state_home / "checkpoint-inspector" / "log" / "gui.log"
    log = logging.getLogger("inspector.ui.tasks")
    log.error("background job failed:\nTraceback (most recent call last): boom")
    assert "background job failed" in path.read_text(encoding="utf-8")
    for n in range(60):
        log.warning("line %d %s", n, "x" * 80)
    assert path.with_name("gui.log.1").exists() and path.stat().st_size <= 2_000
    assert not path.with_name(f"gui.log.{logfile.BACKUPS + 1}").exists()


class _Opened(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[QUrl] = []

    @Slot(QUrl)
    def open(self, url: QUrl) -> None:
        self.urls.append(url)


def test_help_shows_the_log_and_opens_the_file(window, state_home: Path) -> None:
    path = logfile.install()
    try:
        raise KeyError("missing")
    except KeyError:
        logging.getLogger("inspector.ui.tasks").exception("background job failed")
    logging.getLogger("inspector.ui.tasks").info("after the failure")
    action = window.menu_actions.open_log
    assert action in window.menu_actions.help_menu.actions()
    action.trigger()
    dialog = window.findChild(LogDialog)
    assert dialog is not None and dialog.isVisible() and dialog.path == path
    shown = dialog.text.toPlainText()
    assert "ERROR inspector.ui.tasks" in shown and "KeyError: 'missing'" in shown
    assert dialog.pages.currentWidget() is dialog.text and str(path) in dialog.where.text()
    # the error record and its traceback are tinted, the INFO line after them is not
    tinted = {m.cursor.block().text() for m in dialog.text.extraSelections()}
    assert any("ERROR" in t for t in tinted) and "KeyError: 'missing'" in tinted
    assert not any("after the failure" in t for t in tinted)
    action.trigger()                                        # a second time: the same window, read again
    assert window.findChildren(LogDialog) == [dialog]
    opened = _Opened()
    QDesktopServices.setUrlHandler("file", opened, "open")   # Qt's own hook: what a desktop would get
    try:
        assert dialog.open_in_editor()
    finally:
        QDesktopServices.unsetUrlHandler("file")
    assert [Path(u.toLocalFile()) for u in opened.urls] == [path]
    dialog.copy_path()
    assert QGuiApplication.clipboard().text() == str(path)
    dialog.close()


def test_the_log_window_before_anything_was_logged(qtbot, state_home: Path) -> None:
    dialog = LogDialog(path=state_home / "checkpoint-inspector" / "log" / "gui.log")
    qtbot.addWidget(dialog)
    assert dialog.pages.currentWidget() is dialog.empty and "nothing logged yet" in dialog.where.text()


def test_a_big_log_shows_its_last_part_from_a_line_start(tmp_path: Path) -> None:
    path = tmp_path / "gui.log"
    lines = [f"line {n:06d} " + "x" * 90 for n in range(6000)]     # ~600 KB
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    text, size = read_tail(path, limit=100_000)
    assert size == path.stat().st_size and len(text.encode()) <= 100_000
    shown = text.rstrip("\n").split("\n")
    assert shown[-1] == lines[-1] and shown[0] in lines     # whole lines only, the newest last
    assert read_tail(tmp_path / "absent.log") == ("", 0)
