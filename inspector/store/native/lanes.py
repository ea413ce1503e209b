"""LangGraph lanes in a native store: the SQL behind ``inspector.record.langgraph.InspectorSaver``.

A lane is one ``(thread_id, checkpoint_ns)`` of a LangGraph thread and one ordinary native
run: its checkpoints are ordinary ``ci_checkpoints`` rows (their states ordinary pieces), and
three tables add what LangGraph needs (FORMAT.md, "LangGraph lanes"): ``ci_lg_lanes`` (lane →
run), ``ci_lg_checkpoints`` (LangGraph ids, parent, metadata and the checkpoint body without
its channel values) and ``ci_lg_writes`` (pending writes, values as pieces).

Nothing here knows LangGraph's types: the saver hands over encoded bytes and digests. What a
checkpoint waiting at ``interrupt()`` asks is read back from its interrupt writes by ``lgview``
(the Change column and the run's ``last_error`` say it, as they do for a LangGraph database).
"""

from __future__ import annotations

import builtins
import functools
import json
import socket
import time
from dataclasses import dataclass, field
from collections.abc import Collection
from typing import Any
from collections.abc import Iterable, Iterator, Mapping, Sequence

import sqlalchemy as sa

from inspector.errors import StoreError
from inspector.store.engine import CompiledStatement, guard
from inspector.store.langgraph.pregel import INTERRUPT
from inspector.store.langgraph.snapshot import WAITING, waiting_change, without_waiting
from inspector.store.native import blobs, live
from inspector.store.native.lgview import lane_asks
from inspector.store.native.schema import checkpoints, lg_checkpoints, lg_lanes, lg_writes, runs
from inspector.store.native.store import NativeStore
from inspector.store.native.writer import NativeWriter, new_run_id

LANE_TABLES = (lg_lanes, lg_checkpoints, lg_writes)


@dataclass(frozen=True)
class LaneCheckpoint:
    """One LangGraph checkpoint to append to its lane (already encoded by the saver)."""

    checkpoint_id: str
    parent_checkpoint_id: str | None
    body_type: str
    body: bytes
    metadata: str                   # JSON text
    lg_run_id: str | None
    state_hash: bytes
    pieces: Mapping[bytes, bytes]
    size: int
    kind: str
    name: str = ""
    change: str = ""
    created: float | None = None
    tasks_hash: bytes | None = None
    score: tuple[int, int, int, int] = (0, 0, 0, 0)
    status: str = "running"
    parent_lane: tuple[str, str] | None = None   # (ns, checkpoint id) a subgraph lane starts from
    # the parent's score now that its step's writes are in (LangGraph's Tasks view of it: the
    # tasks that step ran, its next nodes, the task channel), stored with this checkpoint
    parent_score: tuple[int, int, int, int] | None = None


@dataclass(frozen=True)
class LaneWrite:
    """One pending write: the value as plain msgpack (self-contained: no piece references, so
    a piece collector that walks checkpoints only can never strand it)."""

    task_id: str
    idx: int
    channel: str
    task_path: str
    data: bytes


@dataclass
class StoredCheckpoint:
    """A lane checkpoint as read back."""

    id: int
    run_id: str
    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    parent_checkpoint_id: str | None
    body_type: str
    body: bytes
    metadata: str
    state_hash: bytes
    writes: list[tuple[str, str, bytes, str, int]] = field(default_factory=list)  # task, channel, data, path, idx


_LG_COLUMNS = (lg_checkpoints.c.id, lg_checkpoints.c.run_id, lg_checkpoints.c.thread_id,
               lg_checkpoints.c.checkpoint_ns, lg_checkpoints.c.checkpoint_id,
               lg_checkpoints.c.parent_checkpoint_id, lg_checkpoints.c.type, lg_checkpoints.c.body,
               lg_checkpoints.c.metadata, checkpoints.c.state_hash)


def ensure_tables(engine: sa.Engine, display: str) -> None:
    """Create the lane tables in a store that predates them (idempotent)."""
    with guard(display), engine.begin() as conn:
        for table in LANE_TABLES:
            table.create(conn, checkfirst=True)
        for index in lg_checkpoints.indexes:
            index.create(conn, checkfirst=True)


class LaneStore(NativeWriter):
    """Reads and writes of LangGraph lanes; one instance per saver (thread-safe by its caller)."""

    def __init__(self, store: NativeStore, *, heartbeat_s: float = 2.0) -> None:
        super().__init__(store)
        ensure_tables(self.engine, store.info.display)
        self.heartbeat_s = heartbeat_s
        self._lanes: dict[tuple[str, str], str] = {}
        self._head: dict[str, tuple[str, int, int, int]] = {}   # run → (checkpoint id, db id, seq, size)
        self._unlinked: set[tuple[str, str]] = set()   # subgraph lanes whose parent step is not stored yet
        # what interrupts ask (``_note_asks``): the checkpoints whose Change says so, the lanes
        # whose such checkpoints were looked up, and checkpoints whose interrupts came first
        self._asking: set[tuple[str, str, str]] = set()
        self._watched: set[tuple[str, str]] = set()
        self._early: dict[tuple[str, str, str], None] = {}
        self._one_statement = self.engine.dialect.name == "sqlite"
        self._temp_conn: Any = None
        self._lane_statements()

    # -- statements --------------------------------------------------------------------
    def _lane_statements(self) -> None:
        b = sa.bindparam
        d = self.engine.dialect
        advance = (runs.update().where(runs.c.id == b("rid"))
                   .values(head_seq=runs.c.head_seq + 1, checkpoint_count=runs.c.checkpoint_count + 1,
                           updated=b("now"), heartbeat=b("now"), owner_host=b("host"),
                           owner_pid=b("pid"), status=b("status"), last_error=sa.null(),
                           tasks_done=b("td"), tasks_total=b("tt"), checks_passed=b("cp"),
                           checks_total=b("ct"))
                   .returning(runs.c.head_seq))
        find = sa.select(lg_checkpoints.c.id, checkpoints.c.size, checkpoints.c.run_id).select_from(
            lg_checkpoints.join(checkpoints, checkpoints.c.id == lg_checkpoints.c.id)).where(
            lg_checkpoints.c.thread_id == b("tid"), lg_checkpoints.c.checkpoint_ns == b("ns"),
            lg_checkpoints.c.checkpoint_id == b("cid"))
        lg_insert = lg_checkpoints.insert().values({c.name: b(c.name) for c in lg_checkpoints.c})
        cols = [c.name for c in checkpoints.c if c.name != "id"]
        cp_insert = checkpoints.insert().values({c: b(c) for c in cols}).returning(checkpoints.c.id)
        lane = sa.select(lg_lanes.c.run_id).where(lg_lanes.c.thread_id == b("tid"),
                                                 lg_lanes.c.checkpoint_ns == b("ns"))
        base = self._select().where(lg_checkpoints.c.thread_id == b("tid"), lg_checkpoints.c.checkpoint_ns == b("ns"))
        get_id = base.where(lg_checkpoints.c.checkpoint_id == b("cid"))
        get_head = base.order_by(lg_checkpoints.c.checkpoint_id.desc()).limit(1)
        writes_of = (sa.select(lg_writes.c.checkpoint_id, lg_writes.c.task_id, lg_writes.c.channel, lg_writes.c.data,
                               lg_writes.c.task_path, lg_writes.c.idx, lg_writes.c.codec, lg_writes.c.size)
                     .where(lg_writes.c.thread_id == b("tid"), lg_writes.c.checkpoint_ns == b("ns"),
                            lg_writes.c.checkpoint_id == b("cid"))
                     .order_by(lg_writes.c.task_id, lg_writes.c.idx))
        rescore = checkpoints.update().where(checkpoints.c.id == b("id")).values(
            tasks_done=b("td"), tasks_total=b("tt"), checks_passed=b("cp"), checks_total=b("ct"))
        self._lsql = {name: CompiledStatement(stmt, d) for name, stmt in (
            ("get_id", get_id), ("get_head", get_head), ("writes_of", writes_of),
            ("advance", advance), ("find", find), ("lg_insert", lg_insert), ("cp_insert", cp_insert),
            ("lane", lane), ("rescore", rescore))}
        self._write_cols = tuple(c.name for c in lg_writes.c)
        from inspector.store.engine import insert_ignore
        ins = insert_ignore(lg_writes, d.name).values({c: b(c) for c in self._write_cols})
        self._lsql["write_ignore"] = CompiledStatement(ins, d)
        from sqlalchemy.dialects import postgresql, sqlite
        # the two dialects' Inserts have the same on_conflict_do_update (separate classes)
        up: sqlite.Insert | postgresql.Insert = (sqlite.insert if d.name == "sqlite" else postgresql.insert)(
            lg_writes).values({c: b(c) for c in self._write_cols})
        up = up.on_conflict_do_update(
            index_elements=[lg_writes.c.thread_id, lg_writes.c.checkpoint_ns, lg_writes.c.checkpoint_id,
                            lg_writes.c.task_id, lg_writes.c.idx],
            set_={"channel": up.excluded.channel, "task_path": up.excluded.task_path,
                  "codec": up.excluded.codec, "data": up.excluded.data, "size": up.excluded.size})
        self._lsql["write_replace"] = CompiledStatement(up, d)

    def _x(self, cur: Any, name: str, values: dict) -> Any:
        stmt = self._lsql[name]
        cur.execute(stmt.sql, stmt.params(values))
        return cur

    def _blobs(self, cur: Any, pieces: Mapping[bytes, bytes]) -> list[bytes]:
        new = [(d, raw) for d, raw in pieces.items() if d not in self._known]
        self._insert_pieces(cur, new)
        return [d for d, _ in new]

    def _remember(self, digests: Iterable[bytes]) -> None:
        self._known.update(digests)
        if len(self._known) > 1_000_000:
            self._known.clear()

    # -- lanes -------------------------------------------------------------------------
    def lane_run(self, thread_id: str, ns: str, *, create: bool = False,
                 parent: tuple[str | None, int | None] = (None, None)) -> str | None:
        """The run of a lane (created, owned by this process, when ``create``)."""
        key = (thread_id, ns)
        run_id = self._lanes.get(key)
        if run_id is not None:
            return run_id
        with guard(self.store.info.display), self.engine.connect() as conn:
            row = conn.execute(sa.select(lg_lanes.c.run_id).where(
                lg_lanes.c.thread_id == thread_id, lg_lanes.c.checkpoint_ns == ns)).first()
        if row is not None:
            self._lanes[key] = row[0]
            return row[0]
        if not create:
            return None
        run_id = new_run_id()
        now = time.time()
        name = thread_id if not ns else f"{thread_id} › {ns.split('|')[-1].split(':')[0]}"
        labels = {"langgraph": {"thread_id": thread_id, "checkpoint_ns": ns}, "heartbeat_s": self.heartbeat_s}
        values = dict(id=run_id, name=name, agent="langgraph", status="running", created=now, updated=now,
                      owner_host=socket.gethostname(), owner_pid=_pid(), heartbeat=now, epoch=1,
                      resumable=False, not_resumable_reason="a LangGraph thread is resumed through its graph "
                      "(graph.invoke with its thread_id)", parent_run=parent[0], parent_checkpoint=parent[1],
                      fork_reason="subgraph" if parent[0] else None, labels=json.dumps(labels),
                      head_seq=-1, checkpoint_count=0)
        try:
            with guard(self.store.info.display), self.engine.begin() as conn:
                conn.execute(runs.insert().values(**values))
                conn.execute(lg_lanes.insert().values(run_id=run_id, thread_id=thread_id, checkpoint_ns=ns))
        except Exception:
            # another writer created the lane at the same moment: use theirs
            found = self.lane_run(thread_id, ns)
            if found is None:
                raise
            return found
        self._lanes[key] = run_id
        return run_id

    def find(self, thread_id: str, ns: str, checkpoint_id: str) -> tuple[int, int, str] | None:
        """(db id, size, run) of a stored LangGraph checkpoint."""
        with guard(self.store.info.display), self.engine.connect() as conn:
            stmt = self._lsql["find"]
            row = conn.exec_driver_sql(stmt.sql, stmt.params({"tid": thread_id, "ns": ns, "cid": checkpoint_id})).first()
        return (row[0], row[1], row[2]) if row else None

    # -- writes ------------------------------------------------------------------------
    def put(self, thread_id: str, ns: str, cp: LaneCheckpoint) -> None:
        """Append one checkpoint to its lane (replace it if that id is already stored);
        LaneGone when the lane's run was deleted meanwhile (by another process: the next put
        makes the lane again)."""
        try:
            self._put(thread_id, ns, cp)
            key = (thread_id, ns, cp.checkpoint_id)
            if key in self._early or key in self._asking:   # its interrupts came first, or it is put again
                self._early.pop(key, None)
                with guard(self.store.info.display), self.engine.begin() as conn:
                    self._ask(conn, key)
        except LaneGone:
            run_id = self._lanes.pop((thread_id, ns), None)
            if run_id is not None:
                self._head.pop(run_id, None)
            self._unlinked.discard((thread_id, ns))
            self._known.clear()     # (its pieces may be collected now)
            raise

    def _put(self, thread_id: str, ns: str, cp: LaneCheckpoint) -> None:
        parent_ref: tuple[str | None, int | None] = (None, None)
        fresh = (thread_id, ns) not in self._lanes
        if ns and cp.parent_lane is not None and (fresh or (thread_id, ns) in self._unlinked):
            # the step that ran this subgraph: its checkpoint may still be on its way (LangGraph
            # writes in the background), then the link is made by a later checkpoint
            found = self.find(thread_id, *cp.parent_lane)
            outer = found[2] if found else self.lane_run(thread_id, cp.parent_lane[0])
            parent_ref = (outer, found[0] if found else None)
            if found:
                self._unlinked.discard((thread_id, ns))
            else:
                self._unlinked.add((thread_id, ns))
            if not fresh and found:
                run = self.lane_run(thread_id, ns)
                with guard(self.store.info.display), self.engine.begin() as conn:
                    conn.execute(runs.update().where(runs.c.id == run).values(
                        parent_run=parent_ref[0], parent_checkpoint=parent_ref[1]))
        run_id = self.lane_run(thread_id, ns, create=True, parent=parent_ref)
        assert run_id is not None
        head = self._head.get(run_id)
        if head is not None and head[0] == cp.checkpoint_id or (head is None and self.find(thread_id, ns, cp.checkpoint_id)):
            self._replace(thread_id, ns, run_id, cp)
            return
        now = time.time()
        created = cp.created or now
        if self._one_statement:
            self._put_sqlite(run_id, thread_id, ns, cp, now, created)
            self._head[run_id] = (cp.checkpoint_id, -1, -1, cp.size)   # (its parent is found by SQL)
            return
        td, tt, pc, ct = cp.score
        with self._transaction() as cur:
            seq_row = self._x(cur, "advance", {"rid": run_id, "now": now, "host": _host(), "pid": _pid(),
                                               "status": cp.status, "td": td, "tt": tt, "cp": pc, "ct": ct}).fetchone()
            if seq_row is None:   # the lane's run was deleted under us
                raise LaneGone(thread_id, ns)
            seq = seq_row[0]
            new = self._blobs(cur, cp.pieces)
            parent_id, parent_size = None, 0
            if cp.parent_checkpoint_id is not None:
                if head is not None and head[0] == cp.parent_checkpoint_id:
                    parent_id, parent_size = head[1], head[3]
                else:
                    found = self._x(cur, "find", {"tid": thread_id, "ns": ns,
                                                  "cid": cp.parent_checkpoint_id}).fetchone()
                    if found:
                        parent_id, parent_size = found[0], found[1]
            row = dict(run_id=run_id, seq=seq, parent_id=parent_id, kind=cp.kind, name=cp.name,
                       created=created, state_hash=cp.state_hash, tasks_hash=cp.tasks_hash,
                       meta=_lane_meta(thread_id, ns, cp.checkpoint_id),
                       size=cp.size, size_delta=cp.size - parent_size, ops=1, tasks_done=td,
                       tasks_total=tt, checks_passed=pc, checks_total=ct, change=cp.change, epoch=1)
            db_id = self._x(cur, "cp_insert", row).fetchone()[0]
            if parent_id is not None and cp.parent_score is not None:
                self._x(cur, "rescore", dict(zip(("td", "tt", "cp", "ct"), cp.parent_score, strict=True), id=parent_id))
            self._x(cur, "lg_insert", dict(id=db_id, run_id=run_id, thread_id=thread_id, checkpoint_ns=ns,
                                           checkpoint_id=cp.checkpoint_id,
                                           parent_checkpoint_id=cp.parent_checkpoint_id,
                                           lg_run_id=cp.lg_run_id, type=cp.body_type,
                                           body=blobs.pack_body(cp.body_type, cp.body), metadata=cp.metadata))
            if self.engine.dialect.name == "postgresql":
                self._run(cur, "notify", {"ch": "checkpoint_inspector", "run": run_id})
        self._remember(new)
        self._head[run_id] = (cp.checkpoint_id, db_id, seq, cp.size)

    def _put_sqlite(self, run_id: str, thread_id: str, ns: str, cp: LaneCheckpoint, now: float,
                    created: float) -> None:
        """``put`` on SQLite as one statement (autocommit: atomic on its own): an insert into a
        view of this connection's own (TEMP, never in the file) whose trigger does what the
        transaction of other databases does: advance the run, insert the checkpoint (its
        parent found by the LangGraph id) and its LangGraph row, and up to ``_FOLDED`` new
        pieces. More pieces go first, in one statement of their own (a piece nothing refers to
        yet is harmless). Every statement lets other threads take the GIL while SQLite works,
        and LangGraph runs puts on threads of its own beside the graph: each one given up
        costs a wait for the GIL back (measured, alternating runs of ``bench langgraph
        --workload write``'s graph: two statements a put against six, 0.25-0.35 ms a step
        less)."""
        raw = self._raw()
        new = [(d, piece) for d, piece in cp.pieces.items() if d not in self._known]
        folded: list[Any] = [None] * (4 * _FOLDED)
        try:
            cur = raw.cursor()
            if self._temp_conn is not raw:
                for stmt in _TEMP_SQL:
                    cur.execute(stmt)
                self._temp_conn = raw
            if new:
                rows: list[Any] = []
                for d, piece in new:
                    codec, data = blobs.compress(piece)
                    rows.extend((d, codec, len(piece), data))
                if len(new) <= _FOLDED:
                    folded[:len(rows)] = rows
                else:
                    for at in range(0, len(rows), 4 * _BLOB_ROWS):
                        part = rows[at:at + 4 * _BLOB_ROWS]
                        cur.execute(_blobs_sql(len(part) // 4), part)
            td, tt, pc, ct = cp.score
            cur.execute(_PUT_SQL, (run_id, now, _host(), _pid(), cp.status, td, tt, pc, ct, thread_id, ns,
                                   cp.checkpoint_id, cp.parent_checkpoint_id, cp.kind, cp.name, created,
                                   cp.state_hash, cp.tasks_hash,
                                   _lane_meta(thread_id, ns, cp.checkpoint_id),
                                   cp.size, cp.change, cp.lg_run_id, cp.body_type,
                                   blobs.pack_body(cp.body_type, cp.body), cp.metadata,
                                   *(cp.parent_score or _NO_SCORE), *folded))
        except BaseException as err:
            if _LANE_GONE in str(err):
                raise LaneGone(thread_id, ns) from err
            self._temp_conn = None
            self._abort(raw, err)
        self._remember(d for d, _ in new)

    def _replace(self, thread_id: str, ns: str, run_id: str, cp: LaneCheckpoint) -> int:
        found = self.find(thread_id, ns, cp.checkpoint_id)
        assert found is not None
        db_id = found[0]
        with self._transaction() as cur:
            new = self._blobs(cur, cp.pieces)
        with guard(self.store.info.display), self.engine.begin() as conn:
            conn.execute(checkpoints.update().where(checkpoints.c.id == db_id).values(
                state_hash=cp.state_hash, tasks_hash=cp.tasks_hash, size=cp.size, kind=cp.kind,
                name=cp.name, change=cp.change))
            conn.execute(lg_checkpoints.update().where(lg_checkpoints.c.id == db_id).values(
                type=cp.body_type, body=blobs.pack_body(cp.body_type, cp.body), metadata=cp.metadata,
                lg_run_id=cp.lg_run_id,
                parent_checkpoint_id=cp.parent_checkpoint_id))
            conn.execute(runs.update().where(runs.c.id == run_id).values(
                updated=time.time(), heartbeat=time.time(), status=cp.status))
        self._remember(new)
        return db_id

    def rename(self, thread_id: str, ns: str, checkpoint_id: str, name: str, change: str) -> None:
        """Set a stored checkpoint's name and change summary (its run counts as updated, so a
        live view reads the step again)."""
        where = (lg_checkpoints.c.thread_id == thread_id, lg_checkpoints.c.checkpoint_ns == ns,
                 lg_checkpoints.c.checkpoint_id == checkpoint_id)
        with guard(self.store.info.display), self.engine.begin() as conn:
            row = conn.execute(sa.select(lg_checkpoints.c.id, lg_checkpoints.c.run_id).where(*where)).first()
            if row is None:
                return
            conn.execute(checkpoints.update().where(checkpoints.c.id == row[0]).values(name=name, change=change))
            conn.execute(runs.update().where(runs.c.id == row[1]).values(updated=time.time()))
            self._notify(conn, row[1])
            if (thread_id, ns, checkpoint_id) in self._asking:    # it still says what it asks
                self._ask(conn, (thread_id, ns, checkpoint_id))

    def _note_asks(self, thread_id: str, ns: str, checkpoint_id: str, writes: Sequence[LaneWrite]) -> None:
        """After writes to a checkpoint: when they hold an interrupt, or the checkpoint waits for
        an answer (a task writing there is the answered one running on), its Change says again
        what it asks (``_ask``). A lane met for the first time is looked up once for checkpoints
        that say so (another process wrote them: a resume runs in a new one)."""
        key = (thread_id, ns, checkpoint_id)
        asked = any(w.channel == INTERRUPT for w in writes)
        if not asked and (thread_id, ns) in self._watched and key not in self._asking:
            return
        with guard(self.store.info.display), self.engine.begin() as conn:
            if (thread_id, ns) not in self._watched:
                self._watched.add((thread_id, ns))
                self._asking.update((thread_id, ns, str(r[0])) for r in conn.execute(
                    sa.select(lg_checkpoints.c.checkpoint_id).select_from(
                        lg_checkpoints.join(checkpoints, checkpoints.c.id == lg_checkpoints.c.id)).where(
                        lg_checkpoints.c.thread_id == thread_id, lg_checkpoints.c.checkpoint_ns == ns,
                        checkpoints.c.change.like(WAITING + "%"))))
                if not asked and key not in self._asking:
                    return
            if not self._ask(conn, key) and asked:
                # LangGraph puts a checkpoint and its writes in the background, in no set order
                self._early[key] = None
                while len(self._early) > 1024:
                    self._early.pop(next(iter(self._early)))

    def _ask(self, conn: sa.Connection, key: tuple[str, str, str]) -> bool:
        """Set the Change of checkpoint ``key`` (thread, ns, LangGraph id) to say what its pending
        interrupts ask, ``waiting: …`` before the channels its step wrote, as the LangGraph
        adapter says it of a LangGraph database's (or without it once they are answered);
        False when the checkpoint is not stored."""
        thread_id, ns, checkpoint_id = key
        row = conn.execute(sa.select(checkpoints.c.id, checkpoints.c.run_id, checkpoints.c.change).select_from(
            lg_checkpoints.join(checkpoints, checkpoints.c.id == lg_checkpoints.c.id)).where(
            lg_checkpoints.c.thread_id == thread_id, lg_checkpoints.c.checkpoint_ns == ns,
            lg_checkpoints.c.checkpoint_id == checkpoint_id)).first()
        if row is None:
            self._asking.discard(key)
            return False
        asks = lane_asks(conn, thread_id, ns, checkpoint_id)
        stored = row.change if isinstance(row.change, str) else ""
        change = waiting_change([q for _, q in asks], without_waiting(stored)) if asks else without_waiting(stored)
        if asks:
            self._asking.add(key)
        else:
            self._asking.discard(key)
        if change != stored:
            conn.execute(checkpoints.update().where(checkpoints.c.id == row.id).values(change=change))
            conn.execute(runs.update().where(runs.c.id == row.run_id).values(updated=time.time()))
            self._notify(conn, row.run_id)
        return True

    def _waiting_error(self, thread_id: str, ns: str) -> str | None:
        """What an interrupted lane's head waits for, a line per pending interrupt, and how it is
        answered (None when it asks nothing): the run's ``last_error``, as a native run that
        stopped for a human says why (the window's banner shows it)."""
        with guard(self.store.info.display), self.engine.connect() as conn:
            head = conn.execute(sa.select(sa.func.max(lg_checkpoints.c.checkpoint_id)).where(
                lg_checkpoints.c.thread_id == thread_id, lg_checkpoints.c.checkpoint_ns == ns)).scalar()
            asks = lane_asks(conn, thread_id, ns, str(head)) if head is not None else []
        if not asks:
            return None
        lines = [f"waiting for an answer at interrupt() in node {node}: {question}" for node, question in asks]
        config = {"configurable": {"thread_id": thread_id}}
        lines.append(f"InspectorSaver keeps this thread, so only its graph answers it: call "
                     f"graph.invoke(Command(resume=…), {config!r}) in your code.")
        return "\n".join(lines)

    def put_writes(self, thread_id: str, ns: str, checkpoint_id: str, writes: Sequence[LaneWrite], *,
                   replace: bool) -> None:
        """Store pending writes of a checkpoint (replace or keep existing (task, idx) rows)."""
        if not writes:
            return
        values = []
        for w in writes:
            codec, data = blobs.compress(w.data)
            values.append(dict(thread_id=thread_id, checkpoint_ns=ns, checkpoint_id=checkpoint_id,
                               task_id=w.task_id, idx=w.idx, channel=w.channel, task_path=w.task_path,
                               codec=codec, data=data, size=len(w.data)))
        if not self._one_statement:
            stmt = self._lsql["write_replace" if replace else "write_ignore"]
            with self._transaction() as cur:
                cur.executemany(stmt.sql, [stmt.params(v) for v in values])
            self._note_asks(thread_id, ns, checkpoint_id, writes)
            return
        # SQLite: up to ``_WRITE_ROWS`` writes in one statement (autocommit), for the reason
        # given in ``_put_sqlite``; more in one transaction
        cols = self._write_cols
        flat = [v[c] for v in values for c in cols]
        if len(values) <= _WRITE_ROWS:
            raw = self._raw()
            try:
                raw.cursor().execute(_writes_sql(cols, replace, len(values)), flat)
            except BaseException as err:
                self._abort(raw, err)
            self._note_asks(thread_id, ns, checkpoint_id, writes)
            return
        width = len(cols)
        with self._transaction() as cur:
            for at in range(0, len(values), _WRITE_ROWS):
                part = flat[at * width:(at + _WRITE_ROWS) * width]
                cur.execute(_writes_sql(cols, replace, len(part) // width), part)
        self._note_asks(thread_id, ns, checkpoint_id, writes)

    def set_checkpoint_score(self, thread_id: str, ns: str, checkpoint_id: str,
                             score: tuple[int, int, int, int]) -> None:
        """Set one stored checkpoint's score (tasks done, tasks, checks passed, checks): its
        step's writes came in after its child, or the lane stopped at it."""
        found = self.find(thread_id, ns, checkpoint_id)
        if found is None:
            return
        with guard(self.store.info.display), self.engine.begin() as conn:
            conn.execute(checkpoints.update().where(checkpoints.c.id == found[0]).values(
                dict(zip(_SCORE, score, strict=True))))
            conn.execute(runs.update().where(runs.c.id == found[2]).values(updated=time.time()))
            self._notify(conn, found[2])      # (a live view reads the step again)

    def set_lane_status(self, thread_id: str, ns: str, status: str, error: str | None = None,
                        score: tuple[int, int, int, int] | None = None) -> None:
        """Set the status of a lane's run (interrupted, failed…) and, when given, its score
        (tasks done, tasks, checks passed, checks). An interrupted lane without an error says
        what its head waits for (``_waiting_error``)."""
        if status == "interrupted" and error is None:
            error = self._waiting_error(thread_id, ns)
        values: dict[str, Any] = {"status": status, "last_error": error, "updated": time.time()}
        self._update_lane_run(thread_id, ns, values | (dict(zip(_SCORE, score, strict=True)) if score else {}))

    def set_lane_score(self, thread_id: str, ns: str, score: tuple[int, int, int, int]) -> None:
        """Set the score of a lane's run (tasks done, tasks, checks passed, checks)."""
        self._update_lane_run(thread_id, ns, dict(zip(_SCORE, score, strict=True)))

    def _update_lane_run(self, thread_id: str, ns: str, values: dict[str, Any]) -> None:
        run_id = self.lane_run(thread_id, ns)
        if run_id is None:
            return
        with guard(self.store.info.display), self.engine.begin() as conn:
            conn.execute(runs.update().where(runs.c.id == run_id).values(**values))
            self._notify(conn, run_id)

    def beat(self, run_ids: Collection) -> None:
        """Refresh the heartbeat of these runs."""
        if not run_ids:
            return
        with guard(self.store.info.display), self.engine.begin() as conn:
            conn.execute(runs.update().where(runs.c.id.in_(list(run_ids))).values(heartbeat=time.time()))

    # -- reads -------------------------------------------------------------------------
    def get(self, thread_id: str, ns: str, checkpoint_id: str | None) -> StoredCheckpoint | None:
        """One checkpoint (the newest of the lane when ``checkpoint_id`` is None) with its writes.

        Read on the writer's own connection with statements compiled once (``graph.invoke``
        asks for the head at every call)."""
        params = {"tid": thread_id, "ns": ns}
        if checkpoint_id is not None:
            params["cid"] = checkpoint_id
        with self._transaction(read=True) as cur:
            row = self._x(cur, "get_id" if checkpoint_id is not None else "get_head", params).fetchone()
            if row is None:
                return None
            found = _stored(row)
            rows = self._x(cur, "writes_of", {"tid": thread_id, "ns": ns, "cid": found.checkpoint_id}).fetchall()
        found.writes = [(r[1], r[2], blobs.decompress(r[6], r[3], r[7]), r[4], r[5]) for r in rows]
        return found

    def _select(self) -> sa.Select:
        return sa.select(*_LG_COLUMNS).select_from(
            lg_checkpoints.join(checkpoints, checkpoints.c.id == lg_checkpoints.c.id))

    def _writes(self, conn: sa.Connection, keys: list[tuple[str, str, str]]) -> dict[tuple, list]:
        out: dict[tuple, list] = {}
        by_thread: dict[tuple[str, str], list[str]] = {}
        for tid, ns, cid in keys:
            by_thread.setdefault((tid, ns), []).append(cid)
        for (tid, ns), cids in by_thread.items():
            for start in range(0, len(cids), 500):
                part = cids[start:start + 500]
                rows = conn.execute(sa.select(lg_writes.c.checkpoint_id, lg_writes.c.task_id, lg_writes.c.channel,
                                              lg_writes.c.data, lg_writes.c.task_path, lg_writes.c.idx,
                                              lg_writes.c.codec, lg_writes.c.size)
                                    .where(lg_writes.c.thread_id == tid, lg_writes.c.checkpoint_ns == ns,
                                           lg_writes.c.checkpoint_id.in_(part))
                                    .order_by(lg_writes.c.checkpoint_id, lg_writes.c.task_id, lg_writes.c.idx))
                for r in rows:
                    raw = blobs.decompress(r[6], r[3], r[7])
                    out.setdefault((tid, ns, r[0]), []).append((r[1], r[2], raw, r[4], r[5]))
        return out

    def list(self, thread_id: str | None, ns: str | None, checkpoint_id: str | None,
             before: str | None, batch: int = 100) -> Iterator[StoredCheckpoint]:
        """Checkpoints newest first (by LangGraph id), with their writes, read in batches."""
        last: tuple[str, str, str] | None = None
        while True:
            stmt = self._select()
            if thread_id is not None:
                stmt = stmt.where(lg_checkpoints.c.thread_id == thread_id)
            if ns is not None:
                stmt = stmt.where(lg_checkpoints.c.checkpoint_ns == ns)
            if checkpoint_id is not None:
                stmt = stmt.where(lg_checkpoints.c.checkpoint_id == checkpoint_id)
            if before is not None:
                stmt = stmt.where(lg_checkpoints.c.checkpoint_id < before)
            if last is not None:
                key = sa.tuple_(lg_checkpoints.c.checkpoint_id, lg_checkpoints.c.thread_id,
                                lg_checkpoints.c.checkpoint_ns)
                stmt = stmt.where(key < sa.tuple_(*(sa.literal(v) for v in last)))
            stmt = stmt.order_by(lg_checkpoints.c.checkpoint_id.desc(), lg_checkpoints.c.thread_id.desc(),
                                 lg_checkpoints.c.checkpoint_ns.desc()).limit(batch)
            with guard(self.store.info.display), self.engine.connect() as conn:
                rows = [_stored(r) for r in conn.execute(stmt)]
                if not rows:
                    return
                writes = self._writes(conn, [(r.thread_id, r.checkpoint_ns, r.checkpoint_id) for r in rows])
            for r in rows:
                r.writes = writes.get((r.thread_id, r.checkpoint_ns, r.checkpoint_id), [])
                yield r
            if len(rows) < batch:
                return
            tail = rows[-1]
            last = (tail.checkpoint_id, tail.thread_id, tail.checkpoint_ns)

    def lanes_of(self, thread_ids: Iterable[str]) -> builtins.list[tuple[str, str, str]]:  # (`list` is a method here)
        """(run, thread, ns) of every lane of these threads."""
        ids = list(thread_ids)
        if not ids:
            return []
        with guard(self.store.info.display), self.engine.connect() as conn:
            return [tuple(r) for r in conn.execute(sa.select(lg_lanes.c.run_id, lg_lanes.c.thread_id,
                                                             lg_lanes.c.checkpoint_ns)
                                                   .where(lg_lanes.c.thread_id.in_(ids)))]

    # -- deletion, copies ------------------------------------------------------------------
    def _forget(self, run_ids: Iterable[str]) -> None:
        self._known.clear()    # pieces only the deleted rows reached may be collected now
        gone = set(run_ids)
        self._lanes = {k: v for k, v in self._lanes.items() if v not in gone}
        for run_id in gone:
            self._head.pop(run_id, None)

    def delete_threads(self, thread_ids: Iterable[str]) -> None:
        """Delete every lane of these threads (runs, checkpoints, LangGraph rows, writes)."""
        lanes = self.lanes_of(thread_ids)
        if not lanes:
            return
        run_ids = [r for r, _, _ in lanes]
        tids = sorted({t for _, t, _ in lanes})
        with guard(self.store.info.display), self.engine.begin() as conn:
            delete_lane_rows(conn, run_ids, tids)
            conn.execute(checkpoints.delete().where(checkpoints.c.run_id.in_(run_ids)))
            conn.execute(runs.delete().where(runs.c.id.in_(run_ids)))
            live.note_removal(conn)
            for run_id in run_ids:
                self._notify(conn, run_id)
        self._forget(run_ids)

    def delete_checkpoints(self, where: Any) -> None:
        """Delete the lane checkpoints matching ``where`` (a clause on ci_lg_checkpoints) and
        their writes; the lanes' seqs are renumbered and orphaned parents cleared."""
        with guard(self.store.info.display), self.engine.begin() as conn:
            doomed = conn.execute(sa.select(lg_checkpoints.c.id, lg_checkpoints.c.run_id,
                                            lg_checkpoints.c.thread_id, lg_checkpoints.c.checkpoint_ns,
                                            lg_checkpoints.c.checkpoint_id).where(where)).fetchall()
            if not doomed:
                return
            ids = [r[0] for r in doomed]
            touched = sorted({r[1] for r in doomed})
            for start in range(0, len(ids), 500):
                part = ids[start:start + 500]
                for r in doomed[start:start + 500]:
                    conn.execute(lg_writes.delete().where(lg_writes.c.thread_id == r[2],
                                                          lg_writes.c.checkpoint_ns == r[3],
                                                          lg_writes.c.checkpoint_id == r[4]))
                conn.execute(lg_checkpoints.delete().where(lg_checkpoints.c.id.in_(part)))
                conn.execute(checkpoints.update().where(checkpoints.c.parent_id.in_(part)).values(parent_id=None))
                conn.execute(checkpoints.delete().where(checkpoints.c.id.in_(part)))
            live.note_removal(conn)
            for run_id in touched:
                self._renumber(conn, run_id)
                self._notify(conn, run_id)
        for run_id in touched:
            self._head.pop(run_id, None)
        self._known.clear()

    def _renumber(self, conn: sa.Connection, run_id: str) -> None:
        """Give a run's remaining checkpoints seqs 0..n-1 again (in their order)."""
        rows = conn.execute(sa.select(checkpoints.c.id, checkpoints.c.seq).where(
            checkpoints.c.run_id == run_id).order_by(checkpoints.c.seq)).fetchall()
        changed = [(cid, n) for n, (cid, seq) in enumerate(rows) if seq != n]
        for cid, _ in changed:   # out of the way of the unique (run, seq) first
            conn.execute(checkpoints.update().where(checkpoints.c.id == cid).values(seq=-1 - cid))
        for cid, n in changed:
            conn.execute(checkpoints.update().where(checkpoints.c.id == cid).values(seq=n))
        conn.execute(runs.update().where(runs.c.id == run_id).values(
            head_seq=len(rows) - 1, checkpoint_count=len(rows), updated=time.time()))

    def delete_for_runs(self, lg_run_ids: Sequence[str]) -> None:
        """Delete the checkpoints (and their writes) whose metadata run_id is one of these."""
        ids = list(lg_run_ids)
        for start in range(0, len(ids), 500):
            self.delete_checkpoints(lg_checkpoints.c.lg_run_id.in_(ids[start:start + 500]))

    def keep_latest(self, thread_ids: Sequence[str]) -> None:
        """Keep only the newest checkpoint of every lane of these threads."""
        for run_id, _thread_id, _ns in self.lanes_of(thread_ids):
            with guard(self.store.info.display), self.engine.connect() as conn:
                newest = conn.execute(sa.select(sa.func.max(lg_checkpoints.c.checkpoint_id)).where(
                    lg_checkpoints.c.run_id == run_id)).scalar()
            if newest is not None:
                self.delete_checkpoints(sa.and_(lg_checkpoints.c.run_id == run_id,
                                                lg_checkpoints.c.checkpoint_id != newest))

    def copy_thread(self, source: str, target: str) -> None:
        """Copy every lane of ``source`` to thread ``target`` (same LangGraph ids, shared pieces)."""
        lanes = self.lanes_of([source])
        if not lanes:
            return
        now = time.time()
        with guard(self.store.info.display), self.engine.begin() as conn:
            for run_id, _, ns in sorted(lanes, key=lambda lane: lane[2]):
                src = conn.execute(sa.select(runs).where(runs.c.id == run_id)).one()   # a lane's run exists
                new_run = new_run_id()
                labels = json.loads(src.labels or "{}")
                labels["langgraph"] = {"thread_id": target, "checkpoint_ns": ns}
                values = dict(src._mapping)
                values.update(id=new_run, name=target if not ns else f"{target} › {ns.split('|')[-1].split(':')[0]}",
                              created=now, updated=now, owner_host=_host(), owner_pid=_pid(), heartbeat=now,
                              parent_run=run_id, parent_checkpoint=None, fork_reason="copy_thread",
                              labels=json.dumps(labels), status=src.status)
                conn.execute(runs.insert().values(**values))
                conn.execute(lg_lanes.insert().values(run_id=new_run, thread_id=target, checkpoint_ns=ns))
                old = conn.execute(sa.select(checkpoints, lg_checkpoints.c.checkpoint_id.label("lg_cid"),
                                             lg_checkpoints.c.parent_checkpoint_id, lg_checkpoints.c.lg_run_id,
                                             lg_checkpoints.c.type.label("lg_type"), lg_checkpoints.c.body,
                                             lg_checkpoints.c.metadata.label("lg_meta"))
                                   .select_from(checkpoints.join(lg_checkpoints, lg_checkpoints.c.id == checkpoints.c.id))
                                   .where(checkpoints.c.run_id == run_id).order_by(checkpoints.c.seq)).fetchall()
                mapping: dict[int, int] = {}
                for row in old:
                    m = dict(row._mapping)
                    cp_values = {c.name: m[c.name] for c in checkpoints.c if c.name != "id"}
                    cp_values.update(run_id=new_run, parent_id=mapping.get(m["parent_id"]),
                                     meta=_lane_meta(target, ns, m["lg_cid"]))
                    new_id = conn.execute(checkpoints.insert().values(**cp_values).returning(checkpoints.c.id)).scalar_one()
                    mapping[m["id"]] = new_id
                    conn.execute(lg_checkpoints.insert().values(
                        id=new_id, run_id=new_run, thread_id=target, checkpoint_ns=ns, checkpoint_id=m["lg_cid"],
                        parent_checkpoint_id=m["parent_checkpoint_id"], lg_run_id=m["lg_run_id"],
                        type=m["lg_type"], body=m["body"], metadata=m["lg_meta"]))
                writes = conn.execute(sa.select(lg_writes).where(lg_writes.c.thread_id == source,
                                                                 lg_writes.c.checkpoint_ns == ns)).fetchall()
                if writes:
                    conn.execute(lg_writes.insert(), [dict(w._mapping, thread_id=target) for w in writes])
                self._notify(conn, new_run)


_SCORE = ("tasks_done", "tasks_total", "checks_passed", "checks_total")   # a run's score columns
_FOLDED = 4            # new pieces of a put inserted by its own statement (more: one statement before)
_BLOB_ROWS = 200       # pieces per statement beyond that (4 parameters each)
_WRITE_ROWS = 100      # pending writes per statement (10 parameters each)
_LANE_GONE = "ci_lane_gone: the run of the lane is gone"
_PUT_COLUMNS = ("run_id", "now", "host", "pid", "status", "td", "tt", "cp", "ct", "thread_id", "ns",
                "checkpoint_id", "parent_cid", "kind", "name", "created", "state_hash", "tasks_hash",
                "meta", "size", "change", "lg_run_id", "type", "body", "metadata", "ptd", "ptt", "pcp", "pct",
                *(f"{c}{i}" for i in range(_FOLDED) for c in ("h", "c", "s", "d")))
_NO_SCORE = (None, None, None, None)
# The SQLite put (see ``LaneStore._put_sqlite``): a view and its trigger in the connection's
# TEMP schema only (nothing is added to the store's file; a reader never sees them).
_TEMP_SQL = (
    "CREATE TEMP VIEW IF NOT EXISTS ci_lane_put AS SELECT "
    + ", ".join(f"NULL AS {c}" for c in _PUT_COLUMNS) + " WHERE 0",
    f"""CREATE TEMP TRIGGER IF NOT EXISTS ci_lane_put_do INSTEAD OF INSERT ON ci_lane_put BEGIN
  SELECT RAISE(ABORT, '{_LANE_GONE}') WHERE NOT EXISTS (SELECT 1 FROM ci_runs WHERE id = NEW.run_id);
  INSERT OR IGNORE INTO ci_blobs (hash, codec, size, data) SELECT h, c, s, d FROM (
    {" UNION ALL ".join(f"SELECT NEW.h{i} AS h, NEW.c{i} AS c, NEW.s{i} AS s, NEW.d{i} AS d"
                        for i in range(_FOLDED))}) WHERE h IS NOT NULL;
  UPDATE ci_runs SET head_seq = head_seq + 1, checkpoint_count = checkpoint_count + 1, updated = NEW.now,
    heartbeat = NEW.now, owner_host = NEW.host, owner_pid = NEW.pid, status = NEW.status, last_error = NULL,
    tasks_done = NEW.td, tasks_total = NEW.tt, checks_passed = NEW.cp, checks_total = NEW.ct
    WHERE id = NEW.run_id;
  INSERT INTO ci_checkpoints (run_id, seq, parent_id, kind, name, created, state_hash, tasks_hash, meta,
    size, size_delta, ops, tasks_done, tasks_total, checks_passed, checks_total, change, epoch)
  SELECT NEW.run_id, r.head_seq, p.id, NEW.kind, NEW.name, NEW.created, NEW.state_hash, NEW.tasks_hash,
    NEW.meta, NEW.size, NEW.size - coalesce(p.size, 0), 1, NEW.td, NEW.tt, NEW.cp, NEW.ct, NEW.change, 1
  FROM ci_runs AS r LEFT JOIN (SELECT c.id AS id, c.size AS size FROM ci_lg_checkpoints AS l
    JOIN ci_checkpoints AS c ON c.id = l.id WHERE l.thread_id = NEW.thread_id
    AND l.checkpoint_ns = NEW.ns AND l.checkpoint_id = NEW.parent_cid) AS p ON 1
  WHERE r.id = NEW.run_id;
  INSERT INTO ci_lg_checkpoints (id, run_id, thread_id, checkpoint_ns, checkpoint_id,
    parent_checkpoint_id, lg_run_id, type, body, metadata)
  VALUES (last_insert_rowid(), NEW.run_id, NEW.thread_id, NEW.ns, NEW.checkpoint_id, NEW.parent_cid,
    NEW.lg_run_id, NEW.type, NEW.body, NEW.metadata);
  UPDATE ci_checkpoints SET tasks_done = NEW.ptd, tasks_total = NEW.ptt, checks_passed = NEW.pcp,
    checks_total = NEW.pct
    WHERE NEW.pct IS NOT NULL AND id = (SELECT l.id FROM ci_lg_checkpoints AS l WHERE l.thread_id = NEW.thread_id
      AND l.checkpoint_ns = NEW.ns AND l.checkpoint_id = NEW.parent_cid);
END""")
_PUT_SQL = (f"INSERT INTO temp.ci_lane_put ({', '.join(_PUT_COLUMNS)}) "
            f"VALUES ({', '.join('?' * len(_PUT_COLUMNS))})")


def _blobs_sql(n: int) -> str:
    """SQLite: ``n`` pieces in one statement (those already stored are left as they are)."""
    return "INSERT OR IGNORE INTO ci_blobs (hash, codec, size, data) VALUES " + ", ".join(["(?, ?, ?, ?)"] * n)


@functools.lru_cache(maxsize=256)
def _writes_sql(columns: tuple[str, ...], replace: bool, n: int) -> str:
    """SQLite: ``n`` pending writes in one statement (replacing or keeping stored ones)."""
    row = "(" + ", ".join("?" * len(columns)) + ")"
    head = f"INSERT {'' if replace else 'OR IGNORE '}INTO ci_lg_writes ({', '.join(columns)}) VALUES "
    sql = head + ", ".join([row] * n)
    if replace:
        keys = ("thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx")
        sql += (f" ON CONFLICT ({', '.join(keys)}) DO UPDATE SET "
                + ", ".join(f"{c} = excluded.{c}" for c in columns if c not in keys))
    return sql


def _lane_meta(thread_id: str, ns: str, checkpoint_id: str) -> str:
    """``ci_checkpoints.meta`` of a lane's checkpoint: where it is in LangGraph's terms."""
    return json.dumps({"langgraph": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint_id}})


class LaneGone(StoreError):
    """The lane's run was deleted (by another process) between lookup and append."""

    def __init__(self, thread_id: str, ns: str) -> None:
        where = f"thread {thread_id!r}" + (f" (namespace {ns!r})" if ns else "")
        super().__init__(f"The run of LangGraph {where} was deleted while this saver was writing it.")


def _stored(row: Any) -> StoredCheckpoint:
    return StoredCheckpoint(id=row[0], run_id=row[1], thread_id=row[2], checkpoint_ns=row[3],
                            checkpoint_id=row[4], parent_checkpoint_id=row[5], body_type=row[6],
                            body=blobs.unpack_body(row[6], row[7]), metadata=row[8], state_hash=bytes(row[9]))


_HOST: tuple[int, str] = (-1, "")


def _host() -> str:
    """This host's name (asked once per process: every put of a lane writes it)."""
    global _HOST
    pid = _pid()
    if _HOST[0] != pid:
        _HOST = (pid, socket.gethostname())
    return _HOST[1]


def _pid() -> int:
    import os
    return os.getpid()


def delete_lane_rows(conn: sa.Connection, run_ids: Sequence[str], thread_ids: Sequence[str]) -> None:
    """Delete the LangGraph rows of these lanes and threads: the threads' pending writes, the
    lanes' LangGraph checkpoint rows and the lanes (inside the caller's transaction, which
    deletes the runs and their checkpoints)."""
    conn.execute(lg_writes.delete().where(lg_writes.c.thread_id.in_(list(thread_ids))))
    conn.execute(lg_checkpoints.delete().where(lg_checkpoints.c.run_id.in_(list(run_ids))))
    conn.execute(lg_lanes.delete().where(lg_lanes.c.run_id.in_(list(run_ids))))
