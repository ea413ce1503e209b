"""``plan_prune`` / ``apply_prune``: retention on any store (native or LangGraph)."""

from __future__ import annotations

import os
from collections.abc import Callable

from inspector.errors import StoreError
from inspector.retention.rules import Describe, Diagnose, PrunePlan, Rules, diagnosed
from inspector.store import open_store


def plan_prune(target: str | os.PathLike, rules: Rules, *, diagnose: Diagnose | None = None,
               ids: bool = False) -> PrunePlan:
    """What a prune would remove now (opens the store read-only; changes nothing).
    ``diagnose``: the statuses the app shows (see ``Diagnose``); without it every active run is
    live. ``ids``: keep which checkpoints in the plan (``PrunePlan.chosen``), for a preview
    whose prune is confirmed later (``apply_prune(preview=…)``)."""
    with open_store(target) as store:
        rules = diagnosed(store, rules, diagnose)
        from inspector.store.native.store import NativeStore
        if isinstance(store, NativeStore):
            from inspector.retention import native
            return native.plan(store, rules, ids=ids)
        from inspector.retention import langgraph
        from inspector.store.langgraph.store import LangGraphStore
        if not isinstance(store, LangGraphStore):
            raise StoreError(f"{store.info.display}: prune does not know {store.info.kind} stores.")
        return langgraph.plan(store, rules, ids=ids)


def apply_prune(target: str | os.PathLike, rules: Rules, *, vacuum: bool = False, langgraph_write: bool = False,
                progress: Callable[[str], None] | None = None, backup: str | None = None,
                diagnose: Diagnose | None = None, describe: Describe | None = None,
                preview: PrunePlan | None = None) -> PrunePlan:
    """Prune for real. LangGraph databases need ``langgraph_write`` (and get a backup first on
    SQLite; PostgreSQL runs in one transaction). ``diagnose``: as ``plan_prune``; ``describe``
    says anew the change of a native checkpoint whose parent went (its ops and size delta are
    recomputed either way; see ``Describe``).

    ``preview``: the dry run (``plan_prune(ids=True)`` with the same ``rules``) the user
    confirmed: only checkpoints it listed go, those the rules still select (a run that
    finished since the preview keeps its checkpoints); the plan's notes say what the store's
    changes left. Without it the rules are applied as they select now (``prune --apply``)."""
    only = None
    if preview is not None:
        if preview.chosen is None:
            raise ValueError("apply_prune(preview=…) needs a plan made with plan_prune(ids=True)")
        only = preview.chosen
    with open_store(target) as probe:
        kind = probe.info.kind
        rules = diagnosed(probe, rules, diagnose)
    if kind == "langgraph":
        if not langgraph_write:
            raise StoreError("This is a LangGraph database: pruning it deletes rows LangGraph wrote; "
                             "pass --langgraph-write to allow it.")
        from inspector.retention import langgraph
        return langgraph.apply(target, rules, vacuum=vacuum, progress=progress, backup=backup, only=only)
    if kind != "native":
        raise StoreError(f"prune does not know {kind} stores (native and LangGraph stores only).")
    from inspector.retention import native
    with writable_native(target) as store:
        return native.apply(store, rules, vacuum=vacuum, progress=progress, describe=describe, only=only)


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
