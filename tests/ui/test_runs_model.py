"""The runs list on the real demo store: every run, lineage tree, effective status, filters, sorting."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QModelIndex, Qt

from inspector.store import open_store
from inspector.ui.models.run_tree import COL_CHECKPOINTS, COL_NAME
from inspector.ui.models.runs_model import ForkSeqRole, RunRole, StatusRole
from tests.ui.conftest import open_in


def _shown(proxy, parent: QModelIndex = QModelIndex()) -> list:
    out = []
    for row in range(proxy.rowCount(parent)):
        index = proxy.index(row, 0, parent)
        out.append(index.data(RunRole))
        out += _shown(proxy, index)
    return out


def test_every_run_is_listed_with_forks_under_their_parent(window, qtbot, demo_store: Path, qtmodeltester) -> None:
    open_in(window, qtbot, demo_store)
    model = window.runs_panel.model
    with open_store(demo_store) as store:
        runs = store.list_runs()
    assert set(model.tree.by_id) == {r.id for r in runs}
    fork = next(r for r in runs if r.parent_run)
    node = model.tree.by_id[fork.id]
    assert node.parent is model.tree.by_id[fork.parent_run]
    with open_store(demo_store) as store:
        seq = store.get_checkpoint(fork.parent_checkpoint).seq
    assert seq == 8
    qtbot.waitUntil(lambda: model.data(model.run_index(fork.id), ForkSeqRole) == seq)  # resolved when painted
    assert window.runs_panel.view.isExpanded(window.runs_panel.proxy.mapFromSource(model.run_index(fork.parent_run)))
    qtmodeltester.check(model)
    qtmodeltester.check(window.runs_panel.proxy)


def test_a_running_run_whose_process_is_gone_is_shown_crashed(window, qtbot, demo_store: Path) -> None:
    open_in(window, qtbot, demo_store)
    model = window.runs_panel.model
    with open_store(demo_store) as store:
        killed = next(r for r in store.list_runs() if r.status == "running")  # SIGKILLed by the demo
    assert model.data(model.run_index(killed.id), StatusRole) == "crashed"
    window.runs_panel.set_status_filter(["crashed"])
    assert [r.id for r in _shown(window.runs_panel.proxy)] == [killed.id]


def test_filters_narrow_the_run_list(window, qtbot, demo_store: Path, qtmodeltester) -> None:
    open_in(window, qtbot, demo_store)
    panel = window.runs_panel
    with open_store(demo_store) as store:
        runs = store.list_runs()
    assert len(_shown(panel.proxy)) == len(runs)

    panel.set_text_filter("SOIL")
    assert [r.name for r in _shown(panel.proxy)] == [r.name for r in runs if "soil" in r.name.lower()]

    panel.set_text_filter("fork of")  # only the fork matches: its parent stays visible around it
    shown = _shown(panel.proxy)
    fork = next(r for r in runs if r.parent_run)
    assert {r.id for r in shown} == {fork.id, fork.parent_run}

    panel.set_text_filter("")
    panel.set_status_filter(["failed", "completed"])
    assert {r.id for r in _shown(panel.proxy)} == {r.id for r in runs if r.status in ("failed", "completed")}
    qtmodeltester.check(panel.proxy)

    panel.set_status_filter([])
    panel.set_show_forks(False)
    assert {r.id for r in _shown(panel.proxy)} == {r.id for r in runs if not r.parent_run}
    assert "shown" in panel.count_label.text()


def test_typing_in_the_filter_box_filters(window, qtbot, demo_store: Path) -> None:
    open_in(window, qtbot, demo_store)
    panel = window.runs_panel
    qtbot.keyClicks(panel.filter_edit, "tidal")
    qtbot.waitUntil(lambda: panel.proxy.rowCount() == 1)
    assert "tidal" in panel.proxy.index(0, 0).data(RunRole).name


def test_sorting_by_any_column(window, qtbot, demo_store: Path) -> None:
    open_in(window, qtbot, demo_store)
    view, proxy = window.runs_panel.view, window.runs_panel.proxy
    view.sortByColumn(COL_NAME, Qt.SortOrder.AscendingOrder)
    names = [proxy.index(r, 0).data(RunRole).name.casefold() for r in range(proxy.rowCount())]
    assert names == sorted(names)
    view.sortByColumn(COL_CHECKPOINTS, Qt.SortOrder.DescendingOrder)
    counts = [proxy.index(r, 0).data(RunRole).checkpoint_count for r in range(proxy.rowCount())]
    assert counts == sorted(counts, reverse=True)


def test_selection_survives_sorting(window, qtbot, demo_store: Path) -> None:
    open_in(window, qtbot, demo_store)
    panel = window.runs_panel
    target = next(iter(panel.model.tree.by_id))
    assert panel.select_run(target)
    panel.view.sortByColumn(COL_NAME, Qt.SortOrder.AscendingOrder)
    assert panel.view.currentIndex().data(RunRole).id == target
    assert panel.current_run().id == target


def test_a_filter_that_hides_the_selected_run_keeps_it_shown_and_says_so(window, qtbot, demo_store: Path) -> None:
    """Every filter alike (status, text): the selected run stays shown on the right, no other
    row is picked in its place, the list says it is hidden; cleared, its row is selected again;
    meanwhile a click on another run shows that one."""
    from tests.ui.conftest import select_run

    open_in(window, qtbot, demo_store)
    panel = window.runs_panel
    with open_store(demo_store) as store:
        runs = store.list_runs()
    paused = next(r for r in runs if r.status == "interrupted")
    select_run(window, qtbot, paused.id)

    def hidden_and_kept() -> None:
        assert panel.current_run().id == paused.id == window.timeline_panel.model.run.id
        assert not panel.view.currentIndex().isValid() and not panel.view.selectionModel().selectedRows()
        assert panel.hidden_note.isVisible() and f"\u201c{paused.name}\u201d, is hidden by the filter" \
            in panel.hidden_note.text()

    def selected_again() -> None:
        assert panel.view.currentIndex().data(RunRole).id == paused.id == panel.current_run().id
        assert not panel.hidden_note.isVisible()

    panel.status_actions["completed"].trigger()         # (Qt would move the current row to a neighbour)
    assert {r.id for r in _shown(panel.proxy)} == {r.id for r in runs if r.status == "completed"}
    hidden_and_kept()
    panel.hidden_note.linkActivated.emit("clear")       # its "Clear filter" link
    assert not panel.proxy.statuses and len(_shown(panel.proxy)) == len(runs)
    selected_again()
    panel.set_text_filter("no such run")
    hidden_and_kept()
    assert panel.empty_hint.isVisible()
    panel.set_text_filter("")
    selected_again()
    # hidden, then another run clicked: that one is shown
    panel.status_actions["completed"].trigger()
    hidden_and_kept()
    other = panel.proxy.index(0, 0)
    with qtbot.waitSignal(window.timeline_panel.model.page_loaded, timeout=10_000):
        qtbot.mouseClick(panel.view.viewport(), Qt.MouseButton.LeftButton,
                         pos=panel.view.visualRect(other).center())
    assert panel.current_run().id == other.data(RunRole).id == window.timeline_panel.model.run.id
    assert not panel.hidden_note.isVisible()
