"""The Prune dialog prunes as ``checkpoint-inspector prune`` does: runs as the runs list shows
them (a SIGKILLed agent's run is crashed, pruned as a finished one) and the checkpoint kept
after removed ones said anew."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from inspector.cli import main
from inspector.model import RUN_STATUSES
from inspector.record import Checkpointer
from inspector.retention.pins import set_pin
from inspector.store import open_store
from inspector.ui.dialogs.prune_dialog import PruneDialog
from inspector.ui.session import StoreSession
from tests.retention.stores import chat
from tests.retention.test_prune_fixes import start_agent


# what a plan says of the checkpoints (the file's size moves with the living agent's heartbeats)
SAID = ("runs", "remove_checkpoints", "total_checkpoints", "protected", "rows_bytes", "content_bytes", "pieces")


def said(plan: dict) -> dict:
    return {k: plan[k] for k in SAID}


def cli_plan(capsys, *argv: str) -> dict:
    capsys.readouterr()
    assert main(["prune", *argv, "--json"]) == 0
    return said(json.loads(capsys.readouterr().out))


def dialog_plan(qtbot, dialog: PruneDialog) -> dict:
    qtbot.mouseClick(dialog.preview_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.plan is not None, timeout=30_000)
    assert dialog.plan is not None
    return said(dialog.plan.to_json())


def pick(dialog: PruneDialog, *statuses: str) -> None:
    for status, box in dialog.status_boxes.items():
        box.setChecked(status in statuses)


def test_the_dialog_prunes_a_killed_agents_run_as_the_cli_does(qtbot, tmp_path: Path, capsys, monkeypatch) -> None:
    path = str(tmp_path / "s.db")
    with Checkpointer(path, name="done") as cp:
        chat(cp, 12)
        done = cp.run_id
    killed, dead = start_agent(path, "killed", 12)
    alive, living = start_agent(path, "alive", 12)
    session = StoreSession()
    try:
        os.kill(killed.pid, signal.SIGKILL)
        killed.wait()
        set_pin(path, f"{dead}:5", True)     # the prune leaves a gap before #10: said anew against #5
        with qtbot.waitSignal(session.opened, timeout=30_000):
            session.open(path)
        dialog = PruneDialog(session.info, session.runner)
        qtbot.addWidget(dialog)
        dialog.show()
        assert set(dialog.status_boxes) == set(RUN_STATUSES)            # every status --status takes
        assert [s for s, b in dialog.status_boxes.items() if b.isChecked()] == ["completed", "failed", "crashed"]
        dialog.keep.setValue(2)
        plan = dialog_plan(qtbot, dialog)
        assert plan == cli_plan(capsys, path, "--keep-last", "2", "--status", "completed,failed,crashed")
        assert {r["run"]: r["status"] for r in plan["runs"]} == {done: "completed", dead: "crashed"}
        assert plan["remove_checkpoints"] == 10 + 9
        pick(dialog, "running", "stuck")
        plan = dialog_plan(qtbot, dialog)
        assert plan == cli_plan(capsys, path, "--keep-last", "2", "--status", "running,stuck")
        assert plan["remove_checkpoints"] == 0 and plan["protected"]["live run"] == 10     # the living agent's
        pick(dialog, "crashed")
        plan = dialog_plan(qtbot, dialog)
        assert plan == cli_plan(capsys, path, "--keep-last", "2", "--status", "crashed")
        with open_store(path) as store:
            before = {c.id: (c.seq, c.change) for c in store.list_checkpoints(dead)}
        monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
        with qtbot.waitSignal(dialog.pruned, timeout=60_000) as applied:
            dialog.confirm_and_apply()
        assert said(applied.args[0].to_json()) == plan
        with open_store(path) as store:
            kept = {before[c.id][0]: c.change for c in store.list_checkpoints(dead)}    # by the seq it had
            assert store.get_run(living).checkpoint_count == 12 and store.get_run(done).checkpoint_count == 12
        assert sorted(kept) == [5, 10, 11]
        old = dict(before.values())
        assert old[10] == "+1 msg · step" and kept[10] == "t1 → done · checks 0/1 → 1/1 · +5 msg · step"   # said anew
        assert kept[11] == old[11]
    finally:
        session.shutdown()
        for proc in (killed, alive):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
