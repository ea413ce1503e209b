"""Config, data and log directories come from platformdirs (XDG on Linux) and keep their override."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from inspector import paths
from inspector.demo.paths import default_store_path
from inspector.store.langgraph.settings import config_dir


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the XDG variables are Linux's")
def test_xdg_directories_are_followed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CHECKPOINT_INSPECTOR_CONFIG_DIR", raising=False)
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    assert config_dir() == paths.config_dir() == tmp_path / "xdg_config_home" / "checkpoint-inspector"
    assert default_store_path() == tmp_path / "xdg_data_home" / "checkpoint-inspector" / "demo.db"
    assert paths.log_dir() == tmp_path / "xdg_state_home" / "checkpoint-inspector" / "log"


def test_the_config_override_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHECKPOINT_INSPECTOR_CONFIG_DIR", str(tmp_path / "cfg"))
    assert config_dir() == tmp_path / "cfg"
