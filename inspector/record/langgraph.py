"""LangGraph checkpoint savers on this project's store: ``InspectorSaver`` / ``AsyncInspectorSaver``.

Switching is one line::

    with InspectorSaver.from_conn_string("agent.db") as saver:       # or a postgresql:// URL
        graph = builder.compile(checkpointer=saver)

Each ``(thread_id, checkpoint_ns)`` of a thread is one native run (a *lane*): the saver owns
it (host, pid, a heartbeat while its graph runs), sets its status from LangGraph's own
semantics (running while a step is next, completed when none is, interrupted / failed from
the pending writes) and its task state from the ``todos`` channel (or ``tasks_channel``).

Channel values are stored by content: dicts, lists and scalars stay structural, so the piece
encoder writes only what changed (an appended message costs that message and one small list
chunk); every other value (messages, pydantic models, dataclasses…) is a *typed leaf* holding
LangGraph's own ``serde.dumps_typed`` bytes. The saver's serializer is the user's (LangGraph's
``JsonPlusSerializer`` by default, never pickle unless the user configures it); the inspector
reads typed leaves with its own msgpack decoder, which imports and runs nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (WRITES_IDX_MAP, BaseCheckpointSaver, ChannelVersions, Checkpoint,
                                       CheckpointMetadata, CheckpointTuple, get_checkpoint_id,
                                       get_checkpoint_metadata)
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.types import ERROR, INTERRUPT

from inspector import taskstate
from inspector.errors import CorruptDataError, StoreError
from inspector.store import create_store
from inspector.store.langgraph.mapping import edit_change, orphan_step_name, stored_step_name
from inspector.store.langgraph.pregel import is_control_channel, next_nodes, summarise_tasks
from inspector.store.langgraph.runs import HeadSummary, head_score
from inspector.store.langgraph.tasks import build_task_state
from inspector import codec as piece_codec
from inspector.store.native.lanes import LaneCheckpoint, LaneGone, LaneStore, LaneWrite, StoredCheckpoint
from inspector.codec import PieceEncoder
from inspector.codec.encoded import matches as piece_matches
from inspector.codec.encoder import adopt_texts
from inspector.codec.gcpause import gc_paused
from inspector.record.lglower import LEAF, FrozenMatches, Lowering, raise_value
from inspector.taskstate import DEFAULT_TASK_CHANNEL

__all__ = ["InspectorSaver", "AsyncInspectorSaver", "LEAF"]

PUSH_CHANNEL = "__pregel_tasks"
WARM_LANES = 32       # lanes (threads) keeping their caches between puts; the others drop them
COOL_KEEP = 4         # checkpoints a cooled lane whose graph has stopped remembers (names, scores, writes)
_MISSING = object()


def _remember(found: dict, key: str, value: Any) -> None:
    """``found[key] = value``, keeping the 64 latest keys."""
    found[key] = value
    if len(found) > 64:
        found.pop(next(iter(found)))


class _Lane:
    """What the saver remembers about one lane between calls."""

    def __init__(self) -> None:
        self._encoder: PieceEncoder | None = None      # made when first used (see ``cool``)
        self._matches: FrozenMatches | None = None
        self._lowering: Lowering | None = None
        self.outputs: dict[str, dict[str, tuple[str, set[str]]]] = {}   # checkpoint → task → (path, channels)
        self.sends: dict[str, list[str | None]] = {}    # checkpoint → the nodes of its Send packets
        # checkpoint → (checkpoint id, name, change) of the loop step put after it, renamed
        # should its task writes arrive late (LangGraph puts both in the background, in no set
        # order)
        self.named: dict[str, tuple[str, str, str]] = {}
        self.tasks: tuple[Any, bytes | None, tuple[int, int, int, int]] = (None, None, (0, 0, 0, 0))
        self.goal = ""
        self.state: tuple[bytes, dict] | None = None   # (digest, forms) of the state last put
        self.control: dict[str, Any] = {}               # … its LangGraph channels' forms (kept when cooled)
        self.versions: dict[str, str] = {}              # the channel versions of the state last put
        self.settled: dict[str, tuple[str, str | None]] = {}   # checkpoint → (status, error) from its writes
        # checkpoint → (its next nodes, its task channel's plain value): its score once it stops there
        self.heads: dict[str, tuple[tuple[str, ...], Any]] = {}
        # checkpoint → the score stored for it with its child's put (its step's writes then in);
        # writes arriving after that child score it again
        self.scored: dict[str, tuple[int, int, int, int] | None] = {}
        # checkpoint → its channel versions (what an update's or a fork's change is told against)
        self.lineage: dict[str, dict] = {}
        # what the last get_tuple handed out from ``state``: (checkpoint id, channel → (the value
        # object, its version, its stored form)); used by the next put only
        self.handed: tuple[str, dict[str, tuple[Any, str, Any]]] | None = None
        self.stopped = False     # its last put stopped the graph (no next node: completed)

    @property
    def encoder(self) -> PieceEncoder:
        if self._encoder is None:
            self._encoder = PieceEncoder()
            self._encoder.frozen = True      # it only ever sees lowered forms, which nothing changes
            self._encoder.matches = self.matches
        return self._encoder

    @property
    def matches(self) -> FrozenMatches:
        if self._matches is None:
            self._matches = FrozenMatches(piece_matches)
        return self._matches

    @property
    def lowering(self) -> Lowering:
        if self._lowering is None:
            self._lowering = Lowering()
        return self._lowering

    def forget_pieces(self) -> None:
        """The encoder's memory of earlier states (and what the saver knows of it) is dropped."""
        self.encoder.forget()
        self.matches.forget()
        self.handed = None

    def cool(self, trim: bool = False, control: bool = True) -> None:
        """Drop every cache of earlier states (the encoder and its packer's buffer, the
        lowering's, the last state's forms but its LangGraph channels'): the lane's next put
        encodes its state afresh, as a new process's would. ``trim``: also forget all but the
        latest checkpoints' names, scores and writes (a lane whose graph has completed: no late
        writes can come). ``control``: keep the LangGraph channels' forms (not after a deletion:
        they may name pieces collected since)."""
        self._encoder = self._matches = self._lowering = None
        self.handed = None
        self.state = None
        if not control:
            self.control = {}
        if trim:     # of what the lane remembers per checkpoint, the latest (the next put's parent) stay
            for found in (self.outputs, self.sends, self.named, self.settled, self.heads, self.scored, self.lineage):
                while len(found) > COOL_KEEP:
                    found.pop(next(iter(found)))


def _stored(row: StoredCheckpoint, what: str, decode: Any) -> Any:
    """``decode()`` of a stored checkpoint's column; a damaged one is CorruptDataError with a
    sentence (a serializer or JSON error, or a column of the wrong type, said why)."""
    try:
        return decode()
    except CorruptDataError:
        raise
    except (ValueError, TypeError, UnicodeDecodeError, RecursionError) as exc:
        raise CorruptDataError(f"The stored {what} of checkpoint {row.checkpoint_id!r} of thread "
                               f"{row.thread_id!r} cannot be decoded ({type(exc).__name__}).") from exc


def _metadata(row: StoredCheckpoint) -> Any:
    return _stored(row, "metadata", lambda: json.loads(row.metadata))


class InspectorSaver(BaseCheckpointSaver[str]):
    """A LangGraph checkpoint saver writing a Checkpoint Inspector store (SQLite or PostgreSQL).

    ``tasks_channel`` names the channel the task state is read from (default ``todos``);
    ``heartbeat`` is the period in seconds of the owner's heartbeat while a graph runs.
    """

    def __init__(self, store: str | os.PathLike, *, serde: SerializerProtocol | None = None,
                 tasks_channel: str = DEFAULT_TASK_CHANNEL, heartbeat: float = 2.0) -> None:
        super().__init__(serde=serde)
        self._store = create_store(store)
        self._lanes_db = LaneStore(self._store, heartbeat_s=heartbeat)
        self.tasks_channel = tasks_channel
        self._lock = threading.RLock()
        self._lanes: dict[tuple[str, str], _Lane] = {}
        self._warm: OrderedDict[tuple[str, str], None] = OrderedDict()   # lanes keeping their caches, last used last
        self._running: set[str] = set()
        self._running_lanes: dict[str, tuple[str, str]] = {}   # running run → its (thread, ns)
        self._stop = threading.Event()
        self._closed = False
        self._executor: ThreadPoolExecutor | None = None
        self._beat = threading.Thread(target=self._heartbeat, args=(heartbeat,), daemon=True,
                                      name="inspector-saver-heartbeat")
        self._beat.start()

    # -- opening and closing ---------------------------------------------------------------
    @classmethod
    @contextlib.contextmanager
    def from_conn_string(cls, conn_string: str, **options: Any) -> Iterator[InspectorSaver]:
        """A saver on a SQLite path or a ``postgresql://`` URL, closed on exit."""
        saver = cls(conn_string, **options)
        try:
            yield saver
        finally:
            saver.close()

    def close(self) -> None:
        """Stop the heartbeat and release the store (idempotent). A lane this saver still has
        running is marked ``interrupted``: its graph stopped with a step left to run and no
        write said why (LangGraph raises ``GraphRecursionError`` without one), and nothing
        runs it now; without this it read as crashed once the process had gone."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        self._beat.join(timeout=5)
        if self._executor is not None:
            self._executor.shutdown(wait=True)
        with self._lock:
            try:
                for run_id in sorted(self._running):
                    key = self._running_lanes.get(run_id)
                    if key is not None:
                        self._lanes_db.set_lane_status(*key, "interrupted", score=self._head_score(key))
            except StoreError:      # the store went away: the lanes stay running (stuck detection)
                pass
            self._running.clear()
            self._lanes_db.close()
            self._store.close()

    def __enter__(self) -> InspectorSaver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def store(self) -> Any:
        """The native store this saver writes."""
        return self._store

    def _heartbeat(self, period: float) -> None:
        while not self._stop.wait(period):
            try:
                with self._lock:
                    running = set(self._running)
                    if running and not self._closed:
                        self._lanes_db.beat(running)
            except Exception:   # a transient store error: the next beat retries
                continue

    def _lane(self, thread_id: str, ns: str) -> _Lane:
        """The lane of a thread and namespace. The ``WARM_LANES`` used last keep their caches;
        the others are cooled (a server's saver meets thread after thread, and each lane's
        caches hold about its state again), but never one between a ``get_tuple`` and its put
        (that put stores what was handed out). A cooled lane keeps its LangGraph channels'
        last forms, which decide what its next put stores of them."""
        key = (thread_id, ns)
        lane = self._lanes.get(key)
        if lane is None:
            lane = self._lanes[key] = _Lane()
        self._warm[key] = None
        self._warm.move_to_end(key)
        if len(self._warm) > WARM_LANES:
            self._cool_lanes()
        return lane

    def _cool_lanes(self) -> None:
        """Cool the lanes past ``WARM_LANES`` (the least recently used first) that may be."""
        for key in list(self._warm)[:len(self._warm) - WARM_LANES]:
            lane = self._lanes.get(key)
            if lane is None:
                del self._warm[key]
            elif lane.handed is None:
                lane.cool(trim=lane.stopped)
                del self._warm[key]

    # -- versions --------------------------------------------------------------------------
    def get_next_version(self, current: str | None, channel: None) -> str:
        if current is None:
            current_v = 0
        elif isinstance(current, int):
            current_v = current
        else:
            current_v = int(str(current).split(".")[0])
        return f"{current_v + 1:032}.{random.random():016}"

    # -- writing ---------------------------------------------------------------------------
    def put(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
            new_versions: ChannelVersions) -> RunnableConfig:
        try:
            return self._put(config, checkpoint, metadata, new_versions)
        except LaneGone:
            # another process deleted the thread meanwhile: its lane starts again, from pieces
            # encoded afresh (what this saver remembered storing may be collected by now)
            return self._put(config, checkpoint, metadata, new_versions)

    def _put(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
             new_versions: ChannelVersions) -> RunnableConfig:
        conf = config["configurable"]
        thread_id = str(conf["thread_id"])
        ns = str(conf.get("checkpoint_ns", ""))
        parent_id = conf.get("checkpoint_id")
        with self._lock:
            lane = self._lane(thread_id, ns)
            values = checkpoint.get("channel_values") or {}
            versions = checkpoint.get("channel_versions") or {}
            lowering = lane.lowering
            kept = self._unchanged(lane, parent_id, metadata, values, versions, new_versions)
            # every other channel, every item: a value changed in place is stored as it now is
            state = {channel: (lowering.keep(kept[channel]) if channel in kept else lowering.lower(value, self.serde))
                     for channel, value in values.items()}
            try:
                digest, size, new_pieces = lane.encoder.encode(state)
            except (TypeError, ValueError, OverflowError):
                # a value msgpack cannot take structurally (e.g. a lone surrogate): store each
                # channel that fails as one typed leaf instead
                lane.forget_pieces()
                state = {ch: (form if _packable(form) else lowering.leaf(values[ch], self.serde))
                         for ch, form in state.items()}
                digest, size, new_pieces = lane.encoder.encode(state)
            lane.matches.rotate()
            body = {k: v for k, v in checkpoint.items() if k != "channel_values"}
            body_type, body_bytes = self.serde.dumps_typed(body)
            meta = get_checkpoint_metadata(config, metadata)
            meta_text = json.dumps(meta, ensure_ascii=False, default=str)
            nxt = next_nodes(values.keys(), versions, checkpoint.get("versions_seen"))
            status = "running" if nxt or values.get(PUSH_CHANNEL) else "completed"
            lane.stopped = status != "running"
            settled = lane.settled.get(checkpoint["id"])
            tasks_hash, score = self._task_state(lane, values, new_pieces)
            _remember(lane.heads, checkpoint["id"], (tuple(nxt), lane.tasks[0][0] if tasks_hash is not None else None))
            # its score as LangGraph's view of it shows it now: its next nodes still to run (and
            # the writes of any that ran already); the put of its child scores it again
            score = self._head_score((thread_id, ns), checkpoint["id"]) or score
            outputs = lane.outputs.get(parent_id, {}) if parent_id else {}
            raw_source = meta.get("source")
            source = raw_source if isinstance(raw_source, str) else "step"
            name, change = stored_step_name(source, outputs.values(), lane.sends.get(parent_id or ""))
            mine = checkpoint.get("channel_versions") or {}
            if source == "loop" and not outputs:    # no writes on its parent (yet) to name it: durability="exit"
                name, change = orphan_step_name(checkpoint, lane.lineage.get(parent_id or "")) or (name, change)
            if source in ("update", "fork") and parent_id:     # as reading SqliteSaver's rows says it
                parent = lane.lineage.get(parent_id)
                # (a parent this lane no longer remembers: the versions LangGraph says are new)
                change = edit_change(source, mine, parent) if parent is not None else \
                    edit_change(source, new_versions, {})
            _remember(lane.lineage, checkpoint["id"], dict(mine))
            packets = values.get(PUSH_CHANNEL)
            if packets and isinstance(packets, list):
                _remember(lane.sends, checkpoint["id"], [n if isinstance(n := getattr(p, "node", None), str) else None
                                                         for p in packets])
            parents = meta.get("parents") if isinstance(meta.get("parents"), dict) else {}
            parent_lane = None
            if ns and parents:
                outer = ns.rsplit("|", 1)[0] if "|" in ns else ""
                if isinstance(parents.get(outer), str):
                    parent_lane = (outer, parents[outer])
            lg_run = meta.get("run_id")
            parent_score = self._head_score((thread_id, ns), parent_id) if parent_id else None
            if parent_id:
                _remember(lane.scored, parent_id, parent_score)
            cp = LaneCheckpoint(
                checkpoint_id=checkpoint["id"], parent_checkpoint_id=parent_id, body_type=body_type,
                body=body_bytes, metadata=meta_text, lg_run_id=str(lg_run) if lg_run is not None else None,
                state_hash=digest, pieces=new_pieces, size=size, kind=_kind(source), name=name,
                change=change, tasks_hash=tasks_hash, score=score, status=status, parent_lane=parent_lane,
                parent_score=parent_score)
            try:
                self._lanes_db.put(thread_id, ns, cp)
            except BaseException:
                lane.cool(control=False)
                self._lanes_db._known.clear()
                raise
            lane.state = (digest, state)
            lane.control = {c: form for c, form in state.items() if is_control_channel(c)}
            lane.versions = {str(c): str(v) for c, v in versions.items()}
            lowering.rotate()
            if parent_id and source == "loop":
                _remember(lane.named, parent_id, (checkpoint["id"], name, change))
            run_id = self._lanes_db.lane_run(thread_id, ns)
            if run_id is not None:
                if status == "running":
                    self._running.add(run_id)
                    self._running_lanes[run_id] = (thread_id, ns)
                else:
                    self._running.discard(run_id)
            if settled is not None:
                self._settle(thread_id, ns, *settled, at=checkpoint["id"])
            elif status == "completed" and not ns:
                self._settle(thread_id, ns, "completed")
        return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns,
                                 "checkpoint_id": checkpoint["id"]}}

    @staticmethod
    def _unchanged(lane: _Lane, parent_id: str | None, metadata: CheckpointMetadata, values: dict,
                   versions: ChannelVersions, new_versions: ChannelVersions) -> dict[str, Any]:
        """The channels stored again as they were, without looking into them (channel → its
        stored form); every other channel's every item is looked at.

        * In an ``input`` put, as the last ``get_tuple`` handed them out: those LangGraph did not
          change (not in ``new_versions``, the same version), still holding the very object it
          returned, in a put of the checkpoint that ``get_tuple`` returned. Between the two,
          LangGraph's loop runs only its own code (it maps the input to ``__start__``; no node,
          reducer or stream consumer runs), and by its contract a channel without a new version
          has not changed (``PostgresSaver`` stores nothing for it).
        * In any put, LangGraph's own channels whose version is the one of the last put."""
        handed, lane.handed = lane.handed, None
        kept: dict[str, Any] = {}
        if handed is not None and handed[0] == parent_id and metadata.get("source") == "input":
            kept = {channel: form for channel, (obj, version, form) in handed[1].items()
                    if channel not in new_versions and values.get(channel, _MISSING) is obj
                    and str(versions.get(channel)) == version}
        if lane.control:
            # LangGraph's own channels (a join's barrier, branches, tasks) hold what their
            # version says: one it did not change is stored as it was put with that version.
            # LangGraph changes some of their objects in place at a later step (a barrier's
            # set), possibly before this put runs in the background
            last = lane.control
            kept.update({channel: last[channel] for channel in values
                         if channel not in kept and channel not in new_versions and channel in last
                         and is_control_channel(channel) and lane.versions.get(channel) == str(versions.get(channel))})
        return kept

    def _task_state(self, lane: _Lane, values: dict,
                    new_pieces: dict) -> tuple[bytes | None, tuple[int, int, int, int]]:
        """The native task state of a checkpoint, from the task channel (None without one)."""
        todos = values.get(self.tasks_channel)
        if todos is None:
            return None, (0, 0, 0, 0)
        plain = _plain(todos)
        if lane.tasks[0] is not None and lane.tasks[0] == (plain, type(plain)):   # the same tasks
            return lane.tasks[1], lane.tasks[2]
        if not lane.goal:
            lane.goal = _goal(values.get("messages"))
        try:
            tasks = build_task_state({self.tasks_channel: plain, "messages": []}, [], self.tasks_channel)
            if lane.goal and not tasks.get("goal"):
                tasks = dict(tasks, goal=lane.goal)
            tasks = taskstate.validate(tasks)
        except Exception:
            return None, (0, 0, 0, 0)
        digest, _, found = piece_codec.encode_flat(tasks)
        new_pieces.update(found)
        sc = taskstate.score(tasks)
        result = (digest, (sc.tasks_done, sc.tasks_total, sc.checks_passed, sc.checks_total))
        lane.tasks = ((plain, type(plain)), *result)
        return result

    def _head_score(self, key: tuple[str, str], checkpoint_id: str | None = None) -> tuple[int, int, int, int] | None:
        """The score of lane ``key`` (thread, namespace) stopped at ``checkpoint_id`` (its last
        put when None); None when that is not known (any more)."""
        lane = self._lanes.get(key)
        if lane is None or not lane.heads:
            return None
        at = next(reversed(lane.heads)) if checkpoint_id is None else checkpoint_id
        head = lane.heads.get(at)
        if head is None:
            return None
        nxt, todos = head
        sends = tuple(lane.sends.get(at) or ())
        tasks = summarise_tasks(((task_id, path, channel) for task_id, (path, channels)
                                 in lane.outputs.get(at, {}).items() for channel in sorted(channels)), at)
        sc = head_score(tasks, HeadSummary(nxt + tuple(n for n in sends if n), todos, sends), self.tasks_channel)
        return sc.tasks_done, sc.tasks_total, sc.checks_passed, sc.checks_total

    def put_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                   task_path: str = "") -> None:
        conf = config["configurable"]
        thread_id = str(conf["thread_id"])
        ns = str(conf.get("checkpoint_ns", ""))
        checkpoint_id = str(conf["checkpoint_id"])
        replace = all(w[0] in WRITES_IDX_MAP for w in writes)
        with self._lock:
            lane = self._lane(thread_id, ns)
            rows: list[LaneWrite] = []
            for idx, (channel, value) in enumerate(writes):
                # a write is serialized alone by LangGraph's savers: a bytearray written whole stays one
                form = (lane.lowering.leaf(value, self.serde) if type(value) is bytearray
                        else lane.lowering.lower(value, self.serde))
                try:
                    data = piece_codec.pack(form)
                except (TypeError, ValueError, OverflowError):
                    data = piece_codec.pack(lane.lowering.leaf(value, self.serde))
                rows.append(LaneWrite(task_id=task_id, idx=WRITES_IDX_MAP.get(channel, idx), channel=channel,
                                      task_path=task_path, data=data))
            self._lanes_db.put_writes(thread_id, ns, checkpoint_id, rows, replace=replace)
            outputs = lane.outputs.setdefault(checkpoint_id, {})
            if len(lane.outputs) > 64:
                lane.outputs.pop(next(iter(lane.outputs)))
            path, chans = outputs.get(task_id, (task_path, set()))
            chans.update(c for c, _ in writes)
            outputs[task_id] = (path or task_path, chans)
            named = lane.named.get(checkpoint_id)
            if named is not None:
                # the step after this checkpoint is already stored: its name grows with these writes
                stored, name, change = named
                found = stored_step_name("loop", outputs.values(), lane.sends.get(checkpoint_id))
                if found != (name, change):
                    self._lanes_db.rename(thread_id, ns, stored, *found)
                    lane.named[checkpoint_id] = (stored, *found)
            if checkpoint_id in lane.scored:
                # the step after this checkpoint is already stored with its score: these writes change it
                rescore = self._head_score((thread_id, ns), checkpoint_id)
                if rescore is not None and rescore != lane.scored[checkpoint_id]:
                    self._lanes_db.set_checkpoint_score(thread_id, ns, checkpoint_id, rescore)
                    lane.scored[checkpoint_id] = rescore
            channels = {c for c, _ in writes}
            settled: tuple[str, str | None] | None = None
            if ERROR in channels:
                error = next(v for c, v in writes if c == ERROR)
                earlier = lane.settled.get(checkpoint_id)
                # a sibling cancelled because a task failed writes its CancelledError after the
                # failure itself (or not at all): the run's error stays the real one
                if not (_cancelled(error) and earlier is not None and earlier[0] == "failed"):
                    settled = ("failed", _error_text(error))
            elif INTERRUPT in channels:
                earlier = lane.settled.get(checkpoint_id)
                # a sibling's interrupt written after a task of the same step failed: the step
                # failed (LangGraph's rows hold both; reading them says failed)
                if earlier is None or earlier[0] != "failed":
                    settled = ("interrupted", None)
            if settled is not None:
                # LangGraph may write a checkpoint's writes before the checkpoint itself (both
                # in the background): its put then keeps this status
                lane.settled[checkpoint_id] = settled
                if len(lane.settled) > 64:
                    lane.settled.pop(next(iter(lane.settled)))
                self._settle(thread_id, ns, *settled, at=checkpoint_id)
            elif checkpoint_id in lane.settled and next(reversed(lane.heads), None) == checkpoint_id:
                # a sibling's writes after the lane stopped at its head: the score counts them too
                rescored = self._head_score((thread_id, ns), checkpoint_id)
                if rescored is not None:
                    self._lanes_db.set_lane_score(thread_id, ns, rescored)
                    self._lanes_db.set_checkpoint_score(thread_id, ns, checkpoint_id, rescored)

    def _settle(self, thread_id: str, ns: str, status: str, error: str | None = None, at: str | None = None) -> None:
        """Set a lane's status, and that of its subgraph lanes still running (an interrupt
        or an error inside a subgraph stops the lanes around it too, and the end of the
        root lane ends every lane of the thread). A lane stopped at checkpoint ``at`` takes
        the score its head shows there (its pending step's tasks count, as in LangGraph's own
        stores' runs)."""
        run_id = self._lanes_db.lane_run(thread_id, ns)
        if run_id is not None and status != "completed":
            found = self._head_score((thread_id, ns), at) if at is not None else None
            self._lanes_db.set_lane_status(thread_id, ns, status, error, score=found)
            if found is not None and at is not None:    # the checkpoint it stopped at scores the same
                self._lanes_db.set_checkpoint_score(thread_id, ns, at, found)
            self._running.discard(run_id)
        for other, (lane_thread, lane_ns) in list(self._running_lanes.items()):
            nested = lane_ns.startswith(ns + "|") if ns else bool(lane_ns)
            if lane_thread == thread_id and other in self._running and nested:
                self._lanes_db.set_lane_status(thread_id, lane_ns, status, error)
                self._running.discard(other)
        self._running_lanes = {r: k for r, k in self._running_lanes.items() if r in self._running}

    # -- reading ---------------------------------------------------------------------------
    def _tuple(self, row: StoredCheckpoint, hand: bool = False) -> CheckpointTuple:
        lane = self._lanes.get((row.thread_id, row.checkpoint_ns))
        forms = None
        if lane is not None and lane.state is not None and lane.state[0] == row.state_hash:
            # the state this saver last put in the lane (same digest: same content): no read,
            # and its objects come back as fresh copies
            forms = lane.state[1]
            lane.handed = None      # (it holds what the last get_tuple returned: let it go first)
            values = lane.lowering.revive(forms, self.serde)
        else:
            lowered = self._store.load_values([row.state_hash])[row.state_hash]
            values = _stored(row, "state", lambda: raise_value(lowered, self.serde))
            if hand:
                # a checkpoint this saver did not put last (another process's, an older one):
                # its writer takes over the pieces of its long strings, so that the next put,
                # which LangGraph makes from it, stores an edited one as its lines, not whole
                adopt_texts(self._lane(row.thread_id, row.checkpoint_ns).encoder, self._store.read_piece,
                            row.state_hash, lowered, lowered)
        checkpoint = _stored(row, "checkpoint", lambda: self.serde.loads_typed((row.body_type, row.body)))
        checkpoint["channel_values"] = values
        if hand and lane is not None:
            versions = checkpoint.get("channel_versions") or {}
            lane.handed = None if forms is None else (row.checkpoint_id, {
                c: (v, str(versions[c]), forms[c]) for c, v in values.items() if c in versions and c in forms})
        writes = sorted(row.writes, key=lambda w: (w[3], w[0], w[4]))
        pending = _stored(row, "pending writes", lambda: [(task, channel, raise_value(self._write_value(data), self.serde))
                                                          for task, channel, data, _, _ in writes])
        config: RunnableConfig = {"configurable": {"thread_id": row.thread_id, "checkpoint_ns": row.checkpoint_ns,
                                                   "checkpoint_id": row.checkpoint_id}}
        parent: RunnableConfig | None = ({"configurable": {"thread_id": row.thread_id, "checkpoint_ns": row.checkpoint_ns,
                                    "checkpoint_id": row.parent_checkpoint_id}}
                  if row.parent_checkpoint_id else None)
        return CheckpointTuple(config, checkpoint, _metadata(row), parent, pending)

    @staticmethod
    def _write_value(data: bytes) -> Any:
        return piece_codec.unpack(data)

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        conf = config["configurable"]
        with self._lock:
            row = self._lanes_db.get(str(conf["thread_id"]), str(conf.get("checkpoint_ns", "")),
                                     get_checkpoint_id(config))
            return self._tuple(row, hand=True) if row is not None else None

    def list(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
             before: RunnableConfig | None = None, limit: int | None = None) -> Iterator[CheckpointTuple]:
        thread_id = ns = checkpoint_id = None
        if config is not None:
            conf = config["configurable"]
            thread_id = str(conf["thread_id"])
            ns = conf.get("checkpoint_ns")
            checkpoint_id = get_checkpoint_id(config)
        before_id = get_checkpoint_id(before) if before is not None else None
        count = 0
        with self._lock:
            rows = self._lanes_db.list(thread_id, ns, checkpoint_id, before_id)
            found: list[CheckpointTuple] = []
            for row in rows:
                if limit is not None and count >= limit:
                    break
                if filter:
                    meta = _metadata(row)
                    if any(meta.get(k) != v for k, v in filter.items()):
                        continue
                found.append(self._tuple(row))
                count += 1
        yield from found

    # -- deletion and copies -----------------------------------------------------------------
    def _drop_lanes(self, thread_ids: Sequence[str]) -> None:
        for key in [k for k in self._lanes if k[0] in set(thread_ids)]:
            del self._lanes[key]
            self._warm.pop(key, None)
        self._forget_pieces()

    def _forget_pieces(self) -> None:
        """After a deletion some stored pieces may be unreferenced (and collected by a prune):
        every lane encodes its next state from scratch, so nothing refers to a piece it
        only remembers."""
        for lane in self._lanes.values():
            lane.cool(control=False)

    def delete_thread(self, thread_id: str) -> None:
        with self._lock:
            for run_id, _, _ in self._lanes_db.lanes_of([str(thread_id)]):
                self._running.discard(run_id)
            self._lanes_db.delete_threads([str(thread_id)])
            self._drop_lanes([str(thread_id)])

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        with self._lock:
            self._lanes_db.delete_for_runs([str(r) for r in run_ids])
            self._forget_pieces()

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        with self._lock:
            self._lanes_db.copy_thread(str(source_thread_id), str(target_thread_id))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        ids = [str(t) for t in thread_ids]
        if strategy not in ("keep_latest", "delete"):
            raise ValueError(f"unknown prune strategy {strategy!r} (use 'keep_latest' or 'delete')")
        with self._lock:
            if strategy == "delete":
                for run_id, _, _ in self._lanes_db.lanes_of(ids):
                    self._running.discard(run_id)
                self._lanes_db.delete_threads(ids)
            else:
                self._lanes_db.keep_latest(ids)
            self._drop_lanes(ids)

    # -- async: the same work on one worker thread (the event loop never waits on the store) --
    def _pool(self) -> ThreadPoolExecutor:
        if self._executor is None:
            with self._lock:
                if self._executor is None:
                    self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="inspector-saver")
        return self._executor

    async def _call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        loop = asyncio.get_running_loop()
        # The worker's encoding, decoding and fresh copies build thousands of acyclic containers,
        # and the collector passes over the whole heap for them (measured: async checkpoint time
        # twice sync's, equal with the collector off). Only the main thread may pause it
        # (inspector.codec.gcpause), so the loop's thread takes the pause for the call while it
        # waits; on any other loop thread this does nothing.
        with gc_paused():
            return await loop.run_in_executor(self._pool(), lambda: fn(*args, **kwargs))

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await self._call(self.get_tuple, config)

    async def alist(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
                    before: RunnableConfig | None = None, limit: int | None = None) -> AsyncIterator[CheckpointTuple]:
        found = await self._call(lambda: list(self.list(config, filter=filter, before=before, limit=limit)))
        for item in found:
            yield item

    async def aput(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
                   new_versions: ChannelVersions) -> RunnableConfig:
        return await self._call(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                          task_path: str = "") -> None:
        await self._call(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await self._call(self.delete_thread, thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await self._call(self.delete_for_runs, run_ids)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await self._call(self.copy_thread, source_thread_id, target_thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await self._call(self.prune, thread_ids, strategy=strategy)


class AsyncInspectorSaver(InspectorSaver):
    """The saver for async graphs (``graph.ainvoke``/``astream``), opened with ``async with``.

    Store work runs on the saver's own worker thread; the event loop only awaits it.
    """

    @classmethod
    @contextlib.asynccontextmanager
    async def from_conn_string(cls, conn_string: str, **options: Any) -> AsyncIterator[AsyncInspectorSaver]:  # type: ignore[override]  # the async saver opens asynchronously (LangGraph's async savers do the same)
        """A saver on a SQLite path or a ``postgresql://`` URL, closed on exit."""
        loop = asyncio.get_running_loop()
        saver = await loop.run_in_executor(None, lambda: cls(conn_string, **options))
        try:
            yield saver
        finally:
            await loop.run_in_executor(None, saver.close)


def _packable(form: Any) -> bool:
    try:
        piece_codec.pack(form)
        return True
    except (TypeError, ValueError, OverflowError):
        return False


def _kind(source: str) -> str:
    return source if source in ("input", "loop", "update", "fork") else "step"


def _cancelled(error: Any) -> bool:
    """Whether a task's error says only that the task was cancelled."""
    return type(error).__name__ == "CancelledError" or str(error).startswith("CancelledError")


def _error_text(error: Any) -> str:
    """A task's error as the run's ``last_error``: what LangGraph's serializer stores for it
    (``repr`` of an exception), so the run reads as its failed task does, and as a thread of
    ``SqliteSaver`` / ``PostgresSaver`` reads."""
    if isinstance(error, BaseException):
        return repr(error)
    return str(error)


def _goal(messages: Any) -> str:
    if not isinstance(messages, list):
        return ""
    for msg in messages:
        if getattr(msg, "type", None) == "human" or (isinstance(msg, dict) and msg.get("type") == "human"):
            content = getattr(msg, "content", None) if not isinstance(msg, dict) else msg.get("content")
            if isinstance(content, str):
                return content
    return ""


def _plain(value: Any) -> Any:
    """A task channel value as plain data (models and dataclasses by their fields)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            return _plain(dump())
        except Exception:
            return str(value)
    if hasattr(value, "__dataclass_fields__"):
        return {k: _plain(getattr(value, k)) for k in value.__dataclass_fields__}
    return str(value)
