"""Task History: a card's double-click (or the Tasks tab's History… button) lists the
checkpoints where the task changed; choosing one selects it in the timeline."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from inspector.diff.history import task_history
from inspector.store import open_store
from tests.ui.conftest import open_in, select_run

TIMEOUT = 15_000


def _paused(path: Path):
    with open_store(path) as store:
        return next(r for r in store.list_runs() if r.status == "interrupted")


def _tasks_panel(window, qtbot):
    window.details.set_tab("tasks")
    panel = window.details.panels["tasks"]
    qtbot.waitUntil(lambda: panel.showing_board, timeout=TIMEOUT)
    return panel


def test_double_clicking_a_card_lists_where_its_task_changed_and_a_row_selects_that_checkpoint(
        window, qtbot, demo_store: Path) -> None:
    run = _paused(demo_store)
    with open_store(demo_store) as store:
        expected = [e.checkpoint.seq for e in task_history(store, run.id, "draft")]
    open_in(window, qtbot, demo_store)
    select_run(window, qtbot, run.id)
    panel = _tasks_panel(window, qtbot)
    card = next(c for col in panel.columns.values() for c in col.cards if c.task["id"] == "draft")
    assert "this task changed" in card.toolTip()
    qtbot.mouseDClick(card, Qt.MouseButton.LeftButton)
    dialog = window.task_history
    assert dialog is not None and dialog.task_id == "draft"
    qtbot.waitUntil(lambda: dialog.events is not None, timeout=TIMEOUT)
    tree = dialog.tree
    assert [tree.topLevelItem(i).text(0).split()[0] for i in range(tree.topLevelItemCount())] == \
        [f"#{seq}" for seq in expected]
    assert "Draft the report" in dialog.heading.text()
    assert dialog.status.text().startswith(f"Changed at {len(expected)} checkpoints")
    lines = [tree.topLevelItem(i).child(j).text(0) for i in range(tree.topLevelItemCount())
             for j in range(tree.topLevelItem(i).childCount())]
    assert lines[0] == "+ added as pending" and any("changes_requested by editor-bot" in line for line in lines)
    # choosing a row selects its checkpoint in the timeline (and the board follows)
    target = tree.topLevelItem(1)
    with qtbot.waitSignal(window.details.snapshot_loaded, timeout=TIMEOUT) as loaded:
        tree.itemClicked.emit(target, 0)
    assert loaded.args[0].info.seq == expected[1] == window.timeline_panel.current_checkpoint().seq


def test_the_history_button_lists_every_task_and_a_node_task_card_has_none(
        window, qtbot, demo_store: Path, corpus_sqlite: Path) -> None:
    run = _paused(demo_store)
    open_in(window, qtbot, demo_store)
    select_run(window, qtbot, run.id)
    panel = _tasks_panel(window, qtbot)
    qtbot.mouseClick(panel.score_bar.history_button, Qt.MouseButton.LeftButton)
    dialog = window.task_history
    qtbot.waitUntil(lambda: dialog.events is not None, timeout=TIMEOUT)
    assert dialog.task_id is None and dialog.tree.topLevelItemCount() == len(dialog.events) > 1
    assert {c.task_id for e in dialog.events for c in e.changes} >= {"draft", "review", "research"}
    # a LangGraph step's node task lives one step: its card offers no history
    open_in(window, qtbot, corpus_sqlite)
    select_run(window, qtbot, "mapreduce-2")
    panel = _tasks_panel(window, qtbot)
    qtbot.waitUntil(lambda: any(col.cards for col in panel.columns.values()), timeout=TIMEOUT)
    card = next(c for col in panel.columns.values() for c in col.cards)
    shown = window.task_history
    qtbot.mouseDClick(card, Qt.MouseButton.LeftButton)
    assert window.task_history is shown and "this task changed" not in card.toolTip()


def test_run_menu_task_history_needs_a_run_and_opens_its_history(window, qtbot, demo_store: Path) -> None:
    action = window.menu_actions.task_history
    assert not action.isEnabled() and action.shortcut().toString() == "Ctrl+H"
    open_in(window, qtbot, demo_store)
    assert not action.isEnabled() and "select a run first" in action.toolTip()
    run = _paused(demo_store)
    select_run(window, qtbot, run.id)
    assert action.isEnabled()
    action.trigger()
    dialog = window.task_history
    qtbot.waitUntil(lambda: dialog.events is not None, timeout=TIMEOUT)
    assert dialog.run.id == run.id and dialog.task_id is None and dialog.events


def test_refresh_reads_what_a_live_run_wrote_since(window, qtbot, tmp_path: Path) -> None:
    from inspector.record import Checkpointer
    store = tmp_path / "live.db"
    plan = {"goal": "ship it", "tasks": [{"id": "build", "title": "Build", "status": "in_progress"}]}
    with Checkpointer(store, name="live run", heartbeat=3600) as cp:
        cp.save({"step": 1}, kind="tool", name="start", tasks=plan)
        open_in(window, qtbot, store)
        select_run(window, qtbot, cp.run_id)
        window.menu_actions.task_history.trigger()
        dialog = window.task_history
        qtbot.waitUntil(lambda: dialog.events is not None, timeout=TIMEOUT)
        assert [e.checkpoint.seq for e in dialog.events] == [0]
        done = {**plan, "tasks": [dict(plan["tasks"][0], status="done", progress=1.0)]}
        cp.save({"step": 2}, kind="tool", name="build", tasks=done)
        dialog.refresh()
        qtbot.waitUntil(lambda: dialog.events is not None, timeout=TIMEOUT)
    assert [e.checkpoint.seq for e in dialog.events] == [0, 1] and dialog.tree.topLevelItemCount() == 2
    assert "in_progress → done" in dialog.tree.topLevelItem(1).child(0).text(0)


def test_a_values_menu_opens_its_value_history_and_a_row_selects_that_checkpoint(
        window, qtbot, demo_store: Path) -> None:
    from inspector.diff.history import value_history

    run = _paused(demo_store)
    path = ("files", "draft.md", "bytes")
    with open_store(demo_store) as store:
        expected = [e.checkpoint.seq for e in value_history(store, run.id, path)]
    assert expected
    open_in(window, qtbot, demo_store)
    select_run(window, qtbot, run.id)
    window.details.set_tab("state")
    view = window.details.panels["state"].tree_view
    qtbot.waitUntil(lambda: view.select_path(path), timeout=TIMEOUT)
    menu = view.context_menu(view.tree.currentIndex())
    action = next(a for a in menu.actions() if a.text() == "Value History\u2026")
    action.trigger()
    dialog = window.task_history
    assert dialog is not None and dialog.path == path and dialog.windowTitle() == f"Value History \u2014 {run.name}"
    qtbot.waitUntil(lambda: dialog.events is not None, timeout=TIMEOUT)
    tree = dialog.tree
    assert [tree.topLevelItem(i).text(0).split()[0] for i in range(tree.topLevelItemCount())] == \
        [f"#{seq}" for seq in expected]
    assert tree.topLevelItem(0).child(0).text(0).startswith("+ files['draft.md'].bytes = ")
    assert "now:" in tree.topLevelItem(0).child(0).toolTip(0)
    target = tree.topLevelItem(len(expected) - 1)
    with qtbot.waitSignal(window.details.snapshot_loaded, timeout=TIMEOUT) as loaded:
        tree.itemClicked.emit(target, 0)
    assert loaded.args[0].info.seq == expected[-1] == window.timeline_panel.current_checkpoint().seq
    # a value that is nowhere says so
    dialog = window.open_value_history(("no", "such"))
    qtbot.waitUntil(lambda: dialog.events is not None, timeout=TIMEOUT)
    assert dialog.status.text() == "no.such is not in this run's state at any checkpoint."


def test_a_long_history_goes_into_the_list_a_few_checkpoints_a_turn(window, qtbot, demo_store: Path,
                                                                    monkeypatch) -> None:
    """The list is filled ``FILL_EVENTS`` checkpoints a turn of the event loop (33,000 at once
    froze the window for 1.6 s): here two a turn, every one there in order at the end, each
    expanded, and the window answers in between."""
    from inspector.ui.dialogs import task_history as dialogs

    monkeypatch.setattr(dialogs, "FILL_EVENTS", 2)
    run = _paused(demo_store)
    with open_store(demo_store) as store:
        expected = [e.checkpoint.seq for e in task_history(store, run.id)]
    assert len(expected) > 4
    open_in(window, qtbot, demo_store)
    select_run(window, qtbot, run.id)
    dialog = window.open_task_history()
    # the rows there after each turn (each turn is a call the event loop makes: a check from
    # the test's own polling raced with the turns, which a busy machine runs back to back)
    turns: list[int] = []
    fill = dialog._fill

    def recording(events: list, start: int) -> None:
        fill(events, start)
        turns.append(dialog.tree.topLevelItemCount())

    dialog._fill = recording
    qtbot.waitUntil(lambda: dialog.filled, timeout=TIMEOUT)
    assert turns == [min(n, len(expected)) for n in range(2, len(expected) + 2, 2)]   # two a turn
    tree = dialog.tree
    assert [tree.topLevelItem(i).text(0).split()[0] for i in range(tree.topLevelItemCount())] == \
        [f"#{seq}" for seq in expected]
    assert all(tree.topLevelItem(i).isExpanded() for i in range(tree.topLevelItemCount()))


def test_value_history_shows_values_as_json_like_the_rest_of_the_window(window, qtbot, demo_store: Path) -> None:
    """Its lines and tooltips read values as compact JSON (the State tab's raw view), never as
    Python's repr ('role': …, True, None)."""
    import json

    run = _paused(demo_store)
    with open_store(demo_store) as store:
        first = store.load(f"{run.id}:1").state["messages"][0]
    open_in(window, qtbot, demo_store)
    select_run(window, qtbot, run.id)
    dialog = window.open_value_history(("messages",))
    qtbot.waitUntil(lambda: dialog.filled, timeout=TIMEOUT)
    tree = dialog.tree
    lines = [tree.topLevelItem(i).child(j) for i in range(tree.topLevelItemCount())
             for j in range(tree.topLevelItem(i).childCount())]
    assert lines[0].text(0) == "+ messages = []"
    added = next(item for item in lines if item.text(0).startswith("+ messages[0] = "))
    assert added.text(0).startswith('+ messages[0] = user: "')      # a message says what it is
    assert not any("'role'" in item.text(0) for item in lines)
    tip = added.toolTip(0)
    assert tip.startswith(added.text(0)) and json.loads(tip.split("now:\n", 1)[1]) == first
