"""LangGraph's execution rules read from stored data alone (no graph code, no langgraph import).

* Task status from pending writes — LangGraph's ``read_task_statuses`` rule: a task is
  *finished* iff it has an output write (any channel outside the control writes); else
  *errored* if it wrote ``__error__``; else *interrupted* if it wrote ``__interrupt__``;
  otherwise it has not finished (*pending*).
* Next nodes — node N is next when ``branch:to:N`` (``__start__`` for ``__start__``) is in
  ``channel_values`` and its version is newer than ``versions_seen[N]`` of that channel.
"""

from __future__ import annotations

import functools
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
START = "__start__"
LATEST_CHECKPOINT_VERSION = 4

FINISHED, ERRORED, INTERRUPTED, PENDING = "finished", "errored", "interrupted", "pending"


def is_control_channel(name: Any) -> bool:
    """Channels that steer execution rather than hold state (``branch:to:*``, ``__*``)."""
    return isinstance(name, str) and (name.startswith(BRANCH_PREFIX) or name.startswith("__"))


@functools.lru_cache(maxsize=4096)
def node_of(task_path: str | None) -> str | None:
    """The node name in a task path such as ``"~__pregel_pull, review"`` (cached: paths repeat)."""
    if not task_path:
        return None
    text = task_path.strip().strip("()")
    parts = [p.strip().strip("'\"") for p in text.split(",")]
    if len(parts) >= 2 and parts[0].lstrip("~") == "__pregel_pull":
        return parts[1] or None
    if len(parts) >= 2 and parts[0].lstrip("~") == "__pregel_push":
        return f"push:{parts[1]}"
    return None


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


def summarise_tasks(rows: Iterable[tuple[str, str, str]]) -> dict[str, TaskWrites]:
    """Group ``(task_id, task_path, channel)`` write rows into per-task summaries.

    Writes from the null task are input to the step, not task activity, and are skipped.
    """
    tasks: dict[str, TaskWrites] = {}
    for task_id, task_path, channel in rows:
        if task_id == NULL_TASK_ID:
            continue
        task = tasks.get(task_id)
        if task is None:
            task = tasks[task_id] = TaskWrites(task_id, node_of(task_path), task_path or "")
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


def next_nodes(channel_names: Iterable[Any], channel_versions: Any, versions_seen: Any) -> list[str]:
    """Nodes whose trigger channel is present and newer than what the node has seen."""
    versions = channel_versions if isinstance(channel_versions, dict) else {}
    seen_all = versions_seen if isinstance(versions_seen, dict) else {}
    found: list[str] = []
    for channel in channel_names:
        if not isinstance(channel, str):
            continue
        if channel.startswith(BRANCH_PREFIX):
            node = channel[len(BRANCH_PREFIX):]
        elif channel == START:
            node = START
        else:
            continue
        seen = seen_all.get(node)
        seen_version = seen.get(channel) if isinstance(seen, dict) else None
        if version_newer(versions.get(channel), seen_version) and node not in found:
            found.append(node)
    return found


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
