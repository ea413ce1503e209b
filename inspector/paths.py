"""Where Checkpoint Inspector keeps its files on this platform (``platformdirs``).

Linux follows the XDG base directories (``XDG_CONFIG_HOME``, ``XDG_DATA_HOME``,
``XDG_STATE_HOME``); macOS uses ``~/Library/...``, Windows ``%APPDATA%``/``%LOCALAPPDATA%``.
``CHECKPOINT_INSPECTOR_CONFIG_DIR`` moves the configuration directory anywhere.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP = "checkpoint-inspector"


def config_dir() -> Path:
    """Per-user settings (LangGraph graph settings per store, …)."""
    explicit = os.environ.get("CHECKPOINT_INSPECTOR_CONFIG_DIR")
    if explicit:
        return Path(explicit)
    return Path(platformdirs.user_config_dir(APP, appauthor=False))


def data_dir() -> Path:
    """Per-user data (the demo store)."""
    return Path(platformdirs.user_data_dir(APP, appauthor=False))


def log_dir() -> Path:
    """Per-user logs (the desktop app's log file)."""
    return Path(platformdirs.user_log_dir(APP, appauthor=False))


def cache_dir() -> Path:
    """Per-user caches that can be thrown away (channel kinds of a store's graph, …);
    ``CHECKPOINT_INSPECTOR_CACHE_DIR`` moves it."""
    explicit = os.environ.get("CHECKPOINT_INSPECTOR_CACHE_DIR")
    if explicit:
        return Path(explicit)
    return Path(platformdirs.user_cache_dir(APP, appauthor=False))
