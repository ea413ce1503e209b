"""Frozen value objects that cross layers: store info, runs, checkpoints, snapshots."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

RUN_STATUSES = ("running", "completed", "failed", "crashed", "interrupted", "stuck", "forked")
ACTIVE_STATUSES = ("running", "stuck", "crashed")   # runs whose owner may still be at work
CHECKPOINT_KINDS = ("input", "llm", "tool", "step", "fork", "resume", "final", "update", "loop")


@dataclass(frozen=True)
class Capability:
    """Whether a store's adapter offers one action; ``reason`` says why not (one sentence),
    or, when offered, how it is done (e.g. "through the crewai package in your environment")."""

    available: bool
    reason: str = ""


OFFERED = Capability(True)


@dataclass(frozen=True)
class Capabilities:
    """The optional actions a store adapter declares: fork, resume, live updates.

    The GUI and CLI offer exactly these; an action that is absent says ``reason``.
    """

    fork: Capability = Capability(False, "This kind of store cannot be forked from here.")
    resume: Capability = Capability(False, "This kind of store cannot be resumed from here.")
    live: Capability = Capability(False, "This kind of store does not report changes.")

    def get(self, action: str) -> Capability:
        """The capability named ``action`` ("fork", "resume" or "live")."""
        return getattr(self, action)


NATIVE_CAPABILITIES = Capabilities(OFFERED, OFFERED, OFFERED)
LANGGRAPH_CAPABILITIES = Capabilities(
    Capability(True, "A raw fork here, or through your graph (update_state) when one is set."),
    Capability(True, "Through your graph (module:attr), run in your environment."),
    OFFERED)


@dataclass(frozen=True)
class StoreInfo:
    """What is open: a display name, its kind and backend, whether it is read-only, and what
    its adapter can do (``capabilities``; ``label`` is the kind's name for people)."""

    url: str
    display: str
    kind: str  # "native" | "langgraph" | "openai-agents" | "crewai" | "google-adk" | a third party's
    backend: str  # "sqlite" | "postgresql" | "folder"
    format_version: int | None
    read_only: bool
    notice: str = ""  # what the user should know about how it is read ('' when nothing)
    capabilities: Capabilities = Capabilities()
    label: str = ""


@dataclass(frozen=True)
class RunInfo:
    """One run (a LangGraph thread) as listed: identity, status, owner, lineage and score."""

    id: str
    name: str
    agent: str
    status: str
    created: float
    updated: float
    checkpoint_count: int = 0
    head_seq: int = -1
    owner_host: str | None = None
    owner_pid: int | None = None
    heartbeat: float | None = None
    epoch: int = 0
    resumable: bool = True
    not_resumable_reason: str | None = None
    resume_spec: dict | None = None
    parent_run: str | None = None
    parent_checkpoint: int | str | None = None
    fork_reason: str | None = None
    labels: dict = field(default_factory=dict)
    last_error: str | None = None
    tasks_done: int = 0
    tasks_total: int = 0
    checks_passed: int = 0
    checks_total: int = 0
    damaged: str = ""  # why this row is damaged ('' when it is not); the rest still lists

    @property
    def score(self) -> tuple[int, int]:
        """Cumulative binary score: (checks passed, checks total)."""
        return (self.checks_passed, self.checks_total)


@dataclass(frozen=True)
class CheckpointInfo:
    """One checkpoint as listed in a timeline (no state loaded)."""

    id: int | str
    run_id: str
    seq: int
    kind: str
    name: str
    created: float
    parent_id: int | str | None = None
    size: int = 0
    size_delta: int = 0
    ops: int = 1
    tasks_done: int = 0
    tasks_total: int = 0
    checks_passed: int = 0
    checks_total: int = 0
    change: str = ""
    state_hash: bytes | None = None
    tasks_hash: bytes | None = None
    lane: str = ""  # subgraph namespace ("" for the main lane)
    branch_count: int = 0  # runs forked from this checkpoint (or LangGraph children - 1)
    damaged: str = ""  # why this row is damaged ('' when it is not); the rest still lists
    pinned: bool = False   # prune never removes it (native stores: ``ci_pins``)


@dataclass(frozen=True)
class Snapshot:
    """One checkpoint with its decoded state, task state and metadata."""

    info: CheckpointInfo
    state: Any
    tasks: dict | None
    meta: dict = field(default_factory=dict)
    problems: tuple[str, ...] = ()  # parts that could not be read (a damaged task state…)


@dataclass(frozen=True)
class ChangeSet:
    """What changed in a store since a cursor: runs touched and checkpoints added."""

    cursor: Any
    run_ids: tuple[str, ...] = ()
    new_checkpoints: tuple[CheckpointInfo, ...] = ()

    @property
    def empty(self) -> bool:
        """True when nothing changed."""
        return not self.run_ids and not self.new_checkpoints
