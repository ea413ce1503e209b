"""What the window shows when the world moves under it: a store file replaced or deleted on
disk (a PostgreSQL store's tables dropped and made again), a stuck run's process killed, a row a damaged store cannot give, a board without checks."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from inspector.record import Checkpointer
from inspector.store import open_store
from inspector.watch import GONE, REPLACED, ChangeTracker
from tests.resume.helpers import hung_agent
from tests.retention.stores import build, chat
from tests.ui.conftest import open_in, select_checkpoint, select_run

TIMEOUT = 20_000


def _remove_store(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def _listed(window) -> set[str]:
    return set(window.runs_panel.model.tree.by_id)


def test_the_tracker_tells_a_file_gone_and_another_file_at_its_path(tmp_path: Path) -> None:
    path, spare = tmp_path / "s.db", tmp_path / "spare.db"
    build(path)
    shutil.copy(path, spare)
    with open_store(path) as store:
        tracker = ChangeTracker(store)
        assert tracker.moved() == ""
        os.replace(spare, path)                 # another file (inode) at the same path
        assert tracker.moved() == REPLACED
    with open_store(path) as store:
        tracker = ChangeTracker(store)
        _remove_store(path)
        assert tracker.moved() == GONE
        build(path)                              # back at its path: a new store, whatever its inode
        assert tracker.moved() == REPLACED


def test_a_store_rebuilt_at_its_path_is_read_afresh_not_mixed_with_the_old_one(window, qtbot, tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    ids = build(path)
    open_in(window, qtbot, path)
    select_run(window, qtbot, ids["long"])
    select_checkpoint(window, qtbot, 30)
    _remove_store(path)                          # what `checkpoint-inspector demo --rebuild` does
    with Checkpointer(path, name="rebuilt") as cp:
        chat(cp, 12)
        rebuilt = cp.run_id
    qtbot.waitUntil(lambda: _listed(window) == {rebuilt}, timeout=TIMEOUT)   # the old runs are not listed
    qtbot.waitUntil(lambda: "was replaced on disk and read again" in window.statusBar().currentMessage(),
                    timeout=TIMEOUT)
    assert "the run that was selected is not in it" in window.statusBar().currentMessage()
    assert window.current_run() is None and window.timeline_panel.model.run is None
    assert window.details.snapshot is None
    assert window.store_status.live_chip.text() == "\u25cf live"
    # and it is watched as the store it now is
    with Checkpointer(path, name="after") as cp:
        chat(cp, 3)
        after = cp.run_id
    qtbot.waitUntil(lambda: _listed(window) == {rebuilt, after}, timeout=TIMEOUT)
    select_run(window, qtbot, rebuilt)
    assert select_checkpoint(window, qtbot, 5).info.run_id == rebuilt


def test_a_store_replaced_by_a_copy_keeps_the_run_shown_selected(window, qtbot, tmp_path: Path) -> None:
    path, copy = tmp_path / "s.db", tmp_path / "copy.db"
    ids = build(path)
    shutil.copy(path, copy)
    with Checkpointer(copy, name="only in the copy") as cp:
        chat(cp, 4)
        added = cp.run_id
    with sqlite3.connect(copy) as conn:         # one file, as a backup restored over the store would be
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    open_in(window, qtbot, path)
    select_run(window, qtbot, ids["short"])
    select_checkpoint(window, qtbot, 7)
    os.replace(copy, path)
    qtbot.waitUntil(lambda: added in _listed(window), timeout=TIMEOUT)
    qtbot.waitUntil(lambda: "read again" in window.statusBar().currentMessage(), timeout=TIMEOUT)
    assert "“short chat” is still selected" in window.statusBar().currentMessage()
    assert window.current_run().id == ids["short"]
    qtbot.waitUntil(lambda: window.details.snapshot is not None and window.details.snapshot.info.seq == 7,
                    timeout=TIMEOUT)
    assert window.details.snapshot.info.run_id == ids["short"]


def test_a_store_deleted_under_the_window_shows_no_old_checkpoint_and_says_it_is_gone(
        window, qtbot, tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    ids = build(path)
    open_in(window, qtbot, path)
    select_run(window, qtbot, ids["long"])
    select_checkpoint(window, qtbot, 5)
    window.details.set_tab("state")
    _remove_store(path)
    qtbot.waitUntil(lambda: window.store_status.live_chip.text() == "store gone", timeout=TIMEOUT)
    assert "is no longer there (deleted or moved)" in window.banner.message
    state = window.details.panels["state"]
    assert window.details.snapshot is None                       # #5's state is not left on show
    assert "Checkpoint #5 cannot be read" in state.empty.text() and state.empty.isVisible()
    window.timeline_panel.select_seq(7)                          # the rows listed can still be picked
    qtbot.waitUntil(lambda: "Checkpoint #7 cannot be read" in state.empty.text(), timeout=TIMEOUT)
    assert window.details.snapshot is None
    window.menu_actions.live.setChecked(False)
    window.menu_actions.live.setChecked(True)
    assert window.store_status.live_chip.text() == "store gone"    # not "live" again while it is gone
    build(path)                                                  # a store put back at that path is opened
    qtbot.waitUntil(lambda: window.store_status.live_chip.text() == "\u25cf live", timeout=TIMEOUT)
    assert "is no longer there" not in window.banner.message


@pytest.mark.postgres
def test_a_postgresql_store_made_again_is_read_afresh(window, qtbot, pg_url: str) -> None:
    from tests.watch.test_server_identity import _reset, _write

    old = _write(pg_url, "old run", 6)
    open_in(window, qtbot, pg_url)
    select_run(window, qtbot, old)
    _reset(pg_url)
    qtbot.waitUntil(lambda: window.store_status.live_chip.text() == "store gone", timeout=TIMEOUT)
    assert "is no longer there (its tables were dropped)" in window.banner.message
    new = _write(pg_url, "new run", 4)
    qtbot.waitUntil(lambda: set(window.runs_panel.model.tree.by_id) == {new}, timeout=TIMEOUT)
    qtbot.waitUntil(lambda: "was replaced in its database" in window.statusBar().currentMessage(), timeout=TIMEOUT)
    assert "the run that was selected is not in it" in window.statusBar().currentMessage()
    assert "is no longer there" not in window.banner.message


def test_a_stuck_run_whose_process_is_killed_turns_crashed_and_its_notice_ages(window, qtbot, tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    with hung_agent(store, 4) as (hung, run):
        open_in(window, qtbot, store)
        select_run(window, qtbot, run.id)
        model, notice = window.runs_panel.model, window.run_notice
        # ten missed beats of 0.1 s (at least 5 s) make it stuck; the 30 s refresh re-reads it
        qtbot.waitUntil(lambda: (model.refresh_running() or True) and model.status_of(run.id) == "stuck",
                        timeout=TIMEOUT)
        qtbot.waitUntil(lambda: notice.status == "stuck", timeout=TIMEOUT)
        said = notice.headline.text()
        # a stuck run is re-diagnosed by the periodic refresh: the age it shows moves on
        qtbot.waitUntil(lambda: (model.refresh_running() or True) and notice.headline.text() != said,
                        timeout=TIMEOUT)
        assert notice.status == "stuck"
        hung.kill()
        hung.wait()
        # no refresh asked: the owner check that runs every 2 s sees the process gone
        qtbot.waitUntil(lambda: model.status_of(run.id) == "crashed", timeout=TIMEOUT)
        qtbot.waitUntil(lambda: notice.status == "crashed" and "Crashed" in notice.headline.text(), timeout=TIMEOUT)
        assert "is gone" in notice.headline.text() + notice.detail.text()


def test_an_unreadable_row_says_the_checkpoint_cannot_be_read(window, qtbot, tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    ids = build(path)
    with open_store(path) as store:
        damaged = store.list_checkpoints(ids["short"])[12]
    with sqlite3.connect(path) as conn:       # a damaged store: the run counts a row its listing lacks
        conn.execute("UPDATE ci_checkpoints SET seq = -5 WHERE id = ?", (damaged.id,))
    open_in(window, qtbot, path)
    select_run(window, qtbot, ids["short"])
    window.details.set_tab("tasks")
    timeline = window.timeline_panel
    qtbot.waitUntil(lambda: timeline.model.rowCount() == 30, timeout=TIMEOUT)
    timeline.select_row(12)
    tasks = window.details.panels["tasks"]
    qtbot.waitUntil(lambda: "cannot be read" in tasks.empty.text(), timeout=TIMEOUT)
    assert tasks.empty.text().startswith("Checkpoint #12 cannot be read: ")
    assert "damaged" in tasks.empty.text() and window.details.snapshot is None
    window.details.set_tab("state")                              # a tab built afterwards says it too
    assert "cannot be read" in window.details.panels["state"].empty.text()


def test_a_board_without_checks_says_there_are_none(qtbot) -> None:
    from inspector.ui.widgets.tasks_panel import ScoreBar

    bar = ScoreBar()
    qtbot.addWidget(bar)
    bar.set_score("", 0, 0, 0, 2)
    assert bar.checks_bar.text() == "no checks"
    assert bar.tasks_bar.text() == "0 / 2 tasks done"
    bar.set_score("", 0, 0, 0, 0)
    assert bar.tasks_bar.text() == "no tasks"


def test_a_run_whose_heartbeat_stops_turns_stuck_before_the_next_refresh(window, qtbot, tmp_path: Path) -> None:
    # the demo's hung agent showed 'running' for up to 30 s (the list's refresh period) after it
    # had missed enough beats to be stuck: the list asks again when the heartbeat is due
    from inspector.ui.widgets.runs_panel import REFRESH_MS

    store = tmp_path / "s.db"
    with hung_agent(store, 3) as (_proc, run):   # heart-beating every 0.1 s until it hangs: silent 5 s later
        open_in(window, qtbot, store)
        model = window.runs_panel.model
        if model.status_of(run.id) != "running":
            pytest.skip("the window opened after the heartbeat had been silent long enough already")
        qtbot.waitUntil(lambda: model.status_of(run.id) == "stuck", timeout=REFRESH_MS // 2)
