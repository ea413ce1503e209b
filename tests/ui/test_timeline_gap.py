"""A run whose checkpoint rows have a gap (a damaged store: seqs deleted, the run still counting
six): the window asked for a checkpoint after the gap waited for it for ever (the screenshot
timed out after 60 s; found by fuzzing), and later checkpoints moved up into the missing ones'
rows. Every checkpoint keeps its row (its seq); a missing one's row is "not readable", and
asking for it is one sentence."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from inspector.record import Checkpointer
from inspector.store import open_store
from inspector.ui.models.checkpoint_pages import fetch_branch_page, fetch_page


def _gapped(path: Path, seqs: str = "2, 3") -> str:
    with Checkpointer(path, name="gapped") as cp:
        for n in range(6):
            cp.save({"n": n})
    conn = sqlite3.connect(path)
    conn.execute(f"DELETE FROM ci_checkpoints WHERE seq IN ({seqs})")
    conn.commit()
    conn.close()
    return cp.run_id


def _screenshot(path: Path, select: str, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "inspector", "open", str(path), "--no-live", "--select", select,
                           "--screenshot", str(out)], env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
                          capture_output=True, text=True, timeout=120)


def test_a_run_with_missing_checkpoints(tmp_path: Path) -> None:
    path = tmp_path / "gap.db"
    run = _gapped(path)
    with open_store(path) as store:
        _before, rows = fetch_page(store, run, 0)
        assert [r and r.seq for r in rows] == [0, 1, None, None, 4, 5]
        before, rows = fetch_page(store, run, 1, page_size=3)
        assert before is None and [r and r.seq for r in rows] == [None, 4, 5]
        before, rows = fetch_branch_page(store, run, [0, 1, 2, 3, 4, 5], 1, page_size=3)
        assert before is None and [r and r.seq for r in rows] == [None, 4, 5]
        before, rows = fetch_branch_page(store, run, [0, 1, 2, 3, 4, 5], 0, page_size=3)
        assert before is None and [r and r.seq for r in rows] == [0, 1]
    for seq in (1, 4, 5):
        shown = _screenshot(path, f"{run}:{seq}", tmp_path / f"ok{seq}.png")
        assert shown.returncode == 0 and (tmp_path / f"ok{seq}.png").stat().st_size > 0, shown.stderr
    sentence = ("checkpoint-inspector: Checkpoint #{seq} of run {run} cannot be shown: the run's checkpoints are "
                "not all there (the store is damaged).\n")
    missing = _screenshot(path, f"{run}:3", tmp_path / "missing.png")
    assert (missing.returncode, missing.stderr) == (2, sentence.format(seq=3, run=run))


def test_rows_keep_their_seqs_around_a_gap(qtbot, tmp_path: Path) -> None:
    from inspector.ui.models.timeline_model import COL_NAME, COL_SEQ, UNREADABLE, TimelineModel
    from inspector.ui.session import StoreSession

    path = tmp_path / "gap.db"
    run = _gapped(path, "2")
    session = StoreSession()
    session.open(str(path))
    try:
        qtbot.waitUntil(lambda: session.store is not None, timeout=10_000)
        model = TimelineModel(session)
        unreadable: list[tuple[int, int]] = []
        model.rows_unreadable.connect(lambda a, b: unreadable.append((a, b)))
        model.set_run(next(r for r in session.store.list_runs() if r.id == run))
        model.request_row(0)
        qtbot.waitUntil(lambda: model.is_loaded(5), timeout=10_000)
        assert [model.checkpoint(r) and model.checkpoint(r).seq for r in range(6)] == [0, 1, None, 3, 4, 5]
        assert model.unreadable(2) and unreadable == [(2, 2)]
        assert model.index(2, COL_SEQ).data() == "2" and model.index(2, COL_NAME).data() == UNREADABLE
        assert model.index(3, COL_SEQ).data() == "3"
    finally:
        session.shutdown()
