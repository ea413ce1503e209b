"""Deletions while the window watches a store: a run deleted leaves the list (nothing else is
shown in its place, and the window says why); a run pruned while shown is read again."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from inspector.retention.api import apply_prune
from inspector.retention.rules import make_rules
from inspector.store import open_store
from tests.retention.stores import build
from tests.store.langgraph.lg_graphs import make_database
from tests.ui.conftest import open_in, select_checkpoint, select_run


def test_a_thread_deleted_by_langgraph_leaves_the_list_and_the_window_says_so(window, qtbot, tmp_path: Path) -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = make_database(tmp_path / "lg.db")
    open_in(window, qtbot, path)
    model = window.runs_panel.model
    threads = sorted(model.tree.by_id)
    victim, other = threads[0], threads[1]
    select_run(window, qtbot, victim)
    select_checkpoint(window, qtbot, -1)
    conn = sqlite3.connect(path, check_same_thread=False)
    try:
        SqliteSaver(conn).delete_thread(victim)
    finally:
        conn.close()
    qtbot.waitUntil(lambda: victim not in model.tree.by_id, timeout=20_000)
    qtbot.waitUntil(lambda: window.timeline_panel.model.run is None, timeout=5_000)
    assert sorted(model.tree.by_id) == [t for t in threads if t != victim]
    assert not window.runs_panel.view.currentIndex().isValid()    # no neighbour picked in its place
    assert window.details.snapshot is None
    assert f"“{victim}” is no longer in the store" in window.banner.message
    select_run(window, qtbot, other)                                 # and the window goes on
    assert select_checkpoint(window, qtbot, -1).info.run_id == other


def test_a_run_pruned_while_shown_is_read_again(window, qtbot, tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    ids = build(path)
    open_in(window, qtbot, path)
    select_run(window, qtbot, ids["long"])
    timeline = window.timeline_panel.model
    assert timeline.rowCount() == 60
    select_checkpoint(window, qtbot, 30)
    apply_prune(path, make_rules(keep_last=10, runs=[ids["long"]]))
    with open_store(path) as store:
        left = store.get_run(ids["long"]).checkpoint_count    # the fork's source is kept too
        head = store.list_checkpoints(ids["long"])[-1]
    assert 10 <= left < 60
    qtbot.waitUntil(lambda: timeline.rowCount() == left, timeout=20_000)
    snap = select_checkpoint(window, qtbot, -1)
    assert snap.info.seq == left - 1 and snap.info.id == head.id
    assert f"{60 - left} checkpoints of “long chat” were deleted" in window.statusBar().currentMessage()
    assert window.runs_panel.model.run(ids["long"]).checkpoint_count == left
