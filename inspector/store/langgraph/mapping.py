"""Listing rows → ``CheckpointInfo`` (backend-independent; no checkpoint body is decoded).

Semantics (what the GUI relies on):

* ``seq`` numbers *all* checkpoints of the thread — root and subgraph namespaces — in
  ``(checkpoint_id, namespace)`` order. LangGraph ids are time-ordered UUIDv6, so this is
  creation order and a subgraph's checkpoints sit between the root steps around them.
* ``lane`` is the namespace (``""`` root, ``"planner:<task_id>"`` subgraph). A lane's first
  checkpoint has no parent inside its namespace; its ``parent_id`` is then the root
  (enclosing-namespace) checkpoint whose task started the subgraph (``metadata.parents``),
  so a lane can be drawn branching off the step that ran it.
* ``kind`` is ``metadata.source`` (input, loop, update, fork); ``name`` is the node(s) whose
  finished tasks produced a loop checkpoint (read from the parent's ``task_path``), else the
  source (a PUSH task — a ``Send``, e.g. each ToolNode call — is named by its packet's node,
  read from the parent's ``__pregel_tasks``); ``change`` lists the state channels those tasks
  wrote, and for ``update``/``fork`` checkpoints the channels whose version moved.
* ``branch_count`` is the number of children minus one (a fork or ``update_state`` adds one).
* ``created`` comes from the UUIDv6 id (equal to ``ts`` within microseconds).
* Task and check counts are 0 in listings (they need the body); ``load`` fills them.
* ``THREAD:-1`` is the thread's root head (the last checkpoint with ``lane == ""``, what
  LangGraph's ``get_state`` shows), even when the thread stopped inside a subgraph; negative
  seqs count back over the main graph's checkpoints.
* Rare: two subgraphs running in parallel can commit out of id order, so a checkpoint
  reported by ``changes_since`` may sort before one already listed; re-list from its seq.
"""

from __future__ import annotations

import functools
import json
from collections import defaultdict
from typing import Any
from collections.abc import Iterable

from inspector.model import CHECKPOINT_KINDS, CheckpointInfo
from inspector.store.branches import TopologyRow
from inspector.store.langgraph.decode import revive_lc
from inspector.store.langgraph.ids import id_step, id_time, make_id
from inspector.store.langgraph.pregel import is_control_channel, node_of, parent_namespace, push_index
from inspector.store.langgraph.rows import CHANNEL_SEP, ListRow, TaskOutputRow

SOURCE_NAMES = {"input": "input", "update": "update", "fork": "fork"}


def parse_metadata(raw: Any) -> dict:
    """Checkpoint metadata as a dict (JSON text, bytes or an already-parsed dict)."""
    if isinstance(raw, dict):
        return raw
    if raw is None:
        return {}
    try:
        text = bytes(raw).decode("utf-8") if isinstance(raw, (bytes, bytearray, memoryview)) else str(raw)
        value = json.loads(text, object_hook=revive_lc) if '"lc"' in text else json.loads(text)
    except (ValueError, RecursionError):
        return {"__error__": "metadata is not valid JSON"}
    return value if isinstance(value, dict) else {"value": value}


def metadata_step(meta: dict, checkpoint_id: str) -> int | None:
    """``metadata.step``, else the step encoded in the id."""
    step = meta.get("step")
    if isinstance(step, int) and not isinstance(step, bool):
        return step
    return id_step(checkpoint_id)


def kind_of(meta: dict) -> str:
    """The checkpoint kind: LangGraph's ``metadata.source`` when it is a known one."""
    source = meta.get("source")
    return source if isinstance(source, str) and source in CHECKPOINT_KINDS else "step"


def group_outputs(rows: Iterable[TaskOutputRow]) -> dict[tuple[str, str], list[TaskOutputRow]]:
    """Task output rows grouped by (namespace, checkpoint id)."""
    grouped: dict[tuple[str, str], list[TaskOutputRow]] = defaultdict(list)
    for row in rows:
        grouped[(row.ns, row.checkpoint_id)].append(row)
    return grouped


@functools.lru_cache(maxsize=4096)
def _task_output(task_path: str, channels: str) -> tuple[str | None, tuple[str, ...]]:
    """(node, state channels) of one task's outputs (cached: steps repeat their shape)."""
    names = sorted({c for c in channels.split(CHANNEL_SEP) if not is_control_channel(c)})
    return node_of(task_path), tuple(names)


def has_push(outputs: Iterable[TaskOutputRow]) -> bool:
    """True when a PUSH (``Send``) task is among the outputs (its node needs the Send packet)."""
    return any(push_index(o.task_path) is not None for o in outputs)


def _output(row: TaskOutputRow, sends: list[str | None] | None) -> tuple[str | None, tuple[str, ...]]:
    node, channels = _task_output(row.task_path, row.channels)
    index = push_index(row.task_path)
    if index is not None and sends and 0 <= index < len(sends) and sends[index]:
        node = sends[index]
    return node, channels


def producers(outputs: list[TaskOutputRow],
              sends: list[str | None] | None = None) -> tuple[list[str], list[str]]:
    """(nodes whose tasks finished, state channels they wrote) from a parent's task outputs;
    ``sends`` (the parent's Send packets' nodes) names PUSH tasks (a ToolNode step: ``tools``)."""
    if len(outputs) == 1:
        node, channels = _output(outputs[0], sends)
        return ([node] if node else []), list(channels)
    found = [_output(o, sends) for o in outputs]
    nodes = {n for n, _ in found if n}
    return sorted(nodes), sorted({c for _, chans in found for c in chans})


def stored_step_name(source: str, outputs: Iterable[tuple[str, Iterable[str]]],
                     sends: list[str | None] | None = None) -> tuple[str, str]:
    """The name and change a native store keeps for a LangGraph checkpoint (``InspectorSaver``
    and ``import`` alike), from its source and its parent's task writes ``(task path,
    channels)``: a loop step is named by the nodes whose tasks wrote (``producers``) and its
    change names the state channels they wrote; any other checkpoint is named by its source."""
    if source != "loop":
        return source, ""
    nodes, channels = producers([TaskOutputRow("", "", path or "", CHANNEL_SEP.join(sorted(written)))
                                 for path, written in outputs], sends)
    return (", ".join(nodes) if nodes else source), ", ".join(channels)    # as ``name_and_change`` says it


def edit_change(source: str, versions: dict, parent: dict | None) -> str:
    """The Change of an ``update``/``fork`` checkpoint: the state channels whose version moved
    from its parent's (what ``update_state`` wrote), or ``copy`` for a fork that changed none.
    ``parent`` None: the parent is gone (a prune took it), and the channels holding the newest
    version are those it wrote."""
    if parent is None:
        names = newest_channels(versions)
    else:
        names = sorted(str(c) for c, v in versions.items()
                       if isinstance(c, str) and not is_control_channel(c) and parent.get(c) != v)
    return ", ".join(names) if names else ("copy" if source == "fork" else "")


def orphan_step_name(body: Any, parent: dict | None = None) -> tuple[str, str] | None:
    """Name and change of a loop checkpoint no task writes on its parent name: the parent is
    gone (a prune took it, with its writes), or they were never saved (``durability="exit"``
    saves only the checkpoint a run ends at: no writes, no step between). From its own body:
    LangGraph gives every channel a step writes that step's one new version, and records in
    ``versions_seen[node]`` the versions a node's task saw when it ran, so the nodes that ran
    last saw the highest version seen, and the channels they wrote hold the highest version of
    all. With the ``parent``'s channel versions, the change is every channel whose version moved
    since (the steps not saved wrote them too). None when the body does not say."""
    if not isinstance(body, dict):
        return None
    seen, versions = body.get("versions_seen"), body.get("channel_versions")
    if not isinstance(seen, dict) or not isinstance(versions, dict):
        return None
    latest = {node: max(map(_version, vs.values()), default=-1) for node, vs in seen.items()
              if isinstance(node, str) and not node.startswith("__") and isinstance(vs, dict)}
    top = max(latest.values(), default=-1)
    nodes = sorted(node for node, v in latest.items() if v == top >= 0)
    return (", ".join(nodes), edit_change("loop", versions, parent)) if nodes else None


def newest_channels(versions: dict) -> list[str]:
    """The state channels holding the newest version: those the step (or ``update_state``) that
    made a checkpoint wrote — every channel one step writes gets that step's one new version."""
    newest = max(map(_version, versions.values()), default=-1)
    return sorted(c for c, v in versions.items()
                  if isinstance(c, str) and not is_control_channel(c) and _version(v) == newest >= 0)


def _version(value: Any) -> int:
    """A channel version's step number (LangGraph's savers write ints, or strings whose part
    before the dot is the number); -1 for anything else."""
    if type(value) is int:
        return value
    if type(value) is float and value == value and abs(value) < 2 ** 62:
        return int(value)
    if isinstance(value, str):
        head = value.split(".", 1)[0]
        if head.isdigit() and len(head) < 40:
            return int(head)
    return -1


def _legacy_writer(meta: dict) -> list[str]:
    writes = meta.get("writes")
    return sorted(str(k) for k in writes) if isinstance(writes, dict) else []


def name_and_change(meta: dict, parent_outputs: list[TaskOutputRow] | None,
                    sends: list[str | None] | None = None) -> tuple[str, str]:
    """Timeline name and change summary of one checkpoint."""
    source = meta.get("source")
    if source == "loop":
        nodes, channels = producers(parent_outputs or [], sends)
        nodes = nodes or _legacy_writer(meta)
        return (", ".join(nodes) if nodes else "loop"), ", ".join(channels)
    if isinstance(source, str) and source:
        return SOURCE_NAMES.get(source, source), ""
    return "checkpoint", ""


def lane_parent(thread_id: str, row: ListRow, meta: dict, ids: dict[tuple[str, str], str]) -> str | None:
    """The parent id: within the namespace, else the enclosing step that started the lane."""
    if row.parent_id is not None:
        return ids.get((row.ns, row.parent_id)) or make_id(thread_id, row.ns, row.parent_id)
    outer = enclosing_step(row.ns, meta)
    return make_id(thread_id, *outer) if outer is not None else None


def enclosing_step(ns: str, meta: dict) -> tuple[str, str] | None:
    """(namespace, checkpoint id) of the enclosing step that started the lane ``ns`` (named
    in its first checkpoint's ``metadata.parents``); None for the root or when not named."""
    if not ns:
        return None
    parents = meta.get("parents")
    outer = parent_namespace(ns)
    if isinstance(parents, dict) and isinstance(parents.get(outer), str):
        return outer, parents[outer]
    return None


def _row_meta(row: ListRow) -> dict:
    if row.metadata is not None:
        return parse_metadata(row.metadata)
    return {"source": row.source, "step": row.step}


def row_source(row: ListRow) -> Any:
    """A listed row's ``metadata.source``."""
    return row.source if row.source is not None else _row_meta(row).get("source")


def build_infos(thread_id: str, rows: list[ListRow], offset: int,
                outputs: dict[tuple[str, str], list[TaskOutputRow]],
                children: dict[tuple[str, str], int],
                sends: dict[tuple[str, str], list[str | None]] | None = None,
                scores: dict[tuple[str, str], Any] | None = None) -> list[CheckpointInfo]:
    """CheckpointInfos for one listing page starting at seq ``offset``; ``sends`` holds the
    Send packets' nodes of parents whose outputs include PUSH tasks, by (ns, checkpoint id);
    ``scores`` the score (``taskstate.Score``) of those that have one."""
    infos = []
    ids: dict[tuple[str, str], str] = {}
    for i, row in enumerate(rows):
        meta = _row_meta(row)
        parent_outputs = outputs.get((row.ns, row.parent_id)) if row.parent_id else None
        name, change = name_and_change(meta, parent_outputs,
                                       (sends or {}).get((row.ns, row.parent_id)) if row.parent_id else None)
        ids[(row.ns, row.checkpoint_id)] = own = make_id(thread_id, row.ns, row.checkpoint_id)
        sc = (scores or {}).get((row.ns, row.checkpoint_id))
        graded = {} if sc is None else dict(tasks_done=sc.tasks_done, tasks_total=sc.tasks_total,
                                            checks_passed=sc.checks_passed, checks_total=sc.checks_total)
        infos.append(CheckpointInfo(
            id=own, run_id=thread_id, seq=offset + i,
            kind=kind_of(meta), name=name, created=id_time(row.checkpoint_id),
            parent_id=lane_parent(thread_id, row, meta, ids), size=row.size,
            size_delta=row.size - (row.parent_size or 0), change=change, lane=row.ns,
            branch_count=max(0, children.get((row.ns, row.checkpoint_id), 1) - 1), **graded))
    return infos


def topology_rows(thread_id: str, rows: list[ListRow]) -> list[TopologyRow]:
    """A whole thread's listing rows as ``TopologyRow``s (ids and parents as in ``build_infos``)."""
    found = []
    for seq, row in enumerate(rows):
        meta = _row_meta(row)
        source = meta.get("source")
        found.append(TopologyRow(seq, make_id(thread_id, row.ns, row.checkpoint_id),
                                 lane_parent(thread_id, row, meta, {}), row.ns,
                                 source if isinstance(source, str) else "",
                                 metadata_step(meta, row.checkpoint_id)))
    return found


def page_bounds(rows: list[ListRow]) -> tuple[str, str] | None:
    """The id range covering every checkpoint of a page and its parents."""
    ids = [r.checkpoint_id for r in rows] + [r.parent_id for r in rows if r.parent_id]
    return (min(ids), max(ids)) if ids else None
