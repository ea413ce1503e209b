"""The runs as a lineage tree (forks under the run they came from) with sortable columns; no Qt."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from inspector.errors import RunNotFoundError, StoreError
from inspector.model import RunInfo
from inspector.resume.status import EffectiveStatus, deep_statuses, quick_statuses
from inspector.store.base import Store
from inspector.store.refs import parent_refs

# column ids (the Qt model's column order)
COL_NAME, COL_STATUS, COL_CHECKPOINTS, COL_CHECKS, COL_UPDATED, COL_AGENT, COL_ID = range(7)
COLUMN_TITLES = ("Run", "Status", "Ckpts", "Checks", "Updated", "Agent", "ID")
STATUS_ORDER = {s: i for i, s in enumerate(
    ("stuck", "crashed", "failed", "running", "interrupted", "forked", "completed"))}


@dataclass(eq=False)
class RunNode:
    """One run in the tree; ``row`` is its index among its parent's children."""

    key: int
    run: RunInfo
    parent: RunNode | None = None
    children: list[RunNode] = field(default_factory=list)
    row: int = 0
    status: str = ""
    reason: str = ""
    fork_seq: int | None = None


# what the invisible root node holds: never shown, sorted or looked up by id (every other
# node holds a listed run)
_ROOT_RUN = RunInfo(id="", name="", agent="", status="", created=0.0, updated=0.0)


def _progress(run: RunInfo) -> tuple[float, int]:
    return (run.checks_passed / run.checks_total if run.checks_total else -1.0, run.checks_passed)


SORT_KEYS: dict[int, Callable[[RunNode], Any]] = {
    COL_NAME: lambda n: n.run.name.casefold(),
    COL_STATUS: lambda n: STATUS_ORDER.get(n.status, len(STATUS_ORDER)),
    COL_CHECKPOINTS: lambda n: n.run.checkpoint_count,
    COL_CHECKS: lambda n: _progress(n.run),
    COL_UPDATED: lambda n: n.run.updated,
    COL_AGENT: lambda n: n.run.agent.casefold(),
    COL_ID: lambda n: n.run.id,
}


class RunTree:
    """Nodes by id and by key; children kept in the current sort order."""

    def __init__(self) -> None:
        self._keys = itertools.count(1)
        self.root = RunNode(0, _ROOT_RUN)
        self.by_id: dict[str, RunNode] = {}
        self.by_key: dict[int, RunNode] = {0: self.root}
        self.sort_column = COL_UPDATED
        self.descending = True

    def __len__(self) -> int:
        return len(self.by_id)

    def clear(self) -> None:
        """Forget every run."""
        self.root.children.clear()
        self.by_id.clear()
        self.by_key = {0: self.root}

    def build(self, runs: Iterable[RunInfo], statuses: dict[str, EffectiveStatus]) -> None:
        """Replace the tree with ``runs`` (forks under their parents when present)."""
        self.clear()
        nodes = [self._new_node(run, statuses.get(run.id)) for run in runs]
        for node in nodes:
            node.parent = self.parent_for(node.run)
            node.parent.children.append(node)
        self.sort(self.sort_column, self.descending)

    def _new_node(self, run: RunInfo, diag: EffectiveStatus | None) -> RunNode:
        node = RunNode(next(self._keys), run)
        self._set_status(node, diag)
        self.by_id[run.id] = node
        self.by_key[node.key] = node
        return node

    @staticmethod
    def _set_status(node: RunNode, diag: EffectiveStatus | None) -> None:
        node.status = diag.status if diag else node.run.status
        node.reason = diag.reason if diag else ""

    # -- order -----------------------------------------------------------------
    def sort_key(self, node: RunNode) -> tuple:
        """The node's key in the current order (ties broken by most recent update, then id)."""
        return (SORT_KEYS[self.sort_column](node), node.run.updated, node.run.id)

    def sort(self, column: int, descending: bool) -> None:
        """Sort every level by ``column``."""
        self.sort_column, self.descending = column, descending
        stack = [self.root]
        while stack:
            node = stack.pop()
            node.children.sort(key=self.sort_key, reverse=descending)
            self._renumber(node, 0)
            stack.extend(c for c in node.children if c.children)

    def is_sorted(self, parent: RunNode) -> bool:
        """Whether ``parent``'s children are in order."""
        keys = [self.sort_key(c) for c in parent.children]
        return keys == sorted(keys, reverse=self.descending)

    def insert_position(self, parent: RunNode, node: RunNode) -> int:
        """Where ``node`` goes among ``parent``'s children in the current order."""
        key = self.sort_key(node)
        for i, child in enumerate(parent.children):
            other = self.sort_key(child)
            if (key > other) if self.descending else (key < other):
                return i
        return len(parent.children)

    @staticmethod
    def _renumber(parent: RunNode, start: int) -> None:
        for i in range(start, len(parent.children)):
            parent.children[i].row = i

    # -- edits (the Qt model wraps these in begin/end signals) ----------------------
    def parent_for(self, run: RunInfo) -> RunNode:
        """The node a run belongs under: its fork parent if listed, else the root (also when
        a damaged store's lineage is a cycle: A forked from B, B from A)."""
        parent = self.by_id.get(run.parent_run or "")
        seen = {run.id}
        ancestor = parent
        while ancestor is not None:
            if ancestor.run.id in seen:
                return self.root
            seen.add(ancestor.run.id)
            ancestor = self.by_id.get(ancestor.run.parent_run or "")
        return parent if parent is not None else self.root

    def make_node(self, run: RunInfo, diag: EffectiveStatus | None) -> RunNode:
        """A node for a new run (not yet attached)."""
        return self._new_node(run, diag)

    def attach(self, node: RunNode, parent: RunNode, position: int) -> None:
        """Insert ``node`` as ``parent``'s child at ``position``."""
        node.parent = parent
        parent.children.insert(position, node)
        self._renumber(parent, position)

    def move(self, node: RunNode, parent: RunNode, position: int) -> None:
        """Move ``node`` (with its subtree) to ``parent`` at ``position``."""
        old = node.parent or self.root
        del old.children[node.row]
        self._renumber(old, node.row)
        self.attach(node, parent, position)

    def detach(self, node: RunNode) -> None:
        """Remove ``node`` and its subtree."""
        parent = node.parent or self.root
        del parent.children[node.row]
        self._renumber(parent, node.row)
        stack = [node]
        while stack:
            gone = stack.pop()
            self.by_id.pop(gone.run.id, None)
            self.by_key.pop(gone.key, None)
            stack.extend(gone.children)

    def orphans(self) -> list[RunNode]:
        """Top-level forks whose parent run is now listed (to be moved under it)."""
        return [n for n in self.root.children if n.run.parent_run and n.run.parent_run in self.by_id
                and n.run.parent_run != n.run.id]

    def update(self, node: RunNode, run: RunInfo, diag: EffectiveStatus | None) -> None:
        """Replace a node's run and effective status."""
        node.run = run
        self._set_status(node, diag)

    def walk(self) -> Iterable[RunNode]:
        """Every node, parents before children."""
        stack = list(reversed(self.root.children))
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))


FIRST_PAGE = 200  # runs shown before the rest of a big store has loaded


@dataclass(frozen=True)
class RunsLoad:
    """What a background load of runs returns.

    ``kind``: 'first' (the most recently updated runs; more may follow), 'rest' (every
    run after the first page), 'all' (every run), 'some' (particular runs).
    """

    runs: list[RunInfo]
    statuses: dict[str, EffectiveStatus]
    kind: str = "all"
    missing: tuple[str, ...] = ()   # runs asked for ('some') that the store no longer has

    @property
    def more(self) -> bool:
        """True when a first page was full, so the rest must be loaded."""
        return self.kind == "first" and len(self.runs) >= FIRST_PAGE


def load_runs(store: Store, run_ids: Iterable[str] | None = None, *, part: str = "all") -> RunsLoad:
    """Runs with the effective status of those marked running.

    ``part``: 'all', 'first' (the FIRST_PAGE most recent) or 'rest' (the others);
    with ``run_ids``, just those runs.
    """
    if run_ids is None:
        if part == "first":
            runs = store.list_runs(limit=FIRST_PAGE)
        elif part == "rest":
            runs = store.list_runs(offset=FIRST_PAGE)
        else:
            runs = store.list_runs()
        return RunsLoad(runs, quick_statuses(runs), kind=part)
    runs, missing, error = [], [], None
    for run_id in run_ids:
        try:
            runs.append(store.get_run(run_id))
        except RunNotFoundError:   # deleted meanwhile
            missing.append(run_id)
        except StoreError as exc:  # a broken store fails them all
            error = exc
    if error is not None and not runs:
        raise error
    return RunsLoad(runs, quick_statuses(runs), kind="some", missing=tuple(missing))


def preview_load(target: str) -> RunsLoad | None:
    """The first page of a native SQLite store's runs read without opening it (no SQLAlchemy;
    see ``inspector.store.native.preview``), or None. Call from a worker thread."""
    from inspector.store.native.preview import preview_runs

    runs = preview_runs(target, FIRST_PAGE)
    return None if runs is None else RunsLoad(runs, quick_statuses(runs), kind="first")


def load_running(store: Store, run_ids: list[str]) -> RunsLoad:
    """Re-read runs that looked alive and diagnose them again (heartbeats go stale without a write)."""
    load = load_runs(store, run_ids)
    statuses = dict(load.statuses)
    statuses.update(deep_statuses(store, [r for r in load.runs if r.id not in statuses]))
    return RunsLoad(load.runs, statuses, kind="some", missing=load.missing)


def fork_points(store: Store, runs: Iterable[RunInfo]) -> dict[str, int]:
    """Run id → the seq of the checkpoint each fork was made from (forks whose source exists)."""
    return {run_id: info.seq for run_id, info in parent_refs(store, runs).items()}
