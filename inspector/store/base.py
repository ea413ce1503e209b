"""The one read interface every store adapter (native, LangGraph, …) implements."""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from collections.abc import Collection, Iterator
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Self

from inspector.errors import StoreError
from inspector.model import ACTIVE_STATUSES, ChangeSet, CheckpointInfo, RunInfo, Snapshot, StoreInfo

if TYPE_CHECKING:
    import sqlalchemy as sa

    from inspector.store.branches import TopologyRow

# the columns of a listing's plain rows (``run_rows``, ``checkpoint_rows``): a row holds at
# least these values, first, in this order, as the model object's fields would hold them
RUN_ROW = ("id", "name", "agent", "status", "checkpoint_count", "created", "updated", "parent_run",
           "parent_checkpoint", "last_error", "checks_passed", "checks_total", "tasks_done", "tasks_total",
           "damaged")
CHECKPOINT_ROW = ("id", "seq", "kind", "name", "created", "parent_id", "size", "size_delta", "ops", "tasks_done",
                  "tasks_total", "checks_passed", "checks_total", "change", "lane", "damaged")
_RUN_ROW_OF = attrgetter(*RUN_ROW)
_CHECKPOINT_ROW_OF = attrgetter(*CHECKPOINT_ROW)


# A listing of runs as plain rows (``RUN_ROW``), with in full the runs whose shown status or
# origin takes more than their row: the active runs and the forks. (Declared with types, not
# annotation strings: typing compiles each string, and the first compile of a process costs
# ~1 ms, see inspector/limits.py.)
RunRows = NamedTuple("RunRows", [("rows", list[tuple]), ("runs", list[RunInfo])])  # noqa: UP014  (types, not strings)


def needs_info(run: RunInfo) -> bool:
    """True for a run ``RunRows.runs`` holds: active (its shown status is worked out) or a fork
    of a checkpoint (its origin is looked up)."""
    return run.status in ACTIVE_STATUSES or (run.parent_run is not None and run.parent_checkpoint is not None)


class Store(ABC):
    """A checkpoint store opened through ``open_store``; read methods never write."""

    info: StoreInfo

    @property
    def target_path(self) -> Path | None:
        """The SQLite file of the store (None for a server)."""
        target = getattr(self, "target", None)
        if target is not None and getattr(target, "path", None) is not None:
            return target.path
        paths = self.watch_paths()
        return paths[0] if paths else None

    def identity(self) -> tuple | None:
        """What tells this store from another put in its place: its file's device and inode
        (another file at the path has another inode), or for a server store the database's and
        its main table's object ids (a database or table dropped and made again gets new ones).
        None when the file, database or table is not there (or a store has no identity)."""
        path = self.target_path
        if path is None:
            return None
        import os
        try:
            st = os.stat(path)
        except OSError:
            return None
        return st.st_dev, st.st_ino

    # -- runs -------------------------------------------------------------
    @abstractmethod
    def list_runs(self, *, text: str = "", statuses: Collection[str] | None = None,
                  limit: int | None = None, offset: int = 0) -> list[RunInfo]:
        """Runs, most recently updated first, filtered by a text and stored statuses."""

    def run_rows(self, *, text: str = "") -> RunRows:
        """``list_runs(text=text)`` as plain rows, for listings that print every run (a store
        may give them without building a RunInfo per run; the values are the same)."""
        runs = self.list_runs(text=text)
        return RunRows([_RUN_ROW_OF(r) for r in runs], [r for r in runs if needs_info(r)])

    @abstractmethod
    def count_runs(self, *, text: str = "", statuses: Collection[str] | None = None) -> int:
        """How many runs ``list_runs`` would return without paging."""

    @abstractmethod
    def get_run(self, run_id: str) -> RunInfo:
        """One run; StoreError when there is no such run."""

    # -- checkpoints --------------------------------------------------------
    @abstractmethod
    def list_checkpoints(self, run_id: str, *, after_seq: int = -1,
                         limit: int | None = None) -> list[CheckpointInfo]:
        """A run's checkpoints in seq order, those with seq > after_seq, at most limit."""

    def checkpoint_rows(self, run_id: str) -> list[tuple]:
        """``list_checkpoints(run_id)`` as plain rows (``CHECKPOINT_ROW``; a store may give
        them without building a CheckpointInfo per checkpoint; the values are the same)."""
        return [_CHECKPOINT_ROW_OF(c) for c in self.list_checkpoints(run_id)]

    @abstractmethod
    def count_checkpoints(self, run_id: str) -> int:
        """How many checkpoints the run has."""

    @abstractmethod
    def get_checkpoint(self, ref: int | str) -> CheckpointInfo:
        """A checkpoint by id or by ``RUN:SEQ`` (negative SEQ counts from the end)."""

    @abstractmethod
    def load(self, checkpoint_id: int | str) -> Snapshot:
        """Decode a checkpoint's state, task state and metadata."""

    def load_view(self, checkpoint_id: int | str) -> Snapshot:
        """``load`` for showing: an adapter may leave big parts of the state (and of its
        metadata) unbuilt, as ``inspector.lazy.LazyValue`` objects read on demand, and then
        sets ``meta["lazy"]`` when the state holds one. Default: ``load``."""
        return self.load(checkpoint_id)

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        """A block in which this thread reads checkpoint after checkpoint (a walk over a run):
        an adapter may keep what it opens for the reads until the block ends. Default:
        nothing is kept."""
        yield

    def load_state(self, checkpoint_id: int | str) -> Snapshot:
        """``load`` for a comparison: the same state and task state; an adapter may leave out
        metadata a diff never reads (LangGraph: the values of pending writes that are not
        applied to the state). Default: ``load``."""
        return self.load(checkpoint_id)

    def checkpoints_by_id(self, ids: Collection[int | str]) -> dict[int | str, CheckpointInfo]:
        """The checkpoints with these ids that can be read (default: one ``get_checkpoint`` each)."""
        found: dict[int | str, CheckpointInfo] = {}
        for ident in ids:
            try:
                found[ident] = self.get_checkpoint(ident)
            except Exception:  # pruned or damaged: not found
                continue
        return found

    def checkpoints_at(self, run_id: str, seqs: Collection[int]) -> list[CheckpointInfo]:
        """The run's checkpoints with the given seqs (default: filter one listing)."""
        wanted = set(seqs)
        return [c for c in self.list_checkpoints(run_id) if c.seq in wanted]

    branching = False   # True: a run's checkpoints may form a tree (``topology``)

    def may_branch(self, run: RunInfo) -> bool:
        """Whether ``run``'s checkpoints may form a tree (its rows then wait for ``topology``)."""
        return self.branching

    def topology(self, run_id: str) -> list[TopologyRow] | None:
        """Every checkpoint's place in the run's tree when the run has branches (checkpoints
        with several children in the main graph); None when its checkpoints form one line."""
        return None

    def forks_of(self, run_id: str) -> list[RunInfo]:
        """Runs forked from a checkpoint of this run."""
        return [r for r in self.list_runs() if r.parent_run == run_id]

    # -- content-addressed trees (native stores) ----------------------------
    def read_piece(self, digest: bytes) -> Any:
        """Decode one stored piece, leaving references as ``Ref``/``ChunkedList`` markers."""
        raise StoreError("This store does not keep states by content.")

    def read_pieces(self, digests: Collection[bytes]) -> dict[bytes, Any]:
        """Decode several pieces at once (adapters override this with one batched query)."""
        return {d: self.read_piece(d) for d in digests}

    # -- live updates ---------------------------------------------------------
    @abstractmethod
    def cursor(self) -> Any:
        """An opaque position; pass it to ``changes_since`` later."""

    @abstractmethod
    def changes_since(self, cursor: Any) -> ChangeSet:
        """Runs touched and checkpoints added after ``cursor``, with a new cursor."""

    def watch_paths(self) -> list[Path]:
        """Files whose modification signals a change (empty for server stores)."""
        return []

    def close(self) -> None:  # noqa: B027 - a store without connections has nothing to release
        """Release connections."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def parse_ref(ref: int | str) -> tuple[str | None, int | str]:
    """Split a checkpoint reference into (run id, seq) or (None, checkpoint id)."""
    if isinstance(ref, int):
        return None, ref
    text = str(ref).strip()
    if ":" in text:
        run, _, seq = text.rpartition(":")
        try:
            return run, int(seq)
        except ValueError:
            pass
    if text.isdigit():
        return None, int(text)
    return None, text


def engine_identity(engine: sa.Engine, table: str, display: str) -> tuple | None:
    """A PostgreSQL store's ``identity`` through its engine: the database's oid and ``table``'s
    (None when no such table is on the search path); errors as StoreErrors naming ``display``."""
    from inspector.store.engine import guard

    with guard(display), engine.connect() as conn:
        row = conn.exec_driver_sql("SELECT (SELECT oid FROM pg_catalog.pg_database WHERE datname = current_database()), "
                                   "to_regclass(%s)::oid", ('"' + table.replace('"', '""') + '"',)).first()
    return None if row is None or row[1] is None else (int(row[0]), int(row[1]))
