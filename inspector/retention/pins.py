"""Pin and unpin checkpoints of a native store (what ``pin``/``unpin`` and the GUI call)."""

from __future__ import annotations

import os

from inspector.model import CheckpointInfo
from inspector.retention.api import writable_native
from inspector.store.native import pins as pin_sql


def set_pin(target: str | os.PathLike, ref: int | str, pinned: bool, note: str = "") -> tuple[CheckpointInfo, bool]:
    """Pin (or unpin) checkpoint ``ref`` (id or RUN:SEQ); (its info, whether anything changed)."""
    store = writable_native(target)
    try:
        info = store.get_checkpoint(ref)
        return info, pin_sql.set_pinned(store.engine, store.info.display, info, pinned, note)
    finally:
        store.close()
