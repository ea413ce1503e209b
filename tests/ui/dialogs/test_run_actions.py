"""The main window's Fork…/Resume…/Resume from Last Good Checkpoint actions and Console dock."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from inspector.store import open_store
from inspector.ui.dialogs.fork_dialog import ForkDialog
from inspector.ui.dialogs.resume_dialog import ResumeDialog
from inspector.ui.main_window import MainWindow
from tests.resume.helpers import final_snapshot
from tests.ui.dialogs.conftest import run_named
from tests.ui.dialogs.test_resume_flow import TIMEOUT, Confirm


def _window(qtbot, store: Path, run_id: str) -> MainWindow:
    window = MainWindow(restore_settings=False)
    qtbot.addWidget(window)
    window.show()
    with qtbot.waitSignal(window.session.opened, timeout=TIMEOUT):
        window.open_store(str(store))
    qtbot.waitUntil(lambda: window.runs_panel.select_run(run_id), timeout=TIMEOUT)
    qtbot.waitUntil(lambda: window.current_run() is not None and window.current_run().id == run_id,
                    timeout=TIMEOUT)
    return window


def test_resume_from_last_good_checkpoint_is_one_click_plus_confirmation(qtbot, crashed_store: Path) -> None:
    crashed, reference = run_named(crashed_store, "crashy"), run_named(crashed_store, "reference")
    window = _window(qtbot, crashed_store, crashed.id)
    actions = window.run_actions
    window.details.set_tab("metadata")
    metadata = window.details.panels["metadata"]
    qtbot.waitUntil(lambda: not metadata.diagnosis.isHidden(), timeout=TIMEOUT)
    assert "crashed" in metadata.diagnosis.text() and "is gone" in metadata.diagnosis.text()
    assert actions.resume_good in window.runs_panel.view.actions()
    assert actions.fork in window.timeline_panel.view.actions()
    assert actions.resume_good.isEnabled() and actions.fork.isEnabled()
    confirm = Confirm(True)
    actions.confirm = confirm
    actions.resume_good.trigger()              # the Resume dialog, planned at the last good checkpoint
    qtbot.waitUntil(lambda: isinstance(actions.dialog, ResumeDialog) and actions.dialog.plan is not None,
                    timeout=TIMEOUT)
    dialog = actions.dialog
    assert dialog.plan.run.id == crashed.id and dialog.resume_button.isEnabled()
    with qtbot.waitSignal(actions.console.process_finished, timeout=TIMEOUT) as blocker:
        qtbot.mouseClick(dialog.resume_button, Qt.MouseButton.LeftButton)
    assert blocker.args == [crashed.id, 0]
    assert f"Run {crashed.id} continues" in confirm.questions[0] and "--crash-at 7" in confirm.questions[0]
    assert actions.console.isVisible() and "exit code 0" in actions.console.text()
    assert window.current_run().id == crashed.id                  # the timeline follows the resumed run
    qtbot.waitUntil(lambda: metadata.diagnosis.isHidden(), timeout=TIMEOUT)
    assert final_snapshot(crashed_store, crashed.id).state == final_snapshot(crashed_store, reference.id).state


def test_declining_last_good_resume_changes_nothing(qtbot, crashed_store: Path) -> None:
    crashed = run_named(crashed_store, "crashy")
    window = _window(qtbot, crashed_store, crashed.id)
    confirm = Confirm(False)
    actions = window.run_actions
    actions.confirm = confirm
    actions.resume_good.trigger()
    qtbot.waitUntil(lambda: isinstance(actions.dialog, ResumeDialog) and actions.dialog.resume_button.isEnabled(),
                    timeout=TIMEOUT)
    qtbot.mouseClick(actions.dialog.resume_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(confirm.questions) == 1, timeout=TIMEOUT)
    assert actions.dialog.isVisible() and actions.dialog.launch is None
    with open_store(crashed_store) as st:
        run = st.get_run(crashed.id)
    assert (run.epoch, run.head_seq, run.status) == (crashed.epoch, crashed.head_seq, "running")
    assert window.run_actions.console.running() == []


def test_fork_and_resume_actions_open_their_dialogs(qtbot, crashed_store: Path) -> None:
    reference = run_named(crashed_store, "reference")
    window = _window(qtbot, crashed_store, reference.id)
    fork = window.run_actions.open_fork_dialog()
    assert isinstance(fork, ForkDialog)
    with qtbot.waitSignal(fork.loaded, timeout=TIMEOUT):
        pass
    assert f"#{reference.head_seq}" in fork.title.text() or "#" in fork.title.text()
    qtbot.keyClicks(fork.reason, "copy")
    qtbot.mouseClick(fork.review_button, Qt.MouseButton.LeftButton)
    with qtbot.waitSignal(fork.forked, timeout=TIMEOUT) as blocker:
        qtbot.mouseClick(fork.fork_button, Qt.MouseButton.LeftButton)
    child = blocker.args[0]
    qtbot.waitUntil(lambda: window.current_run() is not None and window.current_run().id == child.id,
                    timeout=TIMEOUT)
    resume = window.run_actions.open_resume_dialog()
    assert isinstance(resume, ResumeDialog)
    with qtbot.waitSignal(resume.plan_loaded, timeout=TIMEOUT) as planned:
        pass
    assert planned.args[0].run.id == child.id and planned.args[0].mode == "continue"
    resume.reject()
