"""``bench gui`` on a small store: the probe drives the real window (offscreen) through every
stage and the figures are reported (their values are not checked: a benchmark's job)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bench_gui_runs_every_stage_on_a_run_that_opens_on_its_head(tmp_path: Path) -> None:
    """The long run opens on its head (its last page read): the jump halfway back reads a page
    not read yet, and the probe goes on to the live stage and reports every figure."""
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.run([sys.executable, "-m", "inspector", "bench", "gui", "--runs", "30", "--checkpoints", "3000",
                           "--long-run", "1200", "--commits", "3", "--idle", "0.5", "--json"],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["timeline_rows"] == 1200 and result["timeline_jump_row"] == 600
    assert result["live_commits"] == 3
    for key in ("first_paint_s", "timeline_100k_s", "timeline_jump_ms", "peak_rss_mb", "live_latency_median_ms"):
        assert result[key] > 0, key
