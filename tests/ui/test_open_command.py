"""``checkpoint-inspector open``: no-display message, --screenshot rendering, bad stores (real processes)."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.conftest import store_files_digest


CONFIG_DIR = tempfile.mkdtemp(prefix="ci-test-config-")


def _cli(*args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ if env is None else env)
    env.setdefault("XDG_CONFIG_HOME", CONFIG_DIR)  # never the user's settings
    return subprocess.run([sys.executable, "-m", "inspector", *args], capture_output=True, text=True,
                          env=env, timeout=timeout)


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the display check is for Linux")
def test_without_a_display_the_gui_says_to_use_screenshot(demo_store: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    result = _cli("open", str(demo_store), env=env)
    assert result.returncode == 2
    assert "--screenshot" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_a_window_run_headless_prints_no_offscreen_notes(demo_store: Path, tmp_path: Path) -> None:
    """QT_QPA_PLATFORM=offscreen without --screenshot (a window left following a store on a
    server): the plugin's note about every window it shows (hundreds in minutes) is dropped,
    as in screenshot mode; the window runs until stopped."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "XDG_DATA_HOME": str(tmp_path),
           "XDG_STATE_HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path)}
    with pytest.raises(subprocess.TimeoutExpired) as stopped:     # (it stays up: stopped after 8 s)
        _cli("open", str(demo_store), "--no-live", env=env, timeout=8)
    err = stopped.value.stderr or b""
    text = err.decode() if isinstance(err, bytes) else err
    assert "propagateSizeHints" not in text and "Traceback" not in text, text


def test_screenshot_renders_the_loaded_window(demo_store: Path, tmp_path: Path) -> None:
    from inspector.store import open_store

    with open_store(demo_store) as store:
        run = next(r for r in store.list_runs() if r.checkpoint_count > 5)
    before = store_files_digest(demo_store)
    shot = tmp_path / "shots" / "main.png"
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    result = _cli("open", str(demo_store), "--screenshot", str(shot), "--select", f"{run.id}:5",
                  "--tab", "tasks", env=env)
    assert result.returncode == 0, result.stderr
    assert _png_size(shot) == (1400, 900)
    assert store_files_digest(demo_store) == before


def test_screenshot_of_something_that_is_not_a_store_fails_cleanly(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.db"
    bogus.write_text("hello")
    result = _cli("open", str(bogus), "--screenshot", str(tmp_path / "x.png"))
    assert result.returncode == 2
    assert "not a checkpoint store" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "x.png").exists()


def test_no_store_and_no_demo_store_shows_the_welcome_page(tmp_path: Path) -> None:
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "data"))
    shot = tmp_path / "welcome.png"
    result = _cli("open", "--screenshot", str(shot), env=env)
    assert result.returncode == 0, result.stderr
    assert _png_size(shot) == (1400, 900)


def test_select_takes_a_part_of_a_name_and_says_when_it_names_several(demo_store: Path, tmp_path: Path) -> None:
    from inspector.store import open_store

    with open_store(demo_store) as store:
        runs = store.list_runs()
    fork = next(r for r in runs if r.parent_run)
    topic = fork.name.split(": ")[1].split(" (")[0]       # in the fork's name and its original's
    alone = next(r for r in runs if topic not in r.name)
    shot = tmp_path / "one.png"
    result = _cli("open", str(demo_store), "--screenshot", str(shot), "--select",
                  f"{alone.name.split(': ')[1].upper()}:1")
    assert result.returncode == 0, result.stderr
    assert shot.exists()
    result = _cli("open", str(demo_store), "--screenshot", str(tmp_path / "two.png"), "--select", topic)
    assert result.returncode == 2 and f"{topic!r} matches 2 run names" in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "two.png").exists()
