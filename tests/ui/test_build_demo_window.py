"""Build Demo Store in the window: the store is built and opened, and the demo agent that hangs
on purpose (the stuck run) is stopped when the window closes, as `checkpoint-inspector demo`
stops it (it heart-beat into the store for 15 minutes after the window was gone)."""

from __future__ import annotations

from pathlib import Path

import psutil
import pytest

TIMEOUT = 120_000


def _agents(store: Path) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmd = proc.info.get("cmdline") or []
        if "inspector.demo" in cmd and str(store) in cmd and "--hang-at" in cmd:
            found.append(proc)
    return found


def test_the_hung_demo_agent_goes_with_the_window(qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from inspector.demo.build import default_store_path
    from inspector.ui.main_window import MainWindow

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    store = default_store_path()
    assert str(tmp_path) in str(store)
    window = MainWindow(restore_settings=False)
    qtbot.addWidget(window)
    window.show()
    try:
        with qtbot.waitSignal(window.runs_panel.model.runs_loaded, timeout=TIMEOUT):
            window.build_demo()
        hung = _agents(store.resolve())
        assert len(hung) == 1 and hung[0].is_running()
    finally:
        window.close()
    assert not _agents(store.resolve())
