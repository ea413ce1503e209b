"""The Diff tab: parent diff, explicit pairs, pinning, filtering, clicking a change, supersession."""

from __future__ import annotations

from PySide6.QtCore import Qt

from inspector.diff import diff_checkpoints
from inspector.diff.grouping import ItemRange
from inspector.ui.models.change_list_model import CHANGE_ROLE, PATH
from inspector.ui.widgets.diff_panel import DiffPanel


def _panel(qtbot, store) -> DiffPanel:
    panel = DiffPanel()
    panel.set_store(store)
    qtbot.addWidget(panel)
    panel.resize(1000, 760)
    panel.show()
    return panel


def _wait_text(qtbot, panel: DiffPanel) -> None:
    qtbot.waitUntil(lambda: not panel.busy, timeout=10000)


def test_default_compares_with_the_parent(qtbot, panels_store, snap_at, beekeeping) -> None:
    snap = snap_at(15)
    panel = _panel(qtbot, panels_store)
    with qtbot.waitSignal(panel.diff_ready, timeout=10000) as ready:
        panel.show_snapshot(snap, beekeeping)
    result = ready.args[0]
    expected = diff_checkpoints(panels_store, snap.info.parent_id, snap.info.id)
    assert result.a.seq == 14 and result.b.seq == 15
    assert result.changes == expected.changes
    assert panel.model.rowCount() == len(expected.changes)
    assert panel.summary.summary.text().startswith("changes requested")
    lines = panel.summary.task_lines()
    assert any("review requested → changes requested by editor-bot" in line for line in lines)
    _wait_text(qtbot, panel)
    assert panel.sides.left.blockCount() == panel.sides.right.blockCount()
    assert panel.sides.hunk_count >= 1
    # the first change is selected, and both sides wait for the text to scroll to it
    assert panel.detail.title.text().count(result.changes[0].display_path) == 1
    line = panel.sides.right.textCursor().blockNumber()
    assert panel.sides.right.path_at_line(line) == result.changes[0].path


def test_clicking_a_change_shows_both_values_and_scrolls_both_sides(qtbot, panels_store, snap_at,
                                                                      beekeeping) -> None:
    panel = _panel(qtbot, panels_store)
    with qtbot.waitSignal(panel.diff_ready, timeout=10000):
        panel.show_snapshot(snap_at(15), beekeeping)
    _wait_text(qtbot, panel)
    row = next(r for r in range(panel.proxy.rowCount()) if panel.proxy.index(r, PATH).data() == "reviews")
    panel.select_change(row)
    # each side formats its value in its own background job: wait for both
    qtbot.waitUntil(lambda: (panel.detail.new.toPlainText(), panel.detail.old.toPlainText()) == ("1", "0"),
                    timeout=5000)
    line = panel.sides.right.textCursor().blockNumber()
    assert panel.sides.right.path_at_line(line) == ("reviews",)
    assert panel.sides.left.path_at_line(line) == ("reviews",)
    left_bar, right_bar = panel.sides.left.verticalScrollBar(), panel.sides.right.verticalScrollBar()
    assert left_bar.value() == right_bar.value()
    right_bar.setValue(0)
    assert left_bar.value() == 0


def test_filter_by_path(qtbot, panels_store, snap_at, beekeeping) -> None:
    panel = _panel(qtbot, panels_store)
    with qtbot.waitSignal(panel.diff_ready, timeout=10000):
        panel.show_snapshot(snap_at(15), beekeeping)
    total = panel.proxy.rowCount()
    qtbot.keyClicks(panel.filter, "messages")
    assert 0 < panel.proxy.rowCount() < total
    assert all("messages" in panel.proxy.index(r, PATH).data() for r in range(panel.proxy.rowCount()))


def test_fork_against_original_flags_regressions(qtbot, panels_store) -> None:
    fork = next(r for r in panels_store.list_runs() if r.parent_run)
    original_head = panels_store.get_checkpoint(f"{fork.parent_run}:-1")
    fork_start = panels_store.get_checkpoint(f"{fork.id}:0")   # the fork point: work undone
    panel = _panel(qtbot, panels_store)
    with qtbot.waitSignal(panel.diff_ready, timeout=10000) as ready:
        panel.compare(panels_store, original_head, fork_start)
    result = ready.args[0]
    assert any(c.regression for c in result.task_changes)
    flagged = [line for line in panel.summary.task_lines() if "regression" in line]
    assert len(flagged) == sum(1 for c in result.task_changes if c.regression)
    assert "diverged" in panel.summary.divergence.text()
    assert "(selected)" in panel.base_button.text()


def test_pin_a_base_then_scrub(qtbot, panels_store, snap_at, beekeeping) -> None:
    panel = _panel(qtbot, panels_store)
    with qtbot.waitSignal(panel.diff_ready, timeout=10000):
        panel.show_snapshot(snap_at(5), beekeeping)
    with qtbot.waitSignal(panel.diff_ready, timeout=10000):
        panel.pin_current()
    assert panel.result.empty     # #5 against itself
    with qtbot.waitSignal(panel.diff_ready, timeout=10000) as ready:
        panel.show_snapshot(snap_at(9), beekeeping)
    assert (ready.args[0].a.seq, ready.args[0].b.seq) == (5, 9)
    with qtbot.waitSignal(panel.diff_ready, timeout=10000) as ready:
        panel.use_parent()
    assert (ready.args[0].a.seq, ready.args[0].b.seq) == (8, 9)
    with qtbot.waitSignal(panel.diff_ready, timeout=10000) as ready:
        panel.choose_base("#2")
    assert (ready.args[0].a.seq, ready.args[0].b.seq) == (2, 9)


def test_first_checkpoint_has_nothing_to_compare(qtbot, panels_store, snap_at, beekeeping) -> None:
    panel = _panel(qtbot, panels_store)
    panel.show_snapshot(snap_at(0), beekeeping)
    assert "first checkpoint" in panel.summary.summary.text()
    assert not panel.busy and panel.model.rowCount() == 0


def _body_shown(panel: DiffPanel) -> bool:
    return all(w.isVisible() for w in (panel.changes, panel.detail, panel.sides, panel.next_hunk))


def test_without_a_comparison_the_panel_is_its_sentence_alone(qtbot, panels_store, snap_at, beekeeping) -> None:
    """No empty change list, detail or text panes: they come with a comparison and go with it."""
    panel = _panel(qtbot, panels_store)
    assert "Select a checkpoint" in panel.summary.summary.text() and not _body_shown(panel)
    assert panel.summary.summary.alignment() & Qt.AlignmentFlag.AlignHCenter and not panel.summary.summary.font().bold()
    with qtbot.waitSignal(panel.diff_ready, timeout=10000):
        panel.show_snapshot(snap_at(15), beekeeping)
    assert _body_shown(panel) and panel.model.rowCount() > 0 and panel.summary.summary.font().bold()
    assert not panel.summary.summary.alignment() & Qt.AlignmentFlag.AlignHCenter
    assert min(panel.splitter.sizes()) > 0          # each pane has room again
    panel.show_snapshot(snap_at(0), beekeeping)
    assert "first checkpoint" in panel.summary.summary.text() and not _body_shown(panel)
    panel.compare(panels_store, snap_at(14).info, snap_at(15).info)
    assert _body_shown(panel)      # (while it runs: "Comparing…" in the text panes)
    _wait_text(qtbot, panel)
    panel.show_snapshot(None, None)
    assert not _body_shown(panel)


def test_a_comparison_under_way_shows_nothing_of_the_last_pair(qtbot, panels_store, snap_at, beekeeping) -> None:
    """While the next pair is compared (a window following a live run: every head), the text
    panes' titles and the hunk count are cleared with the panes: a soak test's screenshot had
    "Comparing…" under "old #830 / new #831" and "3 differing blocks" of the pair before."""
    panel = _panel(qtbot, panels_store)
    panel.show_snapshot(snap_at(5), beekeeping)
    _wait_text(qtbot, panel)
    assert "#5" in panel.sides.right_title.toolTip() + panel.sides.right_title.text()
    assert panel.hunk_label.text()
    panel.show_snapshot(snap_at(9), beekeeping)       # under way: no event handled yet
    assert "#5" not in panel.sides.right_title.text() and "#4" not in panel.sides.left_title.text()
    assert panel.hunk_label.text() == ""
    _wait_text(qtbot, panel)
    assert panel.result.b.seq == 9 and panel.hunk_label.text()


def test_a_newer_pair_supersedes_an_older_one(qtbot, panels_store, snap_at, beekeeping) -> None:
    panel = _panel(qtbot, panels_store)
    results = []
    panel.diff_ready.connect(results.append)
    for seq in range(3, 16):
        panel.show_snapshot(snap_at(seq), beekeeping)
    _wait_text(qtbot, panel)
    assert results and results[-1].b.seq == 15
    assert panel.result.b.seq == 15
    assert "#15" in panel.target.text()


def test_a_huge_changed_string_is_shown_in_lines_that_fit_and_lands_on_the_change(qtbot, tmp_path) -> None:
    import base64
    import random

    from inspector.diff.window import BIG_CHARS
    from inspector.record import Checkpointer
    from inspector.store import open_store
    # one line of 2.1 M characters: a big state, windowed
    text = base64.b64encode(random.Random(5).randbytes(BIG_CHARS * 4 // 5)).decode("ascii")
    path = tmp_path / "huge.db"
    with Checkpointer(path, name="huge", agent="test") as recorder:
        recorder.save({"text": text}, force=True)
        recorder.save({"text": text[:-400] + "THE NEW ENDING " * 20}, force=True)
        run = recorder.run_id
    with open_store(path) as store:
        panel = _panel(qtbot, store)
        snap = store.load(store.get_checkpoint(f"{run}:1").id)
        with qtbot.waitSignal(panel.text_ready, timeout=20000):
            panel.show_snapshot(snap, store.get_run(run))
        right = panel.sides.right
        lines = right.toPlainText().split("\n")
        cut = panel._wrapped_at
        assert cut is not None and cut == panel.sides.text_columns()
        shown = [line.strip().strip('",') for line in lines if line.startswith('    "') and "⋯" not in line]
        assert len(shown) > 20 and max(map(len, shown)) <= cut
        elided = [line.strip().strip('",') for line in lines if "⋯" in line]
        assert elided and max(map(len, elided)) <= cut     # the "⋯ N unchanged ⋯" line fits too
        assert "lines" in panel.sides.note.text()
        # the cursor is on the first changed line of the string, not on '"text": ['
        at = right.textCursor().blockNumber()
        assert at in panel.sides._hunks and right.path_at_line(at) == ("text",)
        # a much wider view cuts the lines again, wider
        panel.resize(1800, 760)
        qtbot.waitUntil(lambda: panel._wrapped_at is not None and panel._wrapped_at > cut and not panel.busy,
                        timeout=20000)
        wider = [line.strip().strip('",') for line in right.toPlainText().split("\n")
                 if line.startswith('    "') and "⋯" not in line]
        assert max(map(len, wider)) > cut


def test_a_rewrap_of_a_langgraph_diff_does_not_decode_a_side_again(qtbot, tmp_path) -> None:
    """A LangGraph checkpoint is one blob a side: what the diff decoded is kept for cutting
    the long string's lines again at a new width (keyed by checkpoint, dropped with the diff)."""
    import base64
    import random

    from tests.lgcorpus import sqlite_saver
    from langgraph.graph import END, START, StateGraph
    from typing_extensions import TypedDict

    from inspector.diff.window import BIG_CHARS
    from inspector.store import open_store

    class State(TypedDict):
        text: str

    text = base64.b64encode(random.Random(6).randbytes(BIG_CHARS * 4 // 5)).decode("ascii")
    builder = StateGraph(State)
    builder.add_node("edit", lambda state: {"text": state["text"][:-300] + "A NEW TAIL " * 30})
    builder.add_edge(START, "edit")
    builder.add_edge("edit", END)
    path = tmp_path / "lg.db"
    with sqlite_saver(path) as saver:
        builder.compile(checkpointer=saver).invoke({"text": text}, {"configurable": {"thread_id": "t"}})
    with open_store(path) as store:
        calls: list = []
        for name in ("load_state", "load_state_view"):      # counts the decodes of a side
            real = getattr(store, name)
            setattr(store, name, lambda ref, real=real: calls.append(ref) or real(ref))
        panel = _panel(qtbot, store)
        snap = store.load("t:-1")
        with qtbot.waitSignal(panel.text_ready, timeout=30000):
            panel.show_snapshot(snap, None)
        cut = panel._wrapped_at
        assert cut is not None and calls
        decoded = len(calls)
        panel.resize(1800, 760)
        qtbot.waitUntil(lambda: panel._wrapped_at is not None and panel._wrapped_at > cut and not panel.busy,
                        timeout=30000)
        assert len(calls) == decoded


def test_no_state_change_names_the_langgraph_channels_that_changed(qtbot) -> None:
    from inspector.diff import DiffResult
    from inspector.ui.widgets.diff_summary_view import DiffSummaryView
    view = DiffSummaryView()
    qtbot.addWidget(view)
    view.show_result(DiffResult((), hidden=("__start__",)))     # a LangGraph input checkpoint
    assert "No differences in the state" in view.summary.text() and "__start__" in view.summary.text()
    view.show_result(DiffResult(()))
    assert view.summary.text() == "No differences"
    # a LangGraph step whose node tasks differ: the score says so, as the CLI's summary does
    view.show_result(DiffResult((), summary="checks 1/1 → 0/0 · state unchanged",
                                hidden=("branch:to:after_model",)))
    text = view.summary.text()
    assert text.startswith("No differences in the state · checks 1/1 → 0/0 · ") and "branch:to:after_model" in text


def test_a_changes_menu_asks_for_its_value_history(qtbot, panels_store, snap_at, beekeeping) -> None:
    panel = _panel(qtbot, panels_store)
    with qtbot.waitSignal(panel.diff_ready, timeout=10000):
        panel.show_snapshot(snap_at(15), beekeeping)
    rows = {panel.proxy.index(r, PATH).data(): r for r in range(panel.proxy.rowCount())}
    menu = panel.change_menu(panel.proxy.index(rows["reviews"], PATH))
    action = menu.actions()[0]
    assert action.text() == "Value History of reviews\u2026"
    with qtbot.waitSignal(panel.value_history_requested) as asked:
        action.trigger()
    assert asked.args == [("reviews",)]
    # an item added to a list: that item's history (a range of items: the list's)
    added = next(p for p in rows if p.startswith("messages["))
    index = panel.proxy.index(rows[added], PATH)
    change = index.data(CHANGE_ROLE)
    shown = "messages" if isinstance(change, ItemRange) else added
    assert panel.change_menu(index).actions()[0].text() == f"Value History of {shown}\u2026"
    assert panel.change_menu(panel.proxy.index(-1, PATH)) is None


def test_a_goal_change_reads_without_a_stray_colon(qtbot) -> None:
    """A goal belongs to no task: its line starts with "Goal", not with ": goal"."""
    from inspector.diff import DiffResult
    from inspector.diff.model import TaskChange
    from inspector.ui.widgets.diff_summary_view import DiffSummaryView
    view = DiffSummaryView()
    qtbot.addWidget(view)
    view.show_result(DiffResult((), task_changes=(TaskChange("", "", "goal", "old aim", "new aim"),
                                                  TaskChange("t1", "Draft", "status", "pending", "done"))))
    lines = [view.tasks.item(r).text() for r in range(view.tasks.count())]
    assert lines == ["Goal “old aim” → “new aim”", "Draft: pending → done"]


def test_a_base_of_another_run_is_named_by_its_run(qtbot, panels_store, beekeeping) -> None:
    """Compare ▾ names a pinned checkpoint of another run by that run's name ("report: heat
    pumps #3 (base)"), not by its id; the hunk counter says "1 differing block"."""
    other = next(r for r in panels_store.list_runs() if r.name == "report: heat pumps")
    pinned = panels_store.get_checkpoint(f"{other.id}:3")
    panel = _panel(qtbot, panels_store)
    with qtbot.waitSignal(panel.diff_ready, timeout=10000):
        panel.pin(pinned)                               # nothing shown yet: read when compared
        panel.show_snapshot(panels_store.load(f"{beekeeping.id}:3"), beekeeping)
    text = panel.base_button.text()
    assert text.startswith("report: heat pumps #3 (base)") and other.id not in text
    assert "report: urban beekeeping" not in panel.target.text()        # the shown run: its seq alone
    assert "report: heat pumps #3" in panel.sides.left_title.text() and other.id not in panel.sides.left_title.text()


def test_one_differing_block_is_singular(qtbot, tmp_path) -> None:
    from inspector.record import Checkpointer
    from inspector.store import open_store

    path = tmp_path / "one.db"
    with Checkpointer(path, name="one change", heartbeat=60) as cp:
        cp.save({"step": 1, "notes": ["a", "b"]}, force=True)
        cp.save({"step": 2, "notes": ["a", "b"]}, force=True)
    with open_store(path) as store:
        (run,) = store.list_runs()
        panel = _panel(qtbot, store)
        with qtbot.waitSignal(panel.text_ready, timeout=10000):
            panel.show_snapshot(store.load(f"{run.id}:1"), run)
        assert panel.sides.hunk_count == 1 and panel.hunk_label.text() == "1 differing block"
