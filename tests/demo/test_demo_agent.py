"""The demo agent and the demo store, built by real processes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from inspector.demo.steps import PLAN
from inspector.store import open_store

AGENT = [sys.executable, "-m", "inspector.demo"]


def test_demo_store_has_every_kind_of_run(demo_store: Path) -> None:
    with open_store(demo_store) as store:
        runs = store.list_runs()
    statuses = sorted(r.status for r in runs)
    assert statuses.count("completed") >= 3
    assert {"failed", "interrupted", "running"} <= set(statuses)
    fork = next(r for r in runs if r.parent_run)
    assert fork.fork_reason and fork.parent_checkpoint is not None
    assert fork.status == "completed", "build.py resumes the fork to completion"
    crashed = next(r for r in runs if r.status == "running")
    assert crashed.head_seq == 8, "crashed before step 9: input + 8 steps"


def test_run_is_deterministic_and_uses_real_tools(tmp_path: Path) -> None:
    for name in ("a", "b"):
        subprocess.run([*AGENT, "--store", str(tmp_path / f"{name}.db"), "--seed", "5",
                        "--workspace", str(tmp_path / name)], check=True, timeout=120)
    states = []
    for name in ("a", "b"):
        with open_store(tmp_path / f"{name}.db") as store:
            run = store.list_runs()[0]
            assert run.status == "completed" and run.checks_passed == run.checks_total > 5
            states.append(store.load(f"{run.id}:-1").state)
    assert states[0] == states[1]
    assert len(states[0]["log"]) == len(PLAN)
    published = (tmp_path / "a" / "published" / "report.md").read_text()
    assert published == states[0]["draft"] and "TODO" not in published


def test_fail_and_stop_options(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    failed = subprocess.run([*AGENT, "--store", str(store), "--fail-at", "4", "--workspace", str(tmp_path / "w1")],
                            capture_output=True, text=True, timeout=120)
    assert failed.returncode == 1 and "simulated error" in failed.stderr
    stopped = subprocess.run([*AGENT, "--store", str(store), "--stop-at", "16", "--workspace", str(tmp_path / "w2")],
                             timeout=120)
    assert stopped.returncode == 0
    with open_store(store) as st:
        by_status = {r.status: r for r in st.list_runs()}
        assert "RuntimeError" in by_status["failed"].last_error
        waiting = by_status["interrupted"]
        tasks = st.load(f"{waiting.id}:-1").tasks
        draft = next(t for t in tasks["tasks"] if t["id"] == "draft")
        assert draft["review"]["status"] == "changes_requested"
        assert any(c["passed"] is False for c in draft["checks"])


def test_the_hung_demo_agent_goes_with_the_window(tmp_path: Path) -> None:
    """`demo` starts an agent that hangs on purpose (the stuck run); it used to live on for 15
    minutes after the window closed."""
    import os
    import subprocess
    import sys

    import psutil
    store = tmp_path / "demo.db"

    def demo_agents() -> list:
        return [p for p in psutil.process_iter(["cmdline"])
                if "inspector.demo" in (p.info["cmdline"] or []) and str(store) in (p.info["cmdline"] or [])]
    done = subprocess.run([sys.executable, "-m", "inspector", "demo", "--store", str(store), "--rebuild",
                           "--screenshot", str(tmp_path / "w.png")], env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "w.png").stat().st_size > 0
    assert demo_agents() == []


def test_the_app_killed_quits_as_its_window_closes(tmp_path: Path) -> None:
    """`kill` (SIGTERM), Ctrl+C or a closed terminal ended the app where it stood: the demo's
    hung agent lived on for its 15 minutes, the window's settings were not saved. The app now
    quits as when its window is closed."""
    import os
    import signal
    import time

    import psutil
    store = tmp_path / "demo.db"
    home = tmp_path / "home"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HOME": str(home),
           "XDG_STATE_HOME": str(home / "state"), "XDG_CACHE_HOME": str(home / "cache"),
           "XDG_CONFIG_HOME": str(home / "config")}
    app = subprocess.Popen([sys.executable, "-m", "inspector", "demo", "--store", str(store), "--rebuild"],
                           env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300
        while not any("window open" in p.read_text() for p in home.rglob("gui.log")):
            assert app.poll() is None, app.stderr.read() if app.stderr else ""
            assert time.monotonic() < deadline, "the window did not open"
            time.sleep(0.2)
        agents = [p for p in psutil.process_iter(["cmdline"])
                  if "inspector.demo" in (p.info["cmdline"] or []) and str(store) in (p.info["cmdline"] or [])]
        assert agents, "the demo's hung agent runs while the window is open"
        app.send_signal(signal.SIGTERM)
        assert app.wait(timeout=60) == 0
    finally:
        if app.poll() is None:
            app.kill()
    assert not any(p.is_running() and p.status() != psutil.STATUS_ZOMBIE for p in agents)
    log = "".join(p.read_text() for p in home.rglob("gui.log"))
    assert "quitting on SIGTERM" in log
    assert any(home.rglob("*.conf")), "the window's settings were saved as on a close"
