"""Persistent preferences (QSettings): recent stores, window and splitter geometry, live toggle."""

from __future__ import annotations

from PySide6.QtCore import QSettings

ORGANIZATION = "checkpoint-inspector"
APPLICATION = "Checkpoint Inspector"
MAX_RECENT = 10


def settings() -> QSettings:
    """The application's settings object."""
    return QSettings(ORGANIZATION, APPLICATION)


def recent_stores() -> list[str]:
    """Stores opened before, most recent first."""
    value = settings().value("recent_stores", [])
    if isinstance(value, str):      # one entry comes back as a plain string on some backends
        value = [value]
    return [str(v) for v in value if v] if isinstance(value, (list, tuple)) else []


def remember_store(target: str) -> list[str]:
    """Put ``target`` first in the recent stores; returns the new list."""
    items = [target] + [t for t in recent_stores() if t != target]
    settings().setValue("recent_stores", items[:MAX_RECENT])
    return items[:MAX_RECENT]


def forget_recent() -> None:
    """Clear the recent stores."""
    settings().remove("recent_stores")
