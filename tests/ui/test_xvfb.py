"""The real app in a real X server (Xvfb): it opens the demo store, takes a screenshot and quits cleanly."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtGui import QImage


def test_the_app_runs_in_a_real_x_server(demo_store: Path, tmp_path: Path) -> None:
    if shutil.which("xvfb-run") is None:
        if os.environ.get("CI"):
            pytest.fail("xvfb-run is missing (.ci/run installs xvfb and xauth)")
        pytest.skip("xvfb-run is not installed (Debian: apt install xvfb xauth)")
    shot = tmp_path / "window.png"
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env.update(QT_QPA_PLATFORM="xcb", HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "config"))
    with open_store_name(demo_store) as select:
        result = subprocess.run(
            ["xvfb-run", "-a", "-s", "-screen 0 1280x800x24", sys.executable, "-m", "inspector", "open",
             str(demo_store), "--screenshot", str(shot), "--size", "1024x700", "--select", select],
            check=False, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    noise = [line for line in result.stderr.splitlines() if line.strip()]
    assert noise == [], noise                     # no Qt warning, no watchdog error, no traceback
    image = QImage(str(shot))
    assert (image.width(), image.height()) == (1024, 700)
    assert len({image.pixel(x, y) for x in range(0, 1024, 37) for y in range(0, 700, 29)}) > 20   # not blank


class open_store_name:
    def __init__(self, store: Path) -> None:
        self.store = store

    def __enter__(self) -> str:
        from inspector.store import open_store
        with open_store(self.store) as st:
            run = next(r for r in st.list_runs() if r.status == "failed")
        return f"{run.id}:-1"

    def __exit__(self, *exc: object) -> None:
        return None
