"""The native checkpoint store: reads (the Store interface) on SQLAlchemy Core."""

from __future__ import annotations

import dataclasses
import threading
from collections import OrderedDict
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from inspector import codec as pieces
from inspector import limits, taskstate
from inspector.codec import expand
from inspector.codec.gcpause import gc_paused
from inspector.errors import CorruptDataError, StoreError, TaskStateError
from inspector.model import NATIVE_CAPABILITIES, ChangeSet, CheckpointInfo, RunInfo, Snapshot, StoreInfo
from inspector.store.base import Store, parse_ref
from inspector.store.engine import CompiledStatement, Target, guard, translate
from inspector.store.native import blobs, live
from inspector.store.native.pins import pinned_ids
from inspector.store.native.rows import checkpoint_from_row, json_field, row_type, run_from_row  # re-exported
from inspector.store.native.schema import FORMAT_VERSION, checkpoints, runs
from inspector.store.native.schema import blobs as blob_table

CHECKPOINT_COLUMNS = [c for c in checkpoints.c if c.name != "meta"]
FETCH_BATCH = 500
STREAM_PART = 64                    # pieces per part of stream_raw_pieces
PIECE_CACHE_ITEMS = 20_000          # decoded pieces kept (the GUI re-reads what it just showed)
RAW_CACHE_BYTES = 64 * 1024 * 1024  # raw piece bytes kept for diffs
_BLOB_COLUMNS = (blob_table.c.hash, blob_table.c.codec, blob_table.c.size, blob_table.c.data)
_BLOB_BATCHES = (8, STREAM_PART, FETCH_BATCH)   # IN-list sizes compiled once; a batch is padded up to one
# runs forked from a checkpoint, read with it (one query instead of a second one per run)
_BRANCH_COUNT = (sa.select(sa.func.count()).where(runs.c.parent_run == checkpoints.c.run_id,
                                                  runs.c.parent_checkpoint == checkpoints.c.id)
                 .scalar_subquery().label("branch_count"))


class NativeStore(Store):
    """A store written by the recording library (format version up to ``FORMAT_VERSION``)."""

    def __init__(self, engine: sa.Engine, target: Target, *, read_only: bool,
                 format_version: int = FORMAT_VERSION) -> None:
        self.engine = engine
        self.target = target
        self.info = StoreInfo(url=target.url, display=target.display, kind="native",
                              backend=target.backend, format_version=format_version,
                              read_only=read_only, capabilities=NATIVE_CAPABILITIES,
                              label="Checkpoint Inspector")
        self._pieces: OrderedDict[bytes, Any] = OrderedDict()
        self._raw: OrderedDict[bytes, bytes] = OrderedDict()
        self._raw_bytes = 0
        self._blob_selects: dict[int, CompiledStatement] = {}
        self._pieces_lock = threading.Lock()

    # -- helpers ---------------------------------------------------------------
    def _rows(self, stmt: sa.Executable) -> list:
        """The rows as named tuples (see ``rows.row_type``)."""
        with guard(self.info.display), self.engine.connect() as conn:
            result = conn.execute(stmt)
            make = row_type(tuple(result.keys()))._make
            return [make(row) for row in result.fetchall()]

    def _run_filter(self, stmt: sa.Select, text: str, statuses: Collection[str] | None) -> sa.Select:
        if text:
            like = f"%{text}%"
            stmt = stmt.where(sa.or_(runs.c.name.ilike(like), runs.c.agent.ilike(like),
                                     runs.c.id.ilike(like)))
        if statuses:
            stmt = stmt.where(runs.c.status.in_(list(statuses)))
        return stmt

    # -- runs ------------------------------------------------------------------
    def list_runs(self, *, text: str = "", statuses: Collection[str] | None = None,
                  limit: int | None = None, offset: int = 0) -> list[RunInfo]:
        stmt = self._run_filter(sa.select(runs), text, statuses)
        stmt = stmt.order_by(runs.c.updated.desc(), runs.c.id).offset(offset)
        if limit is not None:
            stmt = stmt.limit(limit)
        return [run_from_row(r) for r in self._rows(stmt)]

    def count_runs(self, *, text: str = "", statuses: Collection[str] | None = None) -> int:
        stmt = self._run_filter(sa.select(sa.func.count()).select_from(runs), text, statuses)
        return int(self._rows(stmt)[0][0])

    def get_run(self, run_id: str) -> RunInfo:
        rows = self._rows(sa.select(runs).where(runs.c.id == run_id))
        if not rows:
            raise StoreError(f"There is no run {run_id!r} in {self.info.display}.")
        return run_from_row(rows[0])

    def forks_of(self, run_id: str) -> list[RunInfo]:
        stmt = sa.select(runs).where(runs.c.parent_run == run_id).order_by(runs.c.created)
        return [run_from_row(r) for r in self._rows(stmt)]

    # -- checkpoints -----------------------------------------------------------
    def _branches(self, run_id: str) -> dict:
        stmt = (sa.select(runs.c.parent_checkpoint, sa.func.count())
                .where(runs.c.parent_run == run_id).group_by(runs.c.parent_checkpoint))
        return {r[0]: r[1] for r in self._rows(stmt)}

    def list_checkpoints(self, run_id: str, *, after_seq: int = -1,
                         limit: int | None = None) -> list[CheckpointInfo]:
        stmt = (sa.select(*CHECKPOINT_COLUMNS)
                .where(checkpoints.c.run_id == run_id, checkpoints.c.seq > after_seq)
                .order_by(checkpoints.c.seq))
        if limit is not None:
            stmt = stmt.limit(limit)
        rows = self._rows(stmt)
        branches = self._branches(run_id) if rows else {}
        infos = [checkpoint_from_row(r, branches) for r in rows]
        return self._with_pins(run_id, infos)

    def _with_pins(self, run_id: str, infos: list[CheckpointInfo]) -> list[CheckpointInfo]:
        """Mark the pinned ones (a store without a ``ci_pins`` table has none)."""
        if not infos:
            return infos
        with guard(self.info.display), self.engine.connect() as conn:
            pinned = pinned_ids(conn, run_id)
        if not pinned:
            return infos
        return [dataclasses.replace(i, pinned=True) if i.id in pinned else i for i in infos]

    def checkpoints_at(self, run_id: str, seqs: Collection[int]) -> list[CheckpointInfo]:
        stmt = (sa.select(*CHECKPOINT_COLUMNS)
                .where(checkpoints.c.run_id == run_id, checkpoints.c.seq.in_(list(seqs)))
                .order_by(checkpoints.c.seq))
        return [checkpoint_from_row(r) for r in self._rows(stmt)]

    def count_checkpoints(self, run_id: str) -> int:
        stmt = sa.select(sa.func.count()).where(checkpoints.c.run_id == run_id)
        return int(self._rows(stmt)[0][0])

    def get_checkpoint(self, ref: int | str) -> CheckpointInfo:
        row = self._checkpoint_row(ref, [*CHECKPOINT_COLUMNS, _BRANCH_COUNT])
        return self._with_pins(row.run_id, [checkpoint_from_row(row, {row.id: row.branch_count})])[0]

    def _checkpoint_row(self, ref: int | str, columns: Any) -> Any:
        """The row of a checkpoint given by id or RUN:SEQ, with ``columns``."""
        run_id, key = parse_ref(ref)
        stmt = sa.select(*columns)
        if run_id is not None:
            seq = int(key)
            if seq < 0:
                seq = self.get_run(run_id).head_seq + 1 + seq
            stmt = stmt.where(checkpoints.c.run_id == run_id, checkpoints.c.seq == seq)
        elif isinstance(key, int):
            stmt = stmt.where(checkpoints.c.id == key)
        else:
            raise StoreError(f"{ref!r} is not a checkpoint reference (use an id or RUN:SEQ).")
        rows = self._rows(stmt)
        if not rows:
            raise StoreError(f"There is no checkpoint {ref} in {self.info.display}.")
        return rows[0]

    def load(self, checkpoint_id: int | str) -> Snapshot:
        row = self._checkpoint_row(checkpoint_id, [*checkpoints.c, _BRANCH_COUNT])
        info = checkpoint_from_row(row, {row.id: row.branch_count})
        if info.state_hash is None:
            raise CorruptDataError(f"Checkpoint {checkpoint_id} is damaged ({info.damaged}).")
        state = self.load_values([info.state_hash], f"The state of checkpoint {info.run_id}:{info.seq}")[info.state_hash]
        problems = [f"checkpoint row: {info.damaged}"] if info.damaged else []
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
            lane = self._lane_snapshot(info, state)
            if lane is not None:
                return dataclasses.replace(lane, meta={**meta, **lane.meta})
        return Snapshot(info=info, state=state, tasks=tasks, meta=meta, problems=tuple(problems))


    def _lane_snapshot(self, info: CheckpointInfo, state: Any) -> Snapshot | None:
        """LangGraph's view of a LangGraph lane's checkpoint (see ``lgview``)."""
        from inspector.store.native import lgview
        try:
            with guard(self.info.display), self.engine.connect() as conn:
                return lgview.lane_snapshot(conn, info, state, self.read_piece)
        except StoreError:   # no lane tables (or no right to read them): the plain native view
            return None

    # -- pieces ----------------------------------------------------------------
    def _fetch_many(self, digests: Collection[bytes]) -> dict[bytes, Any]:
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
        for d, raw in self.read_raw_pieces(missing).items():
            found[d] = pieces.unpack(raw)
        with self._pieces_lock:
            for d in missing:
                self._pieces[d] = found[d]
            while len(self._pieces) > PIECE_CACHE_ITEMS:
                self._pieces.popitem(last=False)
        return found

    def read_raw_pieces(self, digests: Collection[bytes]) -> dict[bytes, bytes]:
        """The raw (decompressed, verified, not decoded) bytes of several pieces.

        The diff splits list chunks into encoded items and decodes only those that differ.
        All batches are read on one connection, then decompressed together.
        """
        found, missing = self._cached_raw(digests)
        if not missing:
            return found
        ordered = sorted(missing)
        with guard(self.info.display), self.engine.connect() as conn:
            rows = [row for start in range(0, len(ordered), FETCH_BATCH)
                    for row in self._blob_rows(conn, ordered[start:start + FETCH_BATCH])]
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
        with guard(self.info.display), self.engine.connect() as conn:
            for start in range(0, len(missing), part):
                batch = missing[start:start + part]
                rows = self._blob_rows(conn, batch)
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

    def _blob_rows(self, conn: sa.Connection, batch: list[bytes]) -> list:
        """The blob rows (hash, codec, size, data) of up to ``FETCH_BATCH`` distinct digests."""
        size = next(n for n in _BLOB_BATCHES if n >= len(batch))
        stmt = self._blob_select(size, conn.dialect)
        padded = batch + [batch[-1]] * (size - len(batch))   # a repeated digest matches once
        params = stmt.params({f"d{n}": digest for n, digest in enumerate(padded)})
        cur = conn.connection.dbapi_connection.cursor()     # plain tuples: no Row per blob
        try:
            cur.execute(stmt.sql, params)
            return cur.fetchall()
        except conn.dialect.loaded_dbapi.Error as err:
            raise translate(err, self.info.display) from err
        finally:
            cur.close()

    def _verified(self, asked: list[bytes], rows: list, raws: list[bytes]) -> dict[bytes, bytes]:
        """The decompressed pieces of ``rows`` checked against their digests (all ``asked``
        must be there), and kept in the raw cache."""
        fetched: dict[bytes, bytes] = {}
        digest_of = pieces.digest_of
        for row, raw in zip(rows, raws, strict=True):
            digest = bytes(row[0])
            if digest_of(raw) != digest:
                raise CorruptDataError("A stored piece does not match its hash (the store is damaged).")
            fetched[digest] = raw
        if len(fetched) != len(asked):
            lost = len(set(asked) - fetched.keys())
            raise CorruptDataError(f"{lost} stored piece(s) are missing (the store is damaged).")
        with self._pieces_lock:
            for d, raw in fetched.items():
                if d not in self._raw:
                    self._raw[d] = raw
                    self._raw_bytes += len(raw)
            while self._raw_bytes > RAW_CACHE_BYTES and self._raw:
                self._raw_bytes -= len(self._raw.popitem(last=False)[1])
        return fetched

    def _blob_select(self, size: int, dialect: sa.Dialect) -> CompiledStatement:
        """The read of ``size`` pieces, compiled once (SQLAlchemy's per-parameter handling of
        an IN list of hundreds of digests cost more than the query itself)."""
        stmt = self._blob_selects.get(size)
        if stmt is None:
            marks = [sa.bindparam(f"d{n}") for n in range(size)]
            stmt = CompiledStatement(sa.select(*_BLOB_COLUMNS).where(blob_table.c.hash.in_(marks)), dialect)
            self._blob_selects[size] = stmt
        return stmt

    def clear_caches(self) -> None:
        """Forget every piece read so far (the next reads go to the database)."""
        with self._pieces_lock:
            self._pieces.clear()
            self._raw.clear()
            self._raw_bytes = 0

    def read_piece(self, digest: bytes) -> Any:
        return self._fetch_many([digest])[digest]

    def read_pieces(self, digests: Collection[bytes]) -> dict[bytes, Any]:
        return self._fetch_many(digests)

    def load_values(self, digests: Collection[bytes], what: str = "A stored state") -> dict[bytes, Any]:
        """Decode several stored values at once (shared pieces are fetched once, level by
        level), measured against the read budgets before they are built (``expand``)."""
        with gc_paused():   # millions of new containers: no collector rescans while they are built
            return self._load_values(digests, what)

    def _load_values(self, digests: Collection[bytes], what: str) -> dict[bytes, Any]:
        table: dict[bytes, Any] = {}
        frontier = set(digests)
        depth = limits.current().depth
        levels = 0
        while frontier:
            levels += 1     # each level of pieces nests at least one level deeper
            if levels > depth:
                raise limits.BudgetExceeded("depth", f"{what} nests more than {depth:,} levels deep")
            fetched = self._fetch_many(frontier)
            table.update(fetched)
            frontier = {d for v in fetched.values() for d in expand.children(v)} - table.keys()
        return expand.resolve_all(list(dict.fromkeys(digests)), table, what)

    # -- live ------------------------------------------------------------------
    def cursor(self) -> Any:
        with guard(self.info.display), self.engine.connect() as conn:
            return live.read_cursor(conn)

    def changes_since(self, cursor: Any) -> ChangeSet:
        with guard(self.info.display), self.engine.connect() as conn:
            new, changed, nxt = live.read_changes(conn, cursor, CHECKPOINT_COLUMNS)
        return ChangeSet(cursor=nxt, run_ids=tuple(sorted(changed)),
                         new_checkpoints=tuple(checkpoint_from_row(r) for r in new))

    def watch_paths(self) -> list[Path]:
        if self.target.path is None:
            return []
        p = self.target.path
        return [p, p.with_name(p.name + "-wal"), p.with_name(p.name + "-shm")]

    def close(self) -> None:
        self.engine.dispose()
