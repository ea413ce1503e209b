"""Run ▸ Delete Run…: what stops it is said; otherwise it asks, deletes in the background, and
the run leaves the list with nothing shown in its place."""

from __future__ import annotations

from pathlib import Path

from inspector.store import open_store
from tests.retention.stores import built_store  # noqa: F401  (a fixture)
from tests.ui.conftest import open_in, select_run


def test_delete_run_asks_then_the_run_goes(window, qtbot, built_store) -> None:
    path, ids = built_store
    open_in(window, qtbot, path)
    actions = window.storage
    asked: list[str] = []

    def answer(_parent, title: str, text: str) -> bool:
        asked.append(text)
        return True
    actions.confirm = answer
    # a run other runs were forked from: said, nothing asked, nothing deleted
    select_run(window, qtbot, ids["long"])
    assert actions.delete.isEnabled()
    actions.delete.trigger()
    qtbot.waitUntil(lambda: "forked from" in window.banner.message, timeout=10_000)
    assert not asked
    # a run that may go: asked, deleted, gone from the list, nothing shown in its place
    select_run(window, qtbot, ids["short"])
    model = window.runs_panel.model
    actions.delete.trigger()
    qtbot.waitUntil(lambda: ids["short"] not in model.tree.by_id, timeout=20_000)
    assert "Delete \u201cshort chat\u201d and its 30 checkpoints from the store?" in asked[0]
    assert window.timeline_panel.model.run is None and window.details.snapshot is None
    # (the watcher may see the run go before the delete's own answer: it says nothing of its own)
    qtbot.waitUntil(lambda: "Deleted \u201cshort chat\u201d: 30 checkpoints" in window.statusBar().currentMessage(),
                    timeout=10_000)
    assert window.store_status.readonly_chip.text() == "read-only + your writes"
    assert not window.runs_panel.view.currentIndex().isValid()
    with open_store(path) as store:
        assert ids["short"] not in {r.id for r in store.list_runs()}


def _declining(window, qtbot, built_store) -> tuple[Path, dict, list[str]]:
    """The store open with its short run selected, and every question asked answered No."""
    path, ids = built_store
    open_in(window, qtbot, path)
    asked: list[str] = []
    window.storage.confirm = lambda _p, _t, text: asked.append(text) or False
    select_run(window, qtbot, ids["short"])
    return path, ids, asked


def test_answering_no_deletes_nothing(window, qtbot, built_store) -> None:
    from tests.conftest import store_files_digest

    path, ids, asked = _declining(window, qtbot, built_store)
    before = store_files_digest(path)
    window.storage.delete.trigger()
    qtbot.waitUntil(lambda: bool(asked), timeout=10_000)
    qtbot.wait(200)
    assert store_files_digest(path) == before and ids["short"] in window.runs_panel.model.tree.by_id


def test_a_runs_right_click_selects_it_and_offers_the_run_menu(window, qtbot, built_store) -> None:
    path, ids = built_store
    open_in(window, qtbot, path)
    panel = window.runs_panel
    select_run(window, qtbot, ids["long"])
    source = panel.model.run_index(ids["short"])
    rect = panel.view.visualRect(panel.proxy.mapFromSource(source))
    with qtbot.waitSignal(window.timeline_panel.model.page_loaded, timeout=10_000):
        menu = panel.run_menu_at(rect.center())
    assert menu is window.menu_actions.run_menu
    assert window.current_run().id == ids["short"]
    texts = [a.text() for a in menu.actions()]
    assert "&Delete Run\u2026" in texts and window.storage.delete.isEnabled()
    assert panel.run_menu_at(rect.bottomLeft() + rect.bottomLeft() * 40) is None    # below every row


def test_a_checkpoints_right_click_selects_it_and_offers_the_run_menu(window, qtbot, built_store) -> None:
    path, ids = built_store
    open_in(window, qtbot, path)
    select_run(window, qtbot, ids["short"])
    timeline = window.timeline_panel
    qtbot.waitUntil(lambda: timeline.current_checkpoint() is not None, timeout=10_000)
    rect = timeline.view.visualRect(timeline.model.index(3, 2))
    assert rect.isValid()
    menu = timeline.run_menu_at(rect.center())
    assert menu is window.menu_actions.run_menu and timeline.current_checkpoint().seq == 3
    copy_ref = next(a for a in menu.actions() if a.text().startswith("&Copy"))
    assert copy_ref.isEnabled()


def test_the_delete_key_in_the_runs_list_asks_too(window, qtbot, built_store) -> None:
    from PySide6.QtCore import Qt

    _path, ids, asked = _declining(window, qtbot, built_store)
    window.details.setFocus()
    qtbot.keyClick(window.details, Qt.Key.Key_Delete)     # elsewhere, Delete is not this action
    qtbot.wait(300)
    assert not asked
    window.runs_panel.view.setFocus()
    qtbot.keyClick(window.runs_panel.view, Qt.Key.Key_Delete)
    qtbot.waitUntil(lambda: bool(asked), timeout=10_000)
    assert "short chat" in asked[0] and ids["short"] in window.runs_panel.model.tree.by_id


def test_delete_run_on_a_langgraph_database_asks_backs_up_and_the_thread_goes(window, qtbot, tmp_path: Path) -> None:
    """In a LangGraph database a run is a thread: the question says it goes as LangGraph's
    delete_thread takes it and that a backup is made; the status bar says where it went."""
    from tests.store.langgraph.lg_graphs import make_database

    path = make_database(tmp_path / "lg.db")
    open_in(window, qtbot, path)
    asked: list[str] = []
    window.storage.confirm = lambda _p, _t, text: asked.append(text) or True
    select_run(window, qtbot, "thread-C")
    assert window.storage.delete.isEnabled()
    window.storage.delete.trigger()
    qtbot.waitUntil(lambda: "thread-C" not in window.runs_panel.model.tree.by_id, timeout=20_000)
    assert "Delete LangGraph thread \u201cthread-C\u201d" in asked[0] and "as LangGraph's delete_thread does" in asked[0]
    assert "A backup copy of the file is made first" in asked[0]
    said = window.statusBar().currentMessage()
    assert said.startswith("Deleted thread \u201cthread-C\u201d (") and "; backup: lg.db.backup-" in said
    assert (tmp_path / said.split("backup: ", 1)[1]).exists()       # beside the database: its name
    assert window.timeline_panel.model.run is None
    with open_store(path) as store:
        assert "thread-C" not in {r.id for r in store.list_runs()} and "thread-A" in {r.id for r in store.list_runs()}


def test_a_delete_that_could_not_collect_pieces_says_why(window, qtbot, built_store) -> None:
    """Another run's damaged state reference: the run goes, its pieces stay, and a warning
    that stays until closed says why."""
    import sqlite3

    from tests.retention.stores import damage_head_reference

    path, ids = built_store
    damage_head_reference(path, ids["long"])
    con = sqlite3.connect(path)
    pieces = con.execute("SELECT count(*) FROM ci_blobs").fetchone()[0]
    con.close()
    open_in(window, qtbot, path)
    window.storage.confirm = lambda *_args: True
    select_run(window, qtbot, ids["short"])
    window.storage.delete.trigger()
    qtbot.waitUntil(lambda: ids["short"] not in window.runs_panel.model.tree.by_id, timeout=20_000)
    # (the watcher may see the run go before the delete's own answer)
    qtbot.waitUntil(lambda: "Unreferenced pieces were not collected" in window.banner.message, timeout=10_000)
    assert window.banner.level == "warning"
    assert "and 0 pieces of state" in window.statusBar().currentMessage()
    con = sqlite3.connect(path)
    assert con.execute("SELECT count(*) FROM ci_blobs").fetchone()[0] == pieces
    con.close()
