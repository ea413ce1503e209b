"""The Prune dialog removes what its preview listed, and no more, when the store changes between
Preview and Prune: a run that was live at the preview and finished before Prune keeps its
checkpoints (the summary says the rules select more now), a checkpoint pinned meanwhile stays."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from inspector.record import Checkpointer
from inspector.retention.pins import set_pin
from inspector.store import open_store
from tests.retention.stores import chat
from tests.ui.storage_stores import prune_dialog_on


def _counts(path: Path) -> dict[str, int]:
    with open_store(path) as store:
        return {r.id: r.checkpoint_count for r in store.list_runs()}


def _preview(qtbot, dialog) -> None:
    qtbot.mouseClick(dialog.preview_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.plan is not None, timeout=30_000)


def test_a_run_finishing_between_preview_and_prune_keeps_its_checkpoints(qtbot, tmp_path: Path,
                                                                          monkeypatch) -> None:
    path = tmp_path / "s.db"
    with Checkpointer(path, name="done") as cp:
        chat(cp, 12)
        done = cp.run_id
    asked: list[str] = []

    def answer(_parent, _title, text, *_args):
        asked.append(text)
        return QMessageBox.StandardButton.Yes
    monkeypatch.setattr(QMessageBox, "question", answer)
    with Checkpointer(path, name="agent at work") as live:       # this process is its living agent
        chat(live, 8)
        session, dialog = prune_dialog_on(qtbot, path)
        dialog.show()
        dialog.keep.setValue(2)          # completed, failed and crashed runs: the default statuses
        _preview(qtbot, dialog)
        assert dialog.plan is not None
        assert dialog.plan.remove_checkpoints == 10 and [r.run for r in dialog.plan.runs] == [done]
        chat(live, 4, start=8)           # the agent goes on, then finishes before the user presses Prune
    assert _counts(path)[live.run_id] == 12
    with qtbot.waitSignal(dialog.pruned, timeout=60_000) as applied:
        qtbot.mouseClick(dialog.apply_button, Qt.MouseButton.LeftButton)
    plan = applied.args[0]
    assert asked and asked[0].startswith("Delete 10 checkpoints from ")
    assert plan.remove_checkpoints == 10 and [(r.run, r.remove) for r in plan.runs] == [(done, 10)]
    assert _counts(path) == {done: 2, live.run_id: 12}        # the finished run: untouched
    text = dialog.summary.text()
    assert "Removed <b>10</b>" in text
    assert "10 more checkpoints that the rules select now were not in the preview and stayed" in text
    # a new preview lists them, and a prune then removes them
    _preview(qtbot, dialog)
    assert dialog.plan.remove_checkpoints == 10 and [r.run for r in dialog.plan.runs] == [live.run_id]
    session.shutdown()


def test_a_checkpoint_pinned_after_the_preview_is_kept_and_said(qtbot, tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "s.db"
    with Checkpointer(path, name="done") as cp:
        chat(cp, 12)
        done = cp.run_id
    session, dialog = prune_dialog_on(qtbot, path)
    dialog.keep.setValue(2)
    _preview(qtbot, dialog)
    assert dialog.plan is not None and dialog.plan.remove_checkpoints == 10
    set_pin(path, f"{done}:4", True)                 # another window (or `pin`) meanwhile
    monkeypatch.setattr(QMessageBox, "question", lambda *_a, **_k: QMessageBox.StandardButton.Yes)
    with qtbot.waitSignal(dialog.pruned, timeout=60_000) as applied:
        dialog.confirm_and_apply()
    assert applied.args[0].remove_checkpoints == 9
    assert _counts(path) == {done: 3}
    assert "1 previewed checkpoint was kept: the store changed since the preview" in dialog.summary.text()
    session.shutdown()
