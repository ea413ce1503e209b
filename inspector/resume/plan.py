"""What a resume would do (``ResumePlan``), shared by the native and the LangGraph resume."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from collections.abc import Mapping

from inspector.model import CheckpointInfo, RunInfo
from inspector.record.handoff import ENV_VAR
from inspector.resume.launch import display_env
from inspector.resume.liveness import Owner
from inspector.resume.replay import ReplayCost

CONTINUE = "continue"
FORK = "fork"


@dataclass(frozen=True)
class ResumePlan:
    """What a resume from ``checkpoint`` would do; computed without writing anything.

    ``mode`` is ``continue`` (the same run goes on under a new ownership epoch) or
    ``fork`` (a fork is made first and the fork is resumed). ``env`` is the environment
    recorded in the resume spec; ``inherit`` names variables (secrets) whose values are
    taken from the launcher's environment at launch.
    """

    store_url: str
    store_display: str
    run: RunInfo
    checkpoint: CheckpointInfo
    mode: str
    why: str
    owner: Owner
    argv: tuple[str, ...]
    cwd: str
    env: Mapping[str, str]
    inherit: tuple[str, ...]
    replay: ReplayCost
    missing: tuple[str, ...] = field(default=())

    def describe(self) -> str:
        """Several lines for the CLI: what runs, where, with which environment, and why."""
        action = ("continue run " + self.run.id if self.mode == CONTINUE
                  else f"fork run {self.run.id} at #{self.checkpoint.seq}, then resume the fork")
        lines = [f"resume from {self.run.id}:{self.checkpoint.seq} ({self.checkpoint.kind} "
                 f"{self.checkpoint.name!r}) — {action}", f"  why: {self.why}",
                 f"  command: {shlex.join(self.argv)}",
                 f"  current owner: {self.owner.text}", f"  replay: {self.replay.describe()}",
                 f"  working directory: {self.cwd}", "  environment:"]
        lines += [f"    {k}={v}" for k, v in sorted(display_env(self.env).items())]
        lines += [f"    {k} (passed from this environment)" for k in self.inherit if k not in self.missing]
        lines += [f"    {k} (NOT SET here; the process will not get it)" for k in self.missing]
        lines.append(f"    {ENV_VAR}=<hand-off: store, run, checkpoint, new epoch>")
        return "\n".join(lines)
