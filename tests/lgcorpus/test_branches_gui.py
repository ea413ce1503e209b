"""The timeline shows a thread's branches one at a time, exactly as LangGraph links them.

On the corpus ``forks`` and ``react`` threads (written by the real langgraph, with
``update_state`` forks, a ``__copy__`` and replays) every branch the selector offers shows
the main-graph checkpoints of LangGraph's own ancestry of its head (``parent_config`` walked
over ``get_state_history``), the branch heads are exactly LangGraph's leaves, the first
branch ends at ``get_state()``'s checkpoint, a checkpoint of another branch selected by seq
switches the branch, and live: a new ``update_state`` appears as a new branch and a new
step on the shown branch appears as its new last row.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from inspector.store.langgraph.ids import parse_id
from tests.ui.conftest import fail_on_qt_warnings, isolated_settings, open_in, window  # noqa: F401

from . import SCENARIOS, open_graph, sqlite_saver

pytestmark = pytest.mark.usefixtures("qapp")


def _history(saver: Any, scenario: str, thread: str) -> tuple[Any, dict[str, Any]]:
    graph = open_graph(next(s for s in SCENARIOS if s.name == scenario), saver)
    config = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
    return graph, {s.config["configurable"]["checkpoint_id"]: s for s in graph.get_state_history(config)}


def _ancestry(history: dict[str, Any], head: str) -> list[str]:
    chain, node = [], head
    while node is not None:
        chain.append(node)
        parent = history[node].parent_config
        node = parent["configurable"]["checkpoint_id"] if parent else None
    return sorted(chain)


def _leaves(history: dict[str, Any]) -> set[str]:
    parents = {s.parent_config["configurable"]["checkpoint_id"] for s in history.values() if s.parent_config}
    return set(history) - parents


def _shown(panel, qtbot) -> list[str]:
    """Checkpoint ids (main graph only) of every row the timeline shows, once all are loaded."""
    model = panel.model
    qtbot.waitUntil(lambda: not model.topology_loading and model.rowCount() > 0, timeout=10_000)
    for row in range(model.rowCount()):
        model.request_row(row)
    qtbot.waitUntil(lambda: all(model.is_loaded(r) for r in range(model.rowCount())), timeout=10_000)
    rows = [model.checkpoint(r) for r in range(model.rowCount())]
    return [parse_id(str(c.id)).checkpoint_id for c in rows if not c.lane]


def _select_thread(window, qtbot, thread: str) -> None:
    assert window.runs_panel.select_run(thread)
    panel = window.timeline_panel
    qtbot.waitUntil(lambda: panel.model.run is not None and panel.model.run.id == thread
                    and not panel.model.topology_loading, timeout=10_000)


@pytest.mark.parametrize(("scenario", "thread"), [("forks", "forks-1"), ("react", "react-1")])
def test_each_branch_shows_langgraphs_ancestry_of_its_head(window, qtbot, qtmodeltester,
                                                           corpus_sqlite: Path, scenario: str, thread: str) -> None:
    with sqlite_saver(corpus_sqlite) as saver:
        graph, history = _history(saver, scenario, thread)
        head = graph.get_state({"configurable": {"thread_id": thread}}).config["configurable"]["checkpoint_id"]
    open_in(window, qtbot, corpus_sqlite)
    _select_thread(window, qtbot, thread)
    panel = window.timeline_panel
    branches = panel.model.branches
    assert len(branches) == len(_leaves(history)) > 1
    assert {parse_id(b.head_id).checkpoint_id for b in branches} == _leaves(history)
    assert branches[0].main and parse_id(branches[0].head_id).checkpoint_id == head
    assert panel.branch_box.isVisible() and panel.branch_box.count() == len(branches)
    qtmodeltester.check(panel.model)
    for index, branch in enumerate(branches):
        if index:
            panel.branch_box.setCurrentIndex(index)
            panel.branch_box.activated.emit(index)
        assert panel.model.branch_index == index
        assert _shown(panel, qtbot) == _ancestry(history, parse_id(branch.head_id).checkpoint_id)
        assert panel.position_label.text().endswith(f"of {panel.model.rowCount()}") or \
            not panel.view.currentIndex().isValid()
    # a divergence point carries the marker; its menu lists one branch per child
    fork_rows = [r for r in range(panel.model.rowCount())
                 if panel.model.branch_marker(panel.model.checkpoint(r).seq)]
    assert fork_rows
    seq = panel.model.checkpoint(fork_rows[0]).seq
    menu = panel.branch_menu(seq)
    children = [r for r in history.values() if r.parent_config and
                r.parent_config["configurable"]["checkpoint_id"] == parse_id(panel.model.checkpoint(fork_rows[0]).id).checkpoint_id]
    assert menu is not None and len(menu.actions()) == panel.model.divergence(seq) == len(children)
    target = next(a for a in menu.actions() if not a.isChecked())
    target.trigger()
    assert panel.model.branch.label == target.text() and panel.branch_box.currentText() == target.text()
    assert panel.view.currentIndex().row() == panel.model.row_of_seq(seq) + 1   # the other child


def test_selecting_a_checkpoint_of_another_branch_switches_to_it(window, qtbot, corpus_sqlite: Path) -> None:
    open_in(window, qtbot, corpus_sqlite)
    _select_thread(window, qtbot, "forks-1")
    panel = window.timeline_panel
    main = panel.model.branches[0]
    other = next(s for b in panel.model.branches[1:] for s in b.seqs if not main.contains(s))
    with qtbot.waitSignal(window.details.snapshot_loaded, timeout=10_000) as loaded:
        panel.select_seq(other)
    assert loaded.args[0].info.seq == other
    assert panel.model.branch_index != 0 and panel.model.branch.contains(other)
    assert panel.branch_box.currentIndex() == panel.model.branch_index
    assert panel.current_checkpoint().seq == other
    with qtbot.waitSignal(window.details.snapshot_loaded, timeout=10_000):
        panel.select_seq(0)
    with qtbot.waitSignal(window.details.snapshot_loaded, timeout=10_000) as loaded:
        panel.select_seq(-1)         # the shown branch's head
    assert loaded.args[0].info.id == panel.model.branch.head_id


def test_live_a_new_fork_is_a_new_branch_and_new_steps_extend_the_shown_one(
        window, qtbot, corpus_copy_sqlite: Path) -> None:
    open_in(window, qtbot, corpus_copy_sqlite)
    assert window.menu_actions.live.isChecked()
    _select_thread(window, qtbot, "forks-1")
    panel = window.timeline_panel
    before = len(panel.model.branches)
    rows = _shown(panel, qtbot)
    panel.select_row(panel.model.rowCount() - 1)
    shown_head = parse_id(panel.model.branch.head_id).checkpoint_id
    with sqlite_saver(corpus_copy_sqlite) as saver:
        graph, history = _history(saver, "forks", "forks-1")
        first = min(history)                       # the input checkpoint: a new branch from it
        graph.update_state(history[first].config, {"topic": "live"}, as_node="__input__")
        qtbot.waitUntil(lambda: len(panel.model.branches) == before + 1, timeout=20_000)
        assert panel.branch_box.count() == before + 1
        assert _shown(panel, qtbot) == rows        # the shown branch stays, though no longer the head's
        assert panel.model.branch_index != 0
        assert panel.branch_box.currentIndex() == panel.model.branch_index
        graph.update_state(history[shown_head].config, {"topic": "extended"}, as_node="act")
        graph, history = _history(saver, "forks", "forks-1")
        new_head = graph.get_state({"configurable": {"thread_id": "forks-1"}}).config["configurable"]["checkpoint_id"]
    qtbot.waitUntil(lambda: panel.model.rowCount() == len(rows) + 1, timeout=20_000)
    assert _shown(panel, qtbot) == _ancestry(history, new_head)
    assert panel.model.branch_index == 0 and parse_id(panel.model.branch.head_id).checkpoint_id == new_head
    qtbot.waitUntil(lambda: panel.current_checkpoint() is not None
                    and parse_id(str(panel.current_checkpoint().id)).checkpoint_id == new_head, timeout=10_000)


def test_a_fork_inside_a_subgraph_is_a_branch_and_clicking_its_marker_switches(window, qtbot,
                                                                                corpus_sqlite: Path) -> None:
    """subgraph-3: ``update_state`` on an older checkpoint of the review lane. The head branch
    shows the lane's newest leaf and its ancestry (what ``get_state(subgraphs=True)`` shows);
    the other leaf is a branch of its own, named for the subgraph; a real click on the lane's
    ``2 branches ▾`` marker opens the menu, and its other entry switches to that branch."""
    from PySide6.QtCore import QPoint, Qt

    from inspector.ui.models.timeline_model import COL_CHANGE
    with sqlite_saver(corpus_sqlite) as saver:
        graph = open_graph(next(s for s in SCENARIOS if s.name == "subgraph"), saver)
        sub = graph.get_state({"configurable": {"thread_id": "subgraph-3"}}, subgraphs=True).tasks[0].state
        lane = sub.config["configurable"]["checkpoint_ns"]
        lane_history = {s.config["configurable"]["checkpoint_id"]: s for s in graph.get_state_history(
            {"configurable": {"thread_id": "subgraph-3", "checkpoint_ns": lane}})}
    newest = sub.config["configurable"]["checkpoint_id"]
    (other,) = _leaves(lane_history) - {newest}
    open_in(window, qtbot, corpus_sqlite)
    _select_thread(window, qtbot, "subgraph-3")
    panel = window.timeline_panel
    branches = panel.model.branches
    assert len(branches) == 2 and branches[0].main and branches[1].lane == lane
    assert panel.branch_box.isVisible() and "in review at" in panel.branch_box.itemText(1)

    def lane_shown() -> list[str]:
        _shown(panel, qtbot)
        return sorted(parse_id(str(c.id)).checkpoint_id for c in
                      (panel.model.checkpoint(r) for r in range(panel.model.rowCount())) if c.lane == lane)

    assert lane_shown() == _ancestry(lane_history, newest)
    fork_rows = [r for r in range(panel.model.rowCount()) if panel.model.branch_marker(panel.model.checkpoint(r).seq)]
    assert len(fork_rows) == 1 and panel.model.checkpoint(fork_rows[0]).lane == lane
    index = panel.model.index(fork_rows[0], COL_CHANGE)
    panel.view.scrollTo(index)
    rect = panel.view.visualRect(index)
    qtbot.mouseClick(panel.view.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(rect.left() + 8, rect.center().y()))
    menu = panel._branch_menu
    qtbot.waitUntil(lambda: menu is not None and menu.isVisible(), timeout=5_000)
    assert sorted(a.text() for a in menu.actions()) == sorted(b.label for b in branches)
    target = next(a for a in menu.actions() if not a.isChecked())
    target.trigger()
    menu.close()
    assert panel.model.branch_index == 1 and panel.branch_box.currentIndex() == 1
    assert lane_shown() == _ancestry(lane_history, other)
    qtbot.mouseClick(panel.view.viewport(), Qt.MouseButton.LeftButton,
                     pos=QPoint(rect.right() - 4, rect.center().y()))      # past the marker: no menu
    assert panel._branch_menu is menu and not menu.isVisible()


def test_more_branches_than_offered_say_newest_n_of_all(window, qtbot, tmp_path: Path) -> None:
    """A thread with more leaves than the selector offers says so instead of dropping them."""
    from inspector.store.branches import MAX_BRANCHES

    from . import BY_NAME
    from ._util import cfg
    path = tmp_path / "many.db"
    with sqlite_saver(path) as saver:
        graph = open_graph(BY_NAME["forks"], saver)
        graph.invoke({"topic": "many", "mode": "act", "log": []}, cfg("many"))
        first = list(graph.get_state_history(cfg("many")))[-1].config
        for n in range(MAX_BRANCHES + 5):
            graph.update_state(first, {"topic": f"fork {n}"}, as_node="__input__")
    open_in(window, qtbot, path)
    _select_thread(window, qtbot, "many")
    panel = window.timeline_panel
    total = MAX_BRANCHES + 6                                  # the run itself and every fork
    assert len(panel.model.branches) == MAX_BRANCHES and panel.branch_box.count() == MAX_BRANCHES
    assert panel.count_label.text() == f"newest {MAX_BRANCHES} of {total} branches"
    assert f"has {total} branches" in panel.count_label.toolTip()
