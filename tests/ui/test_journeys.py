"""The three jobs end to end, clicking and typing through the real window at 1024x700 and 1600x1000.

1. A stuck run: see why at the top, resume it (stopping the hung old owner), watch it finish.
2. Diff: two distant checkpoints via the picker, and a fork against its original, one click.
3. Fork → resume → compare with the fork's origin.

Each asserts on the widgets and on the store underneath.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QWidget

from inspector.store import open_store
from inspector.ui.dialogs.fork_dialog import ForkDialog
from inspector.ui.dialogs.resume_dialog import ResumeDialog
from inspector.ui.main_window import MainWindow
from tests.resume.helpers import hung_agent
from tests.ui.dialogs.test_resume_flow import TIMEOUT, Confirm

SIZES = [pytest.param((1024, 700), id="1024x700"), pytest.param((1600, 1000), id="1600x1000")]


def _window(qtbot, size: tuple[int, int], store: Path, *, annotated: bool = False) -> MainWindow:
    """A shown main window at ``size`` with ``store`` open (and its runs diagnosed if ``annotated``)."""
    window = MainWindow(restore_settings=False)
    qtbot.addWidget(window)
    window.resize(*size)
    window.show()
    model = window.runs_panel.model
    signals = [window.session.opened, model.runs_loaded] + ([model.annotated] if annotated else [])
    with qtbot.waitSignals(signals, timeout=TIMEOUT):
        window.open_store(str(store))
    return window


def _click_row(qtbot, view: QAbstractItemView, index) -> None:
    view.scrollTo(index)
    rect = view.visualRect(index)
    assert rect.isValid() and view.viewport().rect().contains(rect.center())
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def _click_run(qtbot, window: MainWindow, run_id: str) -> None:
    panel = window.runs_panel
    qtbot.waitUntil(lambda: panel.model.run_index(run_id).isValid(), timeout=TIMEOUT)
    index = panel.proxy.mapFromSource(panel.model.run_index(run_id))
    if window.current_run() is not None and window.current_run().id == run_id:
        _click_row(qtbot, panel.view, index)     # already shown: no new timeline to wait for
        return
    with qtbot.waitSignal(window.timeline_panel.model.page_loaded, timeout=TIMEOUT):
        _click_row(qtbot, panel.view, index)
    assert window.current_run().id == run_id


def _click_checkpoint(qtbot, window: MainWindow, seq: int):
    """Click a checkpoint's row and wait until the details show it. (A run opens on its head,
    and a live one follows it: clicking the head is often clicking the row already shown.)"""
    timeline = window.timeline_panel
    row = seq if seq >= 0 else timeline.model.rowCount() + seq
    _click_row(qtbot, timeline.view, timeline.model.index(row, 1))

    def shown() -> bool:
        info, snap = timeline.model.checkpoint(row), window.details.snapshot
        return info is not None and snap is not None and snap.info.id == info.id
    qtbot.waitUntil(shown, timeout=TIMEOUT)
    return window.details.snapshot


def _click_tab(qtbot, window: MainWindow, key: str) -> QWidget:
    tabs = window.details.tabs
    titles = {"state": "State", "tasks": "Tasks", "metadata": "Metadata", "diff": "Diff"}
    index = next(i for i in range(tabs.count()) if tabs.tabText(i).replace("&", "") == titles[key])
    qtbot.mouseClick(tabs.tabBar(), Qt.MouseButton.LeftButton, pos=tabs.tabBar().tabRect(index).center())
    qtbot.waitUntil(lambda: key in window.details.panels, timeout=TIMEOUT)
    return window.details.panels[key]


@pytest.mark.parametrize("size", SIZES)
def test_stuck_run_resumed_with_its_hung_owner_stopped(qtbot, tmp_path: Path, size) -> None:
    store = tmp_path / "s.db"
    with hung_agent(store, 5) as (hung, run):
        window = _window(qtbot, size, store)
        _click_run(qtbot, window, run.id)
        notice = window.run_notice
        window.refresh()     # heartbeats go stale without a write: the list re-diagnoses live runs
        qtbot.waitUntil(lambda: (window.refresh() or True) and notice.isVisible() and notice.status == "stuck",
                        timeout=TIMEOUT)
        assert "Stuck" in notice.headline.text() and notice.resume_button.isVisible()
        actions = window.run_actions
        confirm = Confirm(True)
        actions.confirm = confirm
        qtbot.mouseClick(notice.resume_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: isinstance(actions.dialog, ResumeDialog) and actions.dialog.plan is not None,
                        timeout=TIMEOUT)
        dialog = actions.dialog
        assert dialog.width() <= size[0] and dialog.height() <= size[1]          # fits the window
        line = dialog.argv_editor.fontMetrics().lineSpacing()
        assert dialog.argv_editor.height() >= 3 * line and dialog.env_editor.height() >= 3 * line
        assert dialog.stop_button.isVisible() and str(hung.pid) in dialog.stop_button.text()
        with qtbot.waitSignal(dialog.stopped, timeout=TIMEOUT):
            qtbot.mouseClick(dialog.stop_button, Qt.MouseButton.LeftButton)
        assert "Stop process" in confirm.questions[0] and hung.wait(timeout=30) is not None
        qtbot.waitUntil(lambda: dialog.plan is not None and dialog.plan.owner.state == "gone"
                        and dialog.resume_button.isEnabled(), timeout=TIMEOUT)
        try:
            with qtbot.waitSignal(actions.console.process_finished, timeout=TIMEOUT) as finished:
                qtbot.mouseClick(dialog.resume_button, Qt.MouseButton.LeftButton)
        except qtbot.TimeoutError:   # say what the user would have seen
            raise AssertionError(f"no exit; dialog: {dialog.error.text()!r}; console:\n"
                                 f"{actions.console.text()}") from None
        assert finished.args == [run.id, 0]
    with open_store(store) as st:
        final = st.get_run(run.id)
    assert final.status == "completed" and final.epoch == 2
    # live: the list, the notice and the Metadata tab follow the completed run
    qtbot.waitUntil(lambda: window.runs_panel.model.status_of(run.id) == "completed", timeout=TIMEOUT)
    qtbot.waitUntil(lambda: not notice.isVisible(), timeout=TIMEOUT)
    _click_checkpoint(qtbot, window, -1)
    metadata = _click_tab(qtbot, window, "metadata")
    qtbot.waitUntil(lambda: metadata.run.values().get("Status") == "completed", timeout=TIMEOUT)
    assert metadata.run.values().get("Checkpoints") == str(final.checkpoint_count)
    assert window.store_status.readonly_chip.text() == "read-only + your writes"
    window.close()


def _demo_runs(store: Path) -> tuple:
    with open_store(store) as st:
        runs = st.list_runs()
        fork = next(r for r in runs if r.parent_run)
        origin = st.get_checkpoint(fork.parent_checkpoint)
        original = st.get_run(fork.parent_run)
    return fork, origin, original


@pytest.mark.parametrize("size", SIZES)
def test_diff_distant_checkpoints_and_a_fork_against_its_original(qtbot, demo_store: Path, size) -> None:
    fork, origin, original = _demo_runs(demo_store)
    window = _window(qtbot, size, demo_store)
    _click_run(qtbot, window, original.id)
    _click_checkpoint(qtbot, window, -1)
    diff = _click_tab(qtbot, window, "diff")
    qtbot.waitUntil(lambda: diff.result is not None, timeout=TIMEOUT)
    # distant: pick #2 of this run in the picker, by typing
    picker = diff.open_picker()
    qtbot.waitUntil(lambda: picker.results.count() > 0, timeout=TIMEOUT)   # this run's checkpoints
    assert picker.results.count() == original.checkpoint_count
    with qtbot.waitSignal(picker.searched, timeout=TIMEOUT):
        qtbot.keyClicks(picker.query, "#2")
    first = picker.results.item(0).data(Qt.ItemDataRole.UserRole)
    assert (first.run_id, first.seq) == (original.id, 2)
    with qtbot.waitSignal(diff.diff_ready, timeout=TIMEOUT) as ready:
        qtbot.keyClick(picker.query, Qt.Key.Key_Return)
    result = ready.args[0]
    assert (result.a.seq, result.b.seq) == (2, original.head_seq) and not result.empty
    # by run name: the picker finds the fork's checkpoints too
    picker = diff.open_picker()
    qtbot.waitUntil(lambda: picker.results.count() > 0, timeout=TIMEOUT)
    with qtbot.waitSignal(picker.searched, timeout=TIMEOUT):
        qtbot.keyClicks(picker.query, "fork of")
    found = [picker.results.item(i).data(Qt.ItemDataRole.UserRole) for i in range(picker.results.count())]
    assert any(cp.run_id == fork.id for cp in found)
    picker.reject()
    # the fork against the original at the same step: one click
    _click_run(qtbot, window, fork.id)
    snap = _click_checkpoint(qtbot, window, 3)
    assert diff.same_step_action.isEnabled() and diff.origin_action.isEnabled()
    qtbot.waitUntil(lambda: not diff.busy, timeout=TIMEOUT)    # the diff against the pinned #2 first
    with qtbot.waitSignal(diff.diff_ready, timeout=TIMEOUT) as ready:
        diff.same_step_action.trigger()
    result = ready.args[0]
    assert (result.a.run_id, result.a.seq) == (original.id, origin.seq + snap.info.seq)
    assert (result.b.run_id, result.b.seq) == (fork.id, 3)
    assert diff.changes.model().rowCount() >= 1
    # another store: no pin, no filter, no "Comparing…" left over
    panel = window.runs_panel
    qtbot.keyClicks(panel.filter_edit, "beekeeping")
    qtbot.waitUntil(lambda: "shown" in panel.count_label.text(), timeout=TIMEOUT)
    with open_store(demo_store) as st:
        total = len(st.list_runs())
    assert panel.count_label.text() == f"2 of {total} runs shown"      # the run and its fork
    other = demo_store.parent / "other" / "demo.db"
    other.parent.mkdir()
    shutil.copyfile(demo_store, other)
    with qtbot.waitSignals([window.session.opened, panel.model.runs_loaded], timeout=TIMEOUT):
        window.open_store(str(other))
    assert panel.proxy.text == "" and panel.filter_edit.text() == ""
    assert panel.count_label.text() == f"{total} runs"
    assert diff._pinned is None and not diff.busy and "Comparing" not in diff.summary.summary.text()
    window.close()


@pytest.mark.parametrize("size", SIZES)
def test_fork_resume_and_compare_with_the_origin(qtbot, crashed_store: Path, size) -> None:
    with open_store(crashed_store) as st:
        reference = next(r for r in st.list_runs() if r.name == "reference")
    window = _window(qtbot, size, crashed_store)
    _click_run(qtbot, window, reference.id)
    _click_checkpoint(qtbot, window, 4)
    actions = window.run_actions
    fork_dialog = actions.open_fork_dialog()
    assert isinstance(fork_dialog, ForkDialog)
    assert fork_dialog.width() <= size[0] and fork_dialog.height() <= size[1]
    qtbot.keyClicks(fork_dialog.reason, "retry from 4")
    qtbot.waitUntil(lambda: fork_dialog.valid and fork_dialog.review_button.isEnabled(), timeout=TIMEOUT)
    qtbot.mouseClick(fork_dialog.review_button, Qt.MouseButton.LeftButton)
    with qtbot.waitSignal(fork_dialog.forked, timeout=TIMEOUT) as forked:
        qtbot.mouseClick(fork_dialog.fork_button, Qt.MouseButton.LeftButton)
    fork = forked.args[0]
    qtbot.waitUntil(lambda: window.current_run() is not None and window.current_run().id == fork.id,
                    timeout=TIMEOUT)
    with open_store(crashed_store) as st:
        made = st.get_run(fork.id)
        assert made.parent_run == reference.id and st.get_checkpoint(made.parent_checkpoint).seq == 4
    # resume the fork: the dialog is built from the fork
    confirm = Confirm(True)
    actions.confirm = confirm
    qtbot.waitUntil(lambda: actions.resume.isEnabled(), timeout=TIMEOUT)
    actions.resume.trigger()
    qtbot.waitUntil(lambda: isinstance(actions.dialog, ResumeDialog) and actions.dialog.plan is not None,
                    timeout=TIMEOUT)
    dialog = actions.dialog
    assert dialog.plan.run.id == fork.id and "fork fork" not in dialog.title.text()
    assert dialog.origin_label.isVisible() and reference.id in dialog.origin_label.text()
    with qtbot.waitSignal(actions.console.process_finished, timeout=TIMEOUT) as finished:
        qtbot.mouseClick(dialog.resume_button, Qt.MouseButton.LeftButton)
    assert finished.args == [fork.id, 0]
    with open_store(crashed_store) as st:
        assert st.get_run(fork.id).status == "completed"
    # compare the fork's head with its origin: one click
    qtbot.waitUntil(lambda: window.runs_panel.model.status_of(fork.id) == "completed", timeout=TIMEOUT)
    _click_run(qtbot, window, fork.id)
    qtbot.waitUntil(lambda: window.timeline_panel.model.rowCount() > 1, timeout=TIMEOUT)
    _click_checkpoint(qtbot, window, -1)
    diff = _click_tab(qtbot, window, "diff")
    qtbot.waitUntil(lambda: not diff.busy, timeout=TIMEOUT)
    with qtbot.waitSignal(diff.diff_ready, timeout=TIMEOUT) as ready:
        diff.origin_action.trigger()
    result = ready.args[0]
    assert (result.a.run_id, result.a.seq) == (reference.id, 4) and result.b.run_id == fork.id
    assert not result.empty
    window.close()


@pytest.mark.parametrize("size", SIZES)
def test_fork_without_the_approval_flag_resumes_with_the_forks_command(qtbot, demo_store: Path, size) -> None:
    with open_store(demo_store) as st:
        review = next(r for r in st.list_runs() if "--approve-first" in (r.resume_spec or {}).get("argv", ()))
    window = _window(qtbot, size, demo_store)
    _click_run(qtbot, window, review.id)
    _click_checkpoint(qtbot, window, 5)
    actions = window.run_actions
    dialog = actions.open_fork_dialog()
    assert isinstance(dialog, ForkDialog)
    qtbot.waitUntil(lambda: dialog.snapshot is not None, timeout=TIMEOUT)
    # the edit: the reviewer no longer approves at once
    view = dialog.state_editor.view
    cursor = view.document().find('"approve_first": true')
    assert not cursor.isNull()
    view.setTextCursor(cursor)
    view.setFocus()
    qtbot.keyClicks(view, '"approve_first": false')
    dialog.state_editor.validate()
    command = dialog.resume_editor
    assert command.conflicts and command.conflicts[0].flag == "--approve-first"
    assert not command.remove_button.isHidden() and "⚠" in dialog.tabs.tabText(2)
    assert "--approve-first" in command.argv_editor.value
    dialog.tabs.setCurrentWidget(command)
    qtbot.mouseClick(command.remove_button, Qt.MouseButton.LeftButton)
    assert "--approve-first" not in command.argv_editor.value and not command.conflicts
    assert command.edited and dialog.tabs.tabText(2) == "Resume command •"
    assert not dialog.review_button.isEnabled() and "give the fork a reason" in dialog.review_button.toolTip()
    qtbot.keyClicks(dialog.reason, "the reviewer should look at the draft")
    qtbot.waitUntil(lambda: dialog.review_button.isEnabled(), timeout=TIMEOUT)
    qtbot.mouseClick(dialog.review_button, Qt.MouseButton.LeftButton)
    review_text = dialog.review.toPlainText()
    command_line = next(line for line in review_text.splitlines() if line.startswith("$ "))
    assert "The fork's resume command" in review_text and "--approve-first" not in command_line
    assert '-  "--approve-first",' in review_text                       # shown as removed
    with qtbot.waitSignal(dialog.forked, timeout=TIMEOUT) as forked:
        qtbot.mouseClick(dialog.fork_button, Qt.MouseButton.LeftButton)
    fork = forked.args[0]
    expected = [a for a in review.resume_spec["argv"] if a != "--approve-first"]
    with open_store(demo_store) as st:
        assert st.get_run(fork.id).resume_spec["argv"] == expected                 # the fork's own
        assert "--approve-first" in st.get_run(review.id).resume_spec["argv"]     # the original untouched
    # resume the fork: its dialog shows the fork's command, and the process gets it
    qtbot.waitUntil(lambda: window.current_run() is not None and window.current_run().id == fork.id
                    and actions.resume.isEnabled(), timeout=TIMEOUT)
    actions.confirm = Confirm(True)
    actions.resume.trigger()
    qtbot.waitUntil(lambda: isinstance(actions.dialog, ResumeDialog) and actions.dialog.plan is not None,
                    timeout=TIMEOUT)
    resume = actions.dialog
    assert resume.plan.run.id == fork.id and resume.argv_editor.value == expected
    assert "fork fork" not in resume.title.text() and "own" in resume.origin_label.text()
    with qtbot.waitSignal(actions.console.process_finished, timeout=TIMEOUT) as finished:
        qtbot.mouseClick(resume.resume_button, Qt.MouseButton.LeftButton)
    assert finished.args == [fork.id, 0]
    with open_store(demo_store) as st:
        done = st.get_run(fork.id)
        head = st.load(f"{fork.id}:-1")
        original_head = st.load(f"{review.id}:-1")
    # the resumed process recorded the command line it really got
    assert done.status == "completed" and "--approve-first" not in done.resume_spec["argv"]
    assert done.resume_spec["argv"][1:] == expected[1:]
    # the edit took effect: the draft got the TODO, the reviewer asked for changes, it was revised
    cited = "(Source: municipal pilot report.)"
    assert head.state["approve_first"] is False and cited in head.state["draft"]
    assert cited not in original_head.state["draft"]
    window.close()
