"""Where the demo store lives (no imports beyond the standard library: the CLI's start-up reads it)."""

from __future__ import annotations

import os
from pathlib import Path


def default_store_path() -> Path:
    """Where ``checkpoint-inspector demo`` keeps its store (the user data directory)."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(Path.home(), ".local", "share")
    return Path(base) / "checkpoint-inspector" / "demo.db"
