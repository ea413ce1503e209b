"""Diff two checkpoints of a store: hashed when the store keeps states by content, plain otherwise."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from inspector.codec import Ref, may_hold_markers, unpack
from inspector.diff.api import diff_pieces
from inspector.diff.engine import Engine
from inspector.diff.lineage import common_ancestor
from inspector.diff.model import CancelFn, Change, DiffCancelled, DiffResult, ProgressFn, ThreeWay
from inspector.diff.resolve import (FetchMany, has_markers, materialize, piece_streamer, prefetch, raw_fetcher,
                                    raw_streamer, store_fetcher)
from inspector.diff.summary import MESSAGE_KEYS, change_summary, result_summary
from inspector.diff.tasks import task_diff
from inspector.errors import StoreError
from inspector.model import CheckpointInfo, Snapshot
from inspector.store.base import Store


def checkpoint_info(store: Any, ref: CheckpointInfo | int | str) -> CheckpointInfo:
    """A CheckpointInfo from itself, an id or ``RUN:SEQ``."""
    return ref if isinstance(ref, CheckpointInfo) else store.get_checkpoint(ref)


def keeps_pieces(store: Any) -> bool:
    """True when the store can read content-addressed pieces (a native store)."""
    return getattr(type(store), "read_piece", Store.read_piece) is not Store.read_piece


class _Reader:
    """State access for one diff call: pieces by digest, or whole snapshots (loaded once)."""

    def __init__(self, store: Any, cancel: CancelFn | None, progress: ProgressFn | None,
                 lazy: bool = False, channel: str | None = None, tasks_only: bool = False) -> None:
        """``lazy``: load states with their big parts kept encoded where the store can
        (``load_state_view``; the engine compares those block by block). ``channel``: only
        that top-level key of the states is asked for (a store that can load one channel
        alone, ``load_channel_view``, loads only it; the states hold at least it).
        ``tasks_only``: only the task states are asked for (a store that can load them
        without the rest of the state, ``load_task_view``, does)."""
        self.store = store
        self.channel = channel
        self._load = self._loader(store, lazy, channel, tasks_only)
        self.cancel = cancel
        self.progress = progress
        self.pieces = keeps_pieces(store)
        self.fetch = store_fetcher(store) if self.pieces else None
        self.fetch_raw = raw_fetcher(store) if self.pieces else None
        self.stream_raw = raw_streamer(store) if self.pieces else None
        self.stream_piece = piece_streamer(store) if self.pieces else None
        self.snapshots: dict[Any, Snapshot] = {}
        self.stats = {"nodes": 0, "pieces_read": 0, "fetches": 0}
        self._lanes: dict[str, bool] = {}

    def _hashed(self, *infos: CheckpointInfo) -> bool:
        return self.pieces and all(i.state_hash for i in infos)

    def _by_pieces(self, *infos: CheckpointInfo) -> bool:
        """Whether the states are diffed piece by piece: not for a LangGraph lane (written by
        ``InspectorSaver``), whose pieces hold LangGraph's serialized values (typed leaves):
        its states are compared as the State view shows them (decoded messages and models,
        LangGraph's control channels left out)."""
        return self._hashed(*infos) and not any(self._lane(i) for i in infos)

    def _lane(self, info: CheckpointInfo) -> bool:
        if info.run_id not in self._lanes:
            try:
                labels = self.store.get_run(info.run_id).labels
            except StoreError:
                labels = {}
            self._lanes[info.run_id] = isinstance(labels, dict) and isinstance(labels.get("langgraph"), dict)
        return self._lanes[info.run_id]

    def snapshot(self, info: CheckpointInfo) -> Snapshot:
        if info.id not in self.snapshots:
            if self.cancel is not None and self.cancel():
                raise DiffCancelled("The diff was cancelled.")
            if self.progress is not None:
                self.progress("loading", 0)
            self.snapshots[info.id] = self._load(info.id)
        return self.snapshots[info.id]

    @staticmethod
    def _loader(store: Any, lazy: bool, channel: str | None, tasks_only: bool) -> Callable[[Any], Snapshot]:
        """How a snapshot is read: the narrowest view the store offers for what is asked."""
        if lazy:
            tasks = getattr(store, "load_task_view", None)
            if tasks_only and callable(tasks):
                return tasks
            one = getattr(store, "load_channel_view", None)
            if channel is not None and callable(one):
                return lambda checkpoint_id: one(checkpoint_id, channel)
            view = getattr(store, "load_state_view", None)
            if callable(view):
                return view
        return store.load_state

    def states(self, x: CheckpointInfo, y: CheckpointInfo, key: str | None = None) -> tuple[Change, ...]:
        """The changes from state ``x`` to state ``y``; with ``key`` (default: the reader's
        ``channel``), only those at or inside that top-level key of theirs (all there are,
        when the states are not both maps): states loaded whole are then compared on that key
        alone (a map's keys are compared one by one, so its changes are those the whole
        states give there)."""
        key = self.channel if key is None else key
        if self._hashed(x, y) and x.state_hash == y.state_hash:
            return ()
        fetch = self.fetch      # set exactly when the store keeps pieces (self.pieces)
        if fetch is not None and x.state_hash and y.state_hash and self._by_pieces(x, y):
            stats: dict = {}
            changes = diff_pieces(fetch, x.state_hash, y.state_hash, cancel=self.cancel,
                                  progress=self.progress, stats=stats, fetch_raw=self.fetch_raw,
                                  stream_raw=self.stream_raw, stream_piece=self.stream_piece)
        else:
            engine = Engine(cancel=self.cancel, progress=self.progress)
            old, new = self.snapshot(x).state, self.snapshot(y).state
            if key is not None and type(old) is dict and type(new) is dict:
                old, new = ({key: old[key]} if key in old else {}), ({key: new[key]} if key in new else {})
            changes = engine.run(old, new)
            stats = engine.stats()
        for name, value in stats.items():
            self.stats[name] = self.stats.get(name, 0) + value
        return changes

    def hidden(self, x: CheckpointInfo, y: CheckpointInfo) -> tuple[str, ...]:
        """LangGraph's own channels whose values differ, when both snapshots were loaded (a
        LangGraph thread's: its state leaves them out, so an ``input`` checkpoint, which only
        adds ``__start__``, shows no state change)."""
        a, b = self.snapshots.get(x.id), self.snapshots.get(y.id)
        if a is None or b is None or not isinstance(a.meta, dict) or not isinstance(b.meta, dict):
            return ()
        old, new = a.meta.get("control_channels"), b.meta.get("control_channels")
        if not isinstance(old, dict) or not isinstance(new, dict):
            return ()
        gone = object()     # a channel only one side holds changed too (a branch channel LangGraph clears)
        return tuple(sorted((k for k in old.keys() | new.keys() if old.get(k, gone) != new.get(k, gone)), key=str))

    def tasks(self, info: CheckpointInfo) -> Any:
        fetch = self.fetch
        if fetch is not None and info.state_hash and self._by_pieces(info):
            if not info.tasks_hash:
                return None
            if self.fetch_raw is not None:
                # a task state is written as one flat piece: decoding its bytes gives a fresh
                # value, with nothing to resolve or copy (unless it holds markers after all)
                raw = self.fetch_raw([info.tasks_hash])[info.tasks_hash]
                value = unpack(raw)
                if not may_hold_markers(raw) or not has_markers(value):
                    self.stats["pieces_read"] += 1
                    return value
            table: dict[bytes, Any] = {}
            root = Ref(info.tasks_hash, 0)
            self.stats["pieces_read"] += prefetch([root], table, fetch)
            return materialize(root, table)
        return self.snapshot(info).tasks

    def task_changes(self, x: CheckpointInfo, y: CheckpointInfo) -> tuple[tuple, str, Any, Any]:
        if self._by_pieces(x, y) and x.tasks_hash == y.tasks_hash:
            return (), "", None, None
        if self._by_pieces(x, y) and self.fetch_raw is not None:
            self.fetch_raw([d for d in (x.tasks_hash, y.tasks_hash) if d])   # both in one read
        old, new = self.tasks(x), self.tasks(y)
        # y edited from x (a LangGraph update_state / fork row): set back on purpose, no regression
        edit = y.kind in ("update", "fork") and y.parent_id is not None and str(y.parent_id) == str(x.id)
        return (*task_diff(old, new, edit=edit), old, new)


def diff_checkpoints(store: Any, a: CheckpointInfo | int | str, b: CheckpointInfo | int | str, *,
                     three_way: bool = True, cancel: CancelFn | None = None,
                     progress: ProgressFn | None = None,
                     snapshots: dict[Any, Snapshot] | None = None) -> DiffResult:
    """Diff checkpoint ``a`` (old) against ``b`` (new), with their common ancestor.

    When the two lie on different branches (a fork against its original), ``three_way``
    adds the changes from the ancestor to each side. Runs in any thread; ``cancel()``
    returning True raises DiffCancelled, ``progress(stage, done)`` reports work done.
    ``snapshots`` (checkpoint id → Snapshot) are used instead of loading those checkpoints,
    and get the ones the diff loads (the caller can show them without loading them again).
    """
    started = time.perf_counter()
    info_a, info_b = checkpoint_info(store, a), checkpoint_info(store, b)
    reader = _Reader(store, cancel, progress, lazy=True)
    if snapshots is not None:
        reader.snapshots = snapshots
    changes = reader.states(info_a, info_b)
    hidden = reader.hidden(info_a, info_b)
    if progress is not None:
        progress("tasks", reader.stats["nodes"])
    task_changes, task_line, _, _ = reader.task_changes(info_a, info_b)
    if progress is not None:
        progress("ancestor", reader.stats["nodes"])
    ancestor = _ancestor(store, info_a, info_b)
    branches = None
    if three_way and ancestor is not None and ancestor.id not in (info_a.id, info_b.id):
        branches = ThreeWay(ancestor, reader.states(ancestor, info_a), reader.states(ancestor, info_b))
    summary = result_summary(task_line, changes)
    stats = dict(reader.stats, seconds=time.perf_counter() - started)
    return DiffResult(changes, task_changes, summary, info_a, info_b, ancestor, branches, stats, hidden)


def stored_form(store: Any, info: CheckpointInfo) -> Any:
    """The root piece of a checkpoint's state as stored (markers left in place) when its state
    can be read piece by piece — a native state, not a LangGraph lane — else None."""
    reader = _Reader(store, None, None)
    if reader.fetch is None or not info.state_hash or not reader._by_pieces(info):
        return None
    return reader.fetch([info.state_hash])[info.state_hash]


def _ancestor(store: Any, a: CheckpointInfo, b: CheckpointInfo) -> CheckpointInfo | None:
    try:
        return common_ancestor(store, a, b)
    except StoreError:
        return None     # a broken lineage must not prevent the diff itself


def checkpoint_change(store: Any, a: CheckpointInfo, b: CheckpointInfo) -> str:
    """The timeline label for the step from ``a`` to ``b`` (reads root pieces only when it can)."""
    reader = _Reader(store, None, None)
    fetch = reader.fetch
    if fetch is not None and a.state_hash and b.state_hash:
        if a.state_hash == b.state_hash:
            old_state = new_state = None
        else:
            got = fetch([a.state_hash, b.state_hash])
            old_state, new_state = _open_messages(fetch, got[a.state_hash], got[b.state_hash])
    else:
        old_state, new_state = reader.snapshot(a).state, reader.snapshot(b).state
    _, _, old_tasks, new_tasks = reader.task_changes(a, b)
    return change_summary(old_state, new_state, old_tasks, new_tasks)


def _open_messages(fetch: FetchMany, old: Any, new: Any) -> tuple[Any, Any]:
    """Read one level of message lists stored as pieces, so their lengths can be compared."""
    if not (isinstance(old, dict) and isinstance(new, dict)):
        return old, new
    refs = {k for k in MESSAGE_KEYS & old.keys() & new.keys()
            if isinstance(old[k], Ref) and isinstance(new[k], Ref) and old[k] != new[k]}
    if not refs:
        return old, new
    got = fetch({x[k].digest for k in refs for x in (old, new)})
    old, new = dict(old), dict(new)
    for k in refs:
        old[k], new[k] = got[old[k].digest], got[new[k].digest]
    return old, new
