"""The live head in the Tasks tab: mapreduce-2 (a failed ``Send`` task, its siblings' writes
pending) as LangGraph's ``get_state`` shows it — the failed task says *failed*, not finished, and
the board says the pending writes are applied."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.store import open_store
from inspector.ui.widgets.tasks_panel import TasksPanel

from . import BY_NAME, cancelled, open_graph, sqlite_saver

pytestmark = pytest.mark.usefixtures("qapp")


def test_the_tasks_tab_says_failed_and_shows_the_live_note(qtbot, corpus_sqlite: Path) -> None:
    with sqlite_saver(corpus_sqlite) as saver:
        state = open_graph(BY_NAME["mapreduce"], saver).get_state({"configurable": {"thread_id": "mapreduce-2"}})
    # LangGraph's own race: a sibling still running when the step fails may write its
    # CancelledError too; one task really failed
    failed = [t for t in state.tasks if t.error is not None and not cancelled(t.error)]
    assert [t.name for t in failed] == ["work"]
    with open_store(str(corpus_sqlite)) as store:
        snap = store.load("mapreduce-2:-1")
        run = store.get_run("mapreduce-2")
    assert snap.meta.get("live")
    panel = TasksPanel()
    qtbot.addWidget(panel)
    panel.resize(1000, 600)
    panel.show()
    panel.show_snapshot(snap, run)
    assert panel.live_note.isVisible() and "finished task" in panel.live_note.text()
    cards = panel.columns["failed"].cards
    assert cards and all(c.title.text().startswith(("work", "audit")) for c in cards)
    real = [c for c in cards if "ValueError" in c.checks.text() or str(failed[0].error) in c.checks.text()]
    assert len(real) == 1 and real[0].title.text().startswith("work")
    check = real[0].checks.text()
    assert "\u2717" in check and "failed" in check and "finished" not in check
    panel.show_snapshot(store_free_copy(snap), run)          # a stored (not live) checkpoint: no note
    assert not panel.live_note.isVisible()



def store_free_copy(snap):
    """The same snapshot without the live marker (what a stored checkpoint looks like)."""
    import dataclasses
    meta = {k: v for k, v in snap.meta.items() if k != "live"}
    return dataclasses.replace(snap, meta=meta)


def test_the_tasks_tab_names_the_graphs_reducer_that_combined_a_write(qtbot, corpus_sqlite: Path, graph_kinds,
                                                                       graph_combiner) -> None:
    """channels-2's head with the graph set: ``trail``'s pending write was combined by the graph's
    ``join_trail`` in its runner, and the board says so under the pending-writes note."""
    with open_store(str(corpus_sqlite)) as store:
        store.use_graph_channels(graph_kinds("channels"), None, graph_combiner("channels"))
        snap = store.load("channels-2:-1")
        run = store.get_run("channels-2")
    assert snap.state["trail"] == "score > tag"
    panel = TasksPanel()
    qtbot.addWidget(panel)
    panel.resize(1000, 600)
    panel.show()
    panel.show_snapshot(snap, run)
    assert panel.live_note.isVisible()
    assert "finished task" in panel.live_note.text() and "tests.lgcorpus.channels.join_trail" in panel.live_note.text()
