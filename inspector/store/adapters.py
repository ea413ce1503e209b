"""Store adapters: how ``open_store`` recognises a kind of store and opens it.

An adapter recognises its stores by their **schema** (tables and columns of a database) or
their **layout** (the shape of a folder or file's content) — never by a file name — and opens
them as a ``Store`` (``inspector.store.base``: the one read interface the GUI and CLI use).
It declares what else it can do (fork, resume, live updates) as ``Capabilities``; the store it
opens carries them in ``StoreInfo.capabilities`` and the GUI and CLI offer exactly those.

Third parties add a framework by installing a package that names an adapter (a
``StoreAdapter`` subclass or instance) under the entry-point group ``ENTRY_POINT_GROUP``::

    [project.entry-points."checkpoint_inspector.adapters"]
    myframework = "my_package.inspector_adapter:MyAdapter"

Built-in adapters are tried first (native, LangGraph, then the framework adapters), then
installed ones in the order of their ``order`` and kind. A third-party adapter that fails to
load is skipped with a warning; it never stops another store from opening.
"""

from __future__ import annotations

import importlib
import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inspector.model import Capabilities

if TYPE_CHECKING:
    import sqlalchemy as sa

    from inspector.store.base import Store
    from inspector.store.engine import Target

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "checkpoint_inspector.adapters"

# module:attribute of the adapters shipped with the inspector, in the order they are tried
BUILTIN = ("inspector.store.opening:NativeAdapter",
           "inspector.store.langgraph.adapter:LangGraphAdapter",
           "inspector.store.frameworks.openai_agents:OpenAIAgentsAdapter",
           "inspector.store.frameworks.crewai:CrewAIAdapter",
           "inspector.store.frameworks.google_adk:GoogleADKAdapter")


class StoreAdapter:
    """One kind of store: detection (schema or layout) and opening; subclass and override.

    ``kind`` is the short name stored in ``StoreInfo.kind``; ``label`` the name people read;
    ``capabilities`` what the opened stores offer beyond reading. Database adapters override
    ``detect_tables`` and ``open_database``; folder or file adapters ``detect_path`` and
    ``open_path``. Detection must be cheap, must not write, and must not execute anything
    read from the store.
    """

    kind: str = ""
    label: str = ""
    capabilities: Capabilities = Capabilities()
    order: int = 100

    def detect_tables(self, columns: dict[str, set[str]]) -> bool:
        """True when a database with these tables (name → column names) is this adapter's."""
        return False

    def open_database(self, engine: sa.Engine, target: Target, *, readonly: bool = True,
                      **options: Any) -> Store:
        """A ``Store`` over the database ``engine`` (read-only engine unless ``readonly`` is False)."""
        raise NotImplementedError(f"The {self.kind} adapter does not open databases.")

    def detect_path(self, path: Path) -> bool:
        """True when ``path`` (a folder, or a file that is not a SQLite database) is this adapter's."""
        return False

    def open_path(self, path: Path, *, readonly: bool = True, **options: Any) -> Store:
        """A ``Store`` over the folder or file at ``path``."""
        raise NotImplementedError(f"The {self.kind} adapter does not open folders or files.")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} kind={self.kind!r}>"


_lock = threading.Lock()
_cache: list[StoreAdapter] | None = None


def _instance(obj: Any, where: str) -> StoreAdapter | None:
    adapter = obj() if isinstance(obj, type) else obj
    if not isinstance(adapter, StoreAdapter) or not adapter.kind:
        log.warning("Store adapter %s is not a StoreAdapter with a kind; skipped.", where)
        return None
    return adapter


def _load(spec: str) -> Any:
    module, _, attr = spec.partition(":")
    return getattr(importlib.import_module(module), attr)


def _builtin(spec: str) -> StoreAdapter | None:
    try:
        return _instance(_load(spec), spec)
    except ImportError:  # pragma: no cover - a shipped adapter whose optional dependency is missing
        log.warning("Built-in store adapter %s cannot be imported; skipped.", spec, exc_info=True)
        return None


def _installed() -> list[StoreAdapter]:
    from importlib.metadata import entry_points
    found: list[StoreAdapter] = []
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            adapter = _instance(ep.load(), f"{ep.name} ({ep.value})")
        except Exception:  # a broken plugin must not stop other stores from opening
            log.warning("Store adapter %s (%s) failed to load; skipped.", ep.name, ep.value, exc_info=True)
            continue
        if adapter is not None:
            found.append(adapter)
    return sorted(found, key=lambda a: (a.order, a.kind))


def adapters(*, refresh: bool = False) -> list[StoreAdapter]:
    """The adapters ``open_store`` tries, in order (built-in first, then installed ones).

    ``refresh`` reads the installed entry points again (after a package was installed).
    """
    global _cache
    with _lock:
        if _cache is None or refresh:
            builtin = [a for a in (_builtin(s) for s in BUILTIN) if a is not None]
            kinds = {a.kind for a in builtin}
            extra = []
            for adapter in _installed():
                if adapter.kind in kinds:
                    log.warning("Store adapter kind %r is registered twice; the later one is skipped.",
                                adapter.kind)
                    continue
                kinds.add(adapter.kind)
                extra.append(adapter)
            _cache = builtin + extra
        return list(_cache)


def adapter_for_kind(kind: str) -> StoreAdapter | None:
    """The adapter whose ``kind`` is ``kind``, or None."""
    return next((a for a in adapters() if a.kind == kind), None)


def detect_tables(columns: dict[str, set[str]]) -> StoreAdapter | None:
    """The first adapter that recognises a database with these tables and columns."""
    for adapter in adapters():
        try:
            if adapter.detect_tables(columns):
                return adapter
        except Exception:  # a third party's detection bug is not the user's problem
            log.warning("Store adapter %r failed while detecting; skipped.", adapter.kind, exc_info=True)
    return None


def detect_path(path: Path) -> StoreAdapter | None:
    """The first adapter that recognises the folder or non-SQLite file at ``path``."""
    for adapter in adapters():
        try:
            if adapter.detect_path(path):
                return adapter
        except Exception:
            log.warning("Store adapter %r failed while detecting; skipped.", adapter.kind, exc_info=True)
    return None


def known_kinds() -> str:
    """'Checkpoint Inspector, LangGraph, …' for messages that list what can be opened."""
    return ", ".join(a.label or a.kind for a in adapters())
