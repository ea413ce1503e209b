"""Fork through the GUI: edit JSON in place, review the edit, fork; then resume the fork."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor

from inspector.store import open_store
from inspector.ui.dialogs.fork_dialog import ForkDialog
from inspector.ui.dialogs.resume_dialog import ResumeDialog
from inspector.ui.widgets.console_dock import ConsoleDock
from tests.resume.helpers import final_snapshot, raw_run_dump
from tests.ui.dialogs.conftest import run_named, store_url
from tests.ui.dialogs.test_resume_flow import TIMEOUT, Confirm


def _fork_dialog(qtbot, store: Path, ref: str) -> ForkDialog:
    dialog = ForkDialog(store_url(store), ref)
    qtbot.addWidget(dialog)
    with qtbot.waitSignal(dialog.loaded, timeout=TIMEOUT):
        dialog.show()
    return dialog


def _replace(qtbot, editor, old: str, new: str) -> None:
    """Select ``old`` in the editor and type ``new`` over it with the keyboard."""
    view = editor.view
    cursor = view.document().find(old)
    assert not cursor.isNull(), old
    view.setTextCursor(cursor)
    view.setFocus()
    qtbot.keyClicks(view, new)
    editor.validate()


def test_fork_with_edit_then_resume_the_fork(qtbot, crashed_store: Path) -> None:
    source = run_named(crashed_store, "reference")
    before = raw_run_dump(crashed_store, source.id)
    dialog = _fork_dialog(qtbot, crashed_store, f"{source.id}:4")
    assert "#4" in dialog.title.text() and not dialog.review_button.isEnabled()   # no reason yet
    _replace(qtbot, dialog.state_editor, '"approve_first": false', '"approve_first": true')
    assert dialog.state_editor.edited and not dialog.tasks_editor.edited
    assert dialog.tabs.tabText(0) == "State •"
    qtbot.keyClicks(dialog.reason, "draft without the TODO marker")
    assert dialog.review_button.isEnabled()
    qtbot.mouseClick(dialog.review_button, Qt.MouseButton.LeftButton)
    assert [line.text for line in dialog.review_lines] == ["State", "~ approve_first: false → true"]
    assert "approve_first" in dialog.review.toPlainText()
    assert "task state: unchanged, shared by reference" in dialog.review_intro.text().lower()
    with qtbot.waitSignal(dialog.forked, timeout=TIMEOUT) as blocker:
        qtbot.mouseClick(dialog.fork_button, Qt.MouseButton.LeftButton)
    child = blocker.args[0]
    assert (child.parent_run, child.fork_reason) == (source.id, "draft without the TODO marker")
    with open_store(crashed_store) as st:
        head = st.load(f"{child.id}:0")
        original = st.get_checkpoint(f"{source.id}:4")
    assert head.state["approve_first"] is True and head.info.tasks_hash == original.tasks_hash

    resume = ResumeDialog(store_url(crashed_store), f"{child.id}:-1", confirm=Confirm(True))
    qtbot.addWidget(resume)
    with qtbot.waitSignal(resume.plan_loaded, timeout=TIMEOUT):
        resume.show()
    assert "Continue the same run" in resume.mode_label.text()
    console = ConsoleDock()
    qtbot.addWidget(console)
    resume.launch_ready.connect(console.start)
    with qtbot.waitSignal(console.process_finished, timeout=TIMEOUT) as finished:
        qtbot.mouseClick(resume.resume_button, Qt.MouseButton.LeftButton)
    assert finished.args == [child.id, 0]
    done, reference = final_snapshot(crashed_store, child.id), final_snapshot(crashed_store, source.id)
    assert done.info.kind == "final" and "TODO" not in done.state["draft"]
    assert done.state["draft"] != reference.state["draft"]
    assert raw_run_dump(crashed_store, source.id) == before


def test_invalid_edits_block_the_fork_with_the_reason(qtbot, crashed_store: Path) -> None:
    source = run_named(crashed_store, "reference")
    dialog = _fork_dialog(qtbot, crashed_store, f"{source.id}:4")
    qtbot.keyClicks(dialog.reason, "try")
    _replace(qtbot, dialog.state_editor, '"approve_first": false,', '"approve_first": false')
    assert dialog.state_editor.error and "not valid JSON" in dialog.state_editor.status.text()
    assert "line" in dialog.state_editor.status.text() and not dialog.review_button.isEnabled()
    assert dialog.tabs.tabText(0) == "State ⚠"
    qtbot.mouseClick(dialog.reset_button, Qt.MouseButton.LeftButton)
    assert dialog.state_editor.error is None and dialog.review_button.isEnabled()
    _replace(qtbot, dialog.tasks_editor, '"status": "done"', '"status": "finished"')
    assert "is not one of" in dialog.tasks_editor.status.text() and not dialog.review_button.isEnabled()
    dialog.tasks_editor.reset()
    dialog.reason.clear()
    assert not dialog.review_button.isEnabled()
    with open_store(crashed_store) as st:
        assert len(st.list_runs()) == 2


def test_unedited_fork_is_by_reference(qtbot, crashed_store: Path) -> None:
    source = run_named(crashed_store, "reference")
    dialog = _fork_dialog(qtbot, crashed_store, f"{source.id}:10")
    view = dialog.state_editor.view
    cursor = view.textCursor()
    cursor.movePosition(QTextCursor.MoveOperation.End)
    view.setTextCursor(cursor)
    qtbot.keyClicks(view, " ")          # whitespace: the text differs, the value does not
    qtbot.keyClicks(dialog.reason, "plain copy")
    qtbot.mouseClick(dialog.review_button, Qt.MouseButton.LeftButton)
    assert dialog.review_lines == [] and "No edits" in dialog.review.toPlainText()
    with qtbot.waitSignal(dialog.forked, timeout=TIMEOUT) as blocker:
        qtbot.mouseClick(dialog.fork_button, Qt.MouseButton.LeftButton)
    with open_store(crashed_store) as st:
        a, b = st.get_checkpoint(f"{source.id}:10"), st.get_checkpoint(f"{blocker.args[0].id}:0")
    assert (a.state_hash, a.tasks_hash) == (b.state_hash, b.tasks_hash)
