"""Qt tree model of the runs: lineage tree, effective status, live merging, model-side sorting."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt, QTimer, Signal

from inspector.humanize import plural
from inspector.model import ACTIVE_STATUSES, ChangeSet, RunInfo
from inspector.ui import formatting
from inspector.ui.models.run_tree import (COL_CHECKPOINTS, COL_CHECKS, COL_ID, COL_NAME,
                                          COL_STATUS, COL_UPDATED, COLUMN_TITLES, RunNode, RunsLoad,
                                          RunTree, fork_points, load_running, load_runs)
from inspector.resume.liveness import this_host
from inspector.resume.status import EffectiveStatus, deep_statuses, quick_statuses
from inspector.store.refs import match_runs
from inspector.ui.session import StoreSession
from inspector.ui.style import mono_font

RunRole = Qt.ItemDataRole.UserRole + 1        # RunInfo
StatusRole = Qt.ItemDataRole.UserRole + 2     # effective status (str)
ReasonRole = Qt.ItemDataRole.UserRole + 3     # why the effective status differs ('' if not)
ForkSeqRole = Qt.ItemDataRole.UserRole + 4    # seq the run was forked at (int | None)
ProgressRole = Qt.ItemDataRole.UserRole + 5   # (checks passed, checks total)

Index = QModelIndex | QPersistentModelIndex
HEARTBEAT_THRESHOLD = 30.0        # seconds without a heartbeat that make an owner silent (as the CLI's default)
WATCHED = ("running", "stuck")   # statuses shown that a run's owner dying changes (to crashed)
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)


class RunsModel(QAbstractItemModel):
    """Every run of the session's store; forks are children of the run they came from.

    Sorting happens here (Python key sort) rather than in a proxy, so 10,000 runs sort
    in milliseconds; the filter proxy keeps this order. All store reads run in the
    session's thread pool.
    """

    runs_loaded = Signal(int)     # a full load finished (number of runs)
    runs_updated = Signal(list)   # run ids merged incrementally
    runs_removing = Signal(list)  # run ids about to be removed: the store no longer has them
    runs_removed = Signal(list)   # ... and now removed
    annotated = Signal()          # deep diagnoses applied after a full load

    def __init__(self, session: StoreSession, parent: Any = None) -> None:
        super().__init__(parent)
        self.session = session
        self.tree = RunTree()
        self._generation = -1
        self.loaded = False  # every run of the store is listed
        self.previewing = False  # showing runs read before the store opened (see show_preview)
        self._mono = mono_font()
        self._fork_asked: set[str] = set()
        self._fork_wanted: list[RunInfo] = []
        self._fork_timer = QTimer(self, singleShot=True, interval=0)
        self._fork_timer.timeout.connect(self._resolve_forks)

    # -- structure ---------------------------------------------------------------
    def _node(self, index: Index) -> RunNode:
        if not index.isValid():
            return self.tree.root
        return self.tree.by_key[index.internalId()].children[index.row()]

    def node_index(self, node: RunNode, column: int = 0) -> QModelIndex:
        """The index of ``node`` in ``column``."""
        return self.createIndex(node.row, column, (node.parent or self.tree.root).key)

    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:
        if parent.isValid() and parent.column() != 0:
            return QModelIndex()
        node = self._node(parent)
        if 0 <= row < len(node.children) and 0 <= column < len(COLUMN_TITLES):
            return self.createIndex(row, column, node.key)
        return QModelIndex()

    def parent(self, index: Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # Qt overloads parent() (QObject's) and parent(index)
        if not index.isValid() or index.internalId() == 0:
            return QModelIndex()
        return self.node_index(self.tree.by_key[index.internalId()])

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        if parent.isValid() and parent.column() != 0:
            return 0
        return len(self._node(parent).children)

    def columnCount(self, parent: Index = QModelIndex()) -> int:
        return len(COLUMN_TITLES)

    def hasChildren(self, parent: Index = QModelIndex()) -> bool:
        return self.rowCount(parent) > 0

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(COLUMN_TITLES):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return COLUMN_TITLES[section]
        if role == Qt.ItemDataRole.TextAlignmentRole and section in (COL_CHECKPOINTS, COL_UPDATED):
            return _RIGHT
        return None

    # -- data ------------------------------------------------------------------------
    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        node = self._node(index)
        run, col = node.run, index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return formatting.visible(self._display(node, col))
        if role == RunRole:
            return run
        if role == StatusRole:
            return node.status
        if role == ReasonRole:
            return node.reason
        if role == ForkSeqRole:
            return self._fork_seq(node)
        if role == ProgressRole:
            return (run.checks_passed, run.checks_total)
        if role == Qt.ItemDataRole.ToolTipRole:
            return formatting.visible(self._tooltip(node, col), lines=True)
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (COL_CHECKPOINTS, COL_UPDATED):
            return _RIGHT
        if role == Qt.ItemDataRole.FontRole and col == COL_ID:
            return self._mono
        return None

    def _display(self, node: RunNode, col: int) -> str:
        run = node.run
        if col == COL_NAME:
            return run.name
        if col == COL_STATUS:
            return node.status
        if col == COL_CHECKPOINTS:
            return formatting.compact_count(run.checkpoint_count)
        if col == COL_CHECKS:
            return f"{run.checks_passed}/{run.checks_total}" if run.checks_total else ""
        if col == COL_UPDATED:
            return formatting.relative_time(run.updated)
        if col == COL_ID:
            return run.id
        return run.agent

    def _tooltip(self, node: RunNode, col: int) -> str:
        run = node.run
        damaged = f"\ndamaged: {run.damaged}" if run.damaged else ""
        if col == COL_STATUS:
            if node.reason:
                return f"{node.status}: {node.reason} (stored status: {run.status}){damaged}"
            return f"{node.status}" + (f": {run.last_error}" if run.last_error else "") + damaged
        if col == COL_UPDATED:
            return f"updated {formatting.full_time(run.updated)}\ncreated {formatting.full_time(run.created)}"
        if col == COL_CHECKS:
            return (f"{run.checks_passed} of {run.checks_total} checks passed · "
                    f"{run.tasks_done}/{run.tasks_total} tasks done")
        if col == COL_CHECKPOINTS:
            return plural(run.checkpoint_count, "checkpoint")
        lines = [run.name, f"id {run.id} · agent {run.agent or '—'}"]
        if run.parent_run:
            seq = self._fork_seq(node)
            at = f" at #{seq}" if seq is not None else ""
            lines.append(f"forked from {run.parent_run}{at}" + (f": {run.fork_reason}" if run.fork_reason else ""))
        if run.owner_host:
            lines.append(f"owner {run.owner_host} pid {run.owner_pid} · epoch {run.epoch}")
        return "\n".join(lines) + damaged

    # -- queries ------------------------------------------------------------------------
    def run_index(self, run_id: str) -> QModelIndex:
        """The index of a run (column 0), invalid if unknown."""
        node = self.tree.by_id.get(run_id)
        return self.node_index(node) if node is not None else QModelIndex()

    def run(self, run_id: str) -> RunInfo | None:
        """A loaded run by id."""
        node = self.tree.by_id.get(run_id)
        return node.run if node is not None else None

    def next_silence(self, now: float) -> float | None:
        """Seconds until the first run shown running with a heartbeat misses enough beats to be
        silent (stuck, see ``liveness.effective_threshold``), None when none will."""
        from inspector.resume.liveness import effective_threshold

        due = [n.run.heartbeat + effective_threshold(n.run, HEARTBEAT_THRESHOLD) - now
               for n in self.tree.by_id.values()
               if n.status == "running" and isinstance(n.run.heartbeat, (int, float))]
        later = [d for d in due if d > 0]
        return min(later) if later else None

    def status_of(self, run_id: str) -> str:
        """The status the list shows for a run (a diagnosis may say crashed or stuck), '' if unknown."""
        node = self.tree.by_id.get(run_id)
        return (node.status or node.run.status) if node is not None else ""

    def effective_of(self, run_id: str) -> EffectiveStatus | None:
        """The status the list shows for a run and why it differs from the stored one (None if unknown)."""
        node = self.tree.by_id.get(run_id)
        if node is None:
            return None
        return EffectiveStatus(node.status or node.run.status, node.reason if node.status != node.run.status else "")

    def forks_of(self, run_id: str) -> list[RunInfo]:
        """The loaded runs forked from ``run_id``."""
        return [n.run for n in self.tree.by_id.values() if n.run.parent_run == run_id]

    def match_run(self, text: str) -> tuple[str, list[RunInfo]]:
        """The runs listed that ``text`` names, with the rule that matched
        (``inspector.store.refs.match_runs``: an id, an id prefix, a name, a part of a name)."""
        if text in self.tree.by_id:
            return "id", [self.tree.by_id[text].run]
        return match_runs((n.run for n in self.tree.by_id.values()), text)

    def find_run(self, text: str) -> RunInfo | None:
        """The one run ``text`` names (``match_run``), or None."""
        _rule, hits = self.match_run(text)
        return hits[0] if len(hits) == 1 else None

    # -- sorting --------------------------------------------------------------------------
    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        if not 0 <= column < len(COLUMN_TITLES):
            return
        self._relayout(lambda: self.tree.sort(column, order == Qt.SortOrder.DescendingOrder))

    def _relayout(self, change: Any) -> None:
        self.layoutAboutToBeChanged.emit()
        old = self.persistentIndexList()
        nodes = [(self._node(i), i.column()) for i in old]
        change()
        new = [self.node_index(n, c) if n.run.id in self.tree.by_id else QModelIndex() for n, c in nodes]
        self.changePersistentIndexList(old, new)
        self.layoutChanged.emit()

    # -- loading ----------------------------------------------------------------------------
    def reload(self) -> None:
        """Load the runs in the background: a first page, then the rest (new store), or a merge."""
        store, generation = self.session.store, self.session.generation
        if store is None:
            self.clear()
            return
        part = "first" if generation != self._generation else "all"
        self.session.runner.run(lambda: load_runs(store, part=part),
                                lambda load: self._on_loaded(generation, load), key="runs:all")

    def show_preview(self, load: RunsLoad) -> None:
        """Show the most recent runs, read before the store opened; the store's own first
        page replaces them once it is open."""
        self._rebuild(load.runs, load.statuses)
        self.previewing = True

    def clear(self) -> None:
        """Forget every run (store closed)."""
        self.previewing = False
        self.beginResetModel()
        self.tree.clear()
        self._generation = -1
        self.loaded = False
        self._fork_asked.clear()
        self._fork_wanted.clear()
        self.endResetModel()

    def apply_changes(self, changes: ChangeSet) -> None:
        """Merge the runs a live change touched (fetched in the background)."""
        store, generation = self.session.store, self.session.generation
        if store is not None and changes.removed:
            self.reload()       # rows were deleted: every run is read, and those gone go
        if store is None or not changes.run_ids:
            return
        ids = list(changes.run_ids)
        self.session.runner.run(lambda: load_runs(store, ids), lambda load: self._on_loaded(generation, load))

    def refresh_running(self, selected: str | None = None) -> None:
        """Refresh relative times; re-read and re-diagnose the runs that still look alive or stuck
        (a stuck run's process may die, and its diagnosis says how long it has been silent).

        Runs already shown crashed are not re-read: if they wake up they write, and the
        watcher brings the change. The ``selected`` run is the exception: its diagnosis, above
        its timeline, says how long ago it stopped, and ages with the times listed. Nothing is
        read from a store whose file is gone.
        """
        self._touch_column(COL_UPDATED)
        store, generation = self.session.store, self.session.generation
        alive = [n.run.id for n in self.tree.by_id.values() if n.status in WATCHED]
        if selected and self.status_of(selected) == "crashed":
            alive.append(selected)
        if store is None or not alive or self.session.is_gone:
            return
        self.session.runner.run(lambda: load_running(store, alive), lambda load: self._on_loaded(generation, load),
                                key="runs:running")

    def check_owners(self) -> None:
        """Show a running or stuck run whose owner process on this machine is gone as crashed as
        soon as it is: no store is read (the process table), so it runs every few seconds (a
        killed agent writes nothing the watcher could bring, and ``refresh_running`` comes
        every 30 s). A silent owner is left to ``refresh_running``: the heartbeat times known
        here may be up to its period old. The runs that turned crashed are reported in
        ``runs_updated`` too, so that what describes the selected one is asked again."""
        host = this_host()      # (only an owner on this machine can be found gone: others' runs cost nothing)
        watched = [n.run for n in self.tree.by_id.values()
                   if n.status in WATCHED and n.run.owner_pid and n.run.owner_host == host]
        if not watched:
            return
        crashed = []
        for run_id, found in quick_statuses(watched).items():
            node = self.tree.by_id.get(run_id)
            if node is not None and node.status in WATCHED and found.status == "crashed":
                node.status, node.reason = found.status, found.reason
                self.dataChanged.emit(self.node_index(node, 0), self.node_index(node, len(COLUMN_TITLES) - 1))
                crashed.append(run_id)
        if crashed:
            self.runs_updated.emit(crashed)
            self.annotated.emit()

    def _on_loaded(self, generation: int, load: RunsLoad) -> None:
        if not self.session.is_current(generation):
            return
        if generation != self._generation:
            if load.kind != "first":  # the first page for this store is still coming
                return
            self.previewing = False
            self._rebuild(load.runs, load.statuses)
            self._generation = generation
        elif load.kind == "rest":
            # thousands of rows at once: a reset is far cheaper than row-by-row inserts
            # (the runs panel restores its selection after a reset)
            known = {n.run.id: EffectiveStatus(n.status, n.reason) for n in self.tree.by_id.values()
                     if n.status != n.run.status}
            listed = {r.id for r in load.runs}
            runs = [n.run for n in self.tree.by_id.values() if n.run.id not in listed] + load.runs
            self._rebuild(runs, {**known, **load.statuses})
        else:
            self._merge(load)
        if load.more:
            store = self.session.store
            if store is not None:   # (None: the store was closed meanwhile)
                self.session.runner.run(lambda: load_runs(store, part="rest"),
                                        lambda rest: self._on_loaded(generation, rest), key="runs:all")
        elif load.kind != "some":
            self.loaded = True
            self.runs_loaded.emit(len(self.tree))
            self._annotate([n.run for n in self.tree.by_id.values()])

    def _rebuild(self, runs: list[RunInfo], statuses: dict[str, EffectiveStatus]) -> None:
        known = {n.run.id: n.fork_seq for n in self.tree.by_id.values() if n.fork_seq is not None}
        self.beginResetModel()
        self.tree.build(runs, statuses)
        for run_id, seq in known.items():
            if run_id in self.tree.by_id:
                self.tree.by_id[run_id].fork_seq = seq
        self.endResetModel()

    def _merge(self, load: RunsLoad) -> None:
        gone = list(load.missing)
        if load.kind == "all":
            listed = {r.id for r in load.runs}
            gone += [run_id for run_id in self.tree.by_id if run_id not in listed]
        self._drop(gone)
        new_runs = []
        for run in load.runs:
            node = self.tree.by_id.get(run.id)
            if node is None:
                new_runs.append(run)
            elif run.updated >= node.run.updated:
                self.tree.update(node, run, load.statuses.get(run.id))
                self.dataChanged.emit(self.node_index(node, 0), self.node_index(node, len(COLUMN_TITLES) - 1))
        self._insert_many(new_runs, load)
        touched = {self.tree.by_id[r.id].parent or self.tree.root for r in load.runs if r.id in self.tree.by_id}
        if any(not self.tree.is_sorted(parent) for parent in touched):  # an update may move a row
            if self.hold_order:
                self._sort_pending = True     # not under the user's cursor: when it leaves
            else:
                self._resort()
        self.runs_updated.emit([r.id for r in load.runs])
        if load.kind == "some" and new_runs:
            self._annotate(new_runs)

    hold_order = False
    _sort_pending = False

    def set_hold_order(self, hold: bool) -> None:
        """While held, live updates do not move rows (the pointer is over the list); re-sort on release."""
        self.hold_order = hold
        if not hold and self._sort_pending:
            self._resort()

    def _resort(self) -> None:
        self._sort_pending = False
        self._relayout(lambda: self.tree.sort(self.tree.sort_column, self.tree.descending))

    def _insert_many(self, runs: list[RunInfo], load: RunsLoad) -> None:
        """Append top-level runs in one go, put forks under their parents, adopt orphans."""
        batch = {r.id for r in runs}
        nested = {r.id for r in runs if r.parent_run and (r.parent_run in self.tree.by_id or r.parent_run in batch)}
        tops = [r for r in runs if r.id not in nested]
        forks = [r for r in runs if r.id in nested]
        if tops:
            root = self.tree.root
            start = len(root.children)
            self.beginInsertRows(QModelIndex(), start, start + len(tops) - 1)
            for run in tops:
                self.tree.attach(self.tree.make_node(run, load.statuses.get(run.id)), root, len(root.children))
            self.endInsertRows()
        while forks:  # parents before their forks (a fork of a fork waits a round)
            ready = {r.id for r in forks if r.parent_run in self.tree.by_id} or {forks[0].id}
            for run in forks:
                if run.id in ready:
                    self._insert(run, load)
            forks = [r for r in forks if r.id not in ready]
        for orphan in self.tree.orphans():
            self._move_under_parent(orphan)

    def _insert(self, run: RunInfo, load: RunsLoad) -> None:
        parent = self.tree.parent_for(run)
        node = self.tree.make_node(run, load.statuses.get(run.id))
        position = self.tree.insert_position(parent, node)
        self.beginInsertRows(self._parent_index(parent), position, position)
        self.tree.attach(node, parent, position)
        self.endInsertRows()

    def _move_under_parent(self, node: RunNode) -> None:
        assert node.run.parent_run is not None   # only orphans move: forks whose parent is listed
        parent = self.tree.by_id[node.run.parent_run]
        position = self.tree.insert_position(parent, node)
        if not self.beginMoveRows(QModelIndex(), node.row, node.row, self._parent_index(parent), position):
            return
        self.tree.move(node, parent, position)
        self.endMoveRows()

    def _parent_index(self, parent: RunNode) -> QModelIndex:
        return self.node_index(parent) if parent is not self.tree.root else QModelIndex()

    def _drop(self, run_ids: list[str]) -> None:
        """Remove the rows of runs the store no longer has (with ``runs_removing`` before and
        ``runs_removed`` after). The forks under a removed run leave with its row; a full
        load lists them, and they come back at the top level."""
        gone = [run_id for run_id in dict.fromkeys(run_ids) if run_id in self.tree.by_id]
        if not gone:
            return
        self.runs_removing.emit(gone)
        for run_id in gone:
            node = self.tree.by_id.get(run_id)
            if node is not None:     # (a fork already went with its run)
                self._remove(node)
        self.runs_removed.emit(gone)

    def _remove(self, node: RunNode) -> None:
        parent = node.parent or self.tree.root
        self.beginRemoveRows(self._parent_index(parent), node.row, node.row)
        self.tree.detach(node)
        self.endRemoveRows()

    def _annotate(self, runs: list[RunInfo]) -> None:
        """Deep-diagnose the seemingly alive running runs in the background; emits ``annotated``."""
        alive = [n.run for n in (self.tree.by_id.get(r.id) for r in runs)
                 if n is not None and n.status == "running"]
        store, generation = self.session.store, self.session.generation
        if not alive or store is None:
            self.annotated.emit()
            return
        self.session.runner.run(lambda: deep_statuses(store, alive),
                                lambda statuses: self._on_diagnosed(generation, statuses))

    def _on_diagnosed(self, generation: int, statuses: dict[str, EffectiveStatus]) -> None:
        if not self.session.is_current(generation):
            return
        for run_id, diag in statuses.items():
            node = self.tree.by_id.get(run_id)
            if node is not None and node.run.status in ACTIVE_STATUSES:
                node.status, node.reason = diag.status, diag.reason
                self.dataChanged.emit(self.node_index(node, 0), self.node_index(node, len(COLUMN_TITLES) - 1))
        self.annotated.emit()

    # -- fork points, resolved for the forks that are actually painted ---------------------------
    def _fork_seq(self, node: RunNode) -> int | None:
        if node.fork_seq is None and node.run.parent_run and node.run.id not in self._fork_asked:
            self._fork_asked.add(node.run.id)
            self._fork_wanted.append(node.run)
            self._fork_timer.start()
        return node.fork_seq

    def _resolve_forks(self) -> None:
        forks, self._fork_wanted = self._fork_wanted, []
        store, generation = self.session.store, self.session.generation
        if forks and store is not None:
            self.session.runner.run(lambda: fork_points(store, forks),
                                    lambda seqs: self._on_fork_points(generation, seqs))

    def _on_fork_points(self, generation: int, seqs: dict[str, int]) -> None:
        if not self.session.is_current(generation):
            return
        for run_id, seq in seqs.items():
            node = self.tree.by_id.get(run_id)
            if node is not None:
                node.fork_seq = seq
                self.dataChanged.emit(self.node_index(node, COL_NAME), self.node_index(node, COL_NAME))

    def _touch_column(self, column: int) -> None:
        parents = [self.tree.root] + [n for n in self.tree.by_id.values() if n.children]
        for parent in parents:
            if parent.children:
                index = self.node_index(parent) if parent is not self.tree.root else QModelIndex()
                self.dataChanged.emit(self.index(0, column, index),
                                      self.index(len(parent.children) - 1, column, index))
