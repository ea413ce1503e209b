"""``CatalogStore``: the read ``Store`` for session stores of other frameworks (OpenAI Agents,
CrewAI, Google ADK), built on one catalog of runs and checkpoints read in a few queries.

These stores are small next to checkpoint databases (a session holds its messages or a crew
its snapshots), so an adapter reads the whole catalog — runs and checkpoint rows, never the
big values — whenever the store's cheap *fingerprint* (row counts, largest row ids, file
times) changes, and decodes a checkpoint's state only in ``load``. Checkpoint ids are
``RUN:SEQ``, so every id is also a reference ``get_checkpoint`` resolves. Every read is
bounded (``Limits``): a damaged or hostile store gets a sentence or an opaque marker, never an
unbounded allocation, and nothing read is executed. A SQLite file SQLite's own integrity check
finds damaged (an index missing a row reads without an error) is refused with a sentence; a
row its framework could not decode (text that is not UTF-8, JSON that is not JSON) is marked
``damaged`` where it lists and reported in its snapshot's ``problems``.
"""

from __future__ import annotations

import json
import math
import threading
from collections import Counter, OrderedDict
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from inspector import limits
from inspector.errors import CorruptDataError, RunNotFoundError, StoreError
from inspector.model import ChangeSet, CheckpointInfo, RunInfo, Snapshot
from inspector.store.base import Store, parse_ref
from inspector.store.engine import Target, guard
from inspector.store.sqlite_ro import DamagedText

MAX_ROWS = 200_000              # rows of one table read into a catalog
MAX_VALUE_BYTES = 8 * 2**20     # one JSON value decoded (larger ones are shown as opaque)
MAX_CATALOG_BYTES = 64 * 2**20  # JSON text read while building one catalog (files, rows)
SNAPSHOT_CACHE = 16
INTEGRITY_LINES = 4             # problems SQLite's integrity check is asked for (the first is named)


@dataclass(frozen=True)
class Catalog:
    """Runs (most recently updated first) and each run's checkpoints in seq order."""

    runs: tuple[RunInfo, ...] = ()
    checkpoints: dict[str, tuple[CheckpointInfo, ...]] = field(default_factory=dict)
    notes: tuple[str, ...] = ()  # what could not be read (shown by ``load`` in meta)

    def summary(self) -> tuple:
        """Per run: (checkpoint count, updated, status) — what ``changes_since`` compares."""
        return tuple((r.id, r.checkpoint_count, r.updated, r.status) for r in self.runs)


def opaque(reason: str) -> dict:
    """An inert marker shown where a value is not decoded (too big, pickled, damaged)."""
    return {"__opaque__": reason}


class Damaged(dict):
    """An opaque marker of a value its framework could not decode either (not UTF-8, not JSON):
    damage, where the other markers say what the inspector chose not to decode."""


def damage(value: Any) -> str:
    """'' or why ``value`` (from ``parse_json``) is damaged."""
    return str(value["__opaque__"]) if isinstance(value, Damaged) else ""


def parse_json(text: Any, what: str = "value") -> Any:
    """JSON text as a value, or an opaque marker when it is pickled, over the piece budget, nested
    past the depth budget (``inspector.limits``) or not JSON."""
    if text is None:
        return None
    if isinstance(text, DamagedText):   # its framework's own reader fails on it
        return Damaged(opaque(f"{what}: text that is not UTF-8 (the store is damaged)"))
    if isinstance(text, (dict, list)):   # a JSON/JSONB column the driver decoded already
        depth = limits.current().depth
        if limits.depth_of(text, depth) > depth:
            return opaque(f"{what}: nested deeper than the nesting depth budget of {depth}")
        return text
    if isinstance(text, (bytes, bytearray, memoryview)):
        data = bytes(text)
        if data.startswith(b"\x80"):
            return opaque(f"{what}: pickled data ({len(data)} bytes), not decoded (pickle can run code)")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return Damaged(opaque(f"{what}: {len(data)} bytes of binary data"))
    if not isinstance(text, str):       # a damaged row: SQLite columns take any type
        return Damaged(opaque(f"{what}: a {type(text).__name__} where JSON text belongs (the store is damaged)"))
    budget = limits.current()
    if len(text) > min(MAX_VALUE_BYTES, budget.piece_bytes):
        return opaque(f"{what}: {len(text) // 1024} KiB of JSON, over the "
                      f"{min(MAX_VALUE_BYTES, budget.piece_bytes) // 2**20} MiB limit for one value")
    try:
        value = json.loads(text)
    except RecursionError:
        return opaque(f"{what}: JSON nested too deeply to show")
    except ValueError:
        return Damaged(opaque(f"{what}: not valid JSON ({len(text)} characters)"))
    if isinstance(value, (dict, list)) and limits.depth_of(value, budget.depth) > budget.depth:
        return opaque(f"{what}: nested deeper than the nesting depth budget of {budget.depth} "
                      f"(raise it with {limits.BUDGETS['depth'].flag})")
    return value


def named(value: Any, limit: int = 40) -> str:
    """A stored value as a sentence about its damage names it: a number as itself, text quoted
    (cut short), bytes by their count, anything else by its JSON kind."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity"
    if isinstance(value, (int, float)):
        text = repr(value)
        return text if len(text) <= limit else f"a {len(text)}-digit number"
    if isinstance(value, str):
        return "text " + json.dumps(value if len(value) <= limit else value[:limit - 1] + "…",
                                    ensure_ascii=False) if value else "empty text"
    if isinstance(value, (bytes, bytearray, memoryview)):
        size = len(bytes(value))
        return f"{size} byte{'' if size == 1 else 's'}"
    if isinstance(value, (list, dict)):
        return "a list" if isinstance(value, list) else "an object"
    return f"a {type(value).__name__}"


def row_keys(ids: list[Any]) -> list[tuple[int | str, str]]:
    """Each row's key and '' or why its id is damage, for rows whose id should be a unique
    integer. An integer id is the row's key (a repeated one: the first row's); a repeat and an
    id that is not an integer (a table recreated without its INTEGER PRIMARY KEY takes text,
    reals, blobs and repeats) get a text key, which no integer equals, so that no two rows are
    ever taken for one (``int()`` of 7.5 is 7). Every row sharing its id is damaged."""
    counts, labels = Counter(ids), Counter[str]()
    out: list[tuple[int | str, str]] = []
    for value in ids:
        whole = type(value) is int
        if whole and counts[value] == 1:
            out.append((value, ""))
            continue
        others = counts[value] - 1
        why = (f"its id is {named(value)}, not an integer" if not whole else
               f"another row has its id {value} too" if others == 1 else f"{others} other rows have its id {value} too")
        label = _id_label(value)
        labels[label] += 1
        key: int | str = (value if whole else label) if labels[label] == 1 else f"{label} ({labels[label]})"
        out.append((key, why))
    return out


def _id_label(value: Any) -> str:
    """An id as an item's name in a sentence: a number as itself, text quoted (cut short)."""
    if type(value) is int:
        return str(value)
    if isinstance(value, str):
        return json.dumps(value if len(value) <= 20 else value[:19] + "…", ensure_ascii=False)
    return named(value, 20)


def not_utf8(row: Any, names: tuple[str, ...]) -> str:
    """'' or why a row is damaged: the columns (named by ``names``) that hold text that is not
    UTF-8, which the frameworks' own SQLite readers cannot decode."""
    bad = [name for name, value in zip(names, row, strict=False) if isinstance(value, DamagedText)]
    return f"its {', '.join(bad)} {'is' if len(bad) == 1 else 'are'} not UTF-8 text" if bad else ""


class Budget:
    """Counts the JSON text a catalog reads; past the limit reading stops with a sentence."""

    def __init__(self, display: str, limit: int | None = None) -> None:
        self.display, self.used = display, 0
        self.limit = MAX_CATALOG_BYTES if limit is None else limit

    def take(self, size: int) -> None:
        """Count ``size`` bytes; StoreError once the catalog would read more than the limit."""
        self.used += size
        if self.used > self.limit:
            raise StoreError(f"{self.display} holds more than {self.limit // 2**20} MiB of session data "
                             "to list; it is too large (or damaged) to open here.")


class CatalogStore(Store):
    """A ``Store`` over a catalog an adapter builds; subclasses implement the three reads below.

    * ``fingerprint()`` — cheap; changes whenever the store's content changes;
    * ``read_catalog()`` — runs and checkpoints (no state decoded);
    * ``snapshot(info)`` — the decoded state, task state and metadata of one checkpoint.
    """

    def __init__(self, display: str) -> None:
        self.display = display
        self._lock = threading.RLock()
        self._catalog: Catalog | None = None
        self._fingerprint: Any = None
        self._snapshots: OrderedDict[tuple[Any, Any], Snapshot] = OrderedDict()

    # -- what an adapter implements --------------------------------------------------------
    def fingerprint(self) -> Any:
        """A small value that changes when the store changes."""
        raise NotImplementedError

    def read_catalog(self) -> Catalog:
        """Read every run and checkpoint row (not their values)."""
        raise NotImplementedError

    def snapshot(self, info: CheckpointInfo) -> Snapshot:
        """Decode one checkpoint."""
        raise NotImplementedError

    def verify(self) -> None:
        """CorruptDataError when the store as a whole is damaged (nothing to check here)."""

    # -- the catalog ------------------------------------------------------------------------
    def catalog(self) -> Catalog:
        """The catalog for the store as it is now (read again only when it changed)."""
        with self._lock:
            current = self.fingerprint()
            if self._catalog is None or current != self._fingerprint:
                catalog = self.read_catalog()   # (first: a store too large to list is not checked)
                self.verify()
                self._catalog, self._fingerprint = catalog, current
            return self._catalog

    # -- runs ---------------------------------------------------------------------------------
    def _filtered(self, text: str, statuses: Collection[str] | None) -> list[RunInfo]:
        needle = text.strip().lower()
        return [r for r in self.catalog().runs
                if (not needle or needle in r.id.lower() or needle in r.name.lower() or needle in r.agent.lower())
                and (statuses is None or r.status in statuses)]

    def list_runs(self, *, text: str = "", statuses: Collection[str] | None = None,
                  limit: int | None = None, offset: int = 0) -> list[RunInfo]:
        """Runs, most recently updated first."""
        runs = self._filtered(text, statuses)[max(0, offset):]
        return runs if limit is None else runs[:max(0, limit)]

    def count_runs(self, *, text: str = "", statuses: Collection[str] | None = None) -> int:
        """How many runs match."""
        return len(self._filtered(text, statuses))

    def get_run(self, run_id: str) -> RunInfo:
        """One run; StoreError when there is none."""
        for run in self.catalog().runs:
            if run.id == str(run_id):
                return run
        raise RunNotFoundError(f"No run {run_id!r} in {self.display}.")

    def forks_of(self, run_id: str) -> list[RunInfo]:
        """Runs (branches) forked from a checkpoint of this run."""
        return [r for r in self.catalog().runs if r.parent_run == run_id]

    # -- checkpoints ----------------------------------------------------------------------------
    def _checkpoints(self, run_id: str) -> tuple[CheckpointInfo, ...]:
        catalog = self.catalog()
        found = catalog.checkpoints.get(str(run_id))
        if found is None:
            self.get_run(run_id)  # raises the sentence for an unknown run
            return ()
        return found

    def list_checkpoints(self, run_id: str, *, after_seq: int = -1,
                         limit: int | None = None) -> list[CheckpointInfo]:
        """The run's checkpoints with seq > after_seq, at most ``limit``."""
        items = self._checkpoints(run_id)[max(0, after_seq + 1):]
        return list(items if limit is None else items[:max(0, limit)])

    def count_checkpoints(self, run_id: str) -> int:
        """How many checkpoints the run has."""
        return len(self._checkpoints(run_id))

    def get_checkpoint(self, ref: int | str) -> CheckpointInfo:
        """A checkpoint by id or ``RUN:SEQ`` (ids are ``RUN:SEQ``; negative SEQ counts from the end)."""
        run, key = parse_ref(ref)
        if run is None:
            raise StoreError(f"{ref!r} is not a checkpoint of {self.display}; use RUN:SEQ.")
        items = self._checkpoints(run)
        seq = int(key)
        index = seq + len(items) if seq < 0 else seq
        if not items:
            raise StoreError(f"Run {run!r} has no checkpoints yet (nothing was recorded in it).")
        if not 0 <= index < len(items):
            raise StoreError(f"Run {run!r} has no checkpoint {seq} (it has {len(items)}: 0 to {len(items) - 1}).")
        return items[index]

    def load(self, checkpoint_id: int | str) -> Snapshot:
        """Decode one checkpoint (a few recent ones are kept)."""
        info = self.get_checkpoint(checkpoint_id)
        key = (self._fingerprint, info.id)
        with self._lock:
            cached = self._snapshots.get(key)
            if cached is not None:
                self._snapshots.move_to_end(key)
                return cached
        try:
            snap = self.snapshot(info)
        except RecursionError as err:
            raise CorruptDataError(f"Checkpoint {info.id} of {self.display} is nested too deeply to show.") from err
        with self._lock:
            self._snapshots[key] = snap
            while len(self._snapshots) > SNAPSHOT_CACHE:
                self._snapshots.popitem(last=False)
        return snap

    # -- live ---------------------------------------------------------------------------------------
    def cursor(self) -> Any:
        """The catalog's per-run summary as it is now."""
        return self.catalog().summary()

    def changes_since(self, cursor: Any) -> ChangeSet:
        """Runs whose count, time or status changed, and the checkpoints added since ``cursor``."""
        catalog = self.catalog()
        new = catalog.summary()
        if cursor == new:
            return ChangeSet(cursor=new)
        old = {row[0]: row for row in cursor} if isinstance(cursor, tuple) else {}
        touched: list[str] = []
        added: list[CheckpointInfo] = []
        shrunk = False
        for row in new:
            before = old.get(row[0])
            if before == row:
                continue
            touched.append(row[0])
            start = before[1] if before is not None and isinstance(before[1], int) and before[1] <= row[1] else 0
            shrunk = shrunk or (before is not None and start == 0 and before[1] != 0)
            added += catalog.checkpoints.get(row[0], ())[start:]
        gone = [run_id for run_id in old if run_id not in {r[0] for r in new}]
        return ChangeSet(cursor=new, run_ids=tuple(touched + gone), new_checkpoints=tuple(added),
                         removed=shrunk or bool(gone))


class EngineCatalogStore(CatalogStore):
    """A ``CatalogStore`` over one SQLAlchemy engine (SQLite file or PostgreSQL database)."""

    def __init__(self, engine: sa.Engine, target: Target) -> None:
        super().__init__(target.display)
        self.engine, self.target = engine, target

    def watch_paths(self) -> list[Path]:
        """The SQLite file and its companions (none for a server database)."""
        return sqlite_watch_paths(self.target.path if self.target.backend == "sqlite" else None)

    identity_table = ""     # the table whose object id tells a PostgreSQL store from another

    def identity(self) -> tuple | None:
        if self.target.backend != "postgresql" or not self.identity_table:
            return super().identity()
        from inspector.store.base import engine_identity
        return engine_identity(self.engine, self.identity_table, self.display)

    def verify(self) -> None:
        """A SQLite file: CorruptDataError when SQLite's integrity check finds damage."""
        if self.target.backend == "sqlite":
            check_integrity(self.engine, self.display)

    def close(self) -> None:
        """Dispose of the engine."""
        self.engine.dispose()


def check_integrity(engine: sa.Engine, display: str) -> None:
    """CorruptDataError naming the first problem SQLite's ``integrity_check`` finds. Its reads
    go on without an error where a page or an index is damaged (an index missing a row makes a
    framework's own queries miss that row), so the listing cannot be trusted: the whole store is
    refused, as a file SQLite calls malformed is. (A full check, not ``quick_check``, which does
    not compare indexes with their tables; these stores are read whole for a catalog anyway.)"""
    with guard(display), engine.connect() as conn:
        found = [str(r[0]) for r in conn.exec_driver_sql(f"PRAGMA integrity_check({INTEGRITY_LINES})")]
    if found == ["ok"]:
        return
    lines = [line for text in found for line in text.splitlines() if line and not line.startswith("***")]
    first = lines[0] if lines else "it is malformed"
    more = " (and more problems)" if len(lines) > 1 else ""
    raise CorruptDataError(f"{display} is damaged: SQLite's integrity check finds {first}{more}; "
                           "what it holds cannot be listed reliably (sqlite3's .recover makes a repaired copy).")


def number_checkpoints(run_id: str, drafts: list[CheckpointInfo]) -> tuple[CheckpointInfo, ...]:
    """Give drafts (in order) their seq, ``RUN:SEQ`` id, parent id and size delta."""
    out: list[CheckpointInfo] = []
    previous: CheckpointInfo | None = None
    for seq, draft in enumerate(drafts):
        cid = f"{run_id}:{seq}"
        parent = draft.parent_id if draft.parent_id is not None else (previous.id if previous else None)
        delta = draft.size - (previous.size if previous else 0)
        previous = replace(draft, id=cid, run_id=run_id, seq=seq, parent_id=parent, size_delta=delta)
        out.append(previous)
    return tuple(out)


def sqlite_watch_paths(path: Path | None) -> list[Path]:
    """A SQLite file and its -wal and -shm companions (what a file watcher watches)."""
    return [] if path is None else [path, Path(f"{path}-wal"), Path(f"{path}-shm")]
