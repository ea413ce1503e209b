"""A LangGraph fork from the main window: the new checkpoint (of the same thread) is shown and
selected; a raw fork without edits is refused before review, with the reason."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from inspector.store import open_store
from inspector.ui.dialogs import langgraph_options
from inspector.ui.dialogs.fork_dialog import ForkDialog
from tests.store.langgraph.conftest import lg_copy, lg_master  # noqa: F401 - fixtures
from tests.ui.conftest import open_in, select_checkpoint, select_run
from tests.ui.dialogs.test_fork_dialog import _replace

TIMEOUT = 30_000


@pytest.fixture(autouse=True)
def quiet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Settings in a temp dir; a fork does not wait for the thread to be quiet."""
    monkeypatch.setenv("CHECKPOINT_INSPECTOR_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setattr(langgraph_options, "QUIET_SECONDS", 0.0)


def _fork_dialog(window, qtbot, seq: int) -> ForkDialog:
    select_run(window, qtbot, "thread-A")
    select_checkpoint(window, qtbot, seq)
    dialog = window.run_actions.open_fork_dialog()
    assert isinstance(dialog, ForkDialog)
    qtbot.waitUntil(lambda: dialog.snapshot is not None, timeout=TIMEOUT)
    return dialog


@pytest.mark.parametrize("live", [False, True])
def test_a_langgraph_fork_shows_and_selects_its_new_checkpoint(window, qtbot, lg_copy: Path, live: bool) -> None:
    """The fork is a new checkpoint of the thread shown (the run's id does not change): the
    timeline is read again, shows the fork's branch and selects the new checkpoint."""
    window.menu_actions.live.setChecked(live)
    open_in(window, qtbot, lg_copy)
    dialog = _fork_dialog(window, qtbot, 2)
    _replace(qtbot, dialog.state_editor, '"priority": "high"', '"priority": "low"')
    qtbot.keyClicks(dialog.reason, "try low priority")
    qtbot.mouseClick(dialog.review_button, Qt.MouseButton.LeftButton)
    with qtbot.waitSignal(dialog.forked, timeout=TIMEOUT):
        qtbot.mouseClick(dialog.fork_button, Qt.MouseButton.LeftButton)
    with open_store(lg_copy) as store:
        head = store.get_checkpoint("thread-A:-1")
        total = store.count_checkpoints("thread-A")
    assert head.kind == "update" and head.seq == 8

    def fork_shown() -> bool:
        current, snap = window.current_checkpoint(), window.details.snapshot
        return (current is not None and current.id == head.id and snap is not None and snap.info.id == head.id)
    qtbot.waitUntil(fork_shown, timeout=TIMEOUT)
    timeline = window.timeline_panel
    assert timeline.model.branch is not None and timeline.model.branch.contains(8)
    assert timeline.model.row_of_seq(2) is not None        # the branch the fork starts from
    assert window.details.snapshot.state["priority"] == "low"
    qtbot.waitUntil(lambda: window.current_run().checkpoint_count == total, timeout=TIMEOUT)


def test_a_raw_langgraph_fork_without_an_edit_cannot_be_reviewed(window, qtbot, lg_copy: Path) -> None:
    """No graph set: a raw fork writes only edited values, so without one Review Fork… is off
    and the dialog says why (Create Fork used to fail at the end instead)."""
    open_in(window, qtbot, lg_copy)
    dialog = _fork_dialog(window, qtbot, 2)
    qtbot.keyClicks(dialog.reason, "no edit")
    assert not dialog.review_button.isEnabled()
    assert "raw fork" in dialog.review_button.toolTip() and "LangGraph Settings" in dialog.review_button.toolTip()
    assert dialog.hint.isVisible() and "edit" in dialog.hint.text()
    _replace(qtbot, dialog.state_editor, '"priority": "high"', '"priority": "low"')
    assert dialog.review_button.isEnabled() and not dialog.hint.isVisible()
    _replace(qtbot, dialog.state_editor, '"priority": "low"', '"priority": "high"')     # the same value again
    assert not dialog.review_button.isEnabled() and dialog.hint.isVisible()


def test_a_langgraph_fork_through_the_graph_needs_no_edit(window, qtbot, lg_copy: Path) -> None:
    from inspector.store.langgraph.settings import GraphSettings, save_settings

    open_in(window, qtbot, lg_copy)
    save_settings(window.session.info.url, GraphSettings(graph="lg_entry:graph"))
    dialog = _fork_dialog(window, qtbot, 2)
    assert "through your graph" in dialog.title.text()
    qtbot.keyClicks(dialog.reason, "re-run as it is")
    assert dialog.review_button.isEnabled() and not dialog.hint.isVisible()


def test_a_langgraph_fork_offers_no_name_and_no_task_board_to_edit(window, qtbot, lg_copy: Path) -> None:
    """A LangGraph fork is a checkpoint of the same thread: the Name field was taken and
    ignored, and the Task state tab looked editable ("valid — unchanged") with its editor
    disabled and no reason given. Neither is offered; a native fork still has both."""
    open_in(window, qtbot, lg_copy)
    dialog = _fork_dialog(window, qtbot, 2)
    assert not dialog.name.isVisibleTo(dialog)
    assert [dialog.tabs.isTabVisible(i) for i in range(3)] == [True, False, False]
