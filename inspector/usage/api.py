"""``store_usage``: the storage report of any store (native, LangGraph, or another framework's)."""

from __future__ import annotations

from collections.abc import Callable

from inspector.errors import StoreError
from inspector.store.base import Store
from inspector.usage.report import UsageReport


def store_usage(store: Store, run_id: str | None = None, *, pieces: bool = True,
                progress: Callable[[int, int], None] | None = None) -> UsageReport:
    """Why ``store`` is the size it is; with ``run_id`` also that run's per-checkpoint detail."""
    if store.info.kind == "native":
        from inspector.store.native.reads import NativeReads
        from inspector.usage.native import native_usage
        assert isinstance(store, NativeReads)
        return native_usage(store, run_id, pieces=pieces, progress=progress)
    if store.info.kind == "langgraph":
        from inspector.store.langgraph.store import LangGraphStore
        from inspector.usage.langgraph import langgraph_usage
        if isinstance(store, LangGraphStore):
            return langgraph_usage(store, run_id, progress=progress)
        raise StoreError(f"{store.info.display}: no storage report for this LangGraph store.")
    from inspector.usage.frameworks import framework_usage      # OpenAI Agents, CrewAI, ADK, third parties
    return framework_usage(store, run_id, progress=progress)
