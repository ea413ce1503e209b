"""CrewAI checkpoints (``crewai`` checkpointing) as stores: the JSON provider's folders and the
SQLite provider's ``checkpoints(id, created_at, parent_id, branch, data)`` table; and the states
flows persist (``@persist``: ``flow_states``, read by ``crewai_flows``), alone in a file or
beside the checkpoints.

Mapping: each snapshot (a full ``RuntimeState``: the crew with its tasks and their outputs,
agents, an event record, the trigger) is a checkpoint; a branch is a run (a second chain
written to the same branch is a run of its own), and a branch whose first snapshot's parent
lies on another branch is a fork of that checkpoint (``Crew.fork`` writes no snapshot at the
fork point). The crew's tasks are the task board (status from their output and times; the
output text beside each). Order follows the parent links, never the timestamps (they can be
equal). JSONB rows are read by ``jsonb`` when this Python's SQLite is older than 3.45.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from dataclasses import dataclass
from datetime import datetime, UTC
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from inspector.errors import CorruptDataError, NotResumableError
from inspector.model import OFFERED, Capabilities, Capability, CheckpointInfo, RunInfo, Snapshot, StoreInfo
from inspector.store.adapters import StoreAdapter
from inspector.store.base import Store
from inspector.store.engine import Target, guard, table_columns
from inspector.store.frameworks import jsonb
from inspector.store.frameworks.base import (MAX_ROWS, MAX_VALUE_BYTES, Budget, Catalog, CatalogStore, Damaged,
                                             check_integrity, damage, not_utf8, number_checkpoints, opaque,
                                             parse_json, sqlite_watch_paths)
from inspector.store.frameworks.crewai_flows import FLOW_COLUMNS, FLOW_WHY, PENDING_COLUMNS, FlowReader, find_table

TABLE_COLUMNS = frozenset({"id", "created_at", "parent_id", "branch", "data"})
SNAPSHOT_KEYS = frozenset({"entities", "event_record"})
MAX_FILES = 20_000
RUNNING_WINDOW = 300.0
FORK_WHY = ("Crew.fork(restore_from=…, branch=…) then kickoff(), run by the crewai package in your "
            "environment (a restored crew gets crewai's default LLM unless your code sets one).")
RESUME_WHY = "Crew.from_checkpoint(…) then kickoff(), run by the crewai package in your environment."
CAPABILITIES = Capabilities(Capability(True, FORK_WHY), Capability(True, RESUME_WHY), OFFERED)
FLOW_CAPABILITIES = Capabilities(Capability(False, FLOW_WHY), Capability(False, FLOW_WHY), OFFERED)
ROW = ("id", "created_at", "parent_id", "branch")    # the provider's columns ``_records_now`` lists


@dataclass
class Record:
    """One snapshot as listed: identity, lineage and what the catalog needs from its content."""

    id: str
    parent: str | None
    branch: str
    created: float
    size: int
    where: str                       # file path, or "db#id"
    summary: dict


def _stamp(text: str) -> float:
    """CrewAI's ``YYYYmmddTHHMMSS`` (UTC) as epoch seconds (0 when unreadable)."""
    try:
        return datetime.strptime(text[:15], "%Y%m%dT%H%M%S").replace(tzinfo=UTC).timestamp()
    except ValueError:
        return 0.0


def _iso(value: Any) -> float | None:
    if not isinstance(value, str) or not value or value == "None":
        return None
    try:
        stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)).timestamp()


def _crew(snapshot: Any) -> dict:
    entities = snapshot.get("entities") if isinstance(snapshot, dict) else None
    for entity in entities if isinstance(entities, list) else []:
        if isinstance(entity, dict) and entity.get("entity_type") == "crew":
            return entity
    return {}


def _output_text(output: Any) -> str | None:
    if isinstance(output, dict):
        raw = output.get("raw")
        return raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)[:2000]
    return None if output is None else str(output)


def task_board(snapshot: Any) -> dict:
    """The crew's tasks in the documented task-state shape (plus each task's output and agent)."""
    crew = _crew(snapshot)
    inputs = crew.get("checkpoint_inputs") or {}
    name = crew.get("name") if crew.get("name") not in (None, "", "crew") else None
    shown = ", ".join(f"{k}={v}" for k, v in inputs.items())[:200] if isinstance(inputs, dict) else ""
    goal = (f"Crew {name!r}" if name else "Crew") + (f" — inputs: {shown}" if shown else "")
    failed = snapshot.get("trigger") == "task_failed" if isinstance(snapshot, dict) else False
    tasks: list[dict[str, Any]] = []
    raw_tasks = crew.get("tasks")
    if not isinstance(raw_tasks, list):
        raw_tasks = []
    for index, task in enumerate(raw_tasks):
        if not isinstance(task, dict):
            continue
        output = _output_text(task.get("output"))
        started, ended = _iso(task.get("start_time")), _iso(task.get("end_time"))
        status = "done" if output is not None else "in_progress" if started and not ended else "pending"
        if failed and status == "in_progress":
            status = "failed"
        agent = task.get("agent")
        tasks.append({"id": str(task.get("id") or index), "title": str(task.get("name") or task.get("description")
                                                                      or f"task {index + 1}"),
                      "status": status, "progress": 1.0 if status == "done" else 0.0,
                      "review": {"status": "none", "reviewer": None, "note": None}, "checks": [],
                      "description": task.get("description"), "expected_output": task.get("expected_output"),
                      "agent": agent.get("role") if isinstance(agent, dict) else agent, "output": output})
    return {"goal": goal, "tasks": tasks}


def summarize(snapshot: Any) -> dict:
    """What the catalog keeps of a snapshot: trigger, tasks' status, names of done tasks."""
    board = task_board(snapshot)
    return {"trigger": snapshot.get("trigger") if isinstance(snapshot, dict) else None,
            "parent_id": snapshot.get("parent_id") if isinstance(snapshot, dict) else None,
            "branch": snapshot.get("branch") if isinstance(snapshot, dict) else None,
            "version": snapshot.get("crewai_version") if isinstance(snapshot, dict) else None,
            "crew": _crew(snapshot).get("name"),
            "status": [(t["title"], t["status"]) for t in board["tasks"]]}


def state_of(snapshot: Any) -> dict:
    """The state shown for a snapshot: inputs, tasks with outputs, the agents' conversation, the raw snapshot."""
    crew = _crew(snapshot)
    board = task_board(snapshot)
    messages: list = []
    for task in crew.get("tasks") or []:
        output = task.get("output") if isinstance(task, dict) else None
        if isinstance(output, dict) and isinstance(output.get("messages"), list):
            messages += output["messages"]
            last = output["messages"][-1] if output["messages"] else None
            if output.get("raw") and not (isinstance(last, dict) and last.get("role") == "assistant"):
                # crewai keeps the prompt messages; the agent's answer is the task's raw output
                messages.append({"role": "assistant", "name": output.get("agent"), "content": output["raw"]})
    agents = [{"role": a.get("role"), "goal": a.get("goal")} for a in crew.get("agents") or [] if isinstance(a, dict)]
    return {"crew": crew.get("name"), "inputs": crew.get("checkpoint_inputs") or {},
            "trigger": snapshot.get("trigger"), "crewai_version": snapshot.get("crewai_version"),
            "tasks": [{k: t[k] for k in ("title", "status", "agent", "description", "expected_output", "output")}
                      for t in board["tasks"]],
            "agents": agents, "messages": messages, "snapshot": snapshot}


def is_snapshot(value: Any) -> bool:
    """True for a CrewAI RuntimeState snapshot."""
    return isinstance(value, dict) and value.keys() >= SNAPSHOT_KEYS and isinstance(value.get("entities"), list)


# -- the two providers ---------------------------------------------------------------------------
def _json_files(location: Path) -> list[tuple[str, Path]]:
    """(branch, file) of every JSON file one level down (or in ``location`` itself, a branch folder)."""
    found: list[tuple[str, Path]] = []
    try:
        entries = sorted(os.scandir(location), key=lambda e: e.name)
    except OSError:
        return []
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            try:
                found += [(entry.name, Path(f.path)) for f in sorted(os.scandir(entry.path), key=lambda e: e.name)
                          if f.name.endswith(".json") and f.is_file(follow_symlinks=False)]
            except OSError:
                continue
        elif entry.name.endswith(".json") and entry.is_file(follow_symlinks=False):
            found.append((location.name, Path(entry.path)))
        if len(found) > MAX_FILES:
            break
    return found[:MAX_FILES]


def _name_parts(path: Path) -> tuple[str, str | None]:
    """(id, parent id) from ``<timestamp>_<id>_p-<parent>.json`` (the provider's naming)."""
    stem = path.stem
    own, sep, parent = stem.partition("_p-")
    return own, (None if not sep or parent == "none" else parent)


def read_json_file(path: Path) -> Any:
    """A snapshot file's JSON (bounded), or an opaque marker."""
    try:
        size = path.stat().st_size
        if size > MAX_VALUE_BYTES:
            return opaque(f"{path.name}: {size // 1024} KiB, over the limit for one snapshot")
        return parse_json(path.read_bytes(), path.name)
    except OSError as err:
        return opaque(f"{path.name}: cannot be read ({err.strerror or err})")


class CrewAIStore(CatalogStore):
    """CrewAI checkpoints from a JSON folder (``location``) or a SQLite database (``engine``)."""

    def __init__(self, display: str, *, location: Path | None = None, engine: sa.Engine | None = None,
                 target: Target | None = None, table: str | None = "checkpoints", flows: str | None = None,
                 pending: str | None = None, running_window: float = RUNNING_WINDOW) -> None:
        super().__init__(display)
        self.location, self.engine, self.target, self.table = location, engine, target, table
        self.flows = FlowReader(engine, display, flows, pending) if engine is not None and flows else None
        self.running_window = running_window
        self._summaries: dict[tuple[str, int], dict] = {}
        self._records: dict[str, Record] = {}
        self._by_ref: dict[str, Record] = {}
        backend = "folder" if location is not None else (target.backend if target else "sqlite")
        url = str(location) if location is not None else (target.url if target else display)
        if location is not None:   # new snapshot files appear in branch folders: watch the tree
            self.listen = self._listen_folder
        label = ("CrewAI (JSON)" if location is not None else "CrewAI flows (SQLite)" if table is None
                 else "CrewAI (SQLite: checkpoints and flow states)" if flows else "CrewAI (SQLite)")
        self.info = StoreInfo(url=url, display=display, kind="crewai", backend=backend, format_version=None,
                              read_only=True, capabilities=CAPABILITIES if table else FLOW_CAPABILITIES,
                              label=label)

    # -- reading records -------------------------------------------------------------------------
    def fingerprint(self) -> Any:
        """Folder: names, sizes and times of the files; SQLite: row count and last rowid."""
        if self.location is not None:
            out = []
            for branch, path in _json_files(self.location):
                try:
                    st = path.stat()
                except OSError:
                    continue
                out.append((branch, path.name, st.st_size, st.st_mtime_ns))
            return tuple(out)
        assert self.engine is not None
        with guard(self.display), self.engine.connect() as conn:
            found = (tuple(conn.exec_driver_sql(f'SELECT COUNT(*), MAX(rowid) FROM "{self.table}"').one())
                     if self.table else ())
            return found + (self.flows.fingerprint(conn) if self.flows else ())

    def verify(self) -> None:
        """A SQLite file: CorruptDataError when SQLite's integrity check finds damage."""
        if self.engine is not None and self.info.backend == "sqlite":
            check_integrity(self.engine, self.display)

    def _decode_row(self, data: Any) -> Any:
        if isinstance(data, (bytes, bytearray, memoryview)) and bytes(data[:1]).strip() not in (b"{", b"["):
            if len(data) > MAX_VALUE_BYTES:
                return opaque(f"{len(data) // 1024} KiB of JSONB, over the limit for one snapshot")
            try:
                return jsonb.decode(bytes(data))
            except jsonb.JsonbError as err:
                return Damaged(opaque(f"damaged JSONB ({err})"))
        return parse_json(data, "snapshot")

    def _records_now(self, budget: Budget) -> list[Record]:
        records: list[Record] = []
        if self.location is not None:
            for branch, path in _json_files(self.location):
                own, parent = _name_parts(path)
                try:
                    st = path.stat()
                except OSError:
                    continue
                key = (str(path), st.st_mtime_ns)
                summary = self._summaries.get(key)
                if summary is None:
                    budget.take(st.st_size)
                    raw = read_json_file(path)
                    summary = {**summarize(raw), "damaged": damage(raw)}
                    self._summaries[key] = summary
                parent = summary.get("parent_id") if isinstance(summary.get("parent_id"), str) else parent
                records.append(Record(own, parent, str(summary.get("branch") or branch), _stamp(own) or st.st_mtime,
                                      st.st_size, str(path), summary))
            return records
        assert self.engine is not None
        if self.table is None:
            return records
        with guard(self.display), self.engine.connect() as conn:
            rows = conn.exec_driver_sql(f'SELECT rowid, id, created_at, parent_id, branch, length(data) '
                                        f'FROM "{self.table}" ORDER BY rowid LIMIT {MAX_ROWS}').fetchall()
            for rowid, cid, created, parent, branch, size in rows:
                key = (str(cid), int(rowid))
                summary = self._summaries.get(key)
                if summary is None:
                    budget.take(int(size or 0))
                    data = conn.exec_driver_sql(f'SELECT data FROM "{self.table}" WHERE rowid = ?',
                                                (rowid,)).scalar()
                    raw = self._decode_row(data)
                    summary = {**summarize(raw), "damaged": not_utf8((cid, created, parent, branch), ROW)
                               or damage(raw)}
                    self._summaries[key] = summary
                records.append(Record(str(cid), None if parent is None else str(parent), str(branch or "main"),
                                      _stamp(str(created or cid)), int(size or 0), f"{cid}", summary))
        return records

    # -- the catalog ---------------------------------------------------------------------------------
    def read_catalog(self) -> Catalog:
        """Chains of snapshots per branch (by parent links) as runs; cross-branch parents as forks."""
        budget = Budget(self.display)
        records = self._records_now(budget)
        by_id = {r.id: r for r in records}
        children: dict[str | None, list[Record]] = {}
        for r in records:
            children.setdefault(r.parent if r.parent in by_id else None, []).append(r)
        roots = sorted((r for r in records if r.parent not in by_id or by_id[r.parent].branch != r.branch),
                       key=lambda r: (r.created, r.id))
        chains: list[list[Record]] = []
        placed: set[str] = set()
        for root in roots:
            chain, node = [root], root
            placed.add(root.id)
            while True:
                nxt = sorted((c for c in children.get(node.id, []) if c.branch == node.branch and c.id not in placed),
                             key=lambda r: (r.created, r.id))
                if not nxt:
                    break
                node = nxt[0]   # a second child on the same branch starts a chain of its own below
                chain.append(node)
                placed.add(node.id)
            chains.append(chain)
        for r in sorted(records, key=lambda r: (r.created, r.id)):  # leftover siblings on one branch
            if r.id not in placed:
                chains.append([r])
                placed.add(r.id)
        crews = self._runs(chains, by_id)
        if self.flows is None:
            return crews
        runs, checkpoints = self.flows.catalog(budget, {r.id for r in crews.runs}, self.running_window)
        return Catalog(tuple(sorted((*crews.runs, *runs), key=lambda r: (r.updated, r.id), reverse=True)),
                       {**crews.checkpoints, **checkpoints})

    def _runs(self, chains: list[list[Record]], by_id: dict[str, Record]) -> Catalog:
        names: dict[str, int] = {}
        run_of: dict[str, tuple[str, int]] = {}
        runs, checkpoints = [], {}
        self._by_ref = {}
        for chain in chains:
            branch = chain[0].branch
            names[branch] = names.get(branch, 0) + 1
            run_id = branch if names[branch] == 1 else f"{branch}~{names[branch]}"
            for seq, r in enumerate(chain):
                run_of[r.id] = (run_id, seq)
                self._by_ref[f"{run_id}:{seq}"] = r
        for chain in chains:
            run_id = run_of[chain[0].id][0]
            drafts, previous = [], None
            for r in chain:
                name, change = self._describe(r, previous)
                drafts.append(CheckpointInfo(id="", run_id="", seq=0, kind="step", name=name, created=r.created,
                                             size=r.size, change=change,
                                             tasks_done=sum(1 for _t, s in r.summary["status"] if s == "done"),
                                             tasks_total=len(r.summary["status"]),
                                             damaged=f"checkpoint {r.id}: {r.summary['damaged']}"
                                             if r.summary.get("damaged") else ""))
                previous = r
            infos = number_checkpoints(run_id, drafts)
            checkpoints[run_id] = infos
            parent = chain[0].parent
            parent_ref = f"{run_of[parent][0]}:{run_of[parent][1]}" if parent in run_of else None
            runs.append(self._run(run_id, chain, infos, parent_ref))
        runs.sort(key=lambda r: (r.updated, r.id), reverse=True)
        return Catalog(tuple(runs), checkpoints)

    @staticmethod
    def _describe(r: Record, previous: Record | None) -> tuple[str, str]:
        if previous is None:   # the first snapshot: what is done so far
            done = [t for t, s in r.summary["status"] if s == "done"]
            rest = len(r.summary["status"]) - len(done)
            name = done[-1] if done else str(r.summary.get("trigger") or "snapshot")
            return name, (f"{r.summary.get('trigger') or 'snapshot'} · done: {', '.join(done) or 'none'}"
                          f" · {rest} to do")
        before = dict(previous.summary["status"])
        changed = [(title, status) for title, status in r.summary["status"] if before.get(title) != status]
        done = [t for t, s in changed if s == "done"]
        name = done[-1] if done else (changed[-1][0] if changed else str(r.summary.get("trigger") or "snapshot"))
        change = ", ".join(f"{t}: {before.get(t, 'new')} → {s}" for t, s in changed) or "no task changed"
        return name, f"{r.summary.get('trigger') or 'snapshot'} · {change}"

    def _run(self, run_id: str, chain: list[Record], infos: tuple[CheckpointInfo, ...],
             parent_ref: str | None) -> RunInfo:
        last = chain[-1]
        statuses = [s for _t, s in last.summary["status"]]
        status, error = "completed", None
        failed = last.summary.get("trigger") in ("task_failed", "crew_kickoff_failed")
        if failed or any(s == "failed" for s in statuses):
            status, error = "failed", f"{last.summary.get('trigger')} at the last checkpoint"
        elif statuses and any(s != "done" for s in statuses):
            recent = time.time() - last.created < self.running_window
            status = "running" if recent else "interrupted"
            error = None if recent else (f"{statuses.count('done')} of {len(statuses)} tasks done "
                                         "when the snapshots stop")
        if parent_ref and status == "completed":
            status = "forked"
        done = statuses.count("done")
        crew = last.summary.get("crew")
        return RunInfo(id=run_id, name=f"{crew} · {run_id}" if crew and crew != "crew" else run_id,
                       agent="crewai", status=status, created=chain[0].created, updated=last.created,
                       checkpoint_count=len(infos), head_seq=len(infos) - 1, resumable=True,
                       parent_run=parent_ref.rpartition(":")[0] if parent_ref else None,
                       parent_checkpoint=parent_ref, fork_reason=f"branch {chain[0].branch!r}" if parent_ref else None,
                       labels={"branch": chain[0].branch, "crewai": last.summary.get("version")},
                       last_error=error, tasks_done=done, tasks_total=len(statuses),
                       damaged="; ".join(f"checkpoint {r.id} (#{seq}): {r.summary['damaged']}"
                                         for seq, r in enumerate(chain) if r.summary.get("damaged")))

    # -- one snapshot -------------------------------------------------------------------------------
    def record(self, ref: str) -> Record:
        """The stored snapshot behind checkpoint ``ref`` (``RUN:SEQ``)."""
        info = self.get_checkpoint(ref)
        found = self._by_ref.get(str(info.id))
        if found is None:
            raise CorruptDataError(f"Checkpoint {info.id} disappeared from {self.display}.")
        return found

    def restore_from(self, ref: str) -> str:
        """What ``CheckpointConfig(restore_from=…)`` takes for checkpoint ``ref``; NotResumableError
        for a flow's saved state (read-only here)."""
        if self.flows is not None and str(self.get_checkpoint(ref).id) in self.flows.by_ref:
            raise NotResumableError(FLOW_WHY)
        r = self.record(ref)
        if self.location is not None:
            return r.where
        assert self.target is not None and self.target.path is not None
        return f"{self.target.path}#{r.id}"

    def _raw(self, r: Record) -> Any:
        if self.location is not None:
            return read_json_file(Path(r.where))
        assert self.engine is not None
        with guard(self.display), self.engine.connect() as conn:
            data = conn.exec_driver_sql(f'SELECT data FROM "{self.table}" WHERE id = ?', (r.id,)).scalar()
        return self._decode_row(data)

    def snapshot(self, info: CheckpointInfo) -> Snapshot:
        """The snapshot's state (inputs, tasks with outputs, conversation, raw) and its task board;
        a flow's saved state as crewai reads it."""
        if self.flows is not None and str(info.id) in self.flows.by_ref:
            return self.flows.snapshot(info)
        r = self.record(str(info.id))
        raw = self._raw(r)
        broken = r.summary.get("damaged")
        problems = (f"checkpoint {r.id}: {broken}",) if broken else ()
        if not is_snapshot(raw):
            return Snapshot(info=info, state=raw, tasks=None, meta={"checkpoint_id": r.id, "stored_at": r.where,
                                                                    "note": "not a CrewAI snapshot"}, problems=problems)
        meta = {"checkpoint_id": r.id, "parent_id": r.parent, "branch": r.branch, "trigger": raw.get("trigger"),
                "crewai_version": raw.get("crewai_version"), "stored_at": r.where}
        return Snapshot(info=info, state=state_of(raw), tasks=task_board(raw), meta=meta,
                        problems=problems)

    def watch_paths(self) -> list[Path]:
        """The folder and its branch folders, or the SQLite file and its companions."""
        if self.location is not None:
            dirs = [self.location]
            with contextlib.suppress(OSError):
                dirs += [Path(e.path) for e in os.scandir(self.location) if e.is_dir(follow_symlinks=False)]
            return dirs
        return sqlite_watch_paths(self.target.path if self.target else None)

    def _listen_folder(self, callback: Any) -> Any:
        """Call ``callback()`` (from a watchdog thread) when a snapshot file is written anywhere
        under the folder; returns the callable that stops watching."""
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: Any) -> None:
                names = (str(event.src_path), str(getattr(event, "dest_path", "") or ""))
                if event.event_type in ("created", "modified", "moved", "deleted", "closed") \
                        and any(n.endswith(".json") for n in names):
                    callback()

        assert self.location is not None
        observer = Observer()
        observer.schedule(Handler(), str(self.location), recursive=True)
        observer.daemon = True
        observer.start()

        def stop() -> None:
            observer.stop()
            observer.join(timeout=5)
        return stop

    def close(self) -> None:
        """Dispose of the engine (SQLite stores)."""
        if self.engine is not None:
            self.engine.dispose()


def _checkpoint_table(columns: dict[str, set[str]]) -> str | None:
    """The SQLite provider's table (its columns, and not LangGraph's ``checkpoints``), or None."""
    return next((name for name, cols in sorted(columns.items())
                 if {c.lower() for c in cols} >= TABLE_COLUMNS and "thread_id" not in cols), None)


def _first_json(path: Path) -> Path | None:
    files = _json_files(path)
    return files[0][1] if files else None


class CrewAIAdapter(StoreAdapter):
    """CrewAI checkpoint folders (JSON provider) and databases (SQLite provider)."""

    kind = "crewai"
    label = "CrewAI"
    capabilities = CAPABILITIES
    order = 50

    def detect_tables(self, columns: dict[str, set[str]]) -> bool:
        """A ``checkpoints`` table with the SQLite provider's columns (and not LangGraph's), or
        the ``flow_states`` table of flow persistence (or both)."""
        return _checkpoint_table(columns) is not None or find_table(columns, FLOW_COLUMNS) is not None

    def open_database(self, engine: sa.Engine, target: Target, *, readonly: bool = True,
                      **options: Any) -> Store:
        """A read-only ``CrewAIStore`` on the checkpoints and flow states found."""
        columns = table_columns(engine, target.display)
        flows = find_table(columns, FLOW_COLUMNS)
        return CrewAIStore(target.display, engine=engine, target=target, table=_checkpoint_table(columns),
                           flows=flows, pending=find_table(columns, PENDING_COLUMNS) if flows else None,
                           running_window=float(options.get("running_window", RUNNING_WINDOW)))

    def detect_path(self, path: Path) -> bool:
        """A folder whose first JSON file (one level down, or in it) is a CrewAI snapshot."""
        if not path.is_dir():
            return False
        first = _first_json(path)
        return first is not None and is_snapshot(read_json_file(first))

    def open_path(self, path: Path, *, readonly: bool = True, **options: Any) -> Store:
        """A read-only ``CrewAIStore`` on the folder."""
        return CrewAIStore(str(path), location=path,
                           running_window=float(options.get("running_window", RUNNING_WINDOW)))


