"""The native store's reads as plain SQL on a DB-API cursor (no SQLAlchemy).

``NativeReads`` is every read of the ``Store`` interface for a native store, written once:
``NativeStore`` runs it on its SQLAlchemy engine's connections (SQLite written to, or
PostgreSQL), ``SqliteNativeReader`` on the standard library's ``sqlite3`` (a SQLite store
the read commands only read: a fresh ``checkpoint-inspector runs`` never imports SQLAlchemy).
The SQL is written with ``?`` marks; a subclass turns them into its driver's style.
Live updates and LangGraph lanes read through SQLAlchemy (``_sa_engine``), only when asked.
The codec (msgpack, zstandard) is imported when a piece is first read: a listing never needs it.
"""

from __future__ import annotations

import _thread
import contextlib
import sqlite3
from collections import OrderedDict
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inspector import limits
from inspector.errors import (CheckpointNotFoundError, CorruptDataError, NewerFormatError, NotAStoreError, RunNotFoundError, StoreError,
                              TaskStateError)
from inspector.model import NATIVE_CAPABILITIES, ChangeSet, CheckpointInfo, RunInfo, Snapshot, StoreInfo, replace
from inspector.store import dberrors, sqlite_ro
from inspector.store.base import RunRows, Store, parse_ref
from inspector.store.columns import BINARY
from inspector.store.native import FORMAT_VERSION
from inspector.store.native.rows import (COUNT_MAX, checkpoint_from_row, checkpoints_from_tuples, json_field,
                                         miscounted, recount, row_type, run_from_row)
from inspector.store.target import Target
from inspector.humanize import plural

if TYPE_CHECKING:
    from inspector.store.branches import TopologyRow
    import sqlalchemy as sa

REQUIRED_TABLES = frozenset({"ci_meta", "ci_runs", "ci_checkpoints", "ci_blobs"})
RUN_COLUMNS = ("id", "name", "agent", "status", "created", "updated", "owner_host", "owner_pid", "heartbeat",
               "epoch", "resume_spec", "resumable", "not_resumable_reason", "parent_run", "parent_checkpoint",
               "fork_reason", "labels", "last_error", "head_seq", "checkpoint_count", "tasks_done",
               "tasks_total", "checks_passed", "checks_total")
CHECKPOINT_COLUMNS = ("id", "run_id", "seq", "parent_id", "kind", "name", "created", "state_hash", "tasks_hash",
                      "size", "size_delta", "ops", "tasks_done", "tasks_total", "checks_passed", "checks_total",
                      "change", "epoch")   # all but meta (a listing never needs it)
_RUNS = f"SELECT {', '.join(RUN_COLUMNS)} FROM ci_runs"
# a run's checkpoint rows counted, and its last readable seq (see ``rows.recount``): in the
# statement that reads the run, so a writer between two statements cannot make them differ
_LAST_SEQ = f"(SELECT max(seq) FROM ci_checkpoints WHERE run_id = ci_runs.id AND seq BETWEEN 0 AND {COUNT_MAX})"
# the rows are counted only when the run's counters do not agree with its last seq (an index
# seek): a count of a 100,000-checkpoint run cost ``show`` 3.5 ms
_COUNTED = (f"CASE WHEN {_LAST_SEQ} = ci_runs.head_seq AND ci_runs.checkpoint_count = ci_runs.head_seq + 1 "
            "THEN ci_runs.checkpoint_count "
            "ELSE (SELECT count(*) FROM ci_checkpoints WHERE run_id = ci_runs.id) END AS counted, "
            f"{_LAST_SEQ} AS last_seq")
_CHECKPOINTS = f"SELECT {', '.join(CHECKPOINT_COLUMNS)} FROM ci_checkpoints"
# runs forked from a checkpoint, read with it (one query instead of a second one per run)
_BRANCH_COUNT = ("(SELECT count(*) FROM ci_runs WHERE ci_runs.parent_run = ci_checkpoints.run_id "
                 "AND ci_runs.parent_checkpoint = ci_checkpoints.id) AS branch_count")
_ONE_CHECKPOINT = f"SELECT {', '.join(CHECKPOINT_COLUMNS)}, {_BRANCH_COUNT} FROM ci_checkpoints"
_LOADED_CHECKPOINT = f"SELECT {', '.join(CHECKPOINT_COLUMNS)}, meta, {_BRANCH_COUNT} FROM ci_checkpoints"
_TABLE_EXISTS = {"sqlite": "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                 "postgresql": "SELECT 1 FROM pg_catalog.pg_tables WHERE tablename = ? "
                               "AND schemaname = ANY(current_schemas(false))"}

FETCH_BATCH = 500
STREAM_PART = 64                    # pieces per part of stream_raw_pieces
PIECE_CACHE_ITEMS = 20_000          # decoded pieces kept (the GUI re-reads what it just showed) …
PIECE_CACHE_BYTES = 16 * 1024 * 1024   # … as long as their raw bytes come to no more than this (a window
                                       # following a live run reads new pieces at every save: counted
                                       # in items alone, they held ~300 MB of decoded chunks)
TEXT_CACHE_CHARS = 1 << 20          # a text piece's string this long is not kept: its chunks are
RAW_CACHE_BYTES = 64 * 1024 * 1024  # raw piece bytes kept for diffs
_BLOB_BATCHES = (8, STREAM_PART, FETCH_BATCH)   # IN-list sizes; a batch is padded up to one


def marks(count: int) -> str:
    """``?, ?, …`` for an IN list of ``count`` values."""
    return ", ".join("?" * count)


def check_version(value: Any, display: str) -> int:
    """The format version stored in ``ci_meta`` (None: no row), refused when unreadable or
    newer than this program reads."""
    if value is None:
        raise NotAStoreError(f"{display} looks like a checkpoint store but has no format version.")
    try:
        version = int(value)
    except ValueError as err:
        raise NotAStoreError(f"{display} has an unreadable format version {value!r}.") from err
    if version > FORMAT_VERSION:
        raise NewerFormatError(
            f"{display} was written by a newer Checkpoint Inspector (format {version}; "
            f"this version reads up to {FORMAT_VERSION}); upgrade to open it.")
    return version


class NativeReads(Store):
    """Every read of a native store (format version up to ``FORMAT_VERSION``) in plain SQL."""

    dialect = "sqlite"    # "sqlite" | "postgresql": the few statements that differ

    def __init__(self, target: Target, *, read_only: bool, format_version: int = FORMAT_VERSION) -> None:
        self.target = target
        self.info = StoreInfo(url=target.url, display=target.display, kind="native",
                              backend=target.backend, format_version=format_version,
                              read_only=read_only, capabilities=NATIVE_CAPABILITIES,
                              label="Checkpoint Inspector")
        self._pieces: OrderedDict[bytes, Any] = OrderedDict()
        self._raw: OrderedDict[bytes, bytes] = OrderedDict()
        self._raw_bytes = 0
        self._piece_bytes: dict[bytes, int] = {}    # a decoded piece's raw size (what it costs, roughly)
        self._pieces_bytes = 0
        self._pieces_lock = _thread.allocate_lock()   # threading.Lock(), without importing threading
        self._reducers: dict = {}   # (thread, channel) → (the thread's extent, what the reducer proof found)

    # -- what a subclass provides ------------------------------------------------
    def _connection(self) -> contextlib.AbstractContextManager[Any]:
        """A DB-API cursor in a read transaction; driver errors leave it as StoreErrors."""
        raise NotImplementedError

    def _sql(self, sql: str) -> str:
        """``sql`` (``?`` marks) in the driver's parameter style."""
        return sql

    def _sa_engine(self) -> sa.Engine:
        """A SQLAlchemy engine on the same store (live updates, LangGraph lanes)."""
        raise NotImplementedError

    # -- helpers ---------------------------------------------------------------
    def _fetch(self, cur: Any, sql: str, params: Collection[Any] = ()) -> tuple[tuple[str, ...], list]:
        """The column names and plain rows of ``sql``."""
        cur.execute(self._sql(sql), tuple(params))
        return tuple(d[0] for d in cur.description), cur.fetchall()

    def _execute(self, cur: Any, sql: str, params: Collection[Any] = ()) -> list:
        """The rows of ``sql`` as named tuples (see ``rows.row_type``)."""
        names, rows = self._fetch(cur, sql, params)
        kind: Any = row_type(names)
        make = kind._make
        return [make(row) for row in rows]

    def _rows(self, sql: str, params: Collection[Any] = ()) -> list:
        with self._connection() as cur:
            return self._execute(cur, sql, params)

    def _run_filter(self, sql: str, text: str, statuses: Collection[str] | None) -> tuple[str, list]:
        where, params = [], []
        if text:
            like = "{} ILIKE ?" if self.dialect == "postgresql" else "lower({}) LIKE lower(?)"
            where.append("(" + " OR ".join(like.format(c) for c in ("name", "agent", "id")) + ")")
            params += [f"%{text}%"] * 3
        if statuses:
            statuses = list(statuses)
            where.append(f"status IN ({marks(len(statuses))})")
            params += statuses
        return (sql + " WHERE " + " AND ".join(where) if where else sql), params

    # -- runs ------------------------------------------------------------------
    def list_runs(self, *, text: str = "", statuses: Collection[str] | None = None,
                  limit: int | None = None, offset: int = 0) -> list[RunInfo]:
        sql, params = self._run_filter(_RUNS, text, statuses)
        sql += " ORDER BY updated DESC, id"
        if limit is not None or (offset and self.dialect == "sqlite"):
            sql += " LIMIT ?"
            params.append(-1 if limit is None else limit)
        if offset:
            sql += " OFFSET ?"
            params.append(offset)
        return self._runs(sql, params)

    def _runs(self, sql: str, params: Collection[Any]) -> list[RunInfo]:
        """The runs of ``sql``; those whose row counts its checkpoints impossibly counted from
        their checkpoint rows (a query for those only: a listing of good runs counts nothing)."""
        with self._connection() as cur:
            runs = [run_from_row(r) for r in self._execute(cur, sql, params)]
            wrong = [r.id for r in runs if miscounted(r)]
            counted: dict[str, tuple] = {}
            for start in range(0, len(wrong), FETCH_BATCH):
                batch = wrong[start:start + FETCH_BATCH]
                counted.update((r[0], r[1:]) for r in self._execute(
                    cur, f"SELECT id, {_COUNTED} FROM ci_runs WHERE id IN ({marks(len(batch))})", batch))
        return [recount(r, *counted[r.id]) if r.id in counted else r for r in runs]

    def count_runs(self, *, text: str = "", statuses: Collection[str] | None = None) -> int:
        sql, params = self._run_filter("SELECT count(*) FROM ci_runs", text, statuses)
        return int(self._rows(sql, params)[0][0])

    def get_run(self, run_id: str) -> RunInfo:
        """The run, its checkpoint count and head checked against its checkpoint rows (one
        run: an index range counted)."""
        rows = self._rows(f"SELECT {', '.join(RUN_COLUMNS)}, {_COUNTED} FROM ci_runs WHERE id = ?", (run_id,))
        if not rows:
            raise RunNotFoundError(f"There is no run {run_id!r} in {self.info.display}.")
        return recount(run_from_row(rows[0]), rows[0].counted, rows[0].last_seq)

    def forks_of(self, run_id: str) -> list[RunInfo]:
        return self._runs(_RUNS + " WHERE parent_run = ? ORDER BY created", (run_id,))

    def may_branch(self, run: RunInfo) -> bool:
        """A LangGraph lane (InspectorSaver, import) is a tree as its thread is; a run the
        recording library writes is a line (its forks are runs of their own)."""
        return isinstance((run.labels or {}).get("langgraph"), dict)

    def topology(self, run_id: str) -> list[TopologyRow] | None:
        """A LangGraph lane's tree when ``update_state``, a fork or a replay gave a checkpoint
        several children (as ``LangGraphStore.topology`` gives a SqliteSaver thread's); None for
        a line — every run the recording library writes (its forks are runs of their own)."""
        if not self.may_branch(self.get_run(run_id)):
            return None
        rows = self._rows("SELECT c.seq, c.id, c.parent_id, c.kind, l.checkpoint_id FROM ci_checkpoints c "
                          "LEFT JOIN ci_lg_checkpoints l ON l.id = c.id WHERE c.run_id = ? ORDER BY c.seq",
                          (run_id,))
        parents = [r[2] for r in rows if r[2] is not None]
        if len(parents) == len(set(parents)):
            return None
        from inspector.store.branches import TopologyRow
        from inspector.store.langgraph.ids import id_step
        return [TopologyRow(int(seq), str(ident), str(parent) if parent is not None else None, "", str(kind or ""),
                            id_step(cid) if isinstance(cid, str) else None)
                for seq, ident, parent, kind, cid in rows]

    # -- checkpoints -----------------------------------------------------------
    def list_checkpoints(self, run_id: str, *, after_seq: int = -1,
                         limit: int | None = None) -> list[CheckpointInfo]:
        sql, params = _CHECKPOINTS + " WHERE run_id = ? AND seq > ? ORDER BY seq", [run_id, after_seq]
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        with self._connection() as cur:
            names, rows = self._fetch(cur, sql, params)
            if not rows:
                return []
            branches = {r[0]: r[1] for r in self._execute(
                cur, "SELECT parent_checkpoint, count(*) FROM ci_runs WHERE parent_run = ? "
                     "GROUP BY parent_checkpoint", (run_id,))}
            pinned = self._pinned(cur, run_id)
        return self._marked(checkpoints_from_tuples(names, rows, branches), pinned)

    def _pinned(self, cur: Any, run_id: str) -> set[int]:
        """Ids of the run's pinned checkpoints (a store without ``ci_pins`` has none: see ``pins``)."""
        if not self._execute(cur, _TABLE_EXISTS[self.dialect], ("ci_pins",)):
            return set()
        return {int(r[0]) for r in self._execute(cur, "SELECT checkpoint_id FROM ci_pins WHERE run_id = ?",
                                                 (run_id,))}

    def pin_notes(self, run_id: str) -> dict[int, str]:
        """The run's pinned checkpoints (their ids) and the note each was pinned with: what a
        window reads again when the store was written, to follow pins made elsewhere."""
        with self._connection() as cur:
            if not self._execute(cur, _TABLE_EXISTS[self.dialect], ("ci_pins",)):
                return {}
            rows = self._execute(cur, "SELECT checkpoint_id, note FROM ci_pins WHERE run_id = ?", (run_id,))
        return {int(r[0]): str(r[1] or "") for r in rows}

    @staticmethod
    def _marked(infos: list[CheckpointInfo], pinned: set[int]) -> list[CheckpointInfo]:
        if not pinned:
            return infos
        return [replace(i, pinned=True) if i.id in pinned else i for i in infos]

    def checkpoints_at(self, run_id: str, seqs: Collection[int]) -> list[CheckpointInfo]:
        seqs = list(seqs)
        if not seqs:
            return []
        sql = _CHECKPOINTS + f" WHERE run_id = ? AND seq IN ({marks(len(seqs))}) ORDER BY seq"
        return [checkpoint_from_row(r) for r in self._rows(sql, [run_id, *seqs])]

    def count_checkpoints(self, run_id: str) -> int:
        return int(self._rows("SELECT count(*) FROM ci_checkpoints WHERE run_id = ?", (run_id,))[0][0])

    def get_checkpoint(self, ref: int | str) -> CheckpointInfo:
        with self._connection() as cur:
            row = self._checkpoint_row(cur, ref, _ONE_CHECKPOINT)
            pinned = self._pinned(cur, row.run_id)
        return self._marked([checkpoint_from_row(row, {row.id: row.branch_count})], pinned)[0]

    def checkpoints_by_id(self, ids: Collection[int | str]) -> dict[int | str, CheckpointInfo]:
        """The checkpoints with these ids that exist (one query per batch; no pin marks)."""
        wanted = [i for i in dict.fromkeys(ids) if type(i) is int]
        found = super().checkpoints_by_id([i for i in ids if type(i) is not int])
        with self._connection() as cur:
            for start in range(0, len(wanted), FETCH_BATCH):
                batch = wanted[start:start + FETCH_BATCH]
                for row in self._execute(cur, _ONE_CHECKPOINT + f" WHERE id IN ({marks(len(batch))})", batch):
                    info = checkpoint_from_row(row, {row.id: row.branch_count})
                    found[info.id] = info
        return found

    def _checkpoint_row(self, cur: Any, ref: int | str, select: str) -> Any:
        """The row of a checkpoint given by id or RUN:SEQ (``select``: its columns)."""
        run_id, key = parse_ref(ref)
        if run_id is not None:
            seq = int(key)
            if seq < 0:
                seq = self.get_run(run_id).head_seq + 1 + seq
            rows = self._execute(cur, select + " WHERE run_id = ? AND seq = ?", (run_id, seq))
        elif isinstance(key, int):
            rows = self._execute(cur, select + " WHERE id = ?", (key,))
        else:
            raise StoreError(f"{ref!r} is not a checkpoint reference (use an id or RUN:SEQ).")
        if not rows:
            raise CheckpointNotFoundError(self._missing(cur, ref, run_id, key))
        return rows[0]

    def _missing(self, cur: Any, ref: int | str, run_id: str | None, key: int | str) -> str:
        """Why checkpoint ``ref`` is not found, in words the user can place: an id below the
        store's newest one was there once (a window or dialog read it before another process
        deleted or pruned it; its run and #seq went with its row), an id above it never was."""
        if run_id is None and isinstance(key, int):
            newest = self._fetch(cur, "SELECT max(id) FROM ci_checkpoints")[1][0][0]
            if isinstance(newest, int) and 0 < key <= newest:
                return (f"Checkpoint id {key} is no longer in {self.info.display} "
                        "(deleted or pruned by another process?).")
        return f"There is no checkpoint {ref} in {self.info.display}."

    def load(self, checkpoint_id: int | str) -> Snapshot:
        snap = self._load(checkpoint_id, True)
        assert snap is not None     # a state is built for every checkpoint
        return snap

    def load_shell(self, checkpoint_id: int | str) -> Snapshot | None:
        """``load`` without building the state (``state`` None: a reader builds what it
        shows from the pieces, ``inspector.diff.lazy_value``); None for a LangGraph lane's
        checkpoint, whose state is LangGraph's view of it (``load`` builds that)."""
        return self._load(checkpoint_id, False)

    def _load(self, checkpoint_id: int | str, with_state: bool) -> Snapshot | None:
        with self._connection() as cur:
            row = self._checkpoint_row(cur, checkpoint_id, _LOADED_CHECKPOINT)
        info = checkpoint_from_row(row, {row.id: row.branch_count})
        if info.state_hash is None:
            raise CorruptDataError(f"Checkpoint {checkpoint_id} is damaged ({info.damaged}).")
        state = None
        if with_state:
            state = self.load_values([info.state_hash],
                                     f"The state of checkpoint {info.run_id}:{info.seq}")[info.state_hash]
        problems = [f"checkpoint row: {info.damaged}"] if info.damaged else []
        from inspector import taskstate
        tasks = None
        if info.tasks_hash:
            try:
                tasks = taskstate.validate(self.load_values([info.tasks_hash], "The task state")[info.tasks_hash])
            except (StoreError, TaskStateError) as err:
                problems.append(f"task state: {err}")
        try:
            meta = json_field(row.meta, {})
            if not isinstance(meta, dict):
                raise CorruptDataError(f"it is a JSON {type(meta).__name__}, not an object")
        except StoreError as err:
            problems.append(f"metadata: {err}")
            meta = {}
        if "langgraph" in meta:   # a lane written by InspectorSaver
            if not with_state:
                return None
            lane = self._lane_snapshot(info, state)
            if lane is not None:
                return replace(lane, meta={**meta, **lane.meta})
        return Snapshot(info=info, state=state, tasks=tasks, meta=meta, problems=tuple(problems))

    def _lane_snapshot(self, info: CheckpointInfo, state: Any) -> Snapshot | None:
        """LangGraph's view of a LangGraph lane's checkpoint (see ``lgview``)."""
        from inspector.store.engine import guard
        from inspector.store.native import lgview
        try:
            with guard(self.info.display), self._sa_engine().connect() as conn:
                return lgview.lane_snapshot(conn, info, state, self.read_piece,
                                            load_state=self._lane_state, reducer_cache=self._reducers)
        except StoreError:   # no lane tables (or no right to read them): the plain native view
            return None

    def _lane_state(self, checkpoint_id: int) -> Any:
        """The stored state of a LangGraph lane's checkpoint (by its row id)."""
        rows = self._rows("SELECT state_hash FROM ci_checkpoints WHERE id = ?", (checkpoint_id,))
        if not rows or rows[0][0] is None:
            return None
        if not isinstance(rows[0][0], BINARY):
            raise CorruptDataError(f"The state of a LangGraph step names no piece (its hash is a "
                                   f"{type(rows[0][0]).__name__}; the store is damaged).")
        digest = bytes(rows[0][0])
        return self.load_values([digest], "The state of a LangGraph step")[digest]

    # -- pieces ----------------------------------------------------------------
    def _fetch_many(self, digests: Collection[bytes], join: bool = True) -> dict[bytes, Any]:
        """Decoded pieces; a text piece (format 4) is read with its chunks and comes back as
        the string it stands for (``join``; else as its ChunkedText, never kept; a string of
        ``TEXT_CACHE_CHARS`` or more is not kept either, its chunks are)."""
        found: dict[bytes, Any] = {}
        missing = []
        with self._pieces_lock:
            for d in digests:
                if d in self._pieces:
                    found[d] = self._pieces[d]
                else:
                    missing.append(d)
        if not missing:
            return found
        from inspector.codec import ChunkedText, unpack
        sizes: dict[bytes, int] = {}
        for d, raw in self.read_raw_pieces(missing).items():
            found[d] = unpack(raw)
            sizes[d] = len(raw)
        texts = [d for d in missing if type(found[d]) is ChunkedText]
        if texts and join:
            found.update(self._join_texts({d: found[d] for d in texts}))
        # a long joined text is not kept: it is its chunks (kept, and shared by its versions) joined again
        long_texts = {d for d in texts if type(found[d]) is not ChunkedText and len(found[d]) >= TEXT_CACHE_CHARS}
        keep = [d for d in missing if type(found[d]) is not ChunkedText and d not in long_texts]
        with self._pieces_lock:
            for d in keep:
                if d not in self._pieces:
                    cost = max(sizes.get(d, 0), len(found[d]) if type(found[d]) is str else 0)
                    self._piece_bytes[d] = cost
                    self._pieces_bytes += cost
                self._pieces[d] = found[d]
            while self._pieces and (len(self._pieces) > PIECE_CACHE_ITEMS or self._pieces_bytes > PIECE_CACHE_BYTES):
                gone, _ = self._pieces.popitem(last=False)
                self._pieces_bytes -= self._piece_bytes.pop(gone, 0)
        return found

    def _join_texts(self, texts: dict[bytes, Any]) -> dict[bytes, str]:
        """The strings text pieces stand for: their chunks and sub-tables fetched level by
        level, measured against the read budgets, then joined (``expand``)."""
        from inspector.codec import expand
        table: dict[bytes, Any] = dict(texts)
        self._fetch_levels(table, {k for v in texts.values() for k in expand.children(v)} - table.keys(),
                           "A stored text", join=False)
        return expand.resolve_all(list(texts), table, "A stored text")

    def _fetch_levels(self, table: dict[bytes, Any], frontier: set[bytes], what: str, join: bool = True) -> None:
        """Fetch ``frontier`` and everything it reaches into ``table``, one batch per level
        (shared pieces once); each level nests at least one deeper, so a chain longer than the
        depth budget is refused."""
        from inspector.codec import expand
        depth, levels = limits.current().depth, 0
        while frontier:
            levels += 1
            if levels > depth:
                raise limits.BudgetExceeded("depth", f"{what} nests more than {depth:,} levels deep")
            fetched = self._fetch_many(frontier, join)
            table.update(fetched)
            frontier = {d for v in fetched.values() for d in expand.children(v)} - table.keys()

    def read_raw_pieces(self, digests: Collection[bytes]) -> dict[bytes, bytes]:
        """The raw (decompressed, verified, not decoded) bytes of several pieces.

        The diff splits list chunks into encoded items and decodes only those that differ.
        All batches are read on one connection, then decompressed together.
        """
        found, missing = self._cached_raw(digests)
        if not missing:
            return found
        ordered = sorted(missing)
        from inspector.store.native import blobs
        with self._connection() as cur:
            rows = [row for start in range(0, len(ordered), FETCH_BATCH)
                    for row in self._blob_rows(cur, ordered[start:start + FETCH_BATCH])]
        found.update(self._verified(ordered, rows, blobs.decompress_many([(c, d, n) for _, c, n, d in rows])))
        return found

    def stream_raw_pieces(self, digests: Collection[bytes], part: int = STREAM_PART) -> Iterator[dict[bytes, bytes]]:
        """``read_raw_pieces`` in parts of about ``part`` pieces, in the order asked: while the
        caller works on one part, the next ones are decompressed on a worker thread.

        All parts are read from the database first (one connection, held briefly); pieces
        already in the cache come in the first part.
        """
        found, missing = self._cached_raw(digests)
        if found or not missing:
            yield found
        pending = []
        part = max(1, min(part, FETCH_BATCH))
        from inspector.store.native import blobs
        with self._connection() as cur:
            for start in range(0, len(missing), part):
                batch = missing[start:start + part]
                rows = self._blob_rows(cur, batch)
                pending.append((batch, rows, blobs.decompress_later([(c, d, n) for _, c, n, d in rows])))
        try:
            for batch, rows, raws in pending:
                yield self._verified(batch, rows, raws())
        finally:        # a caller that stops early (a cancelled diff) leaves no work queued
            for _, _, raws in pending:
                raws.cancel()

    def _cached_raw(self, digests: Collection[bytes]) -> tuple[dict[bytes, bytes], list[bytes]]:
        """The raw pieces in the cache, and the other digests (once each, in order)."""
        found: dict[bytes, bytes] = {}
        missing: dict[bytes, None] = {}
        with self._pieces_lock:
            for d in digests:
                raw = self._raw.get(d)
                if raw is None:
                    missing[d] = None
                else:
                    found[d] = raw
        return found, list(missing)

    def _blob_rows(self, cur: Any, batch: list[bytes]) -> list:
        """The blob rows (hash, codec, size, data) of up to ``FETCH_BATCH`` distinct digests,
        as plain tuples (the IN list padded to one of a few sizes, so the driver's statement
        cache keeps them)."""
        size = next(n for n in _BLOB_BATCHES if n >= len(batch))
        padded = batch + [batch[-1]] * (size - len(batch))   # a repeated digest matches once
        cur.execute(self._sql(f"SELECT hash, codec, size, data FROM ci_blobs WHERE hash IN ({marks(size)})"),
                    padded)
        return cur.fetchall()

    def _verified(self, asked: list[bytes], rows: list, raws: list[bytes]) -> dict[bytes, bytes]:
        """The decompressed pieces of ``rows`` checked against their digests (all ``asked``
        must be there), and kept in the raw cache."""
        fetched: dict[bytes, bytes] = {}
        from inspector.codec import digest_of
        for row, raw in zip(rows, raws, strict=True):
            digest = bytes(row[0])
            if digest_of(raw) != digest:
                raise CorruptDataError("A stored piece does not match its hash (the store is damaged).")
            fetched[digest] = raw
        if len(fetched) != len(asked):
            lost = len(set(asked) - fetched.keys())
            raise CorruptDataError(f"{plural(lost, 'stored piece')} {'is' if lost == 1 else 'are'} missing "
                                   "(the store is damaged).")
        with self._pieces_lock:
            for d, raw in fetched.items():
                if d not in self._raw:
                    self._raw[d] = raw
                    self._raw_bytes += len(raw)
            while self._raw_bytes > RAW_CACHE_BYTES and self._raw:
                self._raw_bytes -= len(self._raw.popitem(last=False)[1])
        return fetched

    def clear_caches(self) -> None:
        """Forget every piece read so far (the next reads go to the database)."""
        with self._pieces_lock:
            self._pieces.clear()
            self._piece_bytes.clear()
            self._pieces_bytes = 0
            self._raw.clear()
            self._raw_bytes = 0

    def read_piece(self, digest: bytes) -> Any:
        return self._fetch_many([digest])[digest]

    def read_pieces(self, digests: Collection[bytes]) -> dict[bytes, Any]:
        return self._fetch_many(digests)

    def stream_piece(self, digest: bytes, part: int = 1 << 20) -> Iterator[bytes]:
        """The raw (decompressed) bytes of one piece in parts of about ``part`` bytes, never
        whole in memory (a 200 MB string compared by ``inspector.diff.huge_text``); checked
        against its digest and its size column at the end (CorruptDataError)."""
        from inspector.store.native import blobs
        with self._connection() as cur:
            rows = self._execute(cur, "SELECT codec, size, length(data) AS stored FROM ci_blobs WHERE hash = ?",
                                 (digest,))
            if not rows:
                raise CorruptDataError("A stored piece is missing (the store is damaged).")
            row = rows[0]
            if not isinstance(row.size, int) or row.size > limits.current().piece_bytes:
                raise limits.BudgetExceeded("piece", f"A stored piece of {row.size:,} bytes")
            source = self._stored_reader(cur, digest, row.stored)
            try:
                yield from blobs.stream(row.codec, source, row.size, digest, part)
            finally:
                if hasattr(source, "close"):
                    source.close()

    def _stored_reader(self, cur: Any, digest: bytes, stored: int) -> Any:
        """A file-like reader of a piece's stored (compressed) bytes: SQLite's incremental
        blob reader (only the pages read are loaded: ``substr`` would load the whole blob for
        every range), else ranges read one at a time."""
        if self.dialect == "sqlite":
            rows = self._execute(cur, "SELECT rowid AS r FROM ci_blobs WHERE hash = ?", (digest,))
            try:
                return cur.connection.blobopen("ci_blobs", "data", rows[0].r, readonly=True)
            except (sqlite3.Error, AttributeError, IndexError):    # a WITHOUT ROWID table, an old sqlite3
                pass
        return _RangeReader(lambda at, n: self._execute(
            cur, "SELECT substr(data, ?, ?) AS part FROM ci_blobs WHERE hash = ?", (at + 1, n, digest))[0].part,
            stored)

    def peek_piece(self, digest: bytes, count: int) -> bytes:
        """The first ``count`` raw (decompressed) bytes of a piece, or fewer when it is
        shorter — read without fetching or decompressing the rest (a 200 MB string's start
        for a preview). Not verified against the digest: only a whole piece can be."""
        with self._pieces_lock:
            raw = self._raw.get(digest)
        if raw is not None:
            return raw[:count]
        from inspector.store.native import blobs
        with self._connection() as cur:
            rows = self._execute(cur, "SELECT codec, size, length(data) AS stored FROM ci_blobs WHERE hash = ?",
                                 (digest,))
            if not rows:
                raise CorruptDataError("A stored piece is missing (the store is damaged).")
            source = self._stored_reader(cur, digest, rows[0].stored)
            try:    # only the start of the stored bytes is read (SQLite: the pages that hold it)
                head = source.read(blobs.compressed_bound(count))
            finally:
                if hasattr(source, "close"):
                    source.close()
        return blobs.peek(rows[0].codec, head, rows[0].size, count)

    def load_values(self, digests: Collection[bytes], what: str = "A stored state") -> dict[bytes, Any]:
        """Decode several stored values at once (shared pieces are fetched once, level by
        level), measured against the read budgets before they are built (``expand``)."""
        from inspector.codec.gcpause import gc_paused
        with gc_paused():   # millions of new containers: no collector rescans while they are built
            return self._load_values(digests, what)

    def _load_values(self, digests: Collection[bytes], what: str) -> dict[bytes, Any]:
        from inspector.codec import expand
        table: dict[bytes, Any] = {}
        self._fetch_levels(table, set(digests), what)
        return expand.resolve_all(list(dict.fromkeys(digests)), table, what)

    # -- live ------------------------------------------------------------------
    def cursor(self) -> Any:
        from inspector.store.engine import guard
        from inspector.store.native import live
        with guard(self.info.display), self._sa_engine().connect() as conn:
            return live.read_cursor(conn)

    def changes_since(self, cursor: Any) -> ChangeSet:
        from inspector.store.engine import guard
        from inspector.store.native import live
        from inspector.store.native.schema import checkpoints
        columns = [c for c in checkpoints.c if c.name != "meta"]
        with guard(self.info.display), self._sa_engine().connect() as conn:
            new, changed, removed, nxt = live.read_changes(conn, cursor, columns)
        return ChangeSet(cursor=nxt, run_ids=tuple(sorted(changed)),
                         new_checkpoints=tuple(checkpoint_from_row(r) for r in new), removed=removed)

    def watch_paths(self) -> list[Path]:
        if self.target.path is None:
            return []
        p = self.target.path
        return [p, p.with_name(p.name + "-wal"), p.with_name(p.name + "-shm")]


class SqliteNativeReader(NativeReads):
    """A native SQLite store opened read-only on the standard library's ``sqlite3``.

    Connections are opened as ``sqlite_ro`` says (no file of the store changes, no sidecar is
    created): a clean store's connection is kept while the files stay as they were; one that
    shares a writer's ``-shm`` is closed after each use (as the read-only engine does).
    """

    def __init__(self, target: Target, *, format_version: int = FORMAT_VERSION) -> None:
        super().__init__(target, read_only=True, format_version=format_version)
        assert target.path is not None
        self._pool = sqlite_ro.ReadPool(target.path, text_factory=str)     # see _fetch
        self._engine: sa.Engine | None = None

    def run_rows(self, *, text: str = "") -> RunRows:
        from inspector.store.native import listing    # the listings' own module: show and diff never need it

        where, params = self._run_filter("", text, None)
        with self._connection() as cur:
            found = listing.run_rows(cur, where, params)
        return found if found is not None else super().run_rows(text=text)

    def checkpoint_rows(self, run_id: str) -> list[tuple]:
        from inspector.store.native import listing

        with self._connection() as cur:
            found = listing.checkpoint_rows(cur, run_id)
        return found if found is not None else super().checkpoint_rows(run_id)

    def _fetch(self, cur: Any, sql: str, params: Collection[Any] = ()) -> tuple[tuple[str, ...], list]:
        # text is decoded by sqlite3 itself (a Python call per text value cost a listing of
        # 100,000 checkpoints 0.2 s); a query it cannot decode (text that is not UTF-8, in
        # a damaged row) is read again with the decoder that marks such text as damage
        try:
            return super()._fetch(cur, sql, params)
        except sqlite3.OperationalError:
            conn = cur.connection
            if conn.text_factory is sqlite_ro.decode_text:
                raise
            conn.text_factory = sqlite_ro.decode_text
            try:
                return super()._fetch(cur, sql, params)
            finally:
                conn.text_factory = str

    @contextlib.contextmanager
    def _connection(self) -> Iterator[Any]:
        try:
            conn = self._pool.checkout()
        except sqlite3.Error as err:
            raise dberrors.translate_driver(err, self.info.display) from err
        broken = False
        try:
            cur = conn.cursor()
            cur.execute("BEGIN")
            try:
                yield cur
            finally:
                if conn.in_transaction:
                    conn.rollback()
                cur.close()
        except sqlite3.Error as err:
            broken = True
            raise dberrors.translate_driver(err, self.info.display) from err
        finally:
            self._pool.checkin(conn, broken)

    def _sa_engine(self) -> sa.Engine:
        if self._engine is None:
            from inspector.store.engine import make_engine
            self._engine = make_engine(self.target, readonly=True)
        return self._engine

    def close(self) -> None:
        self._pool.close()
        if self._engine is not None:
            self._engine.dispose()


def open_sqlite_reader(target: Target) -> SqliteNativeReader | None:
    """The native store at ``target`` (a SQLite file that ``sqlite_ro.check_sqlite_file``
    accepted) opened read-only without SQLAlchemy; None when it is not a native store."""
    assert target.path is not None
    reader = SqliteNativeReader(target)
    try:
        with reader._connection() as cur:
            tables = {r[0] for r in reader._execute(cur, "SELECT name FROM sqlite_master WHERE type = 'table'")}
            if not tables >= REQUIRED_TABLES:
                reader.close()
                return None
            row = reader._execute(cur, "SELECT value FROM ci_meta WHERE key = 'format_version'")
        version = check_version(row[0][0] if row else None, target.display)
    except BaseException:
        reader.close()
        raise
    reader.info = replace(reader.info, format_version=version,
                                      notice=sqlite_ro.notice_for(sqlite_ro.mode_of(target.path), target.path))
    return reader


class _RangeReader:
    """``read(n)`` over a stored blob of ``length`` bytes, through ``fetch(offset, count)``."""

    def __init__(self, fetch: Any, length: int) -> None:
        self.fetch, self.length, self.at = fetch, length, 0

    def read(self, count: int = -1) -> bytes:
        if count < 0:
            count = self.length - self.at
        count = min(count, self.length - self.at)
        if count <= 0:
            return b""
        data = bytes(self.fetch(self.at, count))
        self.at += len(data)
        return data
