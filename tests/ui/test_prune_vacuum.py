"""The Prune dialog says why the file keeps (or grows) its size after a prune without VACUUM,
as the command line does, and offers the VACUUM it needs."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from inspector.store import open_store
from tests.ui.storage_stores import churning_store, prune_dialog_on


def _file_bytes(path: Path) -> int:
    wal = Path(f"{path}-wal")
    return path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


def test_a_prune_without_vacuum_says_why_the_file_does_not_shrink_and_vacuum_now_shrinks_it(
        qtbot, tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "churn.db"
    churning_store(path)
    session, dialog = prune_dialog_on(qtbot, path)
    dialog.show()
    dialog.keep.setValue(5)
    assert not dialog.vacuum.isChecked() and dialog.vacuum_button.isHidden()
    qtbot.mouseClick(dialog.preview_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.plan is not None, timeout=30_000)
    asked: list[str] = []

    def answer(_parent, title, text, *_args):
        asked.append(f"{title}: {text}")
        return QMessageBox.StandardButton.Yes
    monkeypatch.setattr(QMessageBox, "question", answer)
    with qtbot.waitSignal(dialog.pruned, timeout=60_000) as done:
        dialog.confirm_and_apply()
    plan = done.args[0]
    assert plan.applied and plan.remove_checkpoints == 290
    text = dialog.summary.text()
    assert "Removed <b>290</b>" in text
    assert "the store reuses them for new checkpoints" in text and "only VACUUM gives them back" in text
    assert "WAL file (-wal) may grow" in text
    assert "numbered again from #0 in each run" in text      # a pinned #10 is #0 now: said
    before, after, wal = plan.on_disk()      # the log of the deletions is said apart, not as the file grown
    assert wal > 0 and after == plan.disk_after - wal and "write-ahead log until SQLite folds it" in text
    grown = _file_bytes(path)
    assert plan.disk_after >= plan.disk_before           # what the sentence explains
    assert dialog.vacuum_button.isVisible() and dialog.vacuum_button.isEnabled()
    qtbot.mouseClick(dialog.vacuum_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "Vacuumed" in dialog.summary.text(), timeout=60_000)
    assert asked[-1].startswith("Vacuum: ") and "rewrites the whole store" in asked[-1]
    assert _file_bytes(path) < grown / 3                 # the space went back to the disk
    assert dialog.vacuum_button.isHidden() and "does not shrink" not in dialog.summary.text()
    assert dialog.table.rowCount() == 2                  # the prune's table stays
    with open_store(path) as store:
        assert sum(r.checkpoint_count for r in store.list_runs()) == 10     # VACUUM removed no checkpoint
    session.shutdown()


def test_a_prune_with_vacuum_says_nothing_of_a_file_that_did_not_shrink(qtbot, tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "churn.db"
    churning_store(path, steps=40)
    session, dialog = prune_dialog_on(qtbot, path)
    dialog.keep.setValue(5)
    dialog.vacuum.setChecked(True)
    dialog.preview()
    qtbot.waitUntil(lambda: dialog.plan is not None, timeout=30_000)
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    with qtbot.waitSignal(dialog.pruned, timeout=60_000) as done:
        dialog.confirm_and_apply()
    assert done.args[0].disk_after < done.args[0].disk_before
    assert "does not shrink" not in dialog.summary.text() and dialog.vacuum_button.isHidden()
    session.shutdown()
