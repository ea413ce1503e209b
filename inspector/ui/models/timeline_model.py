"""Qt table model of one run's timeline: placeholders at once, pages loaded in the background."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QColor

import bisect
import logging
from functools import partial

from inspector.model import ChangeSet, CheckpointInfo, RunInfo
from inspector.store.base import Store
from inspector.store.branches import (Branch, TopologyRow, branches_through, choices, divergences, follow,
                                      leaf_count, thread_branches)
from inspector.ui import formatting, icons, style
from inspector.ui.models.checkpoint_pages import PAGE_SIZE, Page, PageCache, fetch_branch_page, fetch_page
from inspector.ui.session import StoreSession
from inspector.ui.style import mono_font

log = logging.getLogger(__name__)

(COL_SEQ, COL_KIND, COL_NAME, COL_TIME, COL_GAP, COL_SIZE, COL_DELTA, COL_CHECKS, COL_FORKS,
 COL_CHANGE) = range(10)
COLUMN_TITLES = ("#", "Kind", "Name", "Time", "Gap", "Size", "\u0394 Size", "Checks", "Forks", "Change")
NUMERIC = {COL_SEQ, COL_GAP, COL_SIZE, COL_DELTA, COL_FORKS}

CheckpointRole = Qt.ItemDataRole.UserRole + 1   # CheckpointInfo | None (None while loading)
ProgressRole = Qt.ItemDataRole.UserRole + 2     # (checks passed, checks total)
LaneRole = Qt.ItemDataRole.UserRole + 3         # subgraph namespace ('' for the main lane)

MAX_IN_FLIGHT = 2
MAX_WANTED = 8      # newest page requests kept; older ones (scrolled past) are dropped
SLOW_GAP = 30.0     # seconds; a longer gap is highlighted

Index = QModelIndex | QPersistentModelIndex
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)


MAX_ROWS = 2**31 - 2   # Qt counts rows in 32-bit ints: a damaged count must not overflow them
UNREADABLE = "(not readable)"
UNREADABLE_TIP = ("The run counts a checkpoint here that its listing cannot give: the store is damaged "
                  "(the row is missing or unreadable).")

class TimelineModel(QAbstractTableModel):
    """The checkpoints of one run; ``rowCount`` is known at once, rows fill in page by page.

    ``data()`` never touches the store: a row that is not loaded shows a placeholder and
    queues its page. The newest requests are served first, so fast scrolling loads what
    is on screen, not everything scrolled past.
    """

    page_loaded = Signal(int, int)   # first row, last row
    rows_unreadable = Signal(int, int)   # first row, last row: read twice, not there (a damaged store)
    rows_appended = Signal(int)      # how many rows live updates added
    branches_changed = Signal()      # the run's branches or the branch shown changed
    pins_changed = Signal(list)      # rows whose pin mark changed when the run's pins were read again

    def __init__(self, session: StoreSession, parent: Any = None) -> None:
        super().__init__(parent)
        self.session = session
        self.cache = PageCache()
        self.run: RunInfo | None = None
        self._count = 0
        self._generation = 0
        self._store_generation = -1
        self._wanted: list[int] = []
        self._in_flight: set[int] = set()
        self._failed: set[int] = set()  # pages not retried until the run is shown again
        # pages read back without some of their rows (a damaged store: the run's count holds a
        # row its listing cannot give) → the row count then; read again only once it changes,
        # or their rows' placeholders would ask for them at every paint, forever
        self._short: dict[int, tuple[int, int]] = {}    # page → (row count, reads at that count)
        self._forks: dict[Any, list[RunInfo]] = {}
        self._mono = mono_font()
        self._branching = False        # the store's runs may branch: rows follow ``branches``
        self.branches: list[Branch] = []
        self.branch_index = 0
        self._seqs: tuple[int, ...] | None = None   # row → seq (None: row == seq)
        self._divergences: dict[int, list[int]] = {}
        self.branch_total = 0           # the thread's branches; only the newest MAX_BRANCHES are offered
        self._lane_of: dict[int, str] = {}
        self._topology_state = "idle"   # idle | loading | again (one more read queued) | done
        self._live: list[CheckpointInfo] = []
        self._page_generation = 0
        self._pin_notes: dict[Any, str] = {}   # the shown run's pinned checkpoint ids → their notes
        self._pins_state = "idle"       # idle | loading | again (one more read queued)
        self.store_gone = False         # the run was chosen after the store's file went: no rows to read

    # -- run -------------------------------------------------------------------------
    def set_run(self, run: RunInfo | None) -> None:
        """Show ``run`` (None: empty); its first page starts loading at once. In a store whose
        runs may branch (LangGraph) the rows wait for the run's tree: one branch is shown."""
        self.beginResetModel()
        self.run = run
        store = self.session.store
        # a store whose file went (deleted or moved) has nothing to read: no rows of "…" that
        # would each fail to load; the panel says why instead
        self.store_gone = bool(run and self.session.is_gone)
        self._branching = bool(run and store is not None and not self.store_gone and store.may_branch(run))
        self._count = 0 if self._branching or not run or self.store_gone else \
            min(max(run.checkpoint_count, run.head_seq + 1), MAX_ROWS)
        self._generation += 1
        self._store_generation = self.session.generation
        self._reset_rows()
        self._forks.clear()
        self.branches, self.branch_index, self._seqs, self._divergences = [], 0, None, {}
        self._lane_of = {}
        self._topology_state = "idle"
        self._live = []
        self._pin_notes = {}
        self._pins_state = "idle"
        self.endResetModel()
        self.branches_changed.emit()
        if self._branching:
            self._load_topology()
        elif self._count:
            self.request_row(0)
        self.reread_pins()

    def _reset_rows(self) -> None:
        self.cache.clear()
        self._wanted.clear()
        self._in_flight.clear()
        self._failed.clear()
        self._short.clear()

    def update_run(self, run: RunInfo) -> None:
        """A newer RunInfo of the shown run: grow the row count if it has more checkpoints."""
        if self.run is None or run.id != self.run.id:
            return
        self.run = run
        if not self._branching:
            self._grow(min(max(run.checkpoint_count, run.head_seq + 1), MAX_ROWS))

    def set_forks(self, forks: list[RunInfo]) -> None:
        """Runs forked from this run (for fork markers and their tooltips)."""
        by_cp: dict[Any, list[RunInfo]] = {}
        for fork in forks:
            by_cp.setdefault(fork.parent_checkpoint, []).append(fork)
        if by_cp != self._forks:
            self._forks = by_cp
            if self._count:
                self.dataChanged.emit(self.index(0, COL_FORKS), self.index(self._count - 1, COL_FORKS))

    def apply_changes(self, changes: ChangeSet) -> None:
        """Append new checkpoints of the shown run (live); in a branching store the run's tree
        is read again first (a new checkpoint may start a branch)."""
        if self.run is None:
            return
        mine = sorted((c for c in changes.new_checkpoints if c.run_id == self.run.id), key=lambda c: c.seq)
        if self._branching:
            if mine or self.run.id in changes.run_ids:
                self._live += mine
                self._load_topology()
            return
        if mine:
            added = self._grow(mine[-1].seq + 1, announce=False)
            for info in mine:
                if self.cache.append(info):
                    row = info.seq
                    self.dataChanged.emit(self.index(row, 0), self.index(row, len(COLUMN_TITLES) - 1))
            if added:
                self.rows_appended.emit(added)
        if self.run.id in changes.run_ids and self._count and isinstance(self.run.labels.get("langgraph"), dict):
            # a LangGraph lane changed: a step already shown may have been renamed (its saver
            # names a step again when its tasks' writes arrive after it): its last page is read
            # again, in the background, when it is loaded (no other run's steps are renamed)
            last = self._count - 1
            if self.cache.has_row(last):
                self._want(self.cache.page_of(last))

    # -- pins --------------------------------------------------------------------------
    def pin_note(self, info: CheckpointInfo) -> str | None:
        """The note ``info`` was pinned with ('' without one), None when it is not pinned."""
        return self._pin_notes.get(info.id, "") if info.pinned else None

    def reread_pins(self) -> None:
        """Read the shown run's pins again, in the background (a native store's; others keep
        none). A pin or unpin changes no checkpoint row, only the store's pins, so a pin made
        by another process (or window) reached no open window: the watcher's ``written``
        and Refresh ask for this. Loaded rows whose mark differs are updated in place and
        named by ``pins_changed``; a read asked for while one runs queues one more."""
        store, run = self.session.store, self.run
        read = getattr(store, "pin_notes", None)
        if read is None or run is None or self.session.is_gone:
            return
        if self._pins_state != "idle":
            self._pins_state = "again"
            return
        self._pins_state = "loading"
        generation, run_id = self._generation, run.id
        self.session.runner.run(lambda: read(run_id), partial(self._on_pins, generation),
                                partial(self._on_pins_failed, generation))

    def _on_pins(self, generation: int, notes: dict[Any, str]) -> None:
        if generation != self._generation:
            return
        again = self._pins_state == "again"
        self._pins_state = "idle"
        noted = notes != self._pin_notes
        self._pin_notes = notes
        rows = self.cache.mark_pins(notes)
        for row in rows:
            self.dataChanged.emit(self.index(row, 0), self.index(row, len(COLUMN_TITLES) - 1))
        if noted and self._count:      # a note changed: the name column's tooltips say it
            self.dataChanged.emit(self.index(0, COL_NAME), self.index(self._count - 1, COL_NAME))
        if rows:
            self.pins_changed.emit(rows)
        if again:
            self.reread_pins()

    def _on_pins_failed(self, generation: int, message: str) -> None:
        # the pins are read again at the next write; a store that fails to read says so
        # through what the window reads anyway (its pages, its changes), not once more here
        if generation == self._generation:
            self._pins_state = "idle"
            log.info("the pins of the run shown could not be read again: %s", message)

    # -- branches ----------------------------------------------------------------------
    @property
    def topology_loading(self) -> bool:
        """True until the shown run's tree is known (its rows are not shown before)."""
        return self._branching and self._topology_state != "done"

    @property
    def branch(self) -> Branch | None:
        """The branch shown (None when the run's checkpoints form one line)."""
        return self.branches[self.branch_index] if self.branches else None

    def _load_topology(self) -> None:
        """Read the run's tree in the background; a request while one runs queues one more."""
        store, run = self.session.store, self.run
        if store is None or run is None or self.session.is_gone:
            return
        if self._topology_state == "loading":
            self._topology_state = "again"
            return
        if self._topology_state == "again":
            return
        self._topology_state = "loading"
        generation, run_id = self._generation, run.id
        self.session.runner.run(lambda: (store.topology(run_id), store.count_checkpoints(run_id)),
                                lambda result: self._on_topology(generation, result),
                                lambda message: self._on_topology_failed(generation, message))

    def _on_topology_failed(self, generation: int, message: str) -> None:
        if generation == self._generation:
            self._topology_state = "done"
            self.session.runner.failed.emit(message)

    def _on_topology(self, generation: int, result: tuple[list[TopologyRow] | None, int]) -> None:
        if generation != self._generation:
            return
        again = self._topology_state == "again"
        self._topology_state = "done"
        rows, count = result
        shown = self.branch
        if rows is None:
            self.branches, self._divergences, self.branch_total = [], {}, 0
            self._show_rows(None, min(count, MAX_ROWS))
        else:
            self.branches, self._divergences = thread_branches(rows), divergences(rows)
            self.branch_total = leaf_count(rows)
            self._lane_of = {r.seq: r.lane for r in rows if r.lane}
            self.branch_index = follow(self.branches, shown)
            self._show_rows(self.branches[self.branch_index].seqs if self.branches else (), 0)
        self.branches_changed.emit()
        if again:
            self._load_topology()

    def set_branch(self, index: int) -> None:
        """Show branch ``index`` of ``branches`` (its rows reload)."""
        if 0 <= index < len(self.branches) and index != self.branch_index:
            self.branch_index = index
            self._generation_bump()
            self.beginResetModel()
            self._seqs = self.branches[index].seqs
            self._count = len(self._seqs)
            self._reset_rows()
            self.endResetModel()
            self.branches_changed.emit()
            if self._count:
                self.request_row(0)

    def _generation_bump(self) -> None:
        """Pages of the rows shown before are dropped when they arrive (topology results stay)."""
        self._page_generation += 1

    def _show_rows(self, seqs: tuple[int, ...] | None, count: int) -> None:
        """Rows after a (re)read tree: appended when the old rows are a prefix, else reset."""
        old = self._seqs if self._seqs is not None else tuple(range(self._count))
        new = seqs if seqs is not None else tuple(range(count))
        live, self._live = self._live, []
        if new[:len(old)] != old:
            self._generation_bump()
            self.beginResetModel()
            self._seqs, self._count = seqs, len(new)
            self._reset_rows()
            self.endResetModel()
            if self._count:
                self.request_row(0)
            return
        self._seqs = seqs
        added = self._grow(len(new), announce=False)
        for info in live:
            row = self.row_of_seq(info.seq)
            if row is not None and self.cache.append(info, row):
                self.dataChanged.emit(self.index(row, 0), self.index(row, len(COLUMN_TITLES) - 1))
        if added:
            self.rows_appended.emit(added)
        if not old and self._count:
            self.request_row(0)
        elif old and self.cache.has_row(len(old) - 1):
            # the thread changed (its tree was read again for that): the step that was its head
            # may have run since, which changes what its row says (its checks, "waiting: …"):
            # its page is read again, in the background
            self._want(self.cache.page_of(len(old) - 1))

    def seq_of_row(self, row: int) -> int:
        """The checkpoint seq shown at ``row``."""
        return self._seqs[row] if self._seqs is not None else row

    def row_of_seq(self, seq: int) -> int | None:
        """The row showing checkpoint ``seq`` (None when the shown branch does not hold it)."""
        if self._seqs is None:
            return seq if 0 <= seq < self._count else None
        at = bisect.bisect_left(self._seqs, seq)
        return at if at < len(self._seqs) and self._seqs[at] == seq else None

    def root_rows(self) -> list[int]:
        """Rows of main-graph checkpoints of the shown branch (None-lane rows), when known."""
        return [row for row, seq in enumerate(self._seqs or ()) if not self._lane_of.get(seq)]

    def divergence(self, seq: int) -> int:
        """How many branches leave checkpoint ``seq`` (its children; 0 when it has one or none)."""
        return len(self._divergences.get(seq, ()))

    def branches_from(self, seq: int) -> list[int]:
        """Indexes of the branches through checkpoint ``seq``."""
        return branches_through(self.branches, seq)

    def branch_choices(self, seq: int) -> list[int]:
        """At a divergence point: one branch index per child (the shown one where it can be)."""
        return choices(self.branches, self._divergences.get(seq, ()), self.branch_index)

    def _grow(self, count: int, announce: bool = True) -> int:
        """Append rows up to ``count``.  Every path that adds rows says so through
        ``rows_appended`` (``announce=False``: the caller emits it once its rows are filled),
        so a view left at the head follows whichever arrives first: a live change, a newer
        RunInfo, a page that reached past the known end or a re-read tree."""
        if count <= self._count:
            return 0
        first = self._count
        self.beginInsertRows(QModelIndex(), first, count - 1)
        self._count = count
        self.endInsertRows()
        if announce:
            self.rows_appended.emit(count - first)
        return count - first

    # -- access ------------------------------------------------------------------------
    def checkpoint(self, row: int) -> CheckpointInfo | None:
        """The checkpoint at ``row`` if loaded."""
        return self.cache.peek(row) if 0 <= row < self._count else None

    def is_loaded(self, row: int) -> bool:
        """Whether ``row``'s checkpoint is loaded."""
        return self.cache.has_row(row)

    def request_row(self, row: int) -> None:
        """Make sure ``row``'s page is (being) loaded (a page that came back without it is
        not read again until the row count changes: see ``unreadable``)."""
        if 0 <= row < self._count and not self.cache.has_row(row) and not self.unreadable(row):
            self._want(self.cache.page_of(row))

    def hole_seq(self, row: int) -> int | None:
        """The seq of an unreadable row when it is known (a seq missing before others), else None."""
        return self.seq_of_row(row) if self.cache.is_hole(row) else None

    def unreadable(self, row: int) -> bool:
        """Whether ``row``'s page was read and did not hold it (a damaged store): a seq
        missing before others, or missing at the page's end with the row count as it is now."""
        if self.cache.is_hole(row):
            return True
        count, reads = self._short.get(self.cache.page_of(row), (-1, 0))
        return count == self._count and reads >= 2 and not self.cache.has_row(row)

    # -- loading ------------------------------------------------------------------------
    def _want(self, page: int) -> None:
        if page in self._in_flight or page in self._failed:
            return
        if page in self._wanted:
            self._wanted.remove(page)
        self._wanted.append(page)
        del self._wanted[:-MAX_WANTED]
        self._pump()

    def _pump(self) -> None:
        store = self.session.store
        if store is None or self.run is None or not self.session.is_current(self._store_generation) \
                or self.session.is_gone:     # (the file is gone: a read would only fail)
            return
        while self._wanted and len(self._in_flight) < MAX_IN_FLIGHT:
            page = self._wanted.pop()
            self._in_flight.add(page)
            run_id, generation = self.run.id, (self._generation, self._page_generation)
            seqs = self._seqs
            self.session.runner.run(partial(_fetch, store, run_id, seqs, page),
                                    partial(self._on_page, generation, page),
                                    partial(self._on_page_failed, generation, page))

    def _on_page(self, generation: tuple[int, int], page: int,
                 result: tuple[CheckpointInfo | None, Page]) -> None:
        if generation != (self._generation, self._page_generation):
            return
        self._in_flight.discard(page)
        before, rows = result
        self.cache.put(page, before, rows)
        if rows:
            end = rows[-1]
            if not self._branching and end is not None:
                self._grow(end.seq + 1)
            first, last = page * PAGE_SIZE, min(page * PAGE_SIZE + len(rows), self._count) - 1
            self.dataChanged.emit(self.index(first, 0), self.index(last, len(COLUMN_TITLES) - 1))
            self.page_loaded.emit(first, last)
            for hole_first, hole_last in _holes(rows, first):
                self.rows_unreadable.emit(hole_first, hole_last)
        expected = min(PAGE_SIZE, self._count - page * PAGE_SIZE)
        if len(rows) >= expected:
            self._short.pop(page, None)
        else:
            # read once more (the count may have come from a newer read than the page), then
            # the rows it lacks are unreadable at this row count
            count, reads = self._short.get(page, (self._count, 0))
            self._short[page] = (self._count, reads + 1 if count == self._count else 1)
            first = page * PAGE_SIZE + len(rows)
            if self.unreadable(first):
                last = first + expected - len(rows) - 1
                self.dataChanged.emit(self.index(first, 0), self.index(last, len(COLUMN_TITLES) - 1))
                self.rows_unreadable.emit(first, last)
        self._pump()

    def _on_page_failed(self, generation: tuple[int, int], page: int, message: str) -> None:
        if generation == (self._generation, self._page_generation):
            self._in_flight.discard(page)
            self._failed.add(page)
            self.session.runner.failed.emit(message)

    # -- Qt model -------------------------------------------------------------------------
    def rowCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else self._count

    def columnCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMN_TITLES)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(COLUMN_TITLES):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return "" if section == COL_KIND and self.compact_kind else COLUMN_TITLES[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            return COLUMN_TITLES[section]
        if role == Qt.ItemDataRole.TextAlignmentRole and section in NUMERIC:
            return _RIGHT
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < self._count:
            return None
        row, col = index.row(), index.column()
        info = self.cache.get(row)
        if info is None:
            return self._placeholder(row, col, role)
        if role == Qt.ItemDataRole.DisplayRole:
            return formatting.visible(self._display(info, row, col))
        if role == CheckpointRole:
            return info
        if role == ProgressRole:
            return (info.checks_passed, info.checks_total)
        if role == LaneRole:
            return info.lane
        if role == Qt.ItemDataRole.DecorationRole:
            return self._decoration(info, col)
        if role == Qt.ItemDataRole.ForegroundRole:
            return self._foreground(info, row, col)
        if role == Qt.ItemDataRole.ToolTipRole:
            tip = self._tooltip(info, col)
            return formatting.visible(tip, lines=True) if tip is not None else None
        if role == Qt.ItemDataRole.BackgroundRole and info.lane:
            tint = style.theme().lane_color(info.lane)
            tint.setAlphaF(0.07)
            return tint
        if role == Qt.ItemDataRole.TextAlignmentRole and col in NUMERIC:
            return _RIGHT
        if role == Qt.ItemDataRole.FontRole and col in (COL_SEQ, COL_SIZE, COL_DELTA):
            return self._mono
        return None

    def _placeholder(self, row: int, col: int, role: int) -> Any:
        self.request_row(row)
        if self.unreadable(row):
            if role == Qt.ItemDataRole.DisplayRole:
                seq = self.hole_seq(row)
                text = "?" if seq is None else str(seq)
                return text if col == COL_SEQ else (UNREADABLE if col == COL_NAME else "")
            if role == Qt.ItemDataRole.ToolTipRole:
                return UNREADABLE_TIP
        if role == Qt.ItemDataRole.DisplayRole:
            return str(row) if col == COL_SEQ else ("\u2026" if col == COL_NAME else "")
        if role == Qt.ItemDataRole.ForegroundRole:
            return QColor(style.theme().muted)
        if role == Qt.ItemDataRole.FontRole and col == COL_SEQ:
            return self._mono
        if role == Qt.ItemDataRole.TextAlignmentRole and col in NUMERIC:
            return _RIGHT
        return None

    def _fork_count(self, info: CheckpointInfo) -> int:
        return max(info.branch_count, len(self._forks.get(info.id, ())))

    def _gap(self, info: CheckpointInfo, row: int) -> float | None:
        before = self.cache.previous(row)   # (no gap beside a time the store does not know: 0)
        return info.created - before.created if before is not None and info.created and before.created else None

    compact_kind = False   # the Kind column shows only its icon (a narrow view; the tooltip names it)

    def set_compact_kind(self, compact: bool) -> None:
        """Show the Kind column as icons only (True) or icon and word."""
        if compact != self.compact_kind:
            self.compact_kind = compact
            if self.rowCount():
                self.dataChanged.emit(self.index(0, COL_KIND), self.index(self.rowCount() - 1, COL_KIND))
            self.headerDataChanged.emit(Qt.Orientation.Horizontal, COL_KIND, COL_KIND)

    def _display(self, info: CheckpointInfo, row: int, col: int) -> str:
        if col == COL_SEQ:
            return str(info.seq)
        if col == COL_KIND:
            return "" if self.compact_kind else info.kind
        if col == COL_NAME:
            return f"\u2691 {info.name}" if info.pinned else info.name
        if col == COL_TIME:
            return formatting.clock_time(info.created)
        if col == COL_GAP:
            return formatting.fmt_gap(self._gap(info, row))
        if col == COL_SIZE:
            return formatting.fmt_size(info.size)
        if col == COL_DELTA:
            return formatting.fmt_delta(info.size_delta) if row else ""
        if col == COL_CHECKS:
            return f"{info.checks_passed}/{info.checks_total}" if info.checks_total else ""
        if col == COL_FORKS:
            count = self._fork_count(info)
            return str(count) if count else ""
        marker = self.branch_marker(info.seq)
        return f"{marker} \u00b7 {info.change}" if marker and info.change else marker or info.change

    def branch_marker(self, seq: int) -> str:
        """The Change column's lead where branches diverge ("2 branches ▾": a click switches), else ''."""
        count = self.divergence(seq)
        return f"{count} branches \u25be" if count > 1 and len(self.branches) > 1 else ""

    def _decoration(self, info: CheckpointInfo, col: int) -> Any:
        if col == COL_KIND:
            return icons.kind_icon(info.kind)
        if col == COL_FORKS and self._fork_count(info):
            return icons.icon("kind-fork")
        return None

    def _foreground(self, info: CheckpointInfo, row: int, col: int) -> Any:
        theme = style.theme()
        if col == COL_DELTA and row and info.size_delta:
            return QColor(theme.positive if info.size_delta > 0 else theme.negative)
        if col == COL_GAP:
            gap = self._gap(info, row)
            return QColor(STALL_COLOR if gap is not None and gap >= SLOW_GAP else theme.muted)
        if col in (COL_SEQ, COL_TIME):
            return QColor(theme.muted)
        if col == COL_CHANGE and self.branch_marker(info.seq):
            return QColor(theme.accent)
        return None

    def _tooltip(self, info: CheckpointInfo, col: int) -> str | None:
        if col == COL_FORKS:
            forks = self._forks.get(info.id, [])
            if forks:
                return "Forked into:\n" + "\n".join(f"\u2022 {f.name}  ({f.id})" for f in forks)
            if info.branch_count:
                return f"{info.branch_count} branch(es) start here"
            return None
        if col == COL_TIME:
            return formatting.full_time(info.created)
        if col == COL_CHANGE and self.branch_marker(info.seq):
            lines = [("\u25b8 " if i == self.branch_index else "\u2022 ") + self.branches[i].label
                     for i in self.branch_choices(info.seq)]
            return "Branches leaving this checkpoint (click the marker to switch):\n" + "\n".join(lines) + \
                (f"\n\n{info.change}" if info.change else "")
        if col == COL_CHANGE and info.change:
            return info.change.replace(" \u00b7 ", "\n")
        if col == COL_SIZE:
            return f"{info.size:,} bytes of state ({info.size_delta:+,} since the previous checkpoint)"
        text = f"#{info.seq} {info.kind} {info.name}\nid {info.id}"
        note = self.pin_note(info)
        if note is not None:
            text += "\npinned: prune never removes it" + (f"\nnote: {note}" if note else "")
        if info.lane:
            text += f"\nlane {info.lane}"
        if info.ops > 1:
            text += f"\n{info.ops} operations since the previous snapshot"
        return text


STALL_COLOR = style.STATUS_COLORS["stuck"]


def _holes(rows: Page, first: int) -> list[tuple[int, int]]:
    """The first and last row of each run of holes in a page whose first row is ``first``."""
    out: list[tuple[int, int]] = []
    for i, info in enumerate(rows):
        if info is None:
            if out and out[-1][1] == first + i - 1:
                out[-1] = (out[-1][0], first + i)
            else:
                out.append((first + i, first + i))
    return out


def _fetch(store: Store, run_id: str, seqs: tuple[int, ...] | None,
           page: int) -> tuple[CheckpointInfo | None, Page]:
    """Page ``page`` of the run (``seqs`` None) or of one branch (worker thread)."""
    return fetch_page(store, run_id, page) if seqs is None else fetch_branch_page(store, run_id, seqs, page)
