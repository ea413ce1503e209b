"""``LangGraphStore``: the read-only ``Store`` over a LangGraph checkpointer database (SQLite or PostgreSQL).

Runs are threads; checkpoints of every namespace are listed with ``lane`` = namespace and
one ``seq`` order (see ``mapping``); ids are ``THREAD@CHECKPOINT_ID`` /
``THREAD@NS@CHECKPOINT_ID`` (see ``ids``); run status follows ``runs``; snapshots follow
``snapshot``. Nothing decoded from the database can execute code.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import threading
import urllib.parse
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inspector.errors import NotAStoreError, RunNotFoundError, StoreError
from inspector.model import LANGGRAPH_CAPABILITIES, ChangeSet, CheckpointInfo, RunInfo, Snapshot, StoreInfo
from inspector.store.base import Store, parse_ref
from inspector.store.branches import TopologyRow
from inspector.store.langgraph.delta import reconstruct
from inspector.store.langgraph.ids import CheckpointKey, make_id, parse_id
from inspector.store.langgraph.mapping import (build_infos, edit_change, enclosing_step, group_outputs, has_push,
                                               orphan_step_name, page_bounds, parse_metadata, row_source,
                                               topology_rows)
from inspector.store.langgraph.pregel import (ERROR, INTERRUPT, PREGEL_TASKS, is_control_channel,
                                              is_update, send_nodes, summarise_tasks)
from inspector.store.langgraph.snapshot import pending_questions, waiting_change
from inspector.store.langgraph.rows import HeadRow, Reader
from inspector.store.langgraph.tasks import GOAL_CHANNEL
from inspector.store.langgraph.runs import HeadSummary, build_run, head_score, read_head, row_scores, step_writes
from inspector.taskstate import DEFAULT_TASK_CHANNEL, Score
from inspector.store.langgraph.schema import describe
from inspector.store.langgraph.decode import plain_or_error
from inspector.store.langgraph.channels import INFERRED_LAST, ChannelKind, Combiner, GraphChannels
from inspector.store.langgraph.reducers import NO_VALUE, inferred_kind, inferred_note, missing_reducers
from inspector.store.langgraph.snapshot import build_snapshot, decode_body, live_view, without_value
from inspector.store.langgraph.sqlite_reader import SqliteReader

if TYPE_CHECKING:
    import sqlalchemy as sa

    from inspector.store.sqlite_ro import ReadPool


def _sqlite_path(engine: sa.Engine) -> Path | None:
    database = engine.url.database or ""
    if database.startswith("file:"):
        database = urllib.parse.unquote(database[len("file:"):].partition("?")[0])
    return Path(database) if database and database != ":memory:" else None


class LangGraphStore(Store):
    """A LangGraph SqliteSaver or PostgresSaver database opened for reading.

    Options: ``task_channel`` names the channel mapped to tasks (default ``todos``);
    ``show_control`` keeps ``branch:to:*``/``__*`` channels in ``Snapshot.state``;
    ``running_window`` (seconds) separates *running* from *interrupted* waiting threads;
    ``graph`` (``module:attr``) marks threads resumable through the user's graph.
    """

    def __init__(self, engine: sa.Engine | None, display: str, read_only: bool = True, *,
                 url: str | None = None, path: Path | None = None, task_channel: str = DEFAULT_TASK_CHANNEL,
                 show_control: bool = False, running_window: float = 300.0,
                 columns: dict[str, set[str]] | None = None, graph: str | None = None,
                 pool: ReadPool | None = None) -> None:
        # ``pool`` instead of an engine: a SQLite file only read, on the standard library's
        # sqlite3 (``url``, ``path`` and ``columns`` then given too); an engine is made only
        # when something asks for ``engine`` (storage report, prune)
        if columns is None:
            from inspector.store.engine import table_columns
            assert engine is not None
            columns = table_columns(engine, display)
        schema = describe(columns)
        if schema is None:
            raise NotAStoreError(f"{display} is not a LangGraph checkpoint database.")
        if schema.layout == "legacy":
            raise NotAStoreError(f"{display} is a LangGraph database from before langgraph 0.2 "
                                 "(thread_ts columns), which this version cannot read.")
        backend = engine.dialect.name if engine is not None else "sqlite"
        if (schema.layout, backend) not in (("sqlite", "sqlite"), ("postgres", "postgresql")):
            layout = {"sqlite": "SQLite (SqliteSaver)", "postgres": "PostgreSQL (PostgresSaver)"}[schema.layout]
            raise StoreError(f"{display} has the LangGraph {layout} table layout in a {backend} "
                             "database, a combination this version cannot read.")
        self._engine = engine
        self.schema = schema
        pg = None
        if backend != "sqlite":
            from inspector.store.langgraph.pg_reader import PgReader
            assert engine is not None
            pg = PgReader(engine, display, schema.has_task_path, task_channel)
        self._path = (path or (_sqlite_path(engine) if engine is not None else None)) if backend == "sqlite" else None
        self.reader: Reader = pg or SqliteReader(engine, display, schema.has_task_path, pool, self._path)
        self.display = display
        self.task_channel = task_channel
        self.show_control = show_control
        self.running_window = running_window
        self.graph = graph
        self._heads: dict[tuple[str, str], HeadSummary] = {}
        self._send_cache: dict[tuple[str, str, str], list[str | None]] = {}
        self._change_cache: dict[tuple[str, str, str], str] = {}
        # what is read of the store as it is now (reducers proven, thread-wide scans): kept
        # while the store's cursor stays, emptied when it moves (``_epoch``)
        self._epoch_cache: dict[Any, Any] = {}
        self._epoch_cursor: Any = None
        self.graph_channels: GraphChannels | None = None
        self.channels_note: str | None = None
        self.combiner: Combiner | None = None
        self._lock = threading.Lock()
        self.info = StoreInfo(url=url or (engine.url.render_as_string(hide_password=True) if engine else display),
                              display=display, kind="langgraph", backend=backend,
                              format_version=pg.format_version() if pg else 2 if schema.has_task_path else 1,
                              read_only=read_only, capabilities=LANGGRAPH_CAPABILITIES,
                              label="LangGraph")

    def identity(self) -> tuple | None:
        if self.info.backend != "postgresql":
            return super().identity()
        from inspector.store.base import engine_identity
        return engine_identity(self.engine, "checkpoints", self.display)

    @property
    def engine(self) -> sa.Engine:
        """The store's SQLAlchemy engine (made on first use for a store opened on sqlite3 alone)."""
        if self._engine is None:
            from inspector.store.engine import make_engine
            from inspector.store.target import path_target
            assert self._path is not None
            self._engine = make_engine(path_target(str(self._path)), readonly=True)
        return self._engine

    def apply_settings(self, *, graph: str | None, task_channel: str) -> None:
        """New LangGraph settings take effect at once (the GUI's LangGraph Settings): runs become
        resumable through ``graph``; the task board follows ``task_channel``."""
        with self._lock:
            self.graph = graph
            if task_channel != self.task_channel:
                self.task_channel = task_channel
                self._heads.clear()
                from inspector.store.langgraph.pg_reader import PgReader
                if isinstance(self.reader, PgReader):
                    self.reader.task_channel = task_channel

    def use_graph_channels(self, channels: GraphChannels | None, note: str | None = None,
                           combiner: Combiner | None = None) -> None:
        """Channel kinds from the user's graph (``inspector.resume.graph_channels`` asks the
        graph in its runner); None goes back to inferring them. ``note`` says why they are not
        known (the graph could not be loaded…); snapshots carry it. ``combiner`` applies the
        graph's custom reducers to the live head's pending writes (in the graph's runner; used
        only with ``channels``)."""
        with self._lock:
            self.graph_channels, self.channels_note = channels, note
            self.combiner = combiner if channels is not None else None
            self._epoch_cache, self._epoch_cursor = {}, None

    # -- runs ------------------------------------------------------------------------------
    def _summaries(self, heads: list[HeadRow]) -> dict[str, HeadSummary]:
        """Head summaries by thread; bodies are read only for heads not seen before."""
        with self._lock:
            known = {h.thread_id: self._heads.get((h.thread_id, h.checkpoint_id)) for h in heads}
        missing = [(h.thread_id, h.checkpoint_id) for h in heads if known[h.thread_id] is None]
        if missing:
            bodies = self.reader.head_bodies(missing)
            fresh = {key: read_head(body, self.task_channel) for key, body in bodies.items()}
            with self._lock:
                self._heads.update(fresh)
            known.update({key[0]: summary for key, summary in fresh.items()})
        return {tid: s or HeadSummary(None) for tid, s in known.items()}

    def _runs(self, thread_id: str | None = None) -> list[RunInfo]:
        threads = self.reader.threads(thread_id)
        heads = {h.thread_id: h for h in self.reader.heads(thread_id)}
        summaries = self._summaries(list(heads.values()))
        writes: dict[str, list] = {}
        for tid, row in self.reader.head_writes(thread_id):
            writes.setdefault(tid, []).append(row)
        runs = [build_run(t, heads.get(t.thread_id), summaries.get(t.thread_id, HeadSummary(None)),
                          writes.get(t.thread_id, []), task_channel=self.task_channel,
                          running_window=self.running_window) for t in threads]
        if self.graph:  # resumable through the user's graph (inspector.resume.langgraph)
            runs = [dataclasses.replace(r, resumable=True, not_resumable_reason=None) for r in runs]
        return runs

    def _filtered(self, text: str, statuses: Collection[str] | None) -> list[RunInfo]:
        needle = text.strip().lower()
        runs = [r for r in self._runs()
                if (not needle or needle in r.id.lower())
                and (statuses is None or r.status in statuses)]
        runs.sort(key=lambda r: (r.updated, r.id), reverse=True)
        return runs

    def list_runs(self, *, text: str = "", statuses: Collection[str] | None = None,
                  limit: int | None = None, offset: int = 0) -> list[RunInfo]:
        """Threads as runs, most recently updated first."""
        runs = self._filtered(text, statuses)[max(0, offset):]
        return runs if limit is None else runs[:max(0, limit)]

    def count_runs(self, *, text: str = "", statuses: Collection[str] | None = None) -> int:
        """How many threads match."""
        if not text.strip() and statuses is None:
            return len(self.reader.threads())
        return len(self._filtered(text, statuses))

    def get_run(self, run_id: str) -> RunInfo:
        """One thread as a run."""
        runs = self._runs(str(run_id))
        if not runs:
            raise RunNotFoundError(f"No thread {run_id!r} in {self.display}.")
        return runs[0]

    # -- checkpoints ---------------------------------------------------------------------------
    def list_checkpoints(self, run_id: str, *, after_seq: int = -1,
                         limit: int | None = None) -> list[CheckpointInfo]:
        """A page of the thread's checkpoints (all namespaces) in seq order."""
        with self.reading():    # its queries on one connection
            return self._list_checkpoints(run_id, after_seq, limit)

    def _list_checkpoints(self, run_id: str, after_seq: int, limit: int | None) -> list[CheckpointInfo]:
        offset = max(0, after_seq + 1)
        rows = self.reader.list_rows(str(run_id), offset, limit)
        bounds = page_bounds(rows)
        if bounds is None:
            return []
        # a page of one namespace (a single checkpoint; a thread without subgraphs) reads the
        # writes of that namespace only: a range of the writes' primary key
        spaces = {r.ns for r in rows}
        ns = next(iter(spaces)) if len(spaces) == 1 else None
        outputs = group_outputs(self.reader.task_outputs(str(run_id), *bounds, ns=ns))
        lo, hi = bounds
        epoch = self._epoch()
        every = self._scanned(epoch, ("children", str(run_id)),
                              lambda: self.reader.child_counts(str(run_id), "", "\U0010ffff"))
        children = {key: n for key, n in every.items() if lo <= key[1] <= hi}
        sends = {key: self._sends(str(run_id), *key) for key, found in outputs.items() if has_push(found)}
        scores = self._row_scores(str(run_id), rows, outputs, self.reader.task_stops(str(run_id), *bounds, ns=ns))
        infos = build_infos(str(run_id), rows, offset, outputs, children, sends, scores)
        # loop steps with no writes on their parent to name them (the parent is gone, or none
        # were saved: durability="exit")
        orphans = {r.checkpoint_id: r for r in rows if row_source(r) == "loop"
                   and (r.parent_id is None or r.parent_size is None or not outputs.get((r.ns, r.parent_id)))}
        infos = [self._orphan_named(str(run_id), i, orphans[key.checkpoint_id])
                 if i.name == "loop" and (key := parse_id(str(i.id))) and key.checkpoint_id in orphans else i
                 for i in infos]
        waiting = self._waiting(str(run_id), *bounds, space=ns)
        if waiting:
            infos = [dataclasses.replace(i, change=waiting_change(waiting[(k.ns, k.checkpoint_id)], i.change))
                     if (k := parse_id(str(i.id))) and (k.ns, k.checkpoint_id) in waiting else i for i in infos]
        edited = {r.checkpoint_id: r for r in rows if r.parent_id and row_source(r) in ("update", "fork")}
        if edited:
            infos = [dataclasses.replace(i, change=self._edit_change(str(run_id), edited[key.checkpoint_id]))
                     if (key := parse_id(str(i.id))) and key.checkpoint_id in edited else i for i in infos]
        self._listed(epoch, infos)
        return infos

    _LISTED_MAX = 65_536

    def _listed(self, epoch: dict[Any, Any], infos: list[CheckpointInfo]) -> None:
        """Keep the infos just listed (the last ``_LISTED_MAX``, while the store is as it is):
        loading one of them then needs no lookup of its place (a history walks them all)."""
        with self._lock:
            known = epoch.setdefault("listed", collections.OrderedDict())
            known.update((i.id, i) for i in infos)
            while len(known) > self._LISTED_MAX:
                known.popitem(last=False)

    def _info(self, epoch: dict[Any, Any], checkpoint_id: int | str) -> CheckpointInfo:
        """``get_checkpoint`` of an id, from the infos listed last when it is among them."""
        found = epoch.get("listed", {}).get(checkpoint_id)
        return found if found is not None else self.get_checkpoint(checkpoint_id)

    def _row_scores(self, thread_id: str, rows: list, outputs: dict, stops: list) -> dict[tuple[str, str], Score]:
        """The checks of a page's checkpoints as the Tasks tab counts them: a node task per task
        of the step after each (its writes), and per next node nothing ran from it yet, which
        only the latest checkpoint of a namespace (the thread's head; a subgraph lane's last,
        which a ``Command.PARENT`` leaves with its node not run), a checkpoint ``update_state``
        or a fork wrote and one an update was applied to (its writes are the update's, no
        task's) can have: their bodies are read for those (the head's score is the run list's,
        its task channel too)."""
        writes = step_writes(outputs, stops)
        found = {key: Score(checks_passed=sc.checks_passed, checks_total=sc.checks_total)
                 for key, sc in row_scores(writes, self.task_channel).items()}
        heads = {ns: self.reader.head_of(thread_id, ns) for ns in {r.ns for r in rows}}
        for row in rows:
            key = (row.ns, row.checkpoint_id)
            latest = heads.get(row.ns) == row.checkpoint_id
            if latest and row.ns == "":     # as the run list scores it
                summary = self._summaries([HeadRow(thread_id, row.checkpoint_id, None, None, None)])[thread_id]
                found[key] = head_score(summarise_tasks(writes.get(key, ()), key[1]), summary, self.task_channel)
            elif latest or (row.parent_id and row_source(row) in ("update", "fork")) or \
                    any(is_update(task_id, path, key[1]) for task_id, path, _ in writes.get(key, ())):
                body = self.reader.body(thread_id, row.ns, row.checkpoint_id)
                if body is None:
                    continue
                summary = read_head(HeadRow(thread_id, row.checkpoint_id, body.type, body.blob, body.metadata),
                                    self.task_channel)
                sc = head_score(summarise_tasks(writes.get(key, ()), key[1]), summary, self.task_channel)
                found[key] = Score(checks_passed=sc.checks_passed, checks_total=sc.checks_total)
        return {key: sc for key, sc in found.items() if sc.checks_total or sc.tasks_total}

    def _epoch(self) -> dict[Any, Any]:
        """The cache of what was read of the store as it is now: emptied once its cursor moved
        (a checkpoint or a write was added, or checkpoints deleted). A new dict each time, so a
        reader still filling an older one changes nothing current."""
        cursor = self.reader.cursor()
        with self._lock:
            if self._epoch_cursor != cursor:
                self._epoch_cache, self._epoch_cursor = {}, cursor
            return self._epoch_cache

    @staticmethod
    def _scanned(epoch: dict[Any, Any], key: tuple, scan: Callable[[], Any]) -> Any:
        """What ``scan()`` reads of a whole thread, with no index to narrow it (the children of
        every checkpoint, the channels its tasks wrote), read once an ``epoch``: a big
        thread's every page and checkpoint would otherwise read all its rows again."""
        if key not in epoch:
            epoch[key] = scan()
        return epoch[key]

    def _waiting(self, thread_id: str, lo: str, hi: str, space: str | None = None) -> dict[tuple[str, str], list[str]]:
        """The questions of each checkpoint's pending interrupts by (ns, checkpoint id): the
        Change column of a checkpoint waiting for an answer says what it asks."""
        found = pending_questions(((ns, cid), task_id, channel, tag, value) for ns, cid, task_id, channel, tag, value
                                  in self.reader.interrupt_rows(thread_id, lo, hi, ns=space))
        return {key: [question for _, question in asks] for key, asks in found.items()}

    def _versions(self, thread_id: str, ns: str, checkpoint_id: str) -> dict:
        body = self.reader.body(thread_id, ns, checkpoint_id)
        value = decode_body(body)[0] if body is not None else None
        versions = value.get("channel_versions") if isinstance(value, dict) else None
        return versions if isinstance(versions, dict) else {}

    def _orphan_named(self, thread_id: str, info: CheckpointInfo, row: Any) -> CheckpointInfo:
        """``info`` named from its own body when no writes on its parent name it (the parent is
        gone, or none were saved: ``mapping.orphan_step_name``)."""
        key = ("orphan", thread_id + "\0" + row.ns, row.checkpoint_id)
        with self._lock:
            known = self._change_cache.get(key)
        if known is None:
            body = self.reader.body(thread_id, row.ns, row.checkpoint_id)
            parent = self._versions(thread_id, row.ns, row.parent_id) \
                if row.parent_id and row.parent_size is not None else None
            found = orphan_step_name(decode_body(body)[0], parent) if body is not None else None
            known = "\0".join(found) if found is not None else ""
            with self._lock:
                self._change_cache[key] = known
        if not known:
            return info
        name, change = known.split("\0")
        return dataclasses.replace(info, name=name, change=change)

    def _edit_change(self, thread_id: str, row: Any) -> str:
        """The Change column of an update/fork row: state channels whose version moved from its
        parent (``update_state`` wrote them), or ``copy`` for a fork that changed nothing."""
        key = (thread_id, row.ns, row.checkpoint_id)
        with self._lock:
            known = self._change_cache.get(key)
        if known is None:
            mine = self._versions(thread_id, row.ns, row.checkpoint_id)
            parent = self._versions(thread_id, row.ns, row.parent_id) if row.parent_size is not None else None
            known = edit_change(row_source(row), mine, parent)
            with self._lock:
                self._change_cache[key] = known
        return known

    def _sends(self, thread_id: str, ns: str, checkpoint_id: str) -> list[str | None]:
        """The nodes of a checkpoint's pending Send packets (cached: rows never change)."""
        key = (thread_id, ns, checkpoint_id)
        with self._lock:
            known = self._send_cache.get(key)
        if known is not None:
            return known
        body = self.reader.body(thread_id, ns, checkpoint_id)
        value = decode_body(body)[0] if body is not None else None
        values = value.get("channel_values") if isinstance(value, dict) else None
        found = send_nodes(values.get(PREGEL_TASKS)) if isinstance(values, dict) else []
        with self._lock:
            if len(self._send_cache) > 20_000:
                self._send_cache.clear()
            self._send_cache[key] = found
        return found

    def checkpoints_at(self, run_id: str, seqs: Collection[int]) -> list[CheckpointInfo]:
        """The thread's checkpoints with the given seqs (one small page each when few)."""
        wanted = sorted({s for s in seqs if s >= 0})
        if len(wanted) > 20:
            return super().checkpoints_at(run_id, wanted)
        found = [self.list_checkpoints(run_id, after_seq=s - 1, limit=1) for s in wanted]
        return [page[0] for page in found if page]

    branching = True

    def topology(self, run_id: str) -> list[TopologyRow] | None:
        """The thread's tree (see ``inspector.store.branches``) when a checkpoint of the main graph
        or of a subgraph namespace has several children (``update_state``, a fork, a replay);
        None for a single line."""
        threads = self.reader.threads(str(run_id))
        if not threads:
            return None
        if not self.reader.child_counts(str(run_id), threads[0].first_id, threads[0].last_id):
            return None
        return topology_rows(str(run_id), self.reader.list_rows(str(run_id), 0, None))

    def count_checkpoints(self, run_id: str) -> int:
        """Checkpoints of the thread in every namespace."""
        return self.reader.count_checkpoints(str(run_id))

    def _key(self, text: str) -> CheckpointKey:
        key = parse_id(text)
        if key is not None:
            return key
        found = self.reader.locate(text)
        if len(found) == 1:
            return CheckpointKey(found[0][0], found[0][1], text)
        if found:
            raise StoreError(f"Checkpoint id {text} exists in several threads; "
                             "use THREAD@CHECKPOINT_ID.")
        raise StoreError(f"No checkpoint {text!r} in {self.display}.")

    def _from_root_end(self, run_id: str, back: int) -> list[CheckpointInfo]:
        """The ``back``-th checkpoint of the main graph counted from its end (1 = its head)."""
        total = self.count_checkpoints(run_id)
        if back == 1:
            heads = self.reader.heads(run_id)
            seq = self.reader.position(run_id, "", heads[0].checkpoint_id) if heads else None
            if seq is not None or not heads:
                return self.list_checkpoints(run_id, after_seq=seq - 1, limit=1) if seq is not None else []
            # a head whose id is not UTF-8 text is not found by its id: counted like the others
        end, found = total, 0
        while end > 0:
            start = max(0, end - 200)
            page = self.list_checkpoints(run_id, after_seq=start - 1, limit=end - start)
            for info in reversed(page):
                if not info.lane:
                    found += 1
                    if found == back:
                        return [info]
            end = start
        return []

    def _at(self, run_id: str, seq: int) -> CheckpointInfo:
        if seq < 0:   # counted back over the main graph's checkpoints: -1 is the root head
            page = self._from_root_end(run_id, -seq)
        else:
            page = self.list_checkpoints(run_id, after_seq=seq - 1, limit=1)
        if not page:
            if not self.reader.threads(run_id):
                raise RunNotFoundError(f"No thread {run_id!r} in {self.display}.")
            raise StoreError(f"Thread {run_id!r} has no checkpoint {seq}.")
        return page[0]

    def get_checkpoint(self, ref: int | str) -> CheckpointInfo:
        """A checkpoint by id (``THREAD@[NS@]CHECKPOINT_ID`` or a bare unique checkpoint id)
        or by ``THREAD:SEQ`` (a negative SEQ counts back over the main graph's checkpoints:
        ``THREAD:-1`` is the thread's root head, as LangGraph's ``get_state``)."""
        run, key = parse_ref(ref)
        if run is not None:
            return self._at(run, int(key))
        if isinstance(key, int):
            raise StoreError(f"{key} is not a LangGraph checkpoint id; use THREAD:SEQ or "
                             "THREAD@CHECKPOINT_ID.")
        ck = self._key(key)
        seq = self.reader.position(*ck)
        if seq is None:
            raise StoreError(f"No checkpoint {key!r} in {self.display}.")
        return self._at(ck.thread_id, seq)

    def load(self, checkpoint_id: int | str) -> Snapshot:
        """Decode one checkpoint: state, task state and LangGraph details in ``meta``."""
        return self._load(checkpoint_id, True)

    def load_state(self, checkpoint_id: int | str) -> Snapshot:
        """``load`` without decoding the values of pending writes that do not reach the state
        (a step's outputs, often as big as the state; interrupts and errors are decoded):
        ``meta["writes"]`` items then hold ``value`` None."""
        return self._load(checkpoint_id, False)

    def load_view(self, checkpoint_id: int | str) -> Snapshot:
        """``load`` for showing: big channel values and big pending-write values stay in
        their msgpack blob and are read on demand (``inspector.store.langgraph.lazy``);
        ``meta["lazy"]`` is True when the state holds such a part."""
        return self._load(checkpoint_id, True, lazy=True)

    def load_state_view(self, checkpoint_id: int | str) -> Snapshot:
        """``load_state`` with big channel values kept encoded, as ``load_view`` keeps them
        (the diff compares two such values block by block, ``inspector.diff.engine``)."""
        return self._load(checkpoint_id, False, lazy=True)

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        """The block's reads (of this thread) share one connection (``SqliteReader.held``):
        a walk over a long thread of a SqliteSaver file that a writer shares opens one
        connection, not one a checkpoint. (Such a connection left open keeps a writer that
        starts meanwhile from recovering the log of one that was killed; a walk asking
        without pause already held one nearly all the time.)"""
        with self.reader.held():
            yield

    def common_ancestor(self, a: CheckpointInfo, b: CheckpointInfo) -> CheckpointInfo | None:
        """The nearest checkpoint both descend from (or are), for two checkpoints of one
        thread, from its parent links alone: one query of two columns a namespace, and for
        a subgraph lane's first checkpoint its metadata (the enclosing step that started
        it), where listing the thread builds every checkpoint's row (1 s for 50,000). None
        for checkpoints of two threads (``inspector.diff.lineage`` then walks the listings)."""
        ka, kb = parse_id(str(a.id)), parse_id(str(b.id))
        if ka is None or kb is None or ka.thread_id != kb.thread_id:
            return None
        thread = ka.thread_id
        links: dict[str, dict[str, str]] = {}

        def chain(ns: str, cid: str) -> Iterator[tuple[str, str]]:
            """(namespace, id) of a checkpoint and its ancestors, nearest first, out of a
            lane into the step that started it."""
            seen: set[tuple[str, str]] = set()
            while (ns, cid) not in seen:      # (a cycle in a damaged file ends the walk)
                seen.add((ns, cid))
                yield ns, cid
                if ns not in links:
                    links[ns] = self.reader.parent_links(thread, ns)
                if cid in links[ns]:
                    cid = links[ns][cid]
                    continue
                body = self.reader.body(thread, ns, cid) if ns else None
                outer = enclosing_step(ns, parse_metadata(body.metadata)) if body is not None else None
                if outer is None:
                    return
                ns, cid = outer
        of_b = set(chain(kb.ns, kb.checkpoint_id))
        found = next((key for key in chain(ka.ns, ka.checkpoint_id) if key in of_b), None)
        if found is None:
            return None
        for key, info in (((ka.ns, ka.checkpoint_id), a), ((kb.ns, kb.checkpoint_id), b)):
            if found == key:
                return info
        return self.get_checkpoint(make_id(thread, *found))

    def load_channel_view(self, checkpoint_id: int | str, channel: str) -> Snapshot:
        """``load_state_view`` for one channel's value: the state holds ``channel`` (when the
        checkpoint shows it) decoded as ``load_state_view`` gives it, and the task channel,
        LangGraph's own channels and the head's written channels; any other channel of the
        body is neither decoded nor in the state (a value's history over a long thread reads
        one channel of each checkpoint). A body that is not one msgpack map (PostgreSQL's
        blobs, a damaged one) is read whole, as ``load_state_view`` reads it."""
        return self._load(checkpoint_id, False, lazy=True, only=channel)

    def load_task_view(self, checkpoint_id: int | str) -> Snapshot:
        """``load_channel_view`` of the task channel: the snapshot's task state is the one
        ``load_state`` gives, its goal read from ``messages`` without decoding the rest of
        that channel (a task history over a long thread reads the task channel of each
        checkpoint, and the first human message)."""
        return self.load_channel_view(checkpoint_id, self.task_channel)

    def _load(self, checkpoint_id: int | str, write_values: bool, lazy: bool = False,
              only: str | None = None) -> Snapshot:
        with self.reading():    # its queries on one connection
            return self._load_held(checkpoint_id, write_values, lazy, only)

    def _load_held(self, checkpoint_id: int | str, write_values: bool, lazy: bool, only: str | None) -> Snapshot:
        epoch = self._epoch()
        info = self._info(epoch, checkpoint_id)
        ck = parse_id(str(info.id))
        assert ck is not None
        body = self.reader.body(*ck)
        if body is None:
            if "\ufffd" in ck.checkpoint_id:   # listed, but its id's bytes are not UTF-8 text
                raise StoreError(f"Checkpoint {info.id} cannot be read: its id in {self.display} "
                                 "is not UTF-8 text (the checkpoints table is damaged).")
            raise StoreError(f"Checkpoint {info.id} disappeared from {self.display}.")
        writes = self.reader.writes(*ck)
        # the namespace's head (its pending writes are applied): read once while the store is
        # as it is (a walk over a thread asks at every checkpoint)
        latest = self._scanned(epoch, ("head", ck.thread_id, ck.ns),
                               lambda: self.reader.head_of(ck.thread_id, ck.ns)) == ck.checkpoint_id
        if writes and not write_values and not latest:   # the head's are applied
            writes = [without_value(w) for w in writes]
        spans: dict[str, tuple[int, int]] = {}
        big_writes: dict[int, Any] = {}
        left_out: frozenset[str] = frozenset()
        held_out: dict[str, Any] = {}
        if lazy:
            body, spans, writes, big_writes, left_out, held_out = self._lazy_parts(body, writes, latest, only)
        snap = build_snapshot(info, ck.thread_id, ck.ns, ck.checkpoint_id, body, writes,
                              self._scanned(epoch, ("namespaces", ck.thread_id),
                                            lambda: self.reader.namespaces(ck.thread_id)),
                              show_control=self.show_control, task_channel=self.task_channel,
                              rebuild=lambda meta, values: reconstruct(self.reader, ck, meta, values),
                              empties=lambda present: self._empty_reducers(ck, present, epoch),
                              held_out=held_out)
        known = self._graph_kinds(ck.ns)
        if known is not None and isinstance(snap.state, dict) and "__error__" not in snap.state:
            empty_topics = [c for c, k in known.items() if k.kind == "topic" and snap.state.get(c) == []]
            if empty_topics:    # a Topic emptied by its step is stored as []; get_state leaves it out
                snap = dataclasses.replace(snap, state={k: v for k, v in snap.state.items() if k not in empty_topics})
        if latest:
            clears = frozenset(c for c, k in (known or {}).items()
                               if k.kind == "ephemeral" or (k.kind == "topic" and not k.accumulate))
            combiner = self.combiner if known is not None else None
            snap = live_view(snap, lambda channel: self._channel_kind(ck, channel), clears,
                             None if combiner is None else
                             lambda custom: combiner(ck.thread_id, ck.ns, ck.checkpoint_id, custom))
        if spans or big_writes:
            snap = self._with_lazy_parts(snap, body, spans, big_writes)
        if left_out and isinstance(snap.state, dict) and "__error__" not in snap.state:
            snap = dataclasses.replace(snap, state={k: v for k, v in snap.state.items() if k not in left_out})
        return dataclasses.replace(snap, meta=self._kinds_meta(snap.meta, known is not None))

    def _lazy_parts(self, body: Any, writes: list, latest: bool,
                    only: str | None = None) -> tuple[Any, dict, list, dict, frozenset[str], dict[str, Any]]:
        """(the body without its big channel values, their spans, the writes without their
        big values, those values' lazy views by write position, the channels left out, and
        what the task state reads of those two kinds of channel: ``messages`` item by item,
        for its goal) — see ``load_view``. The head's written channels and the task channel
        are decoded as usual (they are applied or read whole). With ``only``
        (``load_channel_view``), every other channel but LangGraph's own is left out of the
        body (not decoded) and of the state."""
        from inspector.store.langgraph import lazy
        big_writes: dict[int, Any] = {}
        if not latest:
            for n, w in enumerate(writes):
                if w.value is not None and (w.type or "") == "msgpack" and w.channel not in (INTERRUPT, ERROR):
                    view = lazy.lazy_span(w.value, 0, len(w.value), f"The pending write {w.channel}")
                    if view is not None:
                        big_writes[n] = view
            writes = [w._replace(value=None) if n in big_writes else w for n, w in enumerate(writes)]
        if (body.type or "") != "msgpack" or not isinstance(body.blob, bytes) or body.channel_blobs:
            return body, {}, writes, big_writes, frozenset(), {}
        keep = frozenset({self.task_channel, *(w.channel for w in writes if latest)})
        found = lazy.big_channels(body.blob, keep, every=only is not None)     # (one pass over the body)
        left_out: dict[str, tuple[int, int]] = {}
        if only is not None:    # every other channel but LangGraph's own: not decoded, out of the state
            left_out = {c: span for c, span in found.items() if c != only and not is_control_channel(c)}
        spans = {c: span for c, span in found.items()
                 if c not in left_out and lazy.is_big(lazy.header(body.blob, span[0]))}
        if spans or left_out:
            reduced = dataclasses.replace(body, blob=lazy.without_spans(body.blob, [*spans.values(), *left_out.values()]))
            held = spans.get(GOAL_CHANNEL) or left_out.get(GOAL_CHANNEL)
            held_out = {} if held is None else {
                GOAL_CHANNEL: lazy.EncodedItems(body.blob, held[0], f"The channel {GOAL_CHANNEL}")}
            return (reduced, {c: (body.blob, span) for c, span in spans.items()}, writes, big_writes,
                    frozenset(left_out), held_out)
        return body, {}, writes, big_writes, frozenset(), {}

    @staticmethod
    def _with_lazy_parts(snap: Snapshot, body: Any, spans: dict, big_writes: dict) -> Snapshot:
        from inspector.store.langgraph import lazy
        state, meta = snap.state, dict(snap.meta)
        if spans and isinstance(state, dict) and "__error__" not in state:
            state = dict(state)
            sizes = dict(meta.get("channel_sizes") or {})
            for channel, (blob, (start, end)) in spans.items():
                if channel in state:
                    state[channel] = lazy.lazy_span(blob, start, end, f"The channel {channel}")
                    sizes[channel] = end - start
            meta["channel_sizes"] = sizes
            meta["lazy"] = True
        if big_writes:
            meta["writes"] = [dict(w, value=big_writes[n]) if n in big_writes else w
                              for n, w in enumerate(meta.get("writes") or [])]
        return dataclasses.replace(snap, state=state, meta=meta)

    def _graph_kinds(self, ns: str) -> Any:
        """The channel kinds of the (sub)graph of namespace ``ns`` from the user's graph, or None."""
        channels = self.graph_channels
        return channels.kinds(ns) if channels is not None else None

    def _kinds_meta(self, meta: dict, exact: bool) -> dict:
        """``meta["channel_kinds"]`` says where channel kinds came from; inferred empty reducers
        get a note saying so."""
        channels = self.graph_channels
        source = f"graph {channels.graph}" if exact and channels is not None else "inferred"
        notes = list(meta.get("notes", []))
        if not exact and meta.get("empty_reducers"):
            notes.append(inferred_note(meta["empty_reducers"], self.channels_note))
        return dict(meta, channel_kinds=source, notes=notes)

    def _channel_kind(self, ck: CheckpointKey, channel: str) -> ChannelKind:
        """The channel's kind from the user's graph when set; else ``reducer`` when the thread
        proves ``channel`` one (``reducers.prove``), ``last`` otherwise."""
        known = self._graph_kinds(ck.ns)
        if known is not None:
            return known.get(channel, INFERRED_LAST)
        return inferred_kind(self.reader, ck.thread_id, channel, self._child_value(ck.thread_id),
                             self._epoch().setdefault("reducers", {}))

    def _child_value(self, thread_id: str) -> Any:
        def child_value(ns: str, cid: str, channel: str) -> Any:
            body = self.reader.body(thread_id, ns, cid)
            if body is None or parse_metadata(body.metadata).get("source") != "loop":
                return NO_VALUE       # only a loop child applied the parent's pending writes
            value = decode_body(body)[0]
            values = value.get("channel_values") if isinstance(value, dict) else None
            if not isinstance(values, dict) or channel not in values:
                return NO_VALUE
            return plain_or_error(values[channel])
        return child_value

    def _empty_reducers(self, ck: CheckpointKey, present: set[str],
                        epoch: dict[Any, Any] | None = None) -> dict[str, Any]:
        """Channels the checkpoint lacks that ``get_state`` shows empty: from the user's graph
        (its output channels with an empty value) when set, else inferred (``reducers``);
        ``epoch``: the caller's (``_epoch`` reads the store's position)."""
        channels = self.graph_channels
        known = channels.kinds(ck.ns) if channels is not None else None
        if channels is not None and known is not None:
            return {c: plain_or_error(known[c].empty) for c in channels.output(ck.ns)
                    if c in known and known[c].has_empty and c not in present and not is_control_channel(c)}
        epoch = self._epoch() if epoch is None else epoch
        written = self._scanned(epoch, ("written", ck.thread_id, ck.ns),
                                lambda: self.reader.written_channels(ck.thread_id, ck.ns))
        return missing_reducers(self.reader, ck.thread_id, ck.ns, present, self._child_value(ck.thread_id),
                                epoch.setdefault("reducers", {}), written=written)

    # -- live ------------------------------------------------------------------------------------
    def cursor(self) -> Any:
        """The reader's position: see its ``cursor`` (rowids or ids, and counts)."""
        return self.reader.cursor()

    def changes_since(self, cursor: Any) -> ChangeSet:
        """Threads that got checkpoints or writes after ``cursor``, and the new checkpoints."""
        new = self.reader.cursor()
        origin = self.reader.origin
        known = isinstance(cursor, (tuple, list)) and len(cursor) == len(origin) \
            and type(cursor[0]) is type(origin[0])
        old = tuple(cursor) if known else origin
        if new == old:
            return ChangeSet(cursor=new)
        if new[0] < old[0] or new[1] < old[1]:  # rows deleted or renumbered (VACUUM)
            return ChangeSet(cursor=new, run_ids=tuple(t.thread_id for t in self.reader.threads()), removed=True)
        added, write_threads = self.reader.changed_since(old, new)
        removed = known and self.reader.removed(old, new, len(added))
        by_thread: dict[str, set[tuple[str, str]]] = {}
        for thread_id, ns, cid in added:
            by_thread.setdefault(thread_id, set()).add((ns, cid))
        infos: list[CheckpointInfo] = []
        for thread_id, keys in by_thread.items():
            ns, cid = min(keys, key=lambda k: (k[1], k[0]))
            seq = self.reader.position(thread_id, ns, cid)
            if seq is None:
                continue
            wanted = {make_id(thread_id, n, c) for n, c in keys}
            infos += [i for i in self.list_checkpoints(thread_id, after_seq=seq - 1) if i.id in wanted]
        run_ids = tuple(sorted(set(by_thread) | write_threads))
        return ChangeSet(cursor=new, run_ids=run_ids, new_checkpoints=tuple(infos), removed=removed)

    def watch_paths(self) -> list[Path]:
        """The database file and its -wal and -shm companions."""
        if self._path is None:
            return []
        return [self._path, Path(f"{self._path}-wal"), Path(f"{self._path}-shm")]

    def close(self) -> None:
        """Dispose of the engine's connections (and a sqlite3 reader's own)."""
        if self._engine is not None:
            self._engine.dispose()
        if isinstance(self.reader, SqliteReader):
            self.reader.close()
