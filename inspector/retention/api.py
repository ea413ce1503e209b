"""``plan_prune`` / ``apply_prune``: retention on any store (native or LangGraph)."""

from __future__ import annotations

import os
from collections.abc import Callable

from inspector.errors import StoreError
from inspector.retention.rules import Describe, Diagnose, PrunePlan, Rules, diagnosed
from inspector.store import open_store


def plan_prune(target: str | os.PathLike, rules: Rules, *, diagnose: Diagnose | None = None) -> PrunePlan:
    """What a prune would remove now (opens the store read-only; changes nothing).
    ``diagnose``: the statuses the app shows (see ``Diagnose``); without it every active run is live."""
    with open_store(target) as store:
        rules = diagnosed(store, rules, diagnose)
        from inspector.store.native.store import NativeStore
        if isinstance(store, NativeStore):
            from inspector.retention import native
            return native.plan(store, rules)
        from inspector.retention import langgraph
        from inspector.store.langgraph.store import LangGraphStore
        if not isinstance(store, LangGraphStore):
            raise StoreError(f"{store.info.display}: prune does not know {store.info.kind} stores.")
        return langgraph.plan(store, rules)


def apply_prune(target: str | os.PathLike, rules: Rules, *, vacuum: bool = False, langgraph_write: bool = False,
                progress: Callable[[str], None] | None = None, backup: str | None = None,
                diagnose: Diagnose | None = None, describe: Describe | None = None) -> PrunePlan:
    """Prune for real. LangGraph databases need ``langgraph_write`` (and get a backup first on
    SQLite; PostgreSQL runs in one transaction). ``diagnose``: as ``plan_prune``; ``describe``
    says anew the change of a native checkpoint whose parent went (its ops and size delta are
    recomputed either way; see ``Describe``)."""
    with open_store(target) as probe:
        kind = probe.info.kind
        rules = diagnosed(probe, rules, diagnose)
    if kind == "langgraph":
        if not langgraph_write:
            raise StoreError("This is a LangGraph database: pruning it deletes rows LangGraph wrote; "
                             "pass --langgraph-write to allow it.")
        from inspector.retention import langgraph
        return langgraph.apply(target, rules, vacuum=vacuum, progress=progress, backup=backup)
    if kind != "native":
        raise StoreError(f"prune does not know {kind} stores (native and LangGraph stores only).")
    from inspector.retention import native
    with writable_native(target) as store:
        return native.apply(store, rules, vacuum=vacuum, progress=progress, describe=describe)


def writable_native(target: str | os.PathLike):
    """A native store opened for maintenance writes (pins, prune) without raising its format
    version: these writes add rows and at most the ``ci_pins`` table, which older readers ignore."""
    from inspector.store.engine import check_writable, make_engine
    from inspector.store.native.store import NativeStore

    with open_store(target) as probe:   # validates kind and version, one sentence otherwise
        if probe.info.kind != "native":
            raise StoreError(f"{probe.info.display} is a {probe.info.kind} store; pins are kept in native stores only.")
        assert isinstance(probe, NativeStore)
        tgt, version = probe.target, probe.info.format_version
    engine = make_engine(tgt, readonly=False)
    try:
        check_writable(engine, probe.info.display, "ci_runs")
    except StoreError:
        engine.dispose()
        raise
    return NativeStore(engine, tgt, read_only=False, format_version=version or 0)
