"""LangGraph checkpointer databases (SqliteSaver, PostgresSaver) as stores: detection, safe decoding,
mapping; raw forks (``fork``) and the graph runner (``graph_runner``) for fork/resume.

Entry points: ``is_langgraph_schema`` / ``detect`` (schema only, no data read),
``LangGraphStore`` (the read ``Store``) and ``open_langgraph`` (used by ``open_store``).
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from inspector.errors import StoreError

from inspector.store.langgraph.schema import detect, describe, is_langgraph_schema
from inspector.store.langgraph.settings import GraphSettings, load_settings
from inspector.store.langgraph.store import LangGraphStore

__all__ = ["LangGraphStore", "detect", "describe", "is_langgraph_schema", "open_langgraph"]


def open_langgraph(engine: sa.Engine, target: Any, readonly: bool = True, **options: Any) -> LangGraphStore:
    """A LangGraphStore on an engine opened by ``open_store`` (``target`` is its ``Target``).

    ``target`` may also be a plain display string. Options go to ``LangGraphStore``
    (``task_channel``, ``show_control``, ``running_window``, ``graph``); ``task_channel`` and
    ``graph`` default to the store's LangGraph settings (``settings``).
    """
    if isinstance(target, str):
        return LangGraphStore(engine, target, read_only=readonly, **options)
    try:
        saved = load_settings(target.url)
    except StoreError:  # an unreadable settings file must not stop the store from opening
        saved = GraphSettings()
    options.setdefault("task_channel", saved.task_channel)
    options.setdefault("graph", saved.graph)
    return LangGraphStore(engine, target.display, read_only=readonly, url=target.url,
                          path=getattr(target, "path", None), **options)
