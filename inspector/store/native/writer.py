"""Writes to a native store: runs, fenced checkpoint appends, heartbeats, ownership."""

from __future__ import annotations

import contextlib
import json
import socket
import time
import uuid
from typing import Any, NamedTuple, NoReturn
from collections.abc import Collection, Iterator, Mapping

import sqlalchemy as sa

from inspector import taskstate
from inspector.errors import OwnershipLost, ReadOnlyError, StoreError
from inspector.model import CheckpointInfo, RunInfo
from inspector.store.engine import (CompiledStatement, begin_read_sql, begin_write_sql, guard, insert_ignore,
                                    translate)
from inspector.store.native import blobs
from inspector.store.native.schema import blobs as blob_table
from inspector.store.native.schema import checkpoints, runs
from inspector.store.native.rows import check_spec
from inspector.store.native.store import NativeStore

NOTIFY_CHANNEL = "checkpoint_inspector"
STORE_CHANGED = ""      # a payload naming no run: the store changed (pieces collected), not a run listed


def notify(conn: sa.Connection, run_ids: Collection[str]) -> None:
    """Tell PostgreSQL listeners (``inspector.watch.pg_listen``) that these runs changed, when
    the caller's transaction commits: one notification per run (the payload is its id), sent
    in one statement. Every write that changes what a window shows calls it inside its
    transaction (appends, status changes, deletes, prunes, pins); SQLite needs nothing (its
    readers watch the files)."""
    if run_ids and conn.dialect.name == "postgresql":
        conn.exec_driver_sql("SELECT pg_notify(%s, r) FROM unnest(%s::text[]) AS r",
                             (NOTIFY_CHANNEL, sorted(set(run_ids))))


def new_run_id() -> str:
    """A short random run id (48 bits; unique across machines for practical purposes)."""
    return uuid.uuid4().hex[:12]


class NewCheckpoint(NamedTuple):
    """What to append: the state and task-state roots (already encoded) and the summary
    (a named tuple: made on every save, it costs a quarter of a frozen dataclass)."""

    kind: str
    name: str
    state_hash: bytes
    tasks_hash: bytes | None
    pieces: Mapping[bytes, bytes]
    size: int
    meta: Mapping[str, Any]
    ops: int = 1
    score: taskstate.Score = taskstate.Score()
    change: str = ""
    created: float | None = None


class NativeWriter:
    """The write half of a native store; every write is one short transaction."""

    def __init__(self, store: NativeStore) -> None:
        if store.info.read_only:
            raise ReadOnlyError(f"{store.info.display} is open read-only.")
        self.store = store
        self.engine = store.engine
        self._known: set[bytes] = set()
        self._heads: dict[str, tuple[int, int, int]] = {}
        self._conn: sa.Connection | None = None
        self._statements()

    def _notify(self, conn: sa.Connection, run_id: str) -> None:
        notify(conn, (run_id,))

    # -- runs --------------------------------------------------------------------
    def create_run(self, *, name: str, agent: str = "", status: str = "running",
                   resume_spec: dict | None = None, resumable: bool = True,
                   not_resumable_reason: str | None = None, labels: dict | None = None,
                   parent_run: str | None = None, parent_checkpoint: int | None = None,
                   fork_reason: str | None = None, owner: bool = True, run_id: str | None = None) -> RunInfo:
        """Insert a run; with ``owner`` the calling process owns it (epoch 1)."""
        if resume_spec is not None:
            check_spec(resume_spec)
        now = time.time()
        values: dict[str, Any] = dict(
            id=run_id or new_run_id(), name=name, agent=agent, status=status, created=now,
            updated=now, owner_host=socket.gethostname() if owner else None,
            owner_pid=_pid() if owner else None, heartbeat=now if owner else None, epoch=1,
            resume_spec=json.dumps(resume_spec) if resume_spec is not None else None,
            resumable=resumable, not_resumable_reason=not_resumable_reason,
            parent_run=parent_run, parent_checkpoint=parent_checkpoint, fork_reason=fork_reason,
            labels=json.dumps(labels or {}), head_seq=-1, checkpoint_count=0)
        with guard(self.store.info.display), self.engine.begin() as conn:
            conn.execute(runs.insert().values(**values))
            self._notify(conn, values["id"])
        return self.store.get_run(values["id"])

    def _statements(self) -> None:
        """Compile the hot-path statements once for this engine's dialect."""
        b = sa.bindparam
        dialect = self.engine.dialect
        advance = (
            runs.update().where(runs.c.id == b("rid"), runs.c.epoch == b("ep"))
            .values(head_seq=runs.c.head_seq + 1, checkpoint_count=runs.c.checkpoint_count + 1,
                    updated=b("now"), heartbeat=b("now"), tasks_done=b("td"), tasks_total=b("tt"),
                    checks_passed=b("cp"), checks_total=b("ct"))
            .returning(runs.c.head_seq))
        previous = sa.select(checkpoints.c.id, checkpoints.c.size).where(
            checkpoints.c.run_id == b("rid"), checkpoints.c.seq == b("seq"))
        columns = [c.name for c in checkpoints.c if c.name != "id"]
        insert = checkpoints.insert().values({c: b(c) for c in columns}).returning(checkpoints.c.id)
        blob = insert_ignore(blob_table, dialect.name).values(
            {c: b(c) for c in ("hash", "codec", "size", "data")})
        notify = sa.select(sa.func.pg_notify(b("ch"), b("run")))
        owner = sa.select(runs.c.epoch, runs.c.owner_host, runs.c.owner_pid).where(runs.c.id == b("rid"))
        self._sql = {name: CompiledStatement(stmt, dialect) for name, stmt in (
            ("advance", advance), ("previous", previous), ("insert", insert), ("blob", blob),
            ("notify", notify), ("owner", owner))}
        self._begin = begin_write_sql(dialect.name)
        self._begin_read = begin_read_sql(dialect.name)
        self._notify_sql = dialect.name == "postgresql"
        self._dbapi_error = dialect.loaded_dbapi.Error

    def _raw(self) -> Any:
        """The writer's own long-lived raw connection (the hot path), connected on first use."""
        if self._conn is None:
            self._conn = self.engine.connect()
        raw = self._conn.connection.dbapi_connection
        assert raw is not None      # a checked-out pool connection has its driver connection
        return raw

    def _abort(self, raw: Any, err: BaseException) -> NoReturn:
        """Roll back and drop the connection after ``err`` (the next write reconnects
        cleanly); raise the store's error for a driver error, else ``err`` itself."""
        with contextlib.suppress(self._dbapi_error):
            raw.rollback()
        assert self._conn is not None
        self._conn.invalidate()
        self._conn.close()
        self._conn = None
        if isinstance(err, self._dbapi_error):
            raise translate(err, self.store.info.display) from err
        raise err

    @contextlib.contextmanager
    def _transaction(self, read: bool = False) -> Iterator[Any]:
        """A write transaction on the writer's own long-lived raw connection (``read``: one
        that only reads, which takes no write lock).

        The connection is dropped after any error, so the next save reconnects cleanly.
        """
        raw = self._raw()
        try:
            cur = raw.cursor()
            begin = self._begin_read if read else self._begin
            if begin:
                cur.execute(begin)
            yield cur
            raw.commit()
        except BaseException as err:
            self._abort(raw, err)

    def _run(self, cur: Any, name: str, values: dict) -> Any:
        stmt = self._sql[name]
        cur.execute(stmt.sql, stmt.params(values))
        return cur

    def close(self) -> None:
        """Release the writer's connection."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def append(self, run_id: str, epoch: int, cp: NewCheckpoint) -> CheckpointInfo:
        """Append a checkpoint if ``epoch`` still owns the run; else OwnershipLost.

        The hot path of every save: one transaction on the raw connection, statements
        compiled once, parameters put in order by C calls (no SQLAlchemy per call).
        """
        now = cp.created or time.time()
        known = self._known
        new_pieces = [(d, raw) for d, raw in cp.pieces.items() if d not in known]
        score = cp.score
        sql = self._sql
        raw = self._raw()
        try:
            cur = raw.cursor()
            if self._begin:
                cur.execute(self._begin)
            advance = sql["advance"]
            head = cur.execute(advance.sql, advance.params({
                "rid": run_id, "ep": epoch, "now": now, "td": score.tasks_done,
                "tt": score.tasks_total, "cp": score.checks_passed, "ct": score.checks_total})).fetchone()
            if head is None:
                owner = self._run(cur, "owner", {"rid": run_id}).fetchone()
                raise self._lost_error(run_id, epoch, owner)
            seq = head[0]
            if new_pieces:
                self._insert_pieces(cur, new_pieces)
            prev = self._heads.get(run_id)
            if prev is None or prev[0] != seq - 1:
                found = self._run(cur, "previous", {"rid": run_id, "seq": seq - 1}).fetchone()
                prev = (seq - 1, found[0], found[1]) if found else None
            parent_id = prev[1] if prev else None
            size_delta = cp.size - (prev[2] if prev else 0)
            row = {"run_id": run_id, "seq": seq, "parent_id": parent_id, "kind": cp.kind, "name": cp.name,
                   "created": now, "state_hash": cp.state_hash, "tasks_hash": cp.tasks_hash,
                   "meta": json.dumps(dict(cp.meta), default=str) if cp.meta else "{}", "size": cp.size,
                   "size_delta": size_delta, "ops": cp.ops, "tasks_done": score.tasks_done,
                   "tasks_total": score.tasks_total, "checks_passed": score.checks_passed,
                   "checks_total": score.checks_total, "change": cp.change, "epoch": epoch}
            insert = sql["insert"]
            new_id = cur.execute(insert.sql, insert.params(row)).fetchone()[0]
            if self._notify_sql:
                self._run(cur, "notify", {"ch": NOTIFY_CHANNEL, "run": run_id})
            raw.commit()
        except BaseException as err:
            self._abort(raw, err)
        self._heads[run_id] = (seq, new_id, cp.size)
        known.update([d for d, _ in new_pieces])
        if len(known) > 250_000:      # (~20 MB of digests)
            known.clear()
        info: Any = _new(CheckpointInfo)
        _set(info, "__dict__", {
            "id": new_id, "run_id": run_id, "seq": seq, "kind": cp.kind, "name": cp.name, "created": now,
            "parent_id": parent_id, "size": cp.size, "size_delta": size_delta, "ops": cp.ops,
            "tasks_done": score.tasks_done, "tasks_total": score.tasks_total, "checks_passed": score.checks_passed,
            "checks_total": score.checks_total, "change": cp.change, "state_hash": cp.state_hash,
            "tasks_hash": cp.tasks_hash, "lane": "", "branch_count": 0, "damaged": "", "pinned": False})
        return info   # what checkpoint_from_row makes of the row just written (its values are sound)

    def _insert_pieces(self, cur: Any, new_pieces: list[tuple[bytes, bytes]]) -> None:
        """Insert pieces (compressed; ones already stored are skipped by the database)."""
        if new_pieces:
            blob = self._sql["blob"]
            params, compress = blob.params, blobs.compress
            rows = []
            for digest, raw in new_pieces:
                codec, data = compress(raw)
                rows.append(params({"hash": digest, "codec": codec, "size": len(raw), "data": data}))
            cur.executemany(blob.sql, rows)

    def _lost(self, conn: sa.Connection, run_id: str, epoch: int) -> StoreError:
        row = conn.execute(sa.select(runs.c.epoch, runs.c.owner_host, runs.c.owner_pid)
                           .where(runs.c.id == run_id)).first()
        return self._lost_error(run_id, epoch, row)

    def _lost_error(self, run_id: str, epoch: int, row: Any) -> StoreError:
        if row is None:
            return StoreError(f"There is no run {run_id!r} in {self.store.info.display}.")
        new_epoch, host, pid = row[0], row[1], row[2]
        return OwnershipLost(f"Run {run_id} was taken over by another process "
                             f"(epoch {new_epoch} on {host} pid {pid}; this process had epoch {epoch}).")

    def heartbeat(self, run_id: str, epoch: int) -> bool:
        """Refresh the heartbeat; False when this epoch no longer owns the run."""
        with guard(self.store.info.display), self.engine.begin() as conn:
            result = conn.execute(runs.update().where(runs.c.id == run_id, runs.c.epoch == epoch)
                                  .values(heartbeat=time.time()))
            return result.rowcount == 1

    def set_status(self, run_id: str, epoch: int | None, status: str, error: str | None = None) -> bool:
        """Set the run's status (fenced by epoch unless None); True if it was applied."""
        stmt = runs.update().where(runs.c.id == run_id)
        if epoch is not None:
            stmt = stmt.where(runs.c.epoch == epoch)
        values: dict[str, Any] = {"status": status, "updated": time.time()}
        if error is not None or status == "completed":
            values["last_error"] = error
        with guard(self.store.info.display), self.engine.begin() as conn:
            ok = conn.execute(stmt.values(**values)).rowcount == 1
            if ok:
                self._notify(conn, run_id)
            return ok

    def take_ownership(self, run_id: str, *, host: str | None = None, pid: int | None = None,
                       status: str = "running") -> int:
        """Bump the run's epoch (fencing off the previous owner) and return the new epoch."""
        now = time.time()
        with guard(self.store.info.display), self.engine.begin() as conn:
            row = conn.execute(runs.update().where(runs.c.id == run_id)
                               .values(epoch=runs.c.epoch + 1, owner_host=host, owner_pid=pid,
                                       heartbeat=now, updated=now, status=status, last_error=None)
                               .returning(runs.c.epoch)).first()
            if row is None:
                raise StoreError(f"There is no run {run_id!r} in {self.store.info.display}.")
            self._notify(conn, run_id)
            return int(row[0])

    def claim(self, run_id: str, epoch: int, *, host: str, pid: int) -> None:
        """Record this process as the owner of ``epoch`` (after a resume hand-off)."""
        with guard(self.store.info.display), self.engine.begin() as conn:
            done = conn.execute(runs.update().where(runs.c.id == run_id, runs.c.epoch == epoch)
                                .values(owner_host=host, owner_pid=pid, heartbeat=time.time(),
                                        status="running")).rowcount
            if done != 1:
                raise self._lost(conn, run_id, epoch)

    def update_run(self, run_id: str, **values: Any) -> None:
        """Set plain columns of a run (resume spec, labels, resumable…)."""
        if isinstance(values.get("resume_spec"), dict):
            check_spec(values["resume_spec"])
        for key in ("resume_spec", "labels"):
            if key in values and not isinstance(values[key], (str, type(None))):
                values[key] = json.dumps(values[key])
        with guard(self.store.info.display), self.engine.begin() as conn:
            conn.execute(runs.update().where(runs.c.id == run_id).values(**values))


_new = object.__new__
_set = object.__setattr__


def _pid() -> int:
    import os
    return os.getpid()
