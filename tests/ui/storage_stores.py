"""Stores the Storage view's tests prune, written by the real recording library."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from inspector.record import Checkpointer


def prune_dialog_on(qtbot, path: Path) -> tuple:
    """(session, Prune dialog) on the store at ``path``, opened in a real session."""
    from inspector.ui.dialogs.prune_dialog import PruneDialog
    from inspector.ui.session import StoreSession
    session = StoreSession()
    with qtbot.waitSignal(session.opened, timeout=30_000):
        session.open(str(path))
    dialog = PruneDialog(session.info, session.runner)
    qtbot.addWidget(dialog)
    return session, dialog


def churning_store(path: Path, steps: int = 150) -> None:
    """Two runs whose documents are replaced a few at a time: a prune leaves thousands of
    pieces no checkpoint reaches, which its collection deletes after the checkpoints."""
    rnd = random.Random(3)
    for n in range(2):
        docs = ["".join(rnd.choice("abcdef ") for _ in range(300)) for _ in range(20)]
        with Checkpointer(path, name=f"churn {n}") as cp:
            for step in range(steps):
                for _ in range(5):
                    docs[rnd.randrange(20)] = "".join(rnd.choice("abcdef ") for _ in range(300))
                cp.save({"docs": list(docs), "step": step}, kind="tool", name="step", force=True)


def check_run_detail(qtbot, view, run) -> Any:
    """Selecting ``run`` in the Storage view gives its checkpoint-by-checkpoint detail (returned),
    drawn as the two curves of its chart (state size and stored cost)."""
    with qtbot.waitSignal(view.report_ready, timeout=30_000) as got:
        view.set_run(run)
    detail = got.args[0].detail
    assert detail is not None and len(detail.checkpoints) == run.checkpoint_count
    curves = view.charts["checkpoints"].getPlotItem().listDataItems()
    assert len(curves) == 2 and len(curves[0].getData()[0]) == run.checkpoint_count
    return detail
