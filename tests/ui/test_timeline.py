"""The timeline on real stores: exactly the store's checkpoints, paging, keys, scrubber, multi-select."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QItemSelectionModel, Qt

from inspector.bench._gui_store import LONG_RUN_ID, GuiStoreSpec, generate
from inspector.store import open_store
from inspector.ui.models.checkpoint_pages import PAGE_SIZE
from inspector.ui.models.timeline_model import COL_FORKS, COL_GAP, COL_TIME, CheckpointRole
from tests.ui.conftest import open_in, select_checkpoint, select_run

FIELDS = ("id", "seq", "kind", "name", "created", "size", "size_delta", "checks_passed", "checks_total", "change")


@pytest.fixture(scope="module")
def long_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A native store with a 2,500-checkpoint run (written by the benchmark generator)."""
    return generate(tmp_path_factory.mktemp("long") / "long.db", GuiStoreSpec(runs=6, checkpoints=3000, long_run=2500))


def _row(model, row: int) -> tuple:
    info = model.index(row, 0).data(CheckpointRole)
    return tuple(getattr(info, f) for f in FIELDS)


def test_selecting_a_run_shows_exactly_its_checkpoints(window, qtbot, demo_store: Path, qtmodeltester) -> None:
    open_in(window, qtbot, demo_store)
    with open_store(demo_store) as store:
        run = max(store.list_runs(), key=lambda r: r.checkpoint_count)
        expected = [tuple(getattr(c, f) for f in FIELDS) for c in store.list_checkpoints(run.id)]
    select_run(window, qtbot, run.id)
    model = window.timeline_panel.model
    assert model.rowCount() == len(expected) == run.checkpoint_count
    assert [_row(model, r) for r in range(model.rowCount())] == expected
    assert run.name in window.timeline_panel.run_label.text()
    qtmodeltester.check(model)


def test_fork_points_are_marked(window, qtbot, demo_store: Path) -> None:
    open_in(window, qtbot, demo_store)
    with open_store(demo_store) as store:
        fork = next(r for r in store.list_runs() if r.parent_run)
        source = store.get_checkpoint(fork.parent_checkpoint)
    select_run(window, qtbot, fork.parent_run)
    model = window.timeline_panel.model
    marker = model.index(source.seq, COL_FORKS)
    assert marker.data() == "1"
    assert fork.name in marker.data(Qt.ItemDataRole.ToolTipRole)
    assert model.index(source.seq - 1, COL_FORKS).data() == ""


def test_a_long_run_opens_at_once_and_loads_pages_on_demand(window, qtbot, long_store: Path) -> None:
    open_in(window, qtbot, long_store)
    select_run(window, qtbot, LONG_RUN_ID)
    panel, model = window.timeline_panel, window.timeline_panel.model
    assert model.rowCount() == 2500
    qtbot.waitUntil(lambda: panel.current_checkpoint() is not None and panel.current_checkpoint().seq == 2499)
    # the run opens on its head: the head's page is read, and the first page when the view
    # showed the top before it moved (it may not have, on a busy machine), nothing between
    loaded = model.cache.loaded_pages()
    assert 2499 // PAGE_SIZE in loaded and set(loaded) <= {0, 2499 // PAGE_SIZE}
    panel.view.setFocus()
    panel.select_row(0)
    with qtbot.waitSignal(panel.checkpoint_selected, timeout=10_000,
                          check_params_cb=lambda info: info.seq == 2499):
        qtbot.keyClick(panel.view, Qt.Key.Key_End)
    assert panel.view.currentIndex().row() == 2499
    assert len(model.cache.loaded_pages()) <= 3 < 2500 // PAGE_SIZE
    with open_store(long_store) as store:
        last = store.get_checkpoint(f"{LONG_RUN_ID}:2499")
    assert panel.current_checkpoint() == model.checkpoint(2499)
    assert panel.current_checkpoint().id == last.id
    assert panel.scrubber.value() == 2499
    with qtbot.waitSignal(panel.checkpoint_selected, check_params_cb=lambda info: info.seq == 0):
        qtbot.keyClick(panel.view, Qt.Key.Key_Home)


def test_keys_and_scrubber_move_the_selection(window, qtbot, demo_store: Path) -> None:
    open_in(window, qtbot, demo_store)
    run_id = max(window.runs_panel.model.tree.by_id.values(), key=lambda n: n.run.checkpoint_count).run.id
    select_run(window, qtbot, run_id)
    panel = window.timeline_panel
    panel.view.setFocus()
    with qtbot.waitSignal(panel.checkpoint_selected, check_params_cb=lambda info: info.seq == 3):
        panel.select_row(3)
    with qtbot.waitSignal(panel.checkpoint_selected, check_params_cb=lambda info: info.seq == 4):
        qtbot.keyClick(panel.view, Qt.Key.Key_Down)
    with qtbot.waitSignal(panel.checkpoint_selected, check_params_cb=lambda info: info.seq == 10):
        panel.scrubber.setValue(10)
    assert panel.view.currentIndex().row() == 10
    assert panel.position_label.text().startswith("#10")


def test_ctrl_click_selects_two_checkpoints(window, qtbot, demo_store: Path) -> None:
    open_in(window, qtbot, demo_store)
    run_id = max(window.runs_panel.model.tree.by_id.values(), key=lambda n: n.run.checkpoint_count).run.id
    select_run(window, qtbot, run_id)
    panel = window.timeline_panel
    panel.select_row(2)
    rect = panel.view.visualRect(panel.model.index(6, 2))
    with qtbot.waitSignal(window.details.pair_loaded, timeout=10_000) as pair, \
            qtbot.waitSignal(panel.checkpoints_selected, check_params_cb=lambda infos: len(infos) == 2) as blocker:
        qtbot.mouseClick(panel.view.viewport(), Qt.MouseButton.LeftButton,
                         Qt.KeyboardModifier.ControlModifier, rect.center())
    assert [c.seq for c in blocker.args[0]] == [2, 6]
    assert [c.seq for c in window.selected_checkpoints()] == [2, 6]
    assert (pair.args[0].info.seq, pair.args[1].info.seq) == (2, 6)
    panel.view.selectionModel().select(panel.model.index(4, 0), QItemSelectionModel.SelectionFlag.Select
                                       | QItemSelectionModel.SelectionFlag.Rows)
    assert [c.seq for c in panel.selected_checkpoints()] == [2, 4, 6]


def test_selecting_a_run_opens_it_on_its_head(window, qtbot, demo_store: Path) -> None:
    open_in(window, qtbot, demo_store)
    run = max((n.run for n in window.runs_panel.model.tree.by_id.values()), key=lambda r: r.checkpoint_count)
    with qtbot.waitSignal(window.details.snapshot_loaded, timeout=10_000) as blocker:
        assert window.runs_panel.select_run(run.id)
    assert blocker.args[0].info.seq == run.head_seq         # the state the run is in now, not an empty pane
    panel = window.timeline_panel
    assert panel.current_checkpoint().seq == run.head_seq and panel.scrubber.value() == panel.model.rowCount() - 1


def test_a_run_counting_a_checkpoint_its_listing_lacks_reads_its_page_once_and_says_so(
        window, qtbot, demo_store: Path) -> None:
    """A damaged store (found by driving the window over mutated stores): a checkpoint whose
    seq is negative is counted in the run but never listed. The placeholder of the row it
    leaves asked for its page at every paint, and the page came back without it, forever (a
    worker busy and the timeline repainting, thousands of reads a minute). Its row says it is
    not readable, with its seq; the checkpoints after it keep their rows (they moved up
    into it, and the last row was the unreadable one); the run opens on its head."""
    import sqlite3
    from inspector.ui.models import timeline_model

    with open_store(demo_store) as store:
        run = max(store.list_runs(), key=lambda r: r.checkpoint_count)
        damaged = store.list_checkpoints(run.id)[4]
    con = sqlite3.connect(demo_store)
    con.execute("UPDATE ci_checkpoints SET seq = -5 WHERE id = ?", (damaged.id,))
    con.commit()
    con.close()
    reads: list[int] = []
    fetch = timeline_model._fetch

    def counted(*args):
        reads.append(args[-1])
        return fetch(*args)

    timeline_model._fetch = counted
    try:
        open_in(window, qtbot, demo_store)
        select_run(window, qtbot, run.id)
        model = window.timeline_panel.model
        last = model.rowCount() - 1
        assert model.rowCount() == run.checkpoint_count
        qtbot.wait(1_500)        # (the old code read the page again at every paint meanwhile)
        assert reads.count(0) == 1, f"page 0 read {reads.count(0)} times"
        assert model.index(4, 2).data() == "(not readable)"
        assert "damaged" in model.index(4, 2).data(Qt.ItemDataRole.ToolTipRole)
        assert model.index(4, 0).data() == "4"
        shown = [model.index(r, 0).data(CheckpointRole) for r in range(last + 1) if r != 4]
        with open_store(demo_store) as store:
            listed = store.list_checkpoints(run.id)
        assert [c.id for c in shown] == [c.id for c in listed]
        assert [c.seq for c in shown] == [r for r in range(last + 1) if r != 4]
        panel = window.timeline_panel
        qtbot.waitUntil(lambda: window.details.snapshot is not None, timeout=10_000)
        assert panel.current_checkpoint().id == listed[-1].id == window.details.snapshot.info.id
        panel.select_row(4)      # chosen anyway: nothing to show, and nothing read again
        qtbot.waitUntil(lambda: window.details.snapshot is None, timeout=10_000)
        assert reads.count(0) == 1
    finally:
        timeline_model._fetch = fetch


def test_a_checkpoint_whose_time_is_unknown_shows_no_time_and_no_gap(window, qtbot, tmp_path: Path) -> None:
    """A framework store's infinite time reads as 0, unknown: its Time cell and the Gap cells
    beside it stay empty (they showed 01-01 00:00 and a gap of fifty-six years)."""
    import shutil
    import sqlite3

    path = tmp_path / "agents.db"
    shutil.copyfile(Path(__file__).parents[1] / "frameworks" / "stores" / "agents_sqlite.db", path)
    con = sqlite3.connect(path)
    con.execute("UPDATE agent_messages SET created_at = ? WHERE rowid = (SELECT min(rowid) FROM agent_messages)",
                (float("inf"),))
    con.commit()
    con.close()
    open_in(window, qtbot, path)
    select_run(window, qtbot, "trip-lisbon")
    model = window.timeline_panel.model

    def cell(row: int, col: int) -> str:
        return model.index(row, col).data()
    assert cell(0, COL_TIME) == "" and cell(1, COL_GAP) == ""
    assert cell(1, COL_TIME) and cell(2, COL_GAP).startswith("+")
    from PySide6.QtWidgets import QLabel
    select_checkpoint(window, qtbot, 1)
    window.details.set_tab("metadata")
    panel = window.details.panels["metadata"]
    qtbot.waitUntil(lambda: "previous" in panel._found, timeout=10_000)     # (the time before, read behind)
    qtbot.wait(50)
    assert not any("after the previous checkpoint" in label.text() for label in panel.findChildren(QLabel))
