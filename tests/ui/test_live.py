"""Live updates from a real writer process (the demo agent) while the window is open."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from inspector.store import open_store
from inspector.ui.models.runs_model import RunRole
from tests.ui.conftest import open_in, select_run


@contextmanager
def _live_run(window, qtbot, store: Path, seed: str, name: str, delay: str) -> Iterator[tuple[subprocess.Popen, str]]:
    """A demo agent writing a new run while the window watches: the process and the new run's
    id once it is listed and selected with two rows or more in the timeline; killed on the way out."""
    open_in(window, qtbot, store)
    before = set(window.runs_panel.model.tree.by_id)
    proc = _agent(store, "--seed", seed, "--name", name, "--delay", delay)
    try:
        model = window.runs_panel.model
        qtbot.waitUntil(lambda: bool(set(model.tree.by_id) - before), timeout=30_000)
        (new_id,) = set(model.tree.by_id) - before
        select_run(window, qtbot, new_id)
        qtbot.waitUntil(lambda: window.timeline_panel.model.rowCount() >= 2, timeout=30_000)
        yield proc, new_id
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _agent(store: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "inspector.demo", "--store", str(store), *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def test_checkpoints_appear_in_the_open_run_and_the_selection_stays(window, qtbot, demo_store: Path) -> None:
    open_in(window, qtbot, demo_store)
    before = set(window.runs_panel.model.tree.by_id)
    proc = _agent(demo_store, "--seed", "11", "--name", "live one", "--delay", "0.05")
    try:
        model = window.runs_panel.model
        qtbot.waitUntil(lambda: bool(set(model.tree.by_id) - before), timeout=30_000)
        (new_id,) = set(model.tree.by_id) - before
        select_run(window, qtbot, new_id)
        timeline = window.timeline_panel
        # a selection left at the head follows the new head (that is the live view's rule), so the
        # checkpoint chosen here must not be the head: wait for a second one before choosing the first
        qtbot.waitUntil(lambda: timeline.model.rowCount() >= 2, timeout=30_000)
        timeline.select_row(0)
        scroll = timeline.view.verticalScrollBar().value()
        qtbot.waitUntil(lambda: model.run(new_id).status == "completed", timeout=60_000)
        assert proc.wait(timeout=30) == 0
        with open_store(demo_store) as store:
            expected = [c.id for c in store.list_checkpoints(new_id)]
        qtbot.waitUntil(lambda: timeline.model.rowCount() == len(expected), timeout=10_000)
        qtbot.waitUntil(lambda: all(timeline.model.is_loaded(r) for r in range(len(expected))), timeout=10_000)
        assert [timeline.model.checkpoint(r).id for r in range(len(expected))] == expected
        assert timeline.view.currentIndex().row() == 0
        assert timeline.view.verticalScrollBar().value() == scroll
        assert window.runs_panel.current_run().id == new_id
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_new_run_does_not_disturb_the_selected_one(window, qtbot, demo_store: Path) -> None:
    open_in(window, qtbot, demo_store)
    panel = window.runs_panel
    chosen = next(n.run.id for n in panel.model.tree.by_id.values() if not n.run.parent_run)
    select_run(window, qtbot, chosen)
    window.timeline_panel.select_row(2)
    proc = _agent(demo_store, "--seed", "12", "--delay", "0")
    assert proc.wait(timeout=60) == 0
    with open_store(demo_store) as store:
        total = len(store.list_runs())
    qtbot.waitUntil(lambda: len(panel.model.tree) == total, timeout=20_000)
    assert panel.current_run().id == chosen
    assert panel.view.currentIndex().data(RunRole).id == chosen
    assert window.timeline_panel.view.currentIndex().row() == 2


def test_live_off_then_on_catches_up(window, qtbot, demo_store: Path) -> None:
    open_in(window, qtbot, demo_store)
    window.menu_actions.live.setChecked(False)
    assert window.session.bridge.watching == ""
    proc = _agent(demo_store, "--seed", "13", "--delay", "0")
    assert proc.wait(timeout=60) == 0
    with open_store(demo_store) as store:
        total = len(store.list_runs())
    assert len(window.runs_panel.model.tree) == total - 1
    window.menu_actions.live.setChecked(True)
    qtbot.waitUntil(lambda: len(window.runs_panel.model.tree) == total, timeout=20_000)


def test_the_timeline_follows_the_head_of_a_live_run(window, qtbot, demo_store: Path) -> None:
    with _live_run(window, qtbot, demo_store, "13", "followed", "0.15") as (proc, new_id):
        timeline = window.timeline_panel
        timeline.select_row(timeline.model.rowCount() - 1)      # the user is at the head …
        start = timeline.model.rowCount()
        qtbot.waitUntil(lambda: timeline.model.rowCount() >= start + 2, timeout=30_000)
        current = timeline.view.currentIndex().row()
        assert current == timeline.model.rowCount() - 1 and current > start - 1   # … and stays there
        assert proc.wait(timeout=60) == 0
        with open_store(demo_store) as store:
            head = store.get_run(new_id).head_seq
        qtbot.waitUntil(lambda: timeline.view.currentIndex().row() == head, timeout=10_000)
        assert "of" in timeline.position_label.text() and f"#{head}" in timeline.position_label.text()


def test_a_live_run_opens_on_its_head_and_follows_it_without_a_click(window, qtbot, demo_store: Path) -> None:
    with _live_run(window, qtbot, demo_store, "14", "opened", "0.15") as (proc, new_id):
        timeline = window.timeline_panel       # selected, never clicked: it opened on its head
        qtbot.waitUntil(lambda: timeline.view.currentIndex().row() >= 1, timeout=30_000)
        start = timeline.view.currentIndex().row()
        qtbot.waitUntil(lambda: timeline.view.currentIndex().row() >= start + 2, timeout=30_000)
        assert proc.wait(timeout=60) == 0
        with open_store(demo_store) as store:
            head = store.get_run(new_id).head_seq
        qtbot.waitUntil(lambda: timeline.view.currentIndex().row() == head, timeout=10_000)
        qtbot.waitUntil(lambda: window.details.snapshot is not None and window.details.snapshot.info.seq == head,
                        timeout=10_000)


def test_runs_do_not_move_under_the_pointer(window, qtbot, demo_store: Path) -> None:
    from PySide6.QtCore import QEvent, QPointF, Qt
    from PySide6.QtGui import QEnterEvent
    from PySide6.QtWidgets import QApplication

    from inspector.ui.models.run_tree import COL_CHECKPOINTS

    open_in(window, qtbot, demo_store)
    panel = window.runs_panel
    panel.view.sortByColumn(COL_CHECKPOINTS, Qt.SortOrder.AscendingOrder)   # a growing run moves down
    before = set(panel.model.tree.by_id)
    proc = _agent(demo_store, "--seed", "14", "--name", "growing", "--delay", "0.1")
    try:
        qtbot.waitUntil(lambda: bool(set(panel.model.tree.by_id) - before), timeout=30_000)
        (live,) = set(panel.model.tree.by_id) - before

        def row() -> int:
            return panel.proxy.mapFromSource(panel.model.run_index(live)).row()
        viewport = panel.view.viewport()
        QApplication.sendEvent(viewport, QEnterEvent(QPointF(5, 5), QPointF(5, 5), QPointF(5, 5)))
        held = row()
        assert proc.wait(timeout=60) == 0
        qtbot.waitUntil(lambda: panel.model.run(live).status == "completed", timeout=20_000)
        assert row() == held                      # updated many times, never moved under the pointer
        QApplication.sendEvent(viewport, QEvent(QEvent.Type.Leave))
        assert row() > held                       # re-sorted once the pointer left
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_newer_run_record_arriving_first_still_moves_a_view_at_the_head(window, qtbot, demo_store: Path) -> None:
    """The live bridge may deliver the run's newer RunInfo (more checkpoints) before the change
    set that lists the new checkpoints; a view at the head follows whichever comes first."""
    with _live_run(window, qtbot, demo_store, "14", "record first", "0.2") as (_proc, new_id):
        timeline = window.timeline_panel
        window.menu_actions.live.setChecked(False)          # nothing else moves the timeline now
        shown = timeline.model.rowCount()
        timeline.select_row(shown - 1)
        with open_store(demo_store) as store:
            qtbot.waitUntil(lambda: store.get_run(new_id).checkpoint_count > shown, timeout=30_000)
            newer = store.get_run(new_id)
        timeline.update_run(newer)
        assert timeline.model.rowCount() == newer.checkpoint_count > shown
        # (onto the new head once its row is loaded: never a placeholder without a checkpoint)
        qtbot.waitUntil(lambda: timeline.view.currentIndex().row() == timeline.model.rowCount() - 1
                        and timeline.current_checkpoint() is not None, timeout=10_000)


def test_a_step_renamed_after_it_was_shown_reads_its_new_name(window, qtbot, tmp_path: Path) -> None:
    # an InspectorSaver names a step again when its tasks' writes reach it after the step
    # (LangGraph hands both over from background threads): a live view shows the new name
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.graph import START, MessagesState, StateGraph

    from inspector.record.langgraph import InspectorSaver
    from inspector.store.native.lanes import LaneStore

    path = tmp_path / "chat.db"
    builder = StateGraph(MessagesState)
    builder.add_node("reply", lambda s: {"messages": [AIMessage(content="hi", id=f"a{len(s['messages'])}")]})
    builder.add_edge(START, "reply")
    with InspectorSaver.from_conn_string(str(path)) as saver:
        builder.compile(checkpointer=saver).invoke({"messages": [HumanMessage(content="q", id="q")]},
                                                   {"configurable": {"thread_id": "chat"}})
    open_in(window, qtbot, path)
    with open_store(path) as store:
        run = store.list_runs()[0]
        head = store.list_checkpoints(run.id)[-1]
        checkpoint_id = store.load(head.id).meta["langgraph"]["checkpoint_id"]
    select_run(window, qtbot, run.id)
    model = window.timeline_panel.model
    qtbot.waitUntil(lambda: model.is_loaded(head.seq), timeout=10_000)
    assert model.checkpoint(head.seq).name == head.name != "renamed"
    from inspector.store import create_store
    store = create_store(path)
    try:
        lanes = LaneStore(store)
        lanes.rename("chat", "", checkpoint_id, "renamed", "wrote more")
        lanes.close()
    finally:
        store.close()
    qtbot.waitUntil(lambda: model.checkpoint(head.seq) is not None and model.checkpoint(head.seq).name == "renamed",
                    timeout=20_000)


def test_a_langgraph_threads_checks_follow_it_live(window, qtbot, tmp_path: Path) -> None:
    """A LangGraph thread resumed by its graph while it is shown: the new steps appear, and the
    Checks of the rows already shown (the old head's tasks ran since) read as the store now
    counts them."""
    from langgraph.types import Command

    from tests.lgcorpus import copy_sqlite
    from tests.store.langgraph.lg_graphs import config, make_database, open_graph

    path = copy_sqlite(make_database(tmp_path / "standard.db"), tmp_path / "lg.db")
    open_in(window, qtbot, path)
    select_run(window, qtbot, "thread-A")
    model = window.timeline_panel.model
    with open_store(path) as store:
        before = store.list_checkpoints("thread-A")
    qtbot.waitUntil(lambda: model.is_loaded(before[-1].seq), timeout=10_000)
    assert (model.checkpoint(before[-1].seq).checks_passed, model.checkpoint(before[-1].seq).checks_total) == (0, 1)
    graph, conn = open_graph(path)
    try:
        graph.invoke(Command(resume="yes, go"), config("thread-A"))
    finally:
        conn.close()
    with open_store(path) as store:
        after = {i.seq: (i.checks_passed, i.checks_total) for i in store.list_checkpoints("thread-A")}
    assert len(after) > len(before) and after[before[-1].seq] == (1, 1)

    def shown() -> dict:
        return {seq: (info.checks_passed, info.checks_total) for seq in after
                if (info := model.checkpoint(seq)) is not None}
    qtbot.waitUntil(lambda: shown() == after, timeout=20_000)
    old_head = model.checkpoint(before[-1].seq)
    assert old_head is not None and not old_head.change.startswith("waiting")     # answered since


def test_a_killed_agent_shows_crashed_within_seconds(window, qtbot, demo_store: Path) -> None:
    """A SIGKILLed agent writes nothing more, so no write wakes the window: it showed running
    for up to 30 s (the next re-diagnosis) while the CLI said crashed at once."""
    import time
    with _live_run(window, qtbot, demo_store, "12", "to be killed", "0.5") as (proc, run_id):
        model = window.runs_panel.model
        assert model.run(run_id).status == "running"
        proc.kill()
        proc.wait()
        killed = time.monotonic()
        qtbot.waitUntil(lambda: window.runs_panel.model.tree.by_id[run_id].status == "crashed", timeout=10_000)
        assert time.monotonic() - killed < 8


def test_an_idle_store_is_not_read_again_and_a_write_is_read_at_once(window, qtbot, tmp_path: Path) -> None:
    """Nothing written, nothing read: the window's own reads close the store's -wal (opened
    read-write by SQLite), which inotify reports as IN_CLOSE_WRITE; taken for a write, each
    poll woke the next (6-7 polls a second on an idle store). And the first write after a quiet
    spell is read at once, not after the throttle's DEBOUNCE_MS (live latency 77-163 -> 6 ms)."""
    import time

    from inspector.record import Checkpointer
    from inspector.ui.watch_bridge import DEBOUNCE_MS

    path = tmp_path / "s.db"
    with Checkpointer(path, name="writer", heartbeat=3600) as cp:   # open (keeps the -wal), no heartbeats
        cp.save({"n": 0}, kind="step", name="first")
        open_in(window, qtbot, path)
        bridge = window.session.bridge
        qtbot.waitUntil(lambda: window.runs_panel.model.rowCount() == 1, timeout=20_000)
        qtbot.wait(1000)                # the opening's own reads settle
        polls: list[float] = []
        bridge.polled.connect(lambda: polls.append(time.monotonic()))
        qtbot.wait(2000)
        assert len(polls) <= 2, f"{len(polls)} polls of an idle store in 2 s"     # (the loop: 13)
        polls.clear()
        written = time.monotonic()
        cp.save({"n": 1}, kind="step", name="second")
        qtbot.waitUntil(lambda: bool(polls), timeout=10_000)
        # read at once (a generous bound: the throttle alone would wait DEBOUNCE_MS)
        assert polls[0] - written < DEBOUNCE_MS / 1000 + 2.0
