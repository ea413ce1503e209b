"""Resume a LangGraph thread from the GUI: the dialog asks for the graph and the interrupt's answer,
the real runner process answers it in the Console dock, and LangGraph completes the thread."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.store import open_store
from inspector.store.langgraph.settings import load_settings
from inspector.ui.dialogs import langgraph_options
from inspector.ui.dialogs.resume_dialog import ResumeDialog
from inspector.ui.widgets.console_dock import ConsoleDock
from tests.store.langgraph.conftest import lg_copy, lg_master  # noqa: F401 - fixtures
from tests.store.langgraph.test_fork_resume import ENTRY
from tests.ui.dialogs.test_resume_flow import Confirm

TIMEOUT = 30_000


@pytest.fixture
def entry(tmp_path: Path) -> Path:
    """A user's project exposing the test graph as ``lg_entry:graph``."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "lg_entry.py").write_text(ENTRY)
    return project


def test_answer_an_interrupt_from_the_resume_dialog(qtbot, lg_copy: Path, entry: Path,
                                                    tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHECKPOINT_INSPECTOR_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setattr(langgraph_options, "QUIET_SECONDS", 0.0)
    with open_store(lg_copy) as store:
        head = store.get_checkpoint("thread-A:-1")
        assert store.get_run("thread-A").status == "interrupted"
    confirm = Confirm(True)
    dialog = ResumeDialog(str(lg_copy), head.id, confirm=confirm)
    qtbot.addWidget(dialog)
    # without a graph the dialog explains why, and shows the interrupt's question
    qtbot.waitUntil(lambda: dialog.kind == "langgraph" and bool(dialog.langgraph.answer_check.text()), timeout=TIMEOUT)
    assert not dialog.langgraph.isHidden() and not dialog.resume_button.isEnabled()
    assert "Approve the plan" in dialog.langgraph.question.text()
    dialog.langgraph.graph.setText("lg_entry:graph")
    dialog.langgraph.answer.setPlainText('{"ok": true}')
    with qtbot.waitSignal(dialog.plan_loaded, timeout=TIMEOUT):
        dialog.langgraph.replan.click()
    assert dialog.plan.action == "answer" and dialog.error.isHidden()
    dialog.cwd.setText(str(entry))
    with qtbot.waitSignal(dialog.launch_ready, timeout=TIMEOUT) as launched:
        dialog.resume_button.click()
    assert confirm.questions and "lg_entry:graph" in confirm.questions[0]
    console = ConsoleDock()
    qtbot.addWidget(console)
    with qtbot.waitSignal(console.process_finished, timeout=TIMEOUT) as finished:
        console.start(launched.args[0])
    assert finished.args[1] == 0, console.text()
    with open_store(lg_copy) as store:
        assert store.get_run("thread-A").status == "completed"
        assert store.load("thread-A:-1").state["approved"] == {"ok": True}
    assert load_settings(str(lg_copy)).graph == "lg_entry:graph"   # remembered for this store


def test_raw_fork_of_a_langgraph_checkpoint_from_the_fork_dialog(qtbot, lg_copy: Path,
                                                                 tmp_path: Path, monkeypatch) -> None:
    from PySide6.QtCore import Qt

    from inspector.ui.dialogs.fork_dialog import ForkDialog
    from tests.ui.dialogs.test_fork_dialog import _replace

    monkeypatch.setenv("CHECKPOINT_INSPECTOR_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setattr(langgraph_options, "QUIET_SECONDS", 0.0)
    with open_store(lg_copy) as store:
        head = store.load("thread-A:-1")
        count = store.count_checkpoints("thread-A")
    assert head.state["priority"] == "high"
    dialog = ForkDialog(str(lg_copy), head.info.id)
    qtbot.addWidget(dialog)
    with qtbot.waitSignal(dialog.loaded, timeout=TIMEOUT):
        dialog.show()
    assert "raw fork" in dialog.title.text() and "reducers are not applied" in dialog.title.text()
    _replace(qtbot, dialog.state_editor, '"priority": "high"', '"priority": "low"')
    qtbot.keyClicks(dialog.reason, "try low priority")
    qtbot.mouseClick(dialog.review_button, Qt.MouseButton.LeftButton)
    errors: list[str] = []
    dialog.failed.connect(errors.append)
    forked: list = []
    dialog.forked.connect(forked.append)
    qtbot.mouseClick(dialog.fork_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(forked or errors), timeout=TIMEOUT)
    assert not errors, errors
    assert forked[0].id == "thread-A"
    with open_store(lg_copy) as store:
        assert store.count_checkpoints("thread-A") == count + 1
        fork = store.load("thread-A:-1")
        assert fork.state["priority"] == "low" and fork.info.kind == "update"
        assert store.load(head.info.id).state == head.state     # the original is unchanged


def test_before_a_graph_is_set_the_resume_dialog_says_what_it_needs(qtbot, lg_copy: Path, entry: Path,
                                                                    tmp_path: Path, monkeypatch) -> None:
    """No "cannot be resumed" over empty fields and a "Prepare again" never pressed: the dialog
    asks for the graph, shows no empty facts, and its button prepares the resume."""
    monkeypatch.setenv("CHECKPOINT_INSPECTOR_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setattr(langgraph_options, "QUIET_SECONDS", 0.0)
    monkeypatch.syspath_prepend(str(entry))
    dialog = ResumeDialog(str(lg_copy), "thread-A:-1", confirm=Confirm(False))
    qtbot.addWidget(dialog)
    dialog.resize(1024, 700)
    dialog.show()
    qtbot.waitUntil(lambda: dialog.kind == "langgraph" and bool(dialog.langgraph.answer_check.text()), timeout=TIMEOUT)
    title = dialog.title.text()
    assert "cannot be resumed" not in title and "needs its graph" in title and "module:attr" in title
    assert dialog.langgraph.replan.text() == "Prepare Resume" and "Prepare Resume" in title
    assert "Prepare Resume" in dialog.resume_button.toolTip()
    for empty in (dialog.mode_label, dialog.owner_label, dialog.replay_label, dialog.store_label,
                  dialog.argv_editor, dialog.env_editor, dialog.cwd):
        assert not empty.isVisible()
    dialog.langgraph.graph.setText("lg_entry:graph")
    dialog.langgraph.answer.setPlainText('{"ok": true}')
    assert "press <i>Prepare Resume</i>" in dialog.langgraph.answer_check.text()
    with qtbot.waitSignal(dialog.plan_loaded, timeout=TIMEOUT):
        dialog.langgraph.replan.click()
    assert dialog.langgraph.replan.text() == "Prepare Again"
    assert dialog.mode_label.isVisible() and dialog.argv_editor.isVisible() and dialog.cwd.isVisible()
    dialog.langgraph.graph.setText("")               # again without the graph: says so again
    with qtbot.waitSignal(dialog.failed, timeout=TIMEOUT):
        dialog.langgraph.replan.click()
    assert "needs its graph" in dialog.title.text() and not dialog.argv_editor.isVisible()


def test_a_busy_thread_is_refused_in_words_the_window_can_follow(qtbot, lg_copy: Path, entry: Path,
                                                                   tmp_path: Path, monkeypatch) -> None:
    """A thread that wrote a checkpoint recently may still be running: the fork and resume
    dialogs say to wait and try again, never to act "with --force" (an option only the
    command line has); the command line's own sentence still names it."""
    from PySide6.QtCore import Qt

    from inspector.ui.dialogs.fork_dialog import ForkDialog
    from tests.ui.dialogs.test_fork_dialog import _replace

    monkeypatch.setenv("CHECKPOINT_INSPECTOR_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setattr(langgraph_options, "QUIET_SECONDS", 10.0 ** 9)     # every thread wrote "recently"
    with open_store(lg_copy) as store:
        head = store.load("thread-C:-1")
    dialog = ForkDialog(str(lg_copy), head.info.id)
    qtbot.addWidget(dialog)
    with qtbot.waitSignal(dialog.loaded, timeout=TIMEOUT):
        dialog.show()
    assert head.state["priority"] == "low"
    _replace(qtbot, dialog.state_editor, '"priority": "low"', '"priority": "high"')
    qtbot.keyClicks(dialog.reason, "try")
    qtbot.mouseClick(dialog.review_button, Qt.MouseButton.LeftButton)
    errors: list[str] = []
    dialog.failed.connect(errors.append)
    qtbot.mouseClick(dialog.fork_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(errors), timeout=TIMEOUT)
    assert "may still be running" in errors[0] and "then fork again" in errors[0] and "--force" not in errors[0]

    with open_store(lg_copy) as store:
        outcome = langgraph_options.plan_langgraph(store, "thread-C:-1", langgraph_options.LangGraphChoices(
            graph="lg_entry:graph", trusted=False, answer=""))
    assert outcome.error is not None and "may still be running" in outcome.error
    assert "prepare the resume again" in outcome.error and "--force" not in outcome.error
