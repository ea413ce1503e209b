"""A GUI on an unreachable PostgreSQL: a closed port, and a real server stopped after the
store opened (its LISTEN connection and the polls then fail). Once ended with "RuntimeError:
Signal source has been deleted" (a worker's report to a widget already gone); now one
sentence, the window usable, nothing raised in Qt's handlers (pytest-qt fails the test on any)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.record import Checkpointer


def _closed_port() -> int:
    with socket.socket() as sock:      # bound then closed: nothing listens there
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _screenshot(target: str, png: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    return subprocess.run([sys.executable, "-m", "inspector", "open", target, "--screenshot", str(png)],
                          capture_output=True, text=True, timeout=120, env=env)


def test_a_screenshot_of_a_closed_port_is_one_sentence(tmp_path: Path) -> None:
    url = f"postgresql://nobody@127.0.0.1:{_closed_port()}/none?connect_timeout=2"
    for attempt in range(3):
        result = _screenshot(url, tmp_path / f"x{attempt}.png")
        lines = [line for line in result.stderr.splitlines() if not line.startswith("qt.")]
        assert result.returncode == 2, result.stderr
        assert len(lines) == 1 and lines[0].startswith("checkpoint-inspector: ") and lines[0].endswith("."), lines
        assert "Signal source" not in result.stderr and "Traceback" not in result.stderr


def test_the_window_on_a_closed_port_shows_the_sentence_and_stays_usable(window, qtbot) -> None:
    url = f"postgresql://nobody@127.0.0.1:{_closed_port()}/none?connect_timeout=2"
    with qtbot.waitSignal(window.session.open_failed, timeout=30_000) as failed:
        window.open_store(url)
    assert failed.args[0].endswith(".") and "\n" not in failed.args[0]
    window.menu_actions.live.setChecked(False)     # the window still answers
    window.menu_actions.live.setChecked(True)
    qtbot.wait(500)


@pytest.mark.postgres
def test_a_server_stopped_after_open_leaves_the_window_usable(window, qtbot, pg_private_server, tmp_path) -> None:
    url = pg_private_server.url
    with Checkpointer(url, name="before-the-stop") as cp:
        for n in range(3):
            cp.save({"n": n})
    model = window.runs_panel.model
    with qtbot.waitSignals([window.session.opened, model.runs_loaded], timeout=60_000):
        window.open_store(url)
    qtbot.waitUntil(lambda: window.session.bridge.watching != "", timeout=30_000)
    pg_private_server.halt()                   # the LISTEN connection and the next polls fail
    try:
        qtbot.wait(3_000)                      # the watcher notices, retries, reports
        window.refresh()
        qtbot.waitUntil(lambda: "Cannot reach the database" in window.banner.message, timeout=30_000)
        window.runs_panel.select_run(next(iter(model.tree.by_id)))   # the window still answers
        qtbot.wait(1_000)
        window.grab().save(str(tmp_path / "stopped.png"))
    finally:
        pg_private_server.resume()
    with qtbot.waitSignal(model.runs_loaded, timeout=60_000):   # it comes back without restarting the app
        window.refresh()
    assert len(model.tree) == 1
