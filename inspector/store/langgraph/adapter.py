"""The LangGraph store adapter: SqliteSaver / PostgresSaver databases, recognised by their tables."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from inspector.model import LANGGRAPH_CAPABILITIES
from inspector.store.adapters import StoreAdapter
from inspector.store.base import Store
from inspector.store.engine import Target
from inspector.store.langgraph.schema import is_langgraph_schema


class LangGraphAdapter(StoreAdapter):
    """LangGraph checkpointer databases: fork (raw or through the graph), resume through the graph, live."""

    kind = "langgraph"
    label = "LangGraph"
    capabilities = LANGGRAPH_CAPABILITIES
    order = 10

    def detect_tables(self, columns: dict[str, set[str]]) -> bool:
        """Any known LangGraph layout (``schema.describe``)."""
        return is_langgraph_schema(columns)

    def open_database(self, engine: sa.Engine, target: Target, *, readonly: bool = True,
                      **options: Any) -> Store:
        """A ``LangGraphStore`` with the store's saved settings."""
        from inspector.store.langgraph import open_langgraph
        return open_langgraph(engine, target, readonly=readonly, **options)
