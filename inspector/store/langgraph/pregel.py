"""LangGraph's execution rules read from stored data alone (no graph code, no langgraph import).

* Task status from pending writes — LangGraph's ``read_task_statuses`` rule: a task is
  *finished* iff it has an output write (any channel outside the control writes); else
  *errored* if it wrote ``__error__``; else *interrupted* if it wrote ``__interrupt__``;
  otherwise it has not finished (*pending*).
* Next nodes — node N is next when ``branch:to:N`` (``__start__`` for ``__start__``) is in
  ``channel_values`` and its version is newer than ``versions_seen[N]`` of that channel; or
  when a join barrier ``join:A+B:N`` (``add_edge([A, B], N)``) has seen every source and its
  version is newer than what N has seen; plus one PUSH task per ``Send`` packet pending in
  ``__pregel_tasks`` (its node is the packet's ``node``), listed first as LangGraph does.
* Task ids of tasks that have not written yet are LangGraph's own (``_algo.py``): XXH3-128
  (uuid5 for checkpoint v1) of the checkpoint id's bytes, the task namespace, the step, the
  node, PULL/PUSH and the sorted triggers (PULL) or the packet index (PUSH).
"""

from __future__ import annotations

import functools
import uuid
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Iterable

NULL_TASK_ID = "00000000-0000-0000-0000-000000000000"
ERROR = "__error__"
INTERRUPT = "__interrupt__"
RESUME = "__resume__"
ERROR_SOURCE_NODE = "__error_source_node__"
PREGEL_TASKS = "__pregel_tasks"
CONTROL_WRITES = frozenset({ERROR, ERROR_SOURCE_NODE, INTERRUPT, RESUME})
BRANCH_PREFIX = "branch:to:"
JOIN_PREFIX = "join:"
PUSH = "__pregel_push"
PULL = "__pregel_pull"
START = "__start__"
LATEST_CHECKPOINT_VERSION = 4
# ``__``-named channels that hold the graph's data, not its control: the whole state of a
# graph whose state is not a mapping (``StateGraph(Annotated[list, add])``), and an
# entrypoint's return value and what it saved for its next call (the functional API)
DATA_CHANNELS = frozenset({"__root__", "__end__", "__previous__"})

FINISHED, ERRORED, INTERRUPTED, PENDING = "finished", "errored", "interrupted", "pending"


def is_control_channel(name: Any) -> bool:
    """Channels that steer execution rather than hold state (``branch:to:*``, ``__*`` but
    ``DATA_CHANNELS``)."""
    return isinstance(name, str) and (name.startswith(BRANCH_PREFIX)
                                      or (name.startswith("__") and name not in DATA_CHANNELS)
                                      or (name.startswith(JOIN_PREFIX) and join_parts(name) is not None))


def join_parts(channel: str) -> tuple[frozenset[str], str] | None:
    """(sources, target) of a join barrier channel ``join:A+B:target``."""
    if not channel.startswith(JOIN_PREFIX):
        return None
    sources, sep, target = channel[len(JOIN_PREFIX):].rpartition(":")
    if not sep or not sources or not target:
        return None
    return frozenset(sources.split("+")), target


def push_index(task_path: str | None) -> int | None:
    """The packet index of a PUSH task path ``"~__pregel_push, 0000000001, …"``."""
    if not task_path:
        return None
    parts = [p.strip().strip("'\"") for p in task_path.strip().strip("()").split(",")]
    if len(parts) >= 2 and parts[0].lstrip("~") == PUSH:
        try:
            return int(parts[1])
        except ValueError:
            return None
    return None


def send_nodes(value: Any) -> list[str | None]:
    """The node of each ``Send`` packet in a ``__pregel_tasks`` value (lossless or plain)."""
    from inspector.store.langgraph.decode import plain_or_error
    if not isinstance(value, list):
        return []
    nodes: list[str | None] = []
    for item in value:
        plain = plain_or_error(item)
        node = plain.get("node") if isinstance(plain, dict) else None
        nodes.append(node if isinstance(node, str) else None)
    return nodes


@functools.lru_cache(maxsize=4096)
def node_of(task_path: str | None) -> str | None:
    """The node name in a task path such as ``"~__pregel_pull, review"`` (cached: paths
    repeat); for a call of a functional ``@task``, the node or entrypoint that made the call."""
    if not task_path:
        return None
    if (call := _call(task_path)) is not None:
        return call[0]
    parts = _path_parts(task_path)
    if len(parts) >= 2 and parts[0].lstrip("~") == PULL:
        return parts[1] or None
    if len(parts) >= 2 and parts[0].lstrip("~") == PUSH:
        return f"push:{parts[1]}"
    return None


def is_call(task_path: str | None) -> bool:
    """Whether a task is a call of a functional ``@task``: not one of the tasks LangGraph
    prepares from the checkpoint."""
    return _call(task_path) is not None


def call_index(task_path: str | None) -> int | None:
    """A functional call's place among its caller's calls (from 0; None for other tasks)."""
    call = _call(task_path)
    return call[1] if call is not None else None


@functools.lru_cache(maxsize=4096)
def task_label(task_path: str | None) -> str | None:
    """How a task is named in a task list: its node (``node_of``), and for a functional call
    the node that made it with the call's place among its calls (``"workflow call 2"``)."""
    call = _call(task_path)
    if call is None or call[0] is None:
        return node_of(task_path)
    return f"{call[0]} call {call[1] + 1}" if call[1] is not None else f"{call[0]} call"


@functools.lru_cache(maxsize=4096)
def _call(task_path: str | None) -> tuple[str | None, int | None] | None:
    """(the node that made it, its place among that node's calls) for a functional call's task
    path — a PUSH whose path holds the path of the task that made the call, flattened:
    ``"~__pregel_push, ~__pregel_pull, workflow, 0000000002, 0000000001"`` — else None."""
    if not task_path:
        return None
    parts = _path_parts(task_path)
    if len(parts) < 2 or parts[0].lstrip("~") != PUSH or not parts[1].startswith("~"):
        return None
    # the node: the first part that is not a path marker; its place: the number after it
    node = next((p for p in parts[1:] if p and not p.startswith("~") and not p.isdigit()), None)
    after = parts[parts.index(node, 1) + 1:] if node is not None else []
    return node, (int(after[0]) if after and after[0].isdigit() else None)


def _path_parts(task_path: str) -> list[str]:
    return [p.strip().strip("'\"") for p in task_path.strip().strip("()").split(",")]


@dataclass
class TaskWrites:
    """One task's pending writes summarised by LangGraph's status rule."""

    task_id: str
    node: str | None = None
    task_path: str = ""
    channels: list[str] = field(default_factory=list)
    has_error: bool = False
    has_interrupt: bool = False
    has_output: bool = False

    @property
    def status(self) -> str:
        """finished, errored, interrupted or pending."""
        if self.has_output:
            return FINISHED
        if self.has_error:
            return ERRORED
        if self.has_interrupt:
            return INTERRUPTED
        return PENDING


@functools.lru_cache(maxsize=4096)
def _update_ids(checkpoint_id: str, index: int) -> frozenset[str]:
    try:
        base = uuid.UUID(checkpoint_id)
    except ValueError:
        return frozenset()
    return frozenset(str(uuid.uuid5(base, name)) for name in (INTERRUPT, f"{INTERRUPT}:{index}"))


@functools.lru_cache(maxsize=4096)
def _update_index(task_path: str) -> int | None:
    """``i`` of an update's task path ``"~__interrupt__, 000000000i"`` (None for any other path)."""
    parts = _path_parts(task_path)
    if len(parts) != 2 or parts[0].lstrip("~") != INTERRUPT:
        return None
    return int(parts[1]) if parts[1].isdigit() else 0


def is_update(task_id: str, task_path: str | None, checkpoint_id: str | None) -> bool:
    """Whether a write on checkpoint ``checkpoint_id`` is ``update_state``'s own, which no task
    of the step made. LangGraph stores the writes of an update on the checkpoint it was applied
    to, under the task path ``(__interrupt__, i)`` and the id ``uuid5(checkpoint id,
    "__interrupt__")`` (``"__interrupt__:i"`` for a later update of the same superstep; older
    versions: the first's) — unless the update was made as a node the step was to run: it
    then takes that task's id, and LangGraph shows that task finished with the update's writes.
    A writes table without task paths tells an update by its id alone."""
    index = _update_index(task_path) if task_path else 0
    if index is None:
        return False
    if checkpoint_id is None:
        return bool(task_path)
    return task_id in _update_ids(checkpoint_id, index)


def summarise_tasks(rows: Iterable[tuple[str, str, str]], checkpoint_id: str | None = None) -> dict[str, TaskWrites]:
    """Group ``(task_id, task_path, channel)`` write rows of checkpoint ``checkpoint_id`` into
    per-task summaries.

    Writes from the null task are input to the step, not task activity, and are skipped; so are
    ``update_state``'s own (``is_update``).
    """
    tasks: dict[str, TaskWrites] = {}
    for task_id, task_path, channel in rows:
        if task_id == NULL_TASK_ID or is_update(task_id, task_path, checkpoint_id):
            continue
        task = tasks.get(task_id)
        if task is None:
            task = tasks[task_id] = TaskWrites(task_id, task_label(task_path), task_path or "")
        if channel not in task.channels:
            task.channels.append(channel)
        if channel == INTERRUPT:
            task.has_interrupt = True
        elif channel == ERROR:
            task.has_error = True
        elif channel not in CONTROL_WRITES:
            task.has_output = True
    return tasks


def _version_key(version: Any) -> tuple:
    """Comparable form of a channel version (``"000…04.0.59…"`` strings or ints)."""
    if isinstance(version, bool):
        return (0, int(version), 0.0)
    if isinstance(version, (int, float)):
        return (0, float(version), 0.0)
    if isinstance(version, str):
        head, _, tail = version.partition(".")
        try:
            return (0, int(head), float("0." + tail) if tail else 0.0)
        except ValueError:
            return (1, version, 0.0)
    return (2, repr(version), 0.0)


def version_newer(current: Any, seen: Any) -> bool:
    """True when ``current`` is newer than ``seen`` (a missing ``seen`` counts as oldest)."""
    if current is None:
        return False
    if seen is None:
        return True
    return _version_key(current) > _version_key(seen)


def _join_ready(value: Any, sources: frozenset[str]) -> bool:
    from inspector.store.langgraph.decode import plain_or_error
    plain = plain_or_error(value)
    if isinstance(plain, dict) and plain.get("__type__") in ("builtins.set", "builtins.frozenset"):
        plain = plain.get("value")     # the barrier's seen sources: a set, shown tagged
    return isinstance(plain, list) and {v for v in plain if isinstance(v, str)} == set(sources)


def start_node(versions_seen: Any, start: str | None = None) -> str:
    """The node the input channel triggers: the ``__start__`` node of a ``StateGraph``, or an
    entrypoint of the functional API (which has no ``__start__`` node): the node that has
    seen the input channel before, else ``start`` (known from elsewhere: see
    ``entrypoint_of``), else ``__start__``."""
    seen_all = versions_seen if isinstance(versions_seen, dict) else {}
    if START in seen_all:
        return START
    for node, seen in seen_all.items():
        if isinstance(node, str) and not node.startswith("__") and isinstance(seen, dict) and START in seen:
            return node
    return start or START


def entrypoint_of(checkpoint_id: str, ns: str, step: Any, checkpoint: dict,
                  written: Iterable[tuple[str, str]]) -> str | None:
    """The entrypoint a fresh functional-API thread's first checkpoint triggered, from its
    pending writes ``(task_id, task_path)``: a PULL task whose id is LangGraph's id of that
    node triggered by the input channel at this checkpoint (None if there is none)."""
    values, seen = checkpoint.get("channel_values"), checkpoint.get("versions_seen")
    if (not isinstance(values, dict) or START not in values or (isinstance(seen, dict) and START in seen)
            or start_node(seen) != START):
        return None     # no input to run, or ``versions_seen`` already names what it triggers
    version = checkpoint.get("v")
    run_step = str((step if isinstance(step, int) and not isinstance(step, bool) else -1) + 1)
    for task_id, task_path in dict(written).items():
        node = node_of(task_path) if task_path and task_path.lstrip("~").startswith(PULL) else None
        if node and node != START:
            task_ns = f"{ns}|{node}" if ns else node
            if langgraph_task_id(checkpoint_id, version, task_ns, run_step, node, PULL, START) == task_id:
                return node
    return None


def pull_nodes(channel_names: Iterable[Any], channel_versions: Any, versions_seen: Any,
               values: dict | None = None, start: str | None = None) -> list[str]:
    """Nodes (PULL tasks) whose trigger channel is present and newer than what they have seen
    (``start``: see ``start_node``)."""
    versions = channel_versions if isinstance(channel_versions, dict) else {}
    seen_all = versions_seen if isinstance(versions_seen, dict) else {}
    found: list[str] = []
    for channel in channel_names:
        if not isinstance(channel, str):
            continue
        if channel.startswith(BRANCH_PREFIX):
            node = channel[len(BRANCH_PREFIX):]
        elif channel == START:
            node = start_node(seen_all, start)
        elif (join := join_parts(channel)) is not None:
            if values is None or not _join_ready(values.get(channel), join[0]):
                continue
            node = join[1]
        else:
            continue
        seen = seen_all.get(node)
        seen_version = seen.get(channel) if isinstance(seen, dict) else None
        if version_newer(versions.get(channel), seen_version) and node not in found:
            found.append(node)
    return found


def next_nodes(channel_names: Iterable[Any], channel_versions: Any, versions_seen: Any,
               values: dict | None = None, start: str | None = None) -> list[str]:
    """LangGraph's ``next``: one entry per pending Send packet (its node), then the PULL nodes.

    Without ``values`` (only channel names known) joins and Send packets are not counted.
    """
    names = list(channel_names)
    pushes = [n for n in send_nodes(values.get(PREGEL_TASKS)) if n] if values is not None else []
    return pushes + pull_nodes(names, channel_versions, versions_seen, values, start)


def _to_bytes(part: str | bytes) -> bytes:
    return part.encode() if isinstance(part, str) else part


def langgraph_task_id(checkpoint_id: str, version: Any, *parts: str) -> str | None:
    """LangGraph's id of a task (see the module docstring); None for a malformed checkpoint id."""
    import binascii
    import hashlib
    try:
        namespace = binascii.unhexlify(checkpoint_id.replace("-", ""))
    except (binascii.Error, ValueError):
        return None
    data = b"".join(_to_bytes(p) for p in parts)
    if isinstance(version, int) and version > 1:
        import xxhash
        text = xxhash.xxh3_128_hexdigest(namespace + data)
    else:
        sha = hashlib.sha1(namespace, usedforsecurity=False)
        sha.update(data)
        text = sha.hexdigest()
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:32]}"


def planned_tasks(checkpoint_id: str, ns: str, step: Any, checkpoint: dict, start: str | None = None) -> list[dict]:
    """The tasks LangGraph prepares from a checkpoint: ``{task_id, node, kind, index}``.

    PUSH tasks (one per pending Send packet) first, then PULL tasks; ``step`` is the
    checkpoint's metadata step (the tasks run at ``step + 1``); ``start``: see ``start_node``.
    """
    values = got_values if isinstance(got_values := checkpoint.get("channel_values"), dict) else {}
    versions = got_versions if isinstance(got_versions := checkpoint.get("channel_versions"), dict) else {}
    version = checkpoint.get("v")
    run_step = str((step if isinstance(step, int) and not isinstance(step, bool) else -1) + 1)
    parent_ns = ns
    out: list[dict] = []
    for index, node in enumerate(send_nodes(values.get(PREGEL_TASKS))):
        if node is None:
            continue
        task_ns = f"{parent_ns}|{node}" if parent_ns else node
        out.append({"task_id": langgraph_task_id(checkpoint_id, version, task_ns, run_step, node, PUSH,
                                                 str(index)),
                    "node": node, "kind": "push", "index": index})
    channels = [c for c in {**versions, **values} if isinstance(c, str)]
    entry = start_node(checkpoint.get("versions_seen"), start)
    for node in pull_nodes(values.keys(), versions, checkpoint.get("versions_seen"), values, start):
        if node == entry:
            triggers = [START]
        else:
            triggers = sorted(c for c in channels if c == BRANCH_PREFIX + node
                              or ((j := join_parts(c)) is not None and j[1] == node))
        task_ns = f"{parent_ns}|{node}" if parent_ns else node
        out.append({"task_id": langgraph_task_id(checkpoint_id, version, task_ns, run_step, node, PULL,
                                                 *triggers),
                    "node": node, "kind": "pull", "index": None})
    return out


def with_planned(tasks: list[dict], planned: list[dict]) -> list[dict]:
    """Task dicts from the writes completed by the planned tasks: a written task gets its
    planned node (PUSH tasks: the Send packet's node), a planned task without writes is added
    as pending with LangGraph's task id. Planned tasks whose id matches no write fall back to
    ``with_next`` (by node name)."""
    by_id = {p["task_id"]: p for p in planned if p["task_id"]}
    matched = set()
    for task in tasks:
        plan = by_id.get(task.get("task_id"))
        if plan is not None:
            task["node"] = plan["node"]
            matched.add(plan["task_id"])
    rest = [p for p in planned if p["task_id"] not in matched]
    if not rest:
        return tasks
    known_ids = {t.get("task_id") for t in tasks}
    if all(t.get("node") for t in tasks) and not (known_ids & {p["task_id"] for p in rest}):
        names = {t.get("node") for t in tasks if t.get("task_id") not in matched}
        return tasks + [{"task_id": p["task_id"], "node": p["node"], "task_path": "", "status": PENDING,
                         "channels": []} for p in rest if p["node"] not in names]
    return with_next(tasks, [p["node"] for p in rest])


def with_next(tasks: list[dict], next_list: Iterable[str]) -> list[dict]:
    """Task dicts (``node``, ``status``…) completed with a pending entry per next node not yet run.

    Without ``task_path`` (older writes tables) tasks have no node name: a single unnamed task
    and a single unmatched next node are the same task; otherwise unmatched next nodes are
    only added when no task is unnamed (they may be the unnamed ones).
    """
    known = {t.get("node") for t in tasks}
    missing = [n for n in next_list if n not in known]
    unnamed = [t for t in tasks if not t.get("node")]
    if len(unnamed) == 1 and len(missing) == 1:
        unnamed[0]["node"] = missing[0]
        return tasks
    if unnamed:
        return tasks
    return tasks + [{"task_id": None, "node": n, "task_path": "", "status": PENDING, "channels": []}
                    for n in missing]


def parent_namespace(ns: str) -> str:
    """The enclosing namespace of a subgraph namespace (``"a:1|b:2"`` → ``"a:1"``)."""
    return ns.rpartition("|")[0] if "|" in ns else ""


def namespace_task(ns: str) -> tuple[str, str] | None:
    """(node, task_id) of the innermost level of a namespace ``"node:<task_id>"``."""
    last = ns.rpartition("|")[2]
    node, sep, task_id = last.partition(":")
    return (node, task_id) if sep else None
