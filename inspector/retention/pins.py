"""Pin and unpin checkpoints of a native store (what ``pin``/``unpin`` and the GUI call)."""

from __future__ import annotations

import os

from inspector.model import CheckpointInfo
from inspector.retention.api import writable_native
from inspector.store.native import pins as pin_sql
from inspector.store.refs import resolve_checkpoint


def set_pin(target: str | os.PathLike, ref: int | str, pinned: bool, note: str = "") -> tuple[CheckpointInfo, bool]:
    """Pin (or unpin) checkpoint ``ref`` (an id, or RUN:SEQ with RUN as every command takes it);
    (its info, whether anything changed)."""
    store = writable_native(target)
    try:
        info = resolve_checkpoint(store, ref)
        return info, pin_sql.set_pinned(store.engine, store.info.display, info, pinned, note)
    finally:
        store.close()
