"""``open_store``: the one way in to any store (native or LangGraph), detected by schema.

The names below load ``inspector.store.opening`` (and SQLAlchemy with it) on first use,
so modules that only need ``inspector.store.base`` or the native row helpers (the GUI's
first paint, the store preview) do not pay SQLAlchemy's import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["Store", "open_store", "open_reader", "create_store", "init_schema", "parse_ref", "describe_kind"]

if TYPE_CHECKING:
    from inspector.store.base import Store, parse_ref
    from inspector.store.opening import create_store, describe_kind, init_schema, open_store
    from inspector.store.reading import open_reader


def __getattr__(name: str) -> Any:
    if name in ("Store", "parse_ref"):
        from inspector.store import base
        return getattr(base, name)
    if name == "open_reader":
        from inspector.store import reading
        return reading.open_reader
    if name in __all__:
        from inspector.store import opening
        return getattr(opening, name)
    raise AttributeError(f"module 'inspector.store' has no attribute {name!r}")
