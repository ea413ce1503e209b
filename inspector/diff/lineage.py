"""Common ancestor of two checkpoints, across runs (forks) and LangGraph branches.

Native runs are linear, so a checkpoint's ancestry is a short list of *segments*
``(run, last seq)`` following ``RunInfo.parent_run``/``parent_checkpoint``; finding the
common ancestor costs one query per fork level. Other stores (LangGraph) may branch inside
a run through ``CheckpointInfo.parent_id``; there the run's listing is walked in memory.
"""

from __future__ import annotations

from typing import Any

from inspector.errors import StoreError
from inspector.model import CheckpointInfo

MAX_FORK_DEPTH = 1_000


def common_ancestor(store: Any, a: CheckpointInfo, b: CheckpointInfo) -> CheckpointInfo | None:
    """The nearest checkpoint that both ``a`` and ``b`` descend from (or are), else None.

    When one is an ancestor of the other, that one is returned.
    """
    if a.run_id == b.run_id and a.id == b.id:
        return a
    if getattr(getattr(store, "info", None), "kind", None) == "native":
        return _native_ancestor(store, a, b)
    return _graph_ancestor(store, a, b)


def describe_divergence(ancestor: CheckpointInfo | None, a: CheckpointInfo, b: CheckpointInfo) -> str:
    """A sentence saying how two checkpoints are related."""
    if ancestor is None:
        return "The two checkpoints share no history."
    if ancestor.id == a.id and ancestor.run_id == a.run_id:
        return f"{_label(b)} descends from {_label(a)}."
    if ancestor.id == b.id and ancestor.run_id == b.run_id:
        return f"{_label(a)} descends from {_label(b)}."
    return f"The branches diverged after {_label(ancestor)}."


def _label(cp: CheckpointInfo) -> str:
    return f"{cp.run_id}:{cp.seq}"


# -- native: linear runs linked by fork points ------------------------------------------
def segments(store: Any, cp: CheckpointInfo) -> list[tuple[str, int]]:
    """``[(run, last seq), …]`` from the checkpoint's own run up through its fork sources."""
    out = [(cp.run_id, cp.seq)]
    seen = {cp.run_id}
    run = store.get_run(cp.run_id)
    while run.parent_run and run.parent_checkpoint is not None and len(out) < MAX_FORK_DEPTH:
        try:
            source = store.get_checkpoint(run.parent_checkpoint)
        except StoreError:
            break   # the source was deleted: the lineage ends here
        out.append((source.run_id, source.seq))
        if source.run_id in seen:
            break
        seen.add(source.run_id)
        run = store.get_run(source.run_id)
    return out


def _native_ancestor(store: Any, a: CheckpointInfo, b: CheckpointInfo) -> CheckpointInfo | None:
    if a.run_id == b.run_id:    # a native run is linear: the earlier one is the ancestor
        return a if a.seq <= b.seq else b
    reach_b: dict[str, int] = {}
    for run_id, seq in segments(store, b):
        reach_b.setdefault(run_id, seq)
    for run_id, seq in segments(store, a):
        if run_id in reach_b:
            target = min(seq, reach_b[run_id])
            for cp in (a, b):
                if cp.run_id == run_id and cp.seq == target:
                    return cp
            found = store.checkpoints_at(run_id, [target])
            return found[0] if found else None
    return None


# -- graphs: parent_id links inside runs -------------------------------------------------
class _Listing:
    """Each run's checkpoints by id, listed once."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.runs: dict[str, dict[Any, CheckpointInfo]] = {}

    def by_id(self, run_id: str) -> dict[Any, CheckpointInfo]:
        if run_id not in self.runs:
            self.runs[run_id] = {c.id: c for c in self.store.list_checkpoints(run_id)}
        return self.runs[run_id]


def ancestry(store: Any, cp: CheckpointInfo, listing: _Listing | None = None) -> list[CheckpointInfo]:
    """The checkpoint and all its ancestors, nearest first."""
    listing = listing or _Listing(store)
    out: list[CheckpointInfo] = []
    seen: set[tuple[str, Any]] = set()
    current: CheckpointInfo | None = cp
    while current is not None and (current.run_id, current.id) not in seen:
        seen.add((current.run_id, current.id))
        out.append(current)
        parent = listing.by_id(current.run_id).get(current.parent_id) if current.parent_id is not None else None
        if parent is None:
            parent = _fork_source(store, current)
        current = parent
    return out


def _fork_source(store: Any, cp: CheckpointInfo) -> CheckpointInfo | None:
    """The parent outside the run: a global parent id, else the run's fork source."""
    try:
        if isinstance(cp.parent_id, int):
            return store.get_checkpoint(cp.parent_id)
    except StoreError:
        pass
    try:
        run = store.get_run(cp.run_id)
        if run.parent_run and run.parent_checkpoint is not None:
            return store.get_checkpoint(run.parent_checkpoint)
    except StoreError:
        return None
    return None


def _graph_ancestor(store: Any, a: CheckpointInfo, b: CheckpointInfo) -> CheckpointInfo | None:
    if a.run_id == b.run_id:
        # one is the other's parent (a step and the one before it, as the Diff tab compares
        # them): that one, without listing the run (a second on a 50,000-checkpoint thread)
        if b.parent_id is not None and b.parent_id == a.id:
            return a
        if a.parent_id is not None and a.parent_id == b.id:
            return b
        # a store that finds it from its parent links alone (LangGraph: any two of a thread)
        fast = getattr(store, "common_ancestor", None)
        found = fast(a, b) if callable(fast) else None
        if found is not None:
            return found
    listing = _Listing(store)
    of_b = {(c.run_id, c.id) for c in ancestry(store, b, listing)}
    for cp in ancestry(store, a, listing):
        if (cp.run_id, cp.id) in of_b:
            return cp
    return None
