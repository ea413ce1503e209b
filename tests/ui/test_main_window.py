"""The main window on real stores: details, errors, read-only browsing, title, recent stores, drops."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QAbstractItemView, QLabel

from inspector.store import open_store
from inspector.ui import settings
from tests.conftest import store_files_digest
from tests.ui.conftest import open_in, select_checkpoint, select_run


def _texts(widget) -> str:
    """Every label text and every item text of the views inside ``widget``."""
    parts = [label.text() for label in widget.findChildren(QLabel)]
    for view in widget.findChildren(QAbstractItemView):
        model = view.model()
        if model is None:
            continue
        stack = [model.index(r, c) for r in range(model.rowCount()) for c in range(model.columnCount())]
        while stack:
            index = stack.pop()
            parts.append(str(index.data() or ""))
            if index.column() == 0:
                stack += [model.index(r, c, index) for r in range(model.rowCount(index))
                          for c in range(model.columnCount(index))]
    return "\n".join(parts)


def test_selecting_a_checkpoint_shows_its_state_and_tasks(window, qtbot, demo_store: Path) -> None:
    open_in(window, qtbot, demo_store)
    with open_store(demo_store) as store:
        run = next(r for r in store.list_runs() if r.status == "completed" and r.checkpoint_count > 12)
        expected = store.load(f"{run.id}:12")
    select_run(window, qtbot, run.id)
    snapshot = select_checkpoint(window, qtbot, 12)
    assert snapshot.info.id == expected.info.id
    assert snapshot.state == expected.state and snapshot.tasks == expected.tasks
    assert window.current_checkpoint().seq == 12
    state_text = _texts(window.details.panels["state"])
    assert expected.state["topic"] in state_text
    window.details.set_tab("tasks")
    tasks_text = _texts(window.details.panels["tasks"])
    assert expected.tasks["tasks"][0]["title"] in tasks_text


def test_title_and_status_bar_name_the_store(window, qtbot, demo_store: Path) -> None:
    open_in(window, qtbot, demo_store)
    title = window.windowTitle()
    for word in ("demo.db", "native", "SQLite", "read-only"):
        assert word in title
    status = window.store_status
    assert status.kind_chip.text() == "native" and status.backend_chip.text() == "SQLite"
    assert status.readonly_chip.text() == "read-only"
    assert "live" in status.live_chip.text()


def test_recent_stores_are_remembered(qtbot, demo_store: Path) -> None:
    from inspector.ui.main_window import MainWindow

    win = MainWindow(restore_settings=True)
    qtbot.addWidget(win)
    open_in(win, qtbot, demo_store)
    assert settings.recent_stores()[0] == str(demo_store.resolve())
    win.menu_actions.recent_menu.aboutToShow.emit()
    assert str(demo_store.resolve()) in [a.text() for a in win.menu_actions.recent_menu.actions()]
    assert win.welcome.recent_list.item(0).text() == str(demo_store.resolve())
    win.close()


def test_a_file_that_is_not_a_store_says_so_and_the_app_stays_usable(window, qtbot, demo_store: Path,
                                                                      tmp_path: Path) -> None:
    open_in(window, qtbot, demo_store)
    bogus = tmp_path / "notes.db"
    bogus.write_text("just some text, not a database\n" * 10)
    with qtbot.waitSignal(window.session.open_failed) as failed:
        window.open_store(str(bogus))
    assert "not a checkpoint store" in failed.args[0]
    assert window.banner.isVisible() and "not a checkpoint store" in window.banner.message
    assert "Traceback" not in window.banner.message
    assert Path(window.session.info.display) == demo_store.resolve()  # the previous store stays open
    run_id = next(iter(window.runs_panel.model.tree.by_id))
    select_run(window, qtbot, run_id)  # and still works
    assert window.timeline_panel.model.rowCount() > 0


def test_a_missing_store_on_the_welcome_page(window, qtbot, tmp_path: Path) -> None:
    assert window.stack.currentWidget() is window.welcome
    with qtbot.waitSignal(window.session.open_failed):
        window.open_store(str(tmp_path / "nowhere.db"))
    assert "does not exist" in window.banner.message
    assert window.stack.currentWidget() is window.welcome
    assert window.windowTitle() == "Checkpoint Inspector"


def test_browsing_never_writes_to_the_store(qtbot, demo_store: Path, window) -> None:
    before = store_files_digest(demo_store)
    open_in(window, qtbot, demo_store)
    for run_id in list(window.runs_panel.model.tree.by_id)[:3]:
        select_run(window, qtbot, run_id)
        select_checkpoint(window, qtbot, 0)
        select_checkpoint(window, qtbot, -1)
    window.refresh()
    window.close()
    assert store_files_digest(demo_store) == before


def test_dropping_a_store_file_opens_it(window, qtbot, demo_store: Path) -> None:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(demo_store))])
    event = QDropEvent(QPointF(QPoint(200, 200)), Qt.DropAction.CopyAction, mime,
                       Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    with qtbot.waitSignal(window.runs_panel.model.runs_loaded, timeout=20_000):
        window.dropEvent(event)
    assert window.stack.currentWidget() is window.main_splitter
    assert Path(window.session.info.display) == demo_store.resolve()


def test_live_toggle_and_shortcuts(window, qtbot, demo_store: Path) -> None:
    open_in(window, qtbot, demo_store)
    live = window.menu_actions.live
    assert live.isChecked() and window.session.bridge.watching == "files"
    assert live.shortcut().toString() == "Ctrl+L"
    live.trigger()
    assert window.session.bridge.watching == "" and window.store_status.live_chip.text() == "paused"
    live.trigger()
    assert window.session.bridge.watching == "files"
    window.menu_actions.find.trigger()
    assert window.runs_panel.filter_edit.hasFocus()
    shortcuts = {a.shortcut().toString() for a in (window.menu_actions.open, window.menu_actions.refresh)}
    assert shortcuts == {"Ctrl+O", "F5"}


def test_extension_points_for_other_features(window, qtbot) -> None:
    from PySide6.QtGui import QAction

    from PySide6.QtWidgets import QTextEdit
    action = QAction("Test action", window)
    window.add_run_action(action)
    assert action in window.menu_actions.run_menu.actions() and action in window.menu_actions.toolbar.actions()
    dock = window.add_dock(QTextEdit(), "Test Dock")
    assert dock.toggleViewAction() in window.menu_actions.panels_menu.actions()


def test_the_window_keeps_qwidget_actions(window) -> None:
    # the menu actions once sat in the attribute `actions`, which hid QWidget.actions(): any
    # caller asking the window for its QActions got the dataclass (not callable)
    assert isinstance(window.actions(), list)
    assert window.menu_actions.open.text() == "&Open Store\u2026"


def test_an_empty_store_says_it_has_no_runs_and_how_they_get_there(window, qtbot, tmp_path: Path) -> None:
    from inspector.store.opening import create_store

    path = tmp_path / "empty.db"
    create_store(path).close()
    open_in(window, qtbot, path)
    hint = window.runs_panel.empty_hint
    assert hint.isVisible() and "This store has no runs yet" in hint.text()
    assert "inspector.record.Checkpointer" in hint.text() and "checkpoint-inspector demo" in hint.text()
    assert hint.geometry().intersects(window.runs_panel.view.viewport().rect())
    window.runs_panel.set_text_filter("nothing")        # no run to filter: still the empty store's words
    assert "no runs yet" in hint.text()
    window.session.close()
    assert not hint.isVisible()


def test_show_forks_is_kept_across_restarts_and_storage_is_in_the_view_menu_once(qtbot) -> None:
    from inspector.ui.main_window import MainWindow

    first = MainWindow(restore_settings=True)
    qtbot.addWidget(first)
    view = [a.text() for a in first.menu_actions.view_menu.actions()]
    panels = [a.text() for a in first.menu_actions.panels_menu.actions()]
    assert view.count("&Storage") == 1 and "&Storage" not in panels and "Storage" not in panels
    assert first.menu_actions.show_forks.isChecked()
    first.menu_actions.show_forks.setChecked(False)
    first.close()                                    # (saves the settings)
    second = MainWindow(restore_settings=True)
    qtbot.addWidget(second)
    assert not second.menu_actions.show_forks.isChecked()   # it came back checked
    assert not second.runs_panel.forks_button.isChecked()
    second.menu_actions.show_forks.setChecked(True)
    second.close()
