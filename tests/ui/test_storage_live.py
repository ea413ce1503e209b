"""The Storage view of a window watching its store while another process prunes it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.humanize import fmt_size
from inspector.store import open_store
from inspector.usage.api import store_usage
from tests.ui.conftest import open_in
from tests.ui.storage_stores import churning_store

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGSTOP"), reason="pauses the prune with SIGSTOP")


def _prune_paused_after_deleting(path: Path) -> subprocess.Popen:
    """``prune --keep-last 5 --apply`` in another process, stopped (SIGSTOP) once it says every
    checkpoint is deleted: its piece collection (one piece a transaction) is still to come."""
    env = {**os.environ, "CHECKPOINT_INSPECTOR_PRUNE_BATCH": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "inspector", "prune", str(path), "--keep-last", "5", "--apply"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stderr is not None
    for line in proc.stderr:
        words = line.split()
        if words[1:2] == ["removed"] and words[2] == words[4]:        # "… removed 290 of 290 checkpoints"
            os.kill(proc.pid, signal.SIGSTOP)
            return proc
    proc.wait()
    raise AssertionError(f"the prune ended without deleting (exit {proc.returncode})")


def test_the_storage_header_follows_a_prune_made_from_the_command_line(window, qtbot, tmp_path: Path) -> None:
    """The header's totals (size, free pages, content) follow every write, not only those that
    change a listed checkpoint: the prune's piece collection and the WAL folded back into the
    file on its exit left them stale (content still counting the collected pieces) while the
    charts, drawn from the checkpoints, were right."""
    path = tmp_path / "churn.db"
    churning_store(path)
    open_in(window, qtbot, path)
    window.storage.toggle.trigger()
    view = window.storage.view
    qtbot.waitUntil(lambda: view.report is not None and view.report.checkpoints == 300, timeout=90_000)
    proc = _prune_paused_after_deleting(path)
    try:
        # the deletion is seen and measured while the collection waits
        qtbot.waitUntil(lambda: view.report.checkpoints == 10, timeout=90_000)
        measured_early = view.report
    finally:
        os.kill(proc.pid, signal.SIGCONT)
        _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    with open_store(path) as store:
        fresh = store_usage(store)
    assert fresh.content_bytes < measured_early.content_bytes      # the collection came after that report
    totals = ("checkpoints", "total_bytes", "free_bytes", "wal_bytes", "content_bytes", "rows_bytes")

    def caught_up() -> bool:
        return all(getattr(view.report, name) == getattr(fresh, name) for name in totals)
    qtbot.waitUntil(caught_up, timeout=90_000)
    header = view.summary.text()
    assert f"<b>{fmt_size(fresh.total_bytes)}</b> on disk" in header
    assert f"stored: {fmt_size(fresh.content_bytes)} content" in header and "10 checkpoints in 2 runs" in header
    assert view.report.growth[-1][1] == fresh.growth[-1][1]       # and the charts agree with it
