"""The Tasks tab: a board with one column per status, the score, the empty state, scrubbing."""

from __future__ import annotations

import dataclasses
from collections import Counter

from inspector.taskstate import TASK_STATUSES, score, validate
from inspector.ui.widgets.tasks_panel import EMPTY_TEXT, NO_CHECKPOINT_TEXT, TasksPanel


def _panel(qtbot) -> TasksPanel:
    panel = TasksPanel()
    qtbot.addWidget(panel)
    panel.resize(900, 700)
    panel.show()
    return panel


def _cards_per_column(panel: TasksPanel) -> dict[str, int]:
    return {status: len(column.cards) for status, column in panel.columns.items()}


def test_board_has_the_right_cards_per_column(qtbot, snap_at, beekeeping) -> None:
    snap = snap_at(15)   # the draft's review asked for changes: tasks in several columns
    panel = _panel(qtbot)
    panel.show_snapshot(snap, beekeeping)
    expected = Counter(t["status"] for t in validate(snap.tasks)["tasks"])
    assert _cards_per_column(panel) == {s: expected.get(s, 0) for s in TASK_STATUSES}
    assert len([s for s in TASK_STATUSES if expected.get(s)]) >= 2
    titles = {card.title.text() for card in panel.columns["done"].cards}
    assert "Research sources" in titles


def test_score_bar_shows_goal_and_counts(qtbot, snap_at, beekeeping) -> None:
    snap = snap_at(15)
    panel = _panel(qtbot)
    panel.show_snapshot(snap, beekeeping)
    counts = score(validate(snap.tasks))
    bar = panel.score_bar
    assert bar.goal.text() == snap.tasks["goal"]
    assert bar.checks_bar.text() == f"{counts.checks_passed} / {counts.checks_total} checks passed"
    assert bar.tasks_bar.text() == f"{counts.tasks_done} / {counts.tasks_total} tasks done"
    assert counts.checks_passed < counts.checks_total   # the failed review check is counted
    assert bar.goal.isVisible()
    # a task state without a goal (LangGraph node tasks): the bars lead, no "(no goal)" title
    panel.show_snapshot(dataclasses.replace(snap, tasks=dict(snap.tasks, goal="")), beekeeping)
    assert not bar.goal.isVisible() and bar.tasks_bar.text() == f"{counts.tasks_done} / {counts.tasks_total} tasks done"
    panel.show_snapshot(snap, beekeeping)
    assert bar.goal.isVisible() and bar.goal.text() == snap.tasks["goal"]


def test_card_shows_review_and_checks(qtbot, snap_at, beekeeping) -> None:
    panel = _panel(qtbot)
    panel.show_snapshot(snap_at(15), beekeeping)
    draft = next(c for col in panel.columns.values() for c in col.cards if c.task["id"] == "draft")
    assert "changes requested" in draft.review.text() and "editor" in draft.review.text()
    assert "✗" in draft.checks.text() and "✓" in draft.checks.text()
    assert "Remove the TODO marker" in draft.toolTip()
    assert draft.progress.value() == round(100 * draft.task["progress"])


def test_scrubbing_reuses_cards(qtbot, panels_store, beekeeping) -> None:
    panel = _panel(qtbot)
    infos = panels_store.list_checkpoints(beekeeping.id)
    seen_cards: set[int] = set()
    for info in infos:
        snap = panels_store.load(info.id)
        panel.show_snapshot(snap, beekeeping)
        expected = Counter(t["status"] for t in validate(snap.tasks)["tasks"])
        assert _cards_per_column(panel) == {s: expected.get(s, 0) for s in TASK_STATUSES}, info.seq
        seen_cards |= {id(c) for col in panel.columns.values() for c in col.cards}
    total_tasks = len(validate(snap.tasks)["tasks"])
    assert len(seen_cards) <= total_tasks * len(TASK_STATUSES)
    assert all(c.task["status"] == "done" for c in panel.columns["done"].cards)


def test_empty_and_malformed_task_states(qtbot, snap_at, beekeeping) -> None:
    snap = snap_at(3)
    panel = _panel(qtbot)
    panel.show_snapshot(dataclasses.replace(snap, tasks=None), beekeeping)
    assert not panel.showing_board and panel.empty.text() == EMPTY_TEXT
    panel.show_snapshot(snap, beekeeping)
    assert panel.showing_board
    panel.show_snapshot(dataclasses.replace(snap, tasks={"tasks": [{"id": "a", "status": "sleeping"}]}), None)
    assert not panel.showing_board and "malformed" in panel.empty.text() and "sleeping" in panel.empty.text()
    panel.show_snapshot(None, None)
    assert panel.empty.text() == NO_CHECKPOINT_TEXT     # nothing selected is not "no task state"


def test_a_damaged_checkpoint_says_so_above_the_board(qtbot, snap_at, beekeeping) -> None:
    panel = _panel(qtbot)
    snap = snap_at(15)
    damaged = dataclasses.replace(snap, problems=("pending write 'messages' of task t: cannot be decoded",))
    panel.show_snapshot(damaged, beekeeping)
    assert panel.live_note.isVisible() and "damaged: 1 part" in panel.live_note.text()
    assert "what these tasks wrote cannot be read" in panel.live_note.text()
    assert "damaged: pending write 'messages' of task t: cannot be decoded" in panel.live_note.toolTip()
    panel.show_snapshot(snap, beekeeping)
    assert not panel.live_note.isVisible()
