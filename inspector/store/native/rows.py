"""Rows of the native tables as model objects (no SQLAlchemy: the store preview uses them too)."""

from __future__ import annotations

import functools
import json
from collections import namedtuple
from typing import Any

from inspector import limits
from inspector.errors import CorruptDataError, ResumeSpecError
from inspector.model import CheckpointInfo, RunInfo


@functools.lru_cache(maxsize=64)
def row_type(names: tuple[str, ...]) -> type:
    """A named-tuple type for rows with these columns: attribute access on it is C-level,
    where SQLAlchemy's Row resolves every attribute in Python (listing 10,000 runs spent
    0.35 s there)."""
    return namedtuple("Row", names, rename=True)  # type: ignore[misc]


def json_field(text: str | None, default: Any) -> Any:
    """A JSON text column decoded (``default`` when empty); CorruptDataError when damaged."""
    if not text:
        return default
    try:
        value = json.loads(text)
    except RecursionError as err:
        raise CorruptDataError("A stored JSON field nests too deep to be read (the store is damaged).") from err
    except (ValueError, TypeError) as err:
        raise CorruptDataError(f"A stored JSON field is damaged ({err}).") from err
    return limits.check_depth(value, "A stored JSON field")


def run_from_row(row: Any) -> RunInfo:
    """A RunInfo from a ci_runs row."""
    return RunInfo(
        id=row.id, name=row.name, agent=row.agent or "", status=row.status,
        created=row.created, updated=row.updated, checkpoint_count=row.checkpoint_count,
        head_seq=row.head_seq, owner_host=row.owner_host, owner_pid=row.owner_pid,
        heartbeat=row.heartbeat, epoch=row.epoch, resumable=bool(row.resumable),
        not_resumable_reason=row.not_resumable_reason,
        resume_spec=json_field(row.resume_spec, None), parent_run=row.parent_run,
        parent_checkpoint=row.parent_checkpoint, fork_reason=row.fork_reason,
        labels=json_field(row.labels, {}), last_error=row.last_error,
        tasks_done=row.tasks_done, tasks_total=row.tasks_total,
        checks_passed=row.checks_passed, checks_total=row.checks_total)


def checkpoint_from_row(row: Any, branches: dict | None = None) -> CheckpointInfo:
    """A CheckpointInfo from a ci_checkpoints row (meta not needed)."""
    return CheckpointInfo(
        id=row.id, run_id=row.run_id, seq=row.seq, kind=row.kind, name=row.name,
        created=row.created, parent_id=row.parent_id, size=row.size,
        size_delta=row.size_delta, ops=row.ops, tasks_done=row.tasks_done,
        tasks_total=row.tasks_total, checks_passed=row.checks_passed,
        checks_total=row.checks_total, change=row.change or "",
        state_hash=bytes(row.state_hash), tasks_hash=bytes(row.tasks_hash) if row.tasks_hash else None,
        branch_count=(branches or {}).get(row.id, 0))


def check_spec(spec: object) -> dict:
    """``spec`` itself when it is a well-formed resume spec (``argv`` a non-empty list of
    strings, ``cwd`` a string, ``env`` a map of strings to strings, ``inherit`` a list of
    strings); ResumeSpecError saying what is wrong otherwise. Checked when a spec is written
    and again when one is read (a stored argv that is a string must not run letter by letter)."""
    if not isinstance(spec, dict):
        raise ResumeSpecError("The resume spec is not an object.")
    argv = spec.get("argv")
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        raise ResumeSpecError("The resume spec's argv is not a non-empty list of strings.")
    if not isinstance(spec.get("cwd", ""), str):
        raise ResumeSpecError("The resume spec's cwd is not a string.")
    env = spec.get("env") or {}
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise ResumeSpecError("The resume spec's env is not a map of strings to strings.")
    inherit = spec.get("inherit") or []
    if not isinstance(inherit, list) or not all(isinstance(k, str) for k in inherit):
        raise ResumeSpecError("The resume spec's inherit is not a list of names.")
    return spec
