"""The GUI's rotating log file (platformdirs' user log directory) and Help ▸ Open Log File."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from PySide6.QtCore import QObject, QUrl, Slot
from PySide6.QtGui import QDesktopServices

from inspector.ui import logfile


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


def test_help_opens_the_log_file(window, state_home: Path) -> None:
    path = logfile.install()
    action = window.menu_actions.open_log
    assert action in window.menu_actions.help_menu.actions()
    opened = _Opened()
    QDesktopServices.setUrlHandler("file", opened, "open")   # Qt's own hook: what a desktop would get
    try:
        action.trigger()
    finally:
        QDesktopServices.unsetUrlHandler("file")
    assert [Path(u.toLocalFile()) for u in opened.urls] == [path] and path.exists()
