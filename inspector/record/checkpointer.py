"""``Checkpointer``: what an agent calls to record checkpoints, heartbeats and task state."""

from __future__ import annotations

import logging
import os
import socket
import threading
import weakref
import time
from typing import Any, NamedTuple, TypeVar
from collections.abc import Callable, Iterable

import sqlalchemy as sa

from inspector import taskstate
from inspector.errors import OwnershipLost, RunNotFoundError, StateTooDeepError, StoreError, UnstorableStateError
from inspector.model import CheckpointInfo, RunInfo
from inspector.record import spec as resume_spec
from inspector.record.backoff import retry_delays
from inspector.record.handoff import Handoff, read_handoff
from inspector.record.interval import Interval
from inspector.record.summary import lengths, summarize
from inspector.store import create_store
from inspector.store.engine import is_readonly_error, is_transient, translate
from inspector.store.sqlite_ro import may_write
from inspector.codec import PieceEncoder, encode_flat
from inspector.codec.encoder import adopt_texts
from inspector.codec.encoded import fingerprints
from inspector.codec.content import refs_of
from inspector.store.native.writer import NativeWriter, NewCheckpoint, new_run_id

log = logging.getLogger(__name__)
ALWAYS_WRITTEN = {"input", "final", "fork", "resume"}
HELD_MAX = 64 * 1024 * 1024     # bytes of pieces of held-back saves kept for later saves to name
T = TypeVar("T")


class _Encoded(NamedTuple):
    """A save encoded when ``save`` was called (written then, or held back until a later one):
    what the state and task state were at that call, whatever the agent changes after."""

    digest: bytes
    size: int
    top_form: Any
    lengths: dict
    tasks: dict | None
    tasks_hash: bytes | None
    task_pieces: dict
    score: taskstate.Score


class _Heartbeat(threading.Thread):
    """Refreshes the run's heartbeat until stopped; notes when ownership is lost."""

    def __init__(self, owner: Checkpointer, period: float) -> None:
        super().__init__(name="checkpoint-heartbeat", daemon=True)
        self.owner = owner
        self.period = period
        self.stop_event = threading.Event()

    def run(self) -> None:
        while not self.stop_event.wait(self.period):
            try:
                if not self.owner._writer.heartbeat(self.owner.run_id, self.owner.epoch):
                    self.owner._lost = True
                    return
            except StoreError as err:  # transient: the next beat retries
                log.warning("heartbeat failed: %s", err)


_LIVE: weakref.WeakSet[Checkpointer] = weakref.WeakSet()    # for the child of an os.fork


def _after_fork_in_child() -> None:
    """A forked child inherits its parent's Checkpointers, their run and their connections:
    it lets go of the connections without touching them (the parent's sessions go on; psycopg
    closes a connection only in the process that opened it) and each refuses to save."""
    for cp in list(_LIVE):
        cp._writer._conn = None
        cp.store.engine.dispose(close=False)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


READONLY_RETRY_S = 5.0        # how long a "readonly database" refusal of a writable file is retried
READONLY_FIRST_DELAY = 0.02
READONLY_MAX_DELAY = 0.5


def _readonly_race(err: BaseException, path: str | os.PathLike | None) -> bool:
    """A "readonly database" refusal of a file this process may write (not a read-only file)."""
    if path is None or not is_readonly_error(err):
        return False
    return may_write(path)


class Checkpointer:
    """Records one run. Use as a context manager: an exception marks the run failed.

    When the process was launched by a resume (``CHECKPOINT_INSPECTOR_RESUME`` in the
    environment) it continues that run: ``resumed`` is True and ``restored_state`` /
    ``restored_tasks`` hold the checkpoint to continue from.
    """

    def __init__(self, store: str | os.PathLike, *, name: str | None = None, agent: str = "",
                 interval: Interval | str | None = None, heartbeat: float = 2.0,
                 resumable: bool = True, not_resumable_reason: str | None = None,
                 labels: dict | None = None, resume_env: Iterable[str] = (),
                 handoff: Handoff | None = None, retry_for: float = 120.0) -> None:
        self.retry_for = retry_for  # seconds a write keeps retrying a lost/refused connection
        self._pid = os.getpid()     # the process that owns the run (a forked child does not)
        self._lock = threading.RLock()   # one save at a time: saves share the writer's connection
        self._start_seq = -1
        self.interval = Interval.parse(interval) if isinstance(interval, str) else (interval or Interval())
        self._handoff = handoff if handoff is not None else read_handoff()
        # a reader's hold on a killed writer's log is waited out by the engine (connect_writable)
        self.store = self._open(self._handoff.store if self._handoff else store)
        self._writer = NativeWriter(self.store)
        self._encoder = PieceEncoder()
        self._task_memo = taskstate.TaskMemo(fingerprints)   # tasks unchanged since the last save are not validated again
        self._lost = False
        self._closed = False
        self._ops_since = 0
        self._last_time = time.time()
        self._pending: tuple | None = None          # a save held back: (_Encoded, kind, name, meta)
        self._pending_tasks: _Encoded | None = None     # the encoded tasks of a save not written yet
        self._held: dict[bytes, bytes] = {}         # pieces encoded for held-back saves and not written
        self._tasks: dict | None = None
        self._score = taskstate.score(None)          # of ``_tasks``
        self._tasks_hash: bytes | None = None
        self._top_form: Any = None
        self._lengths: dict = {}
        self.last: CheckpointInfo | None = None
        self.restored_state: Any = None
        self.restored_tasks: dict | None = None
        self.resumed = self._handoff is not None
        spec = resume_spec.capture(resume_env)
        if self._handoff:
            self._continue(self._handoff, spec)
        else:
            run_id = new_run_id()      # chosen here: a retried creation that did commit is found by it
            run = self._retry(lambda: self._writer.create_run(
                name=name or agent or "run", agent=agent, resume_spec=spec, resumable=resumable,
                labels={**(labels or {}), "heartbeat_s": heartbeat},
                not_resumable_reason=not_resumable_reason, run_id=run_id),
                committed=lambda: self._created(run_id))
            self.run_id, self.epoch = run.id, run.epoch
        self._beat = _Heartbeat(self, heartbeat)
        self._beat.start()
        _LIVE.add(self)

    def _open(self, target: str | os.PathLike) -> Any:
        """The store, retried for ``retry_for`` seconds while the server is unreachable (an
        agent started while PostgreSQL restarts waits for it, as its saves do)."""
        return self._retry(lambda: create_store(target))

    def _created(self, run_id: str) -> RunInfo | None:
        """The run ``run_id`` if a creation that seemed to fail did commit, else None."""
        try:
            return self.store.get_run(run_id)
        except RunNotFoundError:
            return None

    # -- resume ------------------------------------------------------------------
    def _continue(self, handoff: Handoff, spec: dict) -> None:
        self.run_id, self.epoch = handoff.run, handoff.epoch
        self._writer.claim(self.run_id, self.epoch, host=socket.gethostname(), pid=os.getpid())
        snap = self.store.load(handoff.checkpoint)
        if snap.info.run_id != self.run_id:
            raise StoreError(f"Checkpoint {handoff.checkpoint} does not belong to run {self.run_id}.")
        self.restored_state, self.restored_tasks = snap.state, snap.tasks
        # the long texts restored are stored already: this writer shares them (FORMAT.md "Text pieces")
        adopt_texts(self._encoder, self.store.read_piece, snap.info.state_hash, snap.state, snap.state)
        self._start_seq = self.store.get_run(self.run_id).head_seq
        self._writer.update_run(self.run_id, resume_spec=spec)
        self.save(snap.state, kind="resume", name=f"resumed from #{snap.info.seq}",
                  tasks=snap.tasks, meta={"resumed_from": snap.info.id, "pid": os.getpid()})

    # -- recording ----------------------------------------------------------------
    def operation(self, count: int = 1) -> None:
        """Count operations done since the last snapshot (replay cost on recovery)."""
        self._ops_since += count

    def save(self, state: Any, *, kind: str = "step", name: str = "", tasks: dict | None = None,
             meta: dict | None = None, force: bool = False) -> CheckpointInfo | None:
        """Record one operation; write a snapshot when the interval policy says so.

        Returns the checkpoint written, or None when the policy held it back (encoded all
        the same: a later write stores the state as it was at this call, and a state that
        cannot be stored is refused here). Raises OwnershipLost if another process resumed
        this run, TaskStateError for bad tasks.
        """
        self._check_process()
        with self._lock:       # saves from several threads: one after the other
            if self._lost:
                raise OwnershipLost(f"Run {self.run_id} was taken over by another process (epoch > {self.epoch}).")
            if tasks is not None:
                tasks = taskstate.validate(tasks, self._task_memo)
            self._ops_since += 1
            due = force or kind in ALWAYS_WRITTEN or self.interval.due(self._ops_since, self._last_time)
            # a save held back is encoded now all the same: the agent may change its state in
            # place before the save that is written (the encoder is the cheapest copy there is)
            done = self._encode_save(state, tasks)
            if not due:
                self._held.update(done[1])
                self._pending = (done[0], kind, name, meta and dict(meta))
                if tasks is not None:
                    self._pending_tasks = done[0]
                return None
            return self._write(done[0], done[1], kind, name, meta)

    def _check_process(self) -> None:
        """StoreError in the child of an ``os.fork``: the run is its parent's."""
        if os.getpid() != self._pid:
            raise StoreError(f"This Checkpointer records run {self.run_id} for process {self._pid}; a forked "
                             "child cannot save into its parent's run: create a Checkpointer in the child "
                             "(a run of its own), after the fork.")

    def _encode(self, value: Any, flat: bool = False) -> tuple[bytes, int, dict[bytes, bytes]]:
        """``value`` encoded into pieces; UnstorableStateError (nothing written, the encoder's
        cache dropped) when it holds what a state cannot or nests too deeply."""
        try:
            return encode_flat(value) if flat else self._encoder.encode(value)
        except RecursionError as err:
            self._encoder.forget()
            raise StateTooDeepError(f"The {'task state' if flat else 'state'} nests too deeply to "
                                    "be stored (a few hundred levels at most); nothing was saved.") from err
        except UnstorableStateError:
            self._encoder.forget()
            raise
        except (TypeError, ValueError, OverflowError) as err:
            self._encoder.forget()
            deep = "nested" in str(err).lower() or "recursion" in str(err).lower()
            cls = StateTooDeepError if deep else UnstorableStateError
            why = str(err)
            if isinstance(err, OverflowError) or "out of range" in why.lower():
                why = ("it holds an integer beyond 64 bits, as a value or a key, which msgpack cannot store: "
                       "save it as a string, str(n)")
            raise cls(f"The {'task state' if flat else 'state'} cannot be stored ({why}); nothing was saved.") from err

    def _encode_save(self, state: Any, tasks: dict | None) -> tuple[_Encoded, dict[bytes, bytes]]:
        """A save's state and task state encoded, and the new pieces."""
        task_pieces: dict[bytes, bytes]
        digest, size, pieces = self._encode(state)
        if tasks is None:
            if self._pending_tasks is not None:     # those of a save held back
                return self._pending_tasks._replace(digest=digest, size=size, top_form=self._encoder.top_form,
                                                    lengths=lengths(state)), pieces
            tasks = self._tasks
        tasks_hash, task_pieces = self._tasks_hash, {}
        if tasks is not None and (tasks is not self._tasks):
            tasks_hash, _, task_pieces = self._encode(tasks, flat=True)   # a task state is one small piece
        if tasks is self._tasks:
            score = self._score
        elif tasks is self._task_memo.normal:
            score = self._task_memo.score        # counted task by task as the memo made each form
        else:
            score = taskstate.score(tasks)
        return _Encoded(digest, size, self._encoder.top_form, lengths(state), tasks, tasks_hash, task_pieces,
                        score), pieces

    def _reachable(self, root: bytes, pieces: dict[bytes, bytes]) -> dict[bytes, bytes]:
        """The pieces to write with root ``root``: ``pieces`` (new with it) when no save was
        held back since the last write; else those of the held-back saves' and the new ones that
        the root names, through pieces not written yet. The rest stay held: a later save may
        name them again (the encoder remembers every piece it made), unless they grow past
        ``HELD_MAX``, when they are let go and the encoder forgets them."""
        held = self._held
        if not held:
            return pieces
        held.update(pieces)
        out: dict[bytes, bytes] = {}
        stack = [root]
        while stack:
            digest = stack.pop()
            raw = held.pop(digest, None)
            if raw is None:          # written already (or named twice)
                continue
            out[digest] = raw
            stack.extend(refs_of(raw))
        if sum(map(len, held.values())) > HELD_MAX:
            held.clear()
            self._encoder.forget()
        return out

    def _write(self, done: _Encoded, pieces: dict[bytes, bytes], kind: str, name: str,
               meta: dict | None) -> CheckpointInfo:
        tasks, tasks_hash, score = done.tasks, done.tasks_hash, done.score
        pieces = self._reachable(done.digest, pieces)
        if done.task_pieces:
            pieces = {**pieces, **done.task_pieces}
        change = (summarize(self._top_form, done.top_form, self._lengths, done.lengths,
                            self._tasks, tasks, (self._score, score)) if self.last else "")
        new = NewCheckpoint(kind=kind, name=name, state_hash=done.digest, tasks_hash=tasks_hash,
                            pieces=pieces, size=done.size, meta=meta or {}, ops=self._ops_since,
                            score=score, change=change)
        try:
            info = self._retry(lambda: self._writer.append(self.run_id, self.epoch, new),
                               committed=lambda: self._committed(new))
        except OwnershipLost:
            self._lost = True
            raise
        except StoreError:
            self._encoder.forget()   # the cache may name pieces that were rolled back
            self._writer._known.clear()
            self._held.update(pieces)     # a held-back save flushed again names them
            raise
        self._tasks, self._tasks_hash, self._top_form = tasks, tasks_hash, done.top_form
        self._score = score
        self._lengths = done.lengths
        self._pending_tasks = None
        self._ops_since, self._last_time, self._pending, self.last = 0, time.time(), None, info
        return info

    def _retry(self, attempt: Callable[[], T], committed: Callable[[], T | None] | None = None,
               transient: bool = True) -> T:
        """Run a write, retrying for ``retry_for`` seconds while the server is unreachable
        (``transient``), and for ``READONLY_RETRY_S`` seconds on SQLite's "readonly database"
        while the file itself is writable (a reader holds a killed writer's log open; the
        pool's connections are replaced before each try, a refused one stays refused).

        A transaction whose connection broke may still have committed, so ``committed``
        is asked before each retry whether the write is already there.
        """
        start = time.monotonic()
        try:
            return attempt()            # the common case: no retry state is built
        except (StoreError, sa.exc.SQLAlchemyError) as err:
            failure: BaseException = err
        deadline, delays = start + self.retry_for, retry_delays()
        readonly_delays = retry_delays(READONLY_FIRST_DELAY, READONLY_MAX_DELAY)
        while True:
            if isinstance(failure, OwnershipLost):
                raise failure
            now = time.monotonic()
            if transient and is_transient(failure) and now <= deadline:
                delay = next(delays)
                log.warning("store unreachable, retrying in %.2f s: %s", delay, self._as_store_error(failure))
            elif now <= start + READONLY_RETRY_S and self._readonly_race(failure):
                delay = next(readonly_delays)
                self.store.engine.dispose()    # new connections: a refused one stays refused
                log.info("store refused a write as read-only (a reader holds its log), retrying in %.2f s", delay)
            else:
                error = self._as_store_error(failure)
                if error is failure:
                    raise failure
                raise error from failure
            time.sleep(delay)
            if committed is not None:
                try:
                    done = committed()
                except (StoreError, sa.exc.SQLAlchemyError) as err:
                    if not is_transient(err) and not self._readonly_race(err):
                        raise
                    done = None
                if done is not None:
                    return done
            try:
                return attempt()
            except (StoreError, sa.exc.SQLAlchemyError) as err:
                failure = err

    def _as_store_error(self, err: BaseException) -> BaseException:
        """A failed write as its StoreError, one sentence to log and raise: the writer's raw
        connections let SQLAlchemy's errors through, whose text names the driver's class and
        a web page, and which the callers' ``except StoreError`` would miss."""
        store = getattr(self, "store", None)      # (none yet while it is being opened)
        if isinstance(err, StoreError) or store is None:
            return err
        return translate(err, store.info.display)

    def _readonly_race(self, err: BaseException) -> bool:
        # (no store yet while it is being opened: no file of its own to be refused)
        return _readonly_race(err, getattr(getattr(self, "store", None), "target_path", None))

    def _committed(self, new: NewCheckpoint) -> CheckpointInfo | None:
        """The checkpoint ``new`` if an append that seemed to fail did commit, else None."""
        floor = self.last.seq if self.last else self._start_seq
        run = self.store.get_run(self.run_id)
        if run.head_seq <= floor:
            return None
        head = self.store.get_checkpoint(f"{self.run_id}:{floor + 1}")
        if head.state_hash == new.state_hash and head.kind == new.kind and head.name == new.name:
            return head
        return None

    def flush(self) -> CheckpointInfo | None:
        """Write the last skipped save, if the interval policy held one back."""
        self._check_process()
        with self._lock:
            if self._pending is None:
                return None
            done, kind, name, meta = self._pending
            return self._write(done, {}, kind, name, meta)

    # -- lifecycle ----------------------------------------------------------------
    def pause_heartbeat(self) -> None:
        """Stop sending heartbeats (used to simulate a hung agent)."""
        self._beat.stop_event.set()

    def finish(self, status: str = "completed", error: str | None = None) -> None:
        """Flush, set the final status and stop the heartbeat (idempotent)."""
        if self._closed:
            return
        self._closed = True
        if os.getpid() != self._pid:
            return       # a forked child's copy: the run, its status and its connections are the parent's
        self._beat.stop_event.set()
        try:
            with self._lock:       # after a save another thread is making
                if not self._lost and status == "completed":
                    self.flush()
                if not self._lost:
                    self._retry(lambda: self._writer.set_status(self.run_id, self.epoch, status, error))
        finally:
            self._beat.join(timeout=5)
            self._writer.close()
            self.store.close()

    def close(self) -> None:
        """Finish as completed unless already finished."""
        self.finish("completed")

    def __enter__(self) -> Checkpointer:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.finish("completed")
        elif issubclass(exc_type, OwnershipLost):
            self.finish("failed", str(exc))
        elif issubclass(exc_type, KeyboardInterrupt):
            self.finish("interrupted", "interrupted by the user")
        else:
            self.finish("failed", f"{exc_type.__name__}: {exc}")
