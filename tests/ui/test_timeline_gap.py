"""A run whose checkpoint rows have a gap (a damaged store: seqs deleted, the run still counting
six): the window asked for a checkpoint after the gap waited for it for ever (the screenshot
timed out after 60 s; found by fuzzing). The timeline lists what there is (later checkpoints
move up, the last rows are not readable); asking for a seq whose row is not readable, or now
holds another checkpoint, is one sentence."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from inspector.record import Checkpointer
from inspector.store import open_store
from inspector.ui.models.checkpoint_pages import fetch_page


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
    assert [r.seq for r in rows] == [0, 1, 4, 5]
    shown = _screenshot(path, f"{run}:1", tmp_path / "ok.png")
    assert shown.returncode == 0 and (tmp_path / "ok.png").stat().st_size > 0, shown.stderr
    sentence = ("checkpoint-inspector: Checkpoint #{seq} of run {run} cannot be shown: the run's checkpoints are "
                "not all there (the store is damaged).\n")
    past = _screenshot(path, f"{run}:4", tmp_path / "past.png")      # row 4: not readable
    assert (past.returncode, past.stderr) == (2, sentence.format(seq=4, run=run))
    one = tmp_path / "one.db"
    run = _gapped(one, "2")
    moved = _screenshot(one, f"{run}:3", tmp_path / "moved.png")     # row 3 holds #4
    assert (moved.returncode, moved.stderr) == (2, sentence.format(seq=3, run=run))
