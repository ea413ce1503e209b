"""The details follow a head written fast: one snapshot read at a time, each shown; the
timeline's current row never lands on a placeholder while it follows the head."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from inspector.record import Checkpointer
from inspector.store import open_store
from tests.ui.conftest import open_in, select_checkpoint, select_run

STORES = Path(__file__).parents[1] / "frameworks" / "stores"
TIMEOUT = 20_000
BLOCKERS = 16    # jobs holding every thread of the window's pool (it has fewer)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()



def _on_head_noting_placeholders(window, qtbot) -> list[int]:
    """Select the shown run's head; the rows made current while not loaded are noted in the
    list returned (a followed head must never land on one)."""
    timeline = window.timeline_panel
    select_checkpoint(window, qtbot, -1)
    placeholders: list[int] = []
    timeline.view.selectionModel().currentRowChanged.connect(
        lambda current, _previous: None if timeline.model.is_loaded(current.row())
        else placeholders.append(current.row()))
    return placeholders


def _ends_on_the_head(window, qtbot, head: int, placeholders: list[int]) -> None:
    """The writer done: the timeline and the details end on checkpoint ``head``, no placeholder
    row was ever current, nothing is left loading."""
    timeline = window.timeline_panel
    qtbot.waitUntil(lambda: timeline.current_checkpoint() is not None
                    and timeline.current_checkpoint().seq == head, timeout=TIMEOUT)
    qtbot.waitUntil(lambda: window.details.snapshot is not None and window.details.snapshot.info.seq == head,
                    timeout=TIMEOUT)
    assert placeholders == []
    assert window.details.loading is None

def test_a_read_overtaken_by_newer_heads_is_shown_and_only_the_newest_is_read_next(
        window, qtbot, tmp_path: Path) -> None:
    """While a snapshot read waits (here behind the window's other background jobs, as a read
    of a store being written waits), checkpoints selected meanwhile start no second read; the
    waiting read is shown when it ends, then the newest selected is read and shown."""
    path = tmp_path / "agents.db"
    shutil.copy2(STORES / "agents_sqlite.db", path)     # a session the OpenAI Agents SDK wrote
    before = _digest(path)
    window.menu_actions.live.setChecked(False)   # no other read meanwhile
    open_in(window, qtbot, path)
    select_run(window, qtbot, "trip-lisbon")
    details, runner = window.details, window.session.runner
    select_checkpoint(window, qtbot, 1)
    qtbot.waitUntil(lambda: runner.active == 0, timeout=TIMEOUT)
    shown: list[int] = []
    details.snapshot_loaded.connect(lambda snap: shown.append(snap.info.seq))
    busy = threading.Event()
    try:
        for _ in range(BLOCKERS):
            runner.run(lambda: busy.wait(60))
        window.timeline_panel.select_seq(3)
        qtbot.waitUntil(lambda: runner.active == BLOCKERS + 1, timeout=TIMEOUT)   # #3's read waits
        window.timeline_panel.select_seq(5)
        qtbot.waitUntil(lambda: not details._timer.isActive(), timeout=TIMEOUT)   # #5 was asked for
        assert runner.active == BLOCKERS + 1     # one read at a time: #5's waits for #3's
        assert details.loading is not None and details.loading.seq == 5
        assert details.loading_label.isVisibleTo(details) and "Reading #5" in details.loading_label.text()
        assert details.snapshot is not None and details.snapshot.info.seq == 1
    finally:
        busy.set()
    qtbot.waitUntil(lambda: details.snapshot is not None and details.snapshot.info.seq == 5, timeout=TIMEOUT)
    assert shown == [3, 5]                       # #3 shown as soon as it was read, not dropped
    assert details.loading is None and not details.loading_label.isVisibleTo(details)
    assert window.current_checkpoint().seq == 5
    assert _digest(path) == before


def _save(cp: Checkpointer, seqs: range) -> None:
    for i in seqs:
        cp.save({"messages": [f"message {j}" for j in range(i + 1)], "i": i}, name=f"step {i}")


def test_a_newer_run_count_keeps_the_head_followed_on_a_loaded_row(window, qtbot, tmp_path: Path) -> None:
    """The runs list may read a run's new count before its checkpoints are read: the timeline
    follows the head onto its row once the row is loaded, never onto a placeholder."""
    path = tmp_path / "s.db"
    window.menu_actions.live.setChecked(False)
    with Checkpointer(path, name="growing") as cp:
        _save(cp, range(3))
        open_in(window, qtbot, path)
        select_run(window, qtbot, cp.run_id)
        timeline = window.timeline_panel
        assert select_checkpoint(window, qtbot, -1).info.seq == 2
        _save(cp, range(3, 6))
        with open_store(path) as store:
            newer = store.get_run(cp.run_id)
        timeline.update_run(newer)               # what the window does with the runs list's newer RunInfo
        assert timeline.model.rowCount() == 6
        current = timeline.current_checkpoint()
        assert current is not None and current.seq == 2      # kept until the head's row is read
        qtbot.waitUntil(lambda: timeline.current_checkpoint() is not None
                        and timeline.current_checkpoint().seq == 5, timeout=TIMEOUT)
        qtbot.waitUntil(lambda: window.details.snapshot is not None and window.details.snapshot.info.seq == 5,
                        timeout=TIMEOUT)


def test_the_details_follow_a_run_the_recording_library_writes_fast(window, qtbot, tmp_path: Path) -> None:
    """A Checkpointer in another thread saves as fast as it can while the window follows the
    run's head: every row made current is a loaded checkpoint and the details end on the head."""
    path = tmp_path / "s.db"
    started, go, run = threading.Event(), threading.Event(), {}

    def write() -> None:
        with Checkpointer(path, name="fast") as cp:
            _save(cp, range(2))
            run["id"] = cp.run_id
            started.set()
            go.wait(60)
            _save(cp, range(2, 400))
    writer = threading.Thread(target=write)
    writer.start()
    try:
        qtbot.waitUntil(started.is_set, timeout=TIMEOUT)
        open_in(window, qtbot, path)
        select_run(window, qtbot, run["id"])
        placeholders = _on_head_noting_placeholders(window, qtbot)
        go.set()
        qtbot.waitUntil(lambda: not writer.is_alive(), timeout=60_000)
    finally:
        go.set()
        writer.join()
    with open_store(path) as store:
        head = store.get_run(run["id"]).head_seq
    _ends_on_the_head(window, qtbot, head, placeholders)


AGENTS_PYTHON = Path.home() / ".cache" / "checkpoint-inspector-frameworks" / "openai-agents" / "bin" / "python"
AGENTS_WRITER = """
import asyncio, pathlib, sys, time
from agents import SQLiteSession
async def main(path, folder):
    session = SQLiteSession("live", path)
    await session.add_items([{"role": "user", "content": "q"}])
    (folder / "ready").touch()
    while not (folder / "go").exists():
        time.sleep(0.01)
    for i in range(150):
        await session.add_items([{"role": "user", "content": f"q{i} " + "p" * 2000},
                                 {"type": "function_call", "call_id": f"c{i}", "name": "t", "arguments": "{}"}])
        await session.add_items([{"type": "function_call_output", "call_id": f"c{i}", "output": "ok"},
                                 {"role": "assistant", "content": f"a{i}"}])
asyncio.run(main(sys.argv[1], pathlib.Path(sys.argv[2])))
"""


def test_the_details_follow_a_session_the_agents_sdk_writes_fast(window, qtbot, tmp_path: Path) -> None:
    """SQLiteSession.add_items in another process, as fast as it goes, while the window follows
    the session's head (run by the openai-agents environment tests/frameworks/write_stores.py
    makes; skipped where there is none)."""
    if not AGENTS_PYTHON.exists():
        pytest.skip("no openai-agents environment (tests/frameworks/write_stores.py makes it)")
    path = tmp_path / "agents.db"
    writer = subprocess.Popen([str(AGENTS_PYTHON), "-c", AGENTS_WRITER, str(path), str(tmp_path)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        qtbot.waitUntil(lambda: (tmp_path / "ready").exists() or writer.poll() is not None, timeout=60_000)
        assert writer.poll() is None, writer.stderr.read() if writer.stderr else ""
        open_in(window, qtbot, path)
        select_run(window, qtbot, "live")
        placeholders = _on_head_noting_placeholders(window, qtbot)
        (tmp_path / "go").touch()
        qtbot.waitUntil(lambda: writer.poll() is not None, timeout=120_000)
        assert writer.returncode == 0, writer.stderr.read() if writer.stderr else ""
    finally:
        if writer.poll() is None:
            writer.kill()
        writer.wait()
    with open_store(path) as store:
        head = store.get_run("live").head_seq
    assert head == 600
    _ends_on_the_head(window, qtbot, head, placeholders)
