"""Where the demo store lives (light imports only: the CLI's start-up reads it)."""

from __future__ import annotations

from pathlib import Path

from inspector.paths import data_dir


def default_store_path() -> Path:
    """Where ``checkpoint-inspector demo`` keeps its store (the user data directory)."""
    return data_dir() / "demo.db"
