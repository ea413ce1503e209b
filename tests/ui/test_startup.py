"""Start-up: the runs list is painted from a preview before the store (SQLAlchemy) opens."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from inspector.store import open_store
from inspector.ui.models.run_tree import FIRST_PAGE, preview_load
from inspector.ui.startup import Startup


def test_the_gui_start_up_imports_no_sqlalchemy_and_no_panel_machinery() -> None:
    code = ("import sys\n"
            "from inspector.cli import build_parser, _wanted\n"
            "build_parser(_wanted(['open', 'x.db']))\n"
            "import inspector.ui.app, inspector.ui.main_window\n"
            "late = {'sqlalchemy', 'pygments', 'watchdog', 'inspector.diff', 'inspector.resume.resume'}\n"
            "loaded = late & set(sys.modules)\n"
            "assert not loaded, loaded\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_preview_then_open_keeps_the_runs_and_a_run_picked_meanwhile(qtbot, qapp, demo_store: Path) -> None:
    from inspector.ui.main_window import MainWindow
    from inspector.ui.session import StoreSession

    with open_store(demo_store) as store:
        expected = store.list_runs(limit=FIRST_PAGE)
    session = StoreSession()
    session.open(str(demo_store), preview=preview_load)     # as the app starts: before the window exists
    window = MainWindow(session=session, restore_settings=False)
    qtbot.addWidget(window)
    seen: list[tuple] = []     # after the window's own slot has shown the preview:
    session.previewed.connect(lambda load: seen.append((session.store, window.runs_panel.model.previewing,
                                                         sorted(r.id for r in load.runs))))
    window.resize(1200, 800)
    with qtbot.waitSignal(session.previewed, timeout=20_000):
        window.show()
    assert seen == [(None, True, sorted(r.id for r in expected))]   # shown before the store is open
    picked = expected[-1].id
    assert window.runs_panel.select_run(picked)
    model = window.runs_panel.model
    qtbot.waitUntil(lambda: session.store is not None and model.loaded and not model.previewing, timeout=20_000)
    assert window.runs_panel.current_run().id == picked
    timeline = window.timeline_panel.model
    qtbot.waitUntil(lambda: timeline.run is not None and timeline.run.id == picked, timeout=20_000)
    qtbot.waitUntil(lambda: timeline.rowCount() == expected[-1].checkpoint_count, timeout=20_000)
    assert window.details.panels      # the visible tab's panel was built after the first paint
    window.close()


def test_a_preview_that_fails_opens_the_store_as_usual(qtbot, window, tmp_path: Path) -> None:
    bogus = tmp_path / "notes.db"
    bogus.write_text("not a database\n" * 20)
    with qtbot.waitSignal(window.session.open_failed, timeout=20_000) as failed:
        window.open_store(str(bogus), preview=True)
    assert "not a checkpoint store" in failed.args[0]


def test_a_previewed_store_that_then_fails_to_open_leaves_no_runs_behind(qtbot, window, demo_store: Path) -> None:
    import sqlite3

    with sqlite3.connect(demo_store) as conn:
        conn.execute("drop table ci_blobs")     # the runs still read; the store no longer opens
    previews: list = []
    window.session.previewed.connect(previews.append)
    with qtbot.waitSignal(window.session.open_failed, timeout=20_000) as failed:
        window.open_store(str(demo_store), preview=True)
    assert len(previews) == 1 and previews[0].runs          # the runs were shown first
    assert "not a checkpoint store" in failed.args[0] and window.banner.isVisible()
    assert window.runs_panel.model.rowCount() == 0 and not window.runs_panel.model.previewing
    assert window.stack.currentWidget() is window.welcome


def test_startup_runs_deferred_work_once_after_the_first_paint(qtbot, qapp) -> None:
    from PySide6.QtWidgets import QLabel

    label = QLabel("hello")
    qtbot.addWidget(label)
    startup = Startup(label, fallback_ms=60_000)
    calls: list[str] = []
    startup.later(lambda: calls.append("a"))
    startup.watch(label, lambda: True)
    assert calls == [] and not startup.finished
    label.show()
    qtbot.waitUntil(lambda: startup.finished, timeout=5_000)
    startup.later(lambda: calls.append("b"))      # after the paint: at once
    startup.finish()                               # idempotent
    assert calls == ["a", "b"]


def test_startup_falls_back_to_a_timer(qtbot, qapp) -> None:
    from PySide6.QtCore import QObject

    owner = QObject()
    startup = Startup(owner, fallback_ms=10)
    calls: list[int] = []
    startup.later(lambda: calls.append(1))
    startup.arm()
    qtbot.waitUntil(lambda: calls == [1], timeout=5_000)
