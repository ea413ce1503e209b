"""What an open window does when another process writes the store it shows: a pin or unpin
reaches the timeline's ⚑, the Pin action and the Metadata tab (with the pin's note); a prune
keeps the checkpoint selected by its id (it is numbered anew), or says in the banner that it
was deleted and which one is shown instead; a store moved away stays "no longer there" when
another run is clicked. And the store names a checkpoint deleted under a reader so the user
can place it, not as a bare internal id that reads like a #seq."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from inspector.errors import StoreError
from inspector.record import Checkpointer
from inspector.retention.api import apply_prune
from inspector.retention.pins import set_pin
from inspector.retention.rules import make_rules
from inspector.store import open_store
from inspector.ui.models.timeline_model import COL_NAME
from tests.ui.conftest import open_in, select_checkpoint, select_run

PIN = "\u2691"


def record(path: Path, name: str, steps: int) -> str:
    """A completed run of ``steps`` checkpoints written by the recording library; its id."""
    with Checkpointer(path, name=name) as cp:
        state: dict = {"step": 0, "log": []}
        for i in range(steps):
            state["step"] = i
            state["log"].append(f"step {i}")
            cp.save(state, kind="tool", name=f"step {i}")
        return cp.run_id


def row_name(window, seq: int) -> str:
    model = window.timeline_panel.model
    return model.data(model.index(model.row_of_seq(seq), COL_NAME), Qt.ItemDataRole.DisplayRole) or ""


def row_tip(window, seq: int) -> str:
    model = window.timeline_panel.model
    return model.data(model.index(model.row_of_seq(seq), COL_NAME), Qt.ItemDataRole.ToolTipRole) or ""


def test_a_pin_made_elsewhere_reaches_the_timeline_the_pin_action_and_the_metadata(window, qtbot, tmp_path) -> None:
    path = tmp_path / "s.db"
    run = record(path, "pinned elsewhere", 20)
    open_in(window, qtbot, path)
    select_run(window, qtbot, run)
    select_checkpoint(window, qtbot, 10)
    window.go_to_tab("metadata")
    pin = window.storage.pin
    assert not pin.isChecked() and not row_name(window, 10).startswith(PIN)
    set_pin(path, f"{run}:10", True, note="keep me")     # (as `checkpoint-inspector pin` does)
    set_pin(path, f"{run}:5", True)
    qtbot.waitUntil(lambda: row_name(window, 10).startswith(PIN) and row_name(window, 5).startswith(PIN),
                    timeout=10_000)
    qtbot.waitUntil(pin.isChecked, timeout=5_000)
    assert window.current_checkpoint().seq == 10 and window.current_checkpoint().pinned
    assert "note: keep me" in row_tip(window, 10) and "note:" not in row_tip(window, 5)
    metadata = window.details.panels["metadata"]
    qtbot.waitUntil(lambda: metadata.checkpoint.values().get("Pin note") == "keep me", timeout=5_000)
    assert metadata.checkpoint.values()["Pinned"].startswith("yes")
    set_pin(path, f"{run}:10", False)
    qtbot.waitUntil(lambda: not row_name(window, 10).startswith(PIN), timeout=10_000)
    qtbot.waitUntil(lambda: not pin.isChecked(), timeout=5_000)
    qtbot.waitUntil(lambda: "Pinned" not in metadata.checkpoint.values(), timeout=5_000)
    assert row_name(window, 5).startswith(PIN)


def test_refresh_reads_pins_again_when_live_updates_are_off(window, qtbot, tmp_path) -> None:
    path = tmp_path / "s.db"
    run = record(path, "pinned while not live", 12)
    open_in(window, qtbot, path)
    window.menu_actions.live.setChecked(False)
    select_run(window, qtbot, run)
    select_checkpoint(window, qtbot, 4)
    set_pin(path, f"{run}:4", True)
    window.refresh()
    qtbot.waitUntil(lambda: row_name(window, 4).startswith(PIN), timeout=10_000)
    qtbot.waitUntil(window.storage.pin.isChecked, timeout=5_000)


def test_a_prune_elsewhere_keeps_the_checkpoint_selected_by_its_id(window, qtbot, tmp_path) -> None:
    path = tmp_path / "s.db"
    run = record(path, "pruned elsewhere", 20)
    open_in(window, qtbot, path)
    select_run(window, qtbot, run)
    chosen = select_checkpoint(window, qtbot, 15).info
    apply_prune(path, make_rules(keep_last=8, runs=[run]))     # #12…#19 are kept, as #0…#7
    timeline = window.timeline_panel
    qtbot.waitUntil(lambda: timeline.model.rowCount() == 8, timeout=20_000)
    qtbot.waitUntil(lambda: window.details.snapshot is not None and window.details.snapshot.info.id == chosen.id,
                    timeout=10_000)
    assert window.current_checkpoint().id == chosen.id and window.current_checkpoint().seq == 3
    assert window.banner.message == ""


def test_a_prune_elsewhere_that_deletes_the_checkpoint_shown_says_so_and_shows_its_kept_ancestor(
        window, qtbot, tmp_path) -> None:
    path = tmp_path / "s.db"
    run = record(path, "pruned under me", 20)
    set_pin(path, f"{run}:3", True)        # kept by the prune: #3 becomes #0
    with open_store(path) as store:
        ancestor = store.list_checkpoints(run)[3]
    open_in(window, qtbot, path)
    select_run(window, qtbot, run)
    select_checkpoint(window, qtbot, 6)
    apply_prune(path, make_rules(keep_last=8, runs=[run]))
    qtbot.waitUntil(lambda: window.timeline_panel.model.rowCount() == 9, timeout=20_000)
    qtbot.waitUntil(lambda: "Checkpoint #6 of “pruned under me” is no longer in the store" in window.banner.message,
                    timeout=10_000)
    assert "its nearest kept ancestor, now #0, is shown instead" in window.banner.message
    qtbot.waitUntil(lambda: window.details.snapshot is not None and window.details.snapshot.info.id == ancestor.id,
                    timeout=10_000)
    assert window.current_checkpoint().seq == 0


def test_a_prune_elsewhere_that_deletes_every_ancestor_shows_the_head_and_says_so(window, qtbot, tmp_path) -> None:
    path = tmp_path / "s.db"
    run = record(path, "pruned to its head", 20)
    open_in(window, qtbot, path)
    select_run(window, qtbot, run)
    select_checkpoint(window, qtbot, 10)
    apply_prune(path, make_rules(keep_last=1, runs=[run]))
    qtbot.waitUntil(lambda: "Checkpoint #10 of “pruned to its head” is no longer in the store" in window.banner.message,
                    timeout=20_000)
    assert "the run's head is shown instead" in window.banner.message
    qtbot.waitUntil(lambda: window.details.snapshot is not None and window.details.snapshot.info.name == "step 19",
                    timeout=10_000)


def test_a_store_moved_away_stays_so_when_another_run_is_clicked(window, qtbot, tmp_path) -> None:
    path = tmp_path / "s.db"
    first = record(path, "first", 8)
    second = record(path, "second", 6)
    open_in(window, qtbot, path)
    select_run(window, qtbot, first)
    select_checkpoint(window, qtbot, 3)
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(f"{path}{suffix}"):
            os.rename(f"{path}{suffix}", f"{tmp_path / 'moved.db'}{suffix}")
    qtbot.waitUntil(lambda: "no longer there (deleted or moved)" in window.banner.message, timeout=10_000)
    assert window.runs_panel.select_run(second)
    timeline = window.timeline_panel
    qtbot.waitUntil(lambda: timeline.model.run is not None and timeline.model.run.id == second, timeout=5_000)
    qtbot.waitUntil(lambda: window.session.runner.active == 0, timeout=10_000)
    assert "no longer there (deleted or moved)" in window.banner.message, window.banner.message
    assert timeline.model.rowCount() == 0          # no rows of "…" that cannot load
    assert timeline.empty_hint.isVisible() and "no longer there" in timeline.empty_hint.text()


def test_a_checkpoint_deleted_under_a_reader_is_named_as_gone_not_by_a_bare_id(tmp_path) -> None:
    path = tmp_path / "s.db"
    run = record(path, "read, then pruned", 10)
    with open_store(path) as store:
        old = store.list_checkpoints(run)[2]
        apply_prune(path, make_rules(keep_last=2, runs=[run]))
        with pytest.raises(StoreError) as gone:
            store.load(old.id)
        assert str(gone.value) == f"Checkpoint id {old.id} is no longer in {path} (deleted or pruned by another process?)."
        with pytest.raises(StoreError, match="There is no checkpoint 99999 in"):
            store.load(99999)      # an id the store never had


def test_a_held_diff_base_pruned_elsewhere_gives_way_to_the_parent(window, qtbot, tmp_path) -> None:
    """The Diff tab holds #3 as its base; another process prunes the run to its last 8: the
    base is gone, so each checkpoint is compared with its parent again and the banner says why
    (the tab said "There is no checkpoint 7" — the base's row id — and kept "#3 (base)", which
    after the renumbering named another checkpoint)."""
    from inspector.ui.widgets.diff_panel import PARENT, DiffPanel

    path = tmp_path / "s.db"
    run = record(path, "base pruned", 20)
    open_in(window, qtbot, path)
    select_run(window, qtbot, run)
    select_checkpoint(window, qtbot, 3)
    window.go_to_tab("diff")
    diff = window.findChildren(DiffPanel)[0]
    qtbot.waitUntil(lambda: not diff.busy and diff.result is not None, timeout=20_000)
    diff.pin_current()
    select_checkpoint(window, qtbot, 15)
    qtbot.waitUntil(lambda: not diff.busy and diff.result is not None and diff.result.b.seq == 15, timeout=20_000)
    assert diff.result.a.seq == 3
    apply_prune(path, make_rules(keep_last=8, runs=[run]))
    qtbot.waitUntil(lambda: "is no longer in the store (pruned or deleted)" in window.banner.message
                    and "base held for comparison" in window.banner.message, timeout=20_000)
    qtbot.waitUntil(lambda: not diff.busy and diff.result is not None, timeout=20_000)
    assert diff._mode == PARENT and diff.result.a.seq == diff.result.b.seq - 1
    assert "no checkpoint" not in diff.summary.summary.text().lower()
