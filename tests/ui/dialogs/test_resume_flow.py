"""Resume through the GUI: the Resume dialog prepares, the Console dock runs the real process."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from PySide6.QtCore import Qt

from inspector.demo.agent import EXIT_OWNERSHIP_LOST
from inspector.demo.steps import PLAN
from inspector.record import Checkpointer
from inspector.store import open_store
from inspector.ui.dialogs.resume_dialog import ResumeDialog
from inspector.ui.widgets.console_dock import ConsoleDock
from tests.resume.helpers import final_snapshot, raw_run_dump, read_until, start_agent, wait_for
from tests.ui.dialogs.conftest import run_named, store_url

TIMEOUT = 60_000


class Confirm:
    """The one allowed test double: the answer to the confirmation box (records the question)."""

    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.questions: list[str] = []

    def __call__(self, _parent, _title: str, text: str) -> bool:
        self.questions.append(text)
        return self.answer


def _dialog(qtbot, store: Path, ref: str, confirm: Confirm, **kw) -> ResumeDialog:
    dialog = ResumeDialog(store_url(store), ref, confirm=confirm, **kw)
    qtbot.addWidget(dialog)
    with qtbot.waitSignal(dialog.plan_loaded, timeout=TIMEOUT):
        dialog.show()
    return dialog


def _console(qtbot) -> ConsoleDock:
    console = ConsoleDock()
    qtbot.addWidget(console)
    return console


def test_crashed_run_resumed_from_the_dialog_runs_in_the_console(qtbot, crashed_store: Path) -> None:
    crashed, reference = run_named(crashed_store, "crashy"), run_named(crashed_store, "reference")
    confirm = Confirm(True)
    dialog = _dialog(qtbot, crashed_store, f"{crashed.id}:-1", confirm)
    assert "Continue the same run" in dialog.mode_label.text()
    assert "is gone" in dialog.owner_label.text() and "head of its run" in dialog.replay_label.text()
    assert "--crash-at 7" in dialog.preview.text() and dialog.resume_button.isEnabled()
    console = _console(qtbot)
    dialog.launch_ready.connect(console.start)
    followed: list[str] = []
    console.follow_run.connect(followed.append)
    with qtbot.waitSignal(console.process_finished, timeout=TIMEOUT) as blocker:
        qtbot.mouseClick(dialog.resume_button, Qt.MouseButton.LeftButton)
    assert followed == [crashed.id] and blocker.args == [crashed.id, 0]
    assert len(confirm.questions) == 1 and "--crash-at 7" in confirm.questions[0]
    assert "exit code 0" in console.text() and console.running() == []
    done, ref = final_snapshot(crashed_store, crashed.id), final_snapshot(crashed_store, reference.id)
    assert done.state == ref.state and done.state["log"] == [s.name for s in PLAN]


def test_a_copied_stores_dialog_says_the_agent_is_handed_the_copy(qtbot, crashed_store: Path,
                                                                   crashed_master: Path) -> None:
    """The run's command names the store it was recorded in (``--store`` the original); the
    dialog on a copy says, under the command and in the question, that the agent is handed
    the copy, which is the store it then writes to (the original is left as it was)."""
    crashed = run_named(crashed_store, "crashy")
    before = raw_run_dump(crashed_master, crashed.id)
    confirm = Confirm(True)
    dialog = _dialog(qtbot, crashed_store, f"{crashed.id}:-1", confirm)
    assert f"--store {crashed_master}" in dialog.preview.text()
    note = dialog.store_note
    assert note.isVisible() and "handed this store" in note.text() and str(crashed_store) in note.text()
    assert f"--store {crashed_master}</code> in its own command line is overridden" in note.text()
    console = _console(qtbot)
    dialog.launch_ready.connect(console.start)
    with qtbot.waitSignal(console.process_finished, timeout=TIMEOUT) as blocker:
        qtbot.mouseClick(dialog.resume_button, Qt.MouseButton.LeftButton)
    assert blocker.args == [crashed.id, 0]
    assert f"handed this store ({crashed_store}); the --store {crashed_master} in its command line is " \
           "overridden" in confirm.questions[0]
    with open_store(crashed_store) as st:
        assert st.get_run(crashed.id).status == "completed"
    assert raw_run_dump(crashed_master, crashed.id) == before


def test_a_command_naming_the_open_store_needs_no_store_note(qtbot, crashed_store: Path) -> None:
    crashed = run_named(crashed_store, "crashy")
    dialog = _dialog(qtbot, crashed_store, f"{crashed.id}:-1", Confirm(False))
    argv = list(dialog.plan.argv)
    argv[argv.index("--store") + 1] = str(crashed_store)
    dialog.argv_editor.view.setPlainText(json.dumps(argv))
    assert dialog.argv_editor.validate() and not dialog.store_note.isVisible()
    argv[argv.index("--store") + 1] = "elsewhere.db"        # relative: to the working directory
    dialog.argv_editor.view.setPlainText(json.dumps(argv))
    assert dialog.argv_editor.validate() and dialog.store_note.isVisible()
    assert "--store elsewhere.db" in dialog.store_note.text()


def test_declined_confirmation_runs_and_writes_nothing(qtbot, crashed_store: Path) -> None:
    crashed = run_named(crashed_store, "crashy")
    before = raw_run_dump(crashed_store, crashed.id)
    confirm = Confirm(False)
    dialog = _dialog(qtbot, crashed_store, f"{crashed.id}:3", confirm)
    assert "Fork first" in dialog.mode_label.text() and dialog.reason.isVisible()
    with qtbot.assertNotEmitted(dialog.launch_ready, wait=300):
        qtbot.mouseClick(dialog.resume_button, Qt.MouseButton.LeftButton)
    assert len(confirm.questions) == 1 and dialog.isVisible()
    assert raw_run_dump(crashed_store, crashed.id) == before
    with open_store(crashed_store) as st:
        assert len(st.list_runs()) == 2                     # no fork was made


def test_edited_command_that_cannot_start_marks_the_run_failed(qtbot, crashed_store: Path) -> None:
    crashed = run_named(crashed_store, "crashy")
    dialog = _dialog(qtbot, crashed_store, f"{crashed.id}:-1", Confirm(True))
    dialog.argv_editor.view.setPlainText('["/nonexistent/agent", "--flag; rm -rf /"]')
    dialog.argv_editor.validate()
    assert dialog.preview.text() == "$ /nonexistent/agent '--flag; rm -rf /'"
    console = _console(qtbot)
    dialog.launch_ready.connect(console.start)
    with qtbot.waitSignal(console.process_finished, timeout=TIMEOUT) as blocker:
        qtbot.mouseClick(dialog.resume_button, Qt.MouseButton.LeftButton)
    assert blocker.args == [crashed.id, -1] and "Could not start" in console.text()

    def failed() -> bool:
        with open_store(crashed_store) as st:
            run = st.get_run(crashed.id)
        return run.status == "failed" and "Could not start" in (run.last_error or "")
    qtbot.waitUntil(failed, timeout=TIMEOUT)


def test_stderr_and_exit_code_of_a_process_that_never_takes_over(qtbot, crashed_store: Path) -> None:
    crashed = run_named(crashed_store, "crashy")
    dialog = _dialog(qtbot, crashed_store, f"{crashed.id}:-1", Confirm(True))
    program = "import sys; print('to stdout'); print('agent broke', file=sys.stderr); raise SystemExit(3)"
    dialog.argv_editor.view.setPlainText(json.dumps([sys.executable, "-c", program]))
    assert dialog.argv_editor.validate()
    console = _console(qtbot)
    dialog.launch_ready.connect(console.start)
    with qtbot.waitSignal(console.process_finished, timeout=TIMEOUT) as blocker:
        qtbot.mouseClick(dialog.resume_button, Qt.MouseButton.LeftButton)
    assert blocker.args == [crashed.id, 3]
    assert "to stdout" in console.text() and "agent broke" in console.text() and "exit code 3" in console.text()
    qtbot.waitUntil(lambda: "never took it over" in console.text(), timeout=TIMEOUT)
    with open_store(crashed_store) as st:
        run = st.get_run(crashed.id)
    assert run.status == "failed" and "exited with code 3" in run.last_error


def test_invalid_command_and_environment_disable_resume(qtbot, crashed_store: Path) -> None:
    crashed = run_named(crashed_store, "crashy")
    dialog = _dialog(qtbot, crashed_store, f"{crashed.id}:-1", Confirm(True))
    dialog.argv_editor.view.setPlainText('["python", 3]')
    assert not dialog.argv_editor.validate() and not dialog.resume_button.isEnabled()
    assert "malformed" in dialog.argv_editor.status.text()
    dialog.argv_editor.reset()
    dialog.env_editor.view.setPlainText('{"A": 1}')
    assert not dialog.env_editor.validate() and "not a plain string" in dialog.env_editor.status.text()
    dialog.env_editor.view.setPlainText('{"A": "1", "PATH": "/bin"}')
    assert dialog.env_editor.validate() and dialog.resume_button.isEnabled()
    assert "differs from this inspector's environment: A, PATH" in dialog.env_note.text()


def test_not_resumable_run_shows_the_reason(qtbot, tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    with Checkpointer(store, name="live service", resumable=False,
                      not_resumable_reason="it serves live requests") as cp:
        cp.save({"requests": 1})
        run_id = cp.run_id
    dialog = ResumeDialog(store_url(store), f"{run_id}:-1", confirm=Confirm(True))
    qtbot.addWidget(dialog)
    with qtbot.waitSignal(dialog.failed, timeout=TIMEOUT) as blocker:
        dialog.show()
    assert "it serves live requests" in blocker.args[0]
    assert "it serves live requests" in dialog.error.text() and not dialog.resume_button.isEnabled()


def test_hung_run_resumed_from_the_gui_fences_off_the_old_process(qtbot, tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    hung = start_agent(store, "--seed", "6", "--hang-at", "4", "--hang-for", "3", "--heartbeat", "0.1")
    try:
        read_until(hung, "hanging before step 4")
        run = wait_for(lambda: _only_run(store), what="the run")
        qtbot.waitUntil(lambda: _silent(store, run.id), timeout=TIMEOUT)
        dialog = _dialog(qtbot, store, f"{run.id}:-1", Confirm(True), heartbeat_threshold=0.5)
        assert "no heartbeat" in dialog.owner_label.text()
        assert "Continue the same run" in dialog.mode_label.text()
        console = _console(qtbot)
        dialog.launch_ready.connect(console.start)
        with qtbot.waitSignal(console.process_finished, timeout=TIMEOUT) as blocker:
            qtbot.mouseClick(dialog.resume_button, Qt.MouseButton.LeftButton)
        assert blocker.args == [run.id, 0]
        assert hung.wait(timeout=60) == EXIT_OWNERSHIP_LOST
    finally:
        if hung.poll() is None:
            hung.kill()
            hung.wait()
    with open_store(store) as st:
        final = st.get_run(run.id)
    assert final.status == "completed" and final.epoch == 2


def _only_run(store: Path):
    try:
        with open_store(store) as st:
            runs = st.list_runs()
    except Exception:  # the agent may still be creating the store
        return None
    return runs[0] if runs and runs[0].head_seq >= 3 else None


def _silent(store: Path, run_id: str) -> bool:
    import time
    with open_store(store) as st:
        run = st.get_run(run_id)
    return run.heartbeat is not None and time.time() - run.heartbeat > 0.6

