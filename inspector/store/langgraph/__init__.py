"""LangGraph checkpointer databases (SqliteSaver, PostgresSaver) as stores: detection, safe decoding,
mapping; raw forks (``fork``) and the graph runner (``graph_runner``) for fork/resume.

Entry points: ``is_langgraph_schema`` / ``detect`` (schema only, no data read),
``LangGraphStore`` (the read ``Store``) and ``open_langgraph`` (used by ``open_store``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from inspector.errors import StoreError

from inspector.store.langgraph.schema import detect, describe, is_langgraph_schema
from inspector.store.langgraph.settings import GraphSettings, load_settings
from inspector.store.langgraph.store import LangGraphStore

if TYPE_CHECKING:
    import sqlalchemy as sa

    from inspector.store.sqlite_ro import ReadPool

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


def read_langgraph_sqlite(target: Any, pool: ReadPool, columns: dict[str, set[str]]) -> LangGraphStore:
    """A SqliteSaver file (``target``: its ``Target``; ``columns``: its tables) opened to read
    on ``pool``'s sqlite3 connections, with the store's settings: what ``open_store`` opens
    read-only, without SQLAlchemy."""
    try:
        saved = load_settings(str(target.path))
    except StoreError:
        saved = GraphSettings()
    return LangGraphStore(None, target.display, read_only=True, url=target.url, path=target.path,
                          columns=columns, pool=pool, task_channel=saved.task_channel, graph=saved.graph)
