"""The Resume dialog of a LangGraph checkpoint waiting at ``interrupt()``: before anything is
typed it shows no error, only a hint naming its Answer field (never the CLI's ``--answer``);
the CLI keeps its ``--answer JSON`` wording."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.cli import main
from inspector.ui.availability import disabled_reason
from inspector.ui.dialogs import langgraph_options
from inspector.ui.dialogs.resume_dialog import ResumeDialog
from tests.store.langgraph.conftest import lg_copy, lg_master  # noqa: F401 - fixtures
from tests.store.langgraph.test_fork_resume import config_home, entry  # noqa: F401 - fixtures
from tests.ui.dialogs.test_resume_flow import Confirm

TIMEOUT = 30_000


def _said(dialog: ResumeDialog) -> list[str]:
    """Every text the dialog shows about what is missing."""
    return [dialog.title.text(), dialog.langgraph.answer_check.text(), dialog.error.text(),
            dialog.resume_button.toolTip()]


def test_the_dialog_asks_for_the_answer_in_its_field_without_an_error(qtbot, lg_copy: Path, monkeypatch) -> None:
    monkeypatch.setattr(langgraph_options, "QUIET_SECONDS", 0.0)
    dialog = ResumeDialog(str(lg_copy), "thread-A:-1", confirm=Confirm(False))
    qtbot.addWidget(dialog)
    dialog.show()
    hint = dialog.langgraph.answer_check
    qtbot.waitUntil(lambda: dialog.kind == "langgraph" and (not dialog.error.isHidden() or bool(hint.text())),
                    timeout=TIMEOUT)
    assert dialog.error.isHidden(), dialog.error.text()
    assert hint.isVisible() and "Answer field" in hint.text() and "Approve the plan?" in hint.text()
    assert not any("--answer" in text for text in _said(dialog))
    assert not dialog.resume_button.isEnabled() and "Answer field" in disabled_reason(dialog.resume_button)
    # with the graph given, Prepare Resume without an answer: the title asks for it, still no error
    dialog.langgraph.graph.setText("lg_entry:graph")
    dialog.langgraph.replan.click()
    qtbot.waitUntil(lambda: "waits for an answer" in dialog.title.text(), timeout=TIMEOUT)
    assert "Answer" in dialog.title.text() and dialog.error.isHidden() and "Answer field" in hint.text()
    assert not any("--answer" in text for text in _said(dialog))
    dialog.langgraph.answer.setPlainText('"yes"')        # typed: the hint gives way to the check
    assert "valid JSON" in hint.text() and "Answer field" not in hint.text()


def test_the_cli_keeps_its_answer_flag(lg_copy: Path, entry: Path, capsys: pytest.CaptureFixture,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(entry)        # (where the user's graph is found)
    code = main(["resume", str(lg_copy), "thread-A:-1", "--graph", "lg_entry:graph", "--force", "--yes"])
    err = capsys.readouterr().err
    assert code == 2 and "give the answer (--answer JSON)" in err and "Answer field" not in err
