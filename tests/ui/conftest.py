"""Fixtures for the GUI tests: Qt warnings fail a test, settings live in a temp dir, windows."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, QtMsgType
from PySide6.QtWidgets import QApplication

from tests.ui.dialogs.conftest import crashed_master, crashed_store  # noqa: F401 - also for test_journeys

# What the offscreen platform prints for every shown window: not a defect of ours.
# what the offscreen platform plugin cannot do (a popup menu raises itself and grabs the
# keyboard): the plugin's limits, not the app's
IGNORED_QT_MESSAGES = ("This plugin does not support propagateSizeHints()", "This plugin does not support raise()",
                       "This plugin does not support grabbing the keyboard")


@pytest.fixture(scope="session", autouse=True)
def isolated_settings(tmp_path_factory: pytest.TempPathFactory) -> None:
    """QSettings of the tests go to a temp dir, never to the user's configuration."""
    folder = str(tmp_path_factory.mktemp("qsettings"))
    for fmt in (QSettings.Format.NativeFormat, QSettings.Format.IniFormat):
        QSettings.setPath(fmt, QSettings.Scope.UserScope, folder)


@pytest.fixture(autouse=True)
def fail_on_qt_warnings(qtlog) -> Iterator[None]:  # pytest-qt fixture
    """A Qt warning, critical or fatal message logged during a GUI test fails it."""
    yield
    bad = [r for r in qtlog.records
           if r.type in (QtMsgType.QtWarningMsg, QtMsgType.QtCriticalMsg, QtMsgType.QtFatalMsg)
           and not any(r.message.startswith(m) for m in IGNORED_QT_MESSAGES)]
    assert not bad, "Qt warnings: " + "; ".join(r.message for r in bad)


@pytest.fixture
def window(qtbot, qapp: QApplication):  # pytest-qt fixtures
    """A main window (offscreen, settings not restored), closed and drained after the test."""
    from inspector.ui import style
    from inspector.ui.main_window import MainWindow

    saved = (qapp.style().name(), qapp.palette(), qapp.styleSheet())
    style.apply_theme(qapp, "light")
    win = MainWindow(restore_settings=False)
    qtbot.addWidget(win)
    win.resize(1400, 900)
    win.show()
    yield win
    win.close()
    qapp.setStyle(saved[0])  # leave the application as other tests expect it
    qapp.setPalette(saved[1])
    qapp.setStyleSheet(saved[2])


def open_in(window, qtbot, path: Path | str) -> None:
    """Open ``path`` in ``window`` and wait until every run is listed and annotated."""
    model = window.runs_panel.model
    with qtbot.waitSignals([model.runs_loaded, model.annotated], timeout=20_000):
        window.open_store(str(path))


def select_run(window, qtbot, run_id: str) -> None:
    """Select a run and wait for the first page of its timeline."""
    with qtbot.waitSignal(window.timeline_panel.model.page_loaded, timeout=10_000):
        assert window.runs_panel.select_run(run_id)


def select_checkpoint(window, qtbot, seq: int):
    """Select checkpoint ``seq`` in the timeline and return its Snapshot once the details show
    it. (A run opens on its head: selecting the head may select the row already selected,
    which loads nothing new.)"""
    timeline = window.timeline_panel
    timeline.select_seq(seq)

    def shown() -> bool:
        current, snap = timeline.current_checkpoint(), window.details.snapshot
        return (current is not None and timeline._pending_seq is None and (seq < 0 or current.seq == seq)
                and snap is not None and snap.info.id == current.id)
    qtbot.waitUntil(shown, timeout=10_000)
    return window.details.snapshot
