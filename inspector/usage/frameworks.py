"""The storage report of another framework's session store (OpenAI Agents SDK, CrewAI, Google
ADK), from what its reader lists: runs and their checkpoints with sizes (no value decoded).

The readers give each checkpoint a ``size`` in bytes of what its framework stored (JSON text),
and its ``size_delta`` from the previous one. What a checkpoint *stored* depends on how the
framework keeps a session, as the readers document it:

* a log (OpenAI Agents sessions, ADK events): each checkpoint is one new row, and its ``size`` is
  the conversation so far — it stored its ``size_delta``; a branch's first checkpoint (kind
  ``fork``) names the items it shares with its origin and stores nothing;
* snapshots (CrewAI, and any other kind): each checkpoint is a whole snapshot row or file — it
  stored its ``size``.

The "fields" of the report (what takes the bytes) are a log's checkpoint kinds (user input,
model turns, tool results) and a snapshot store's checkpoint names (the task or flow method that
made each snapshot). On disk is the SQLite file and its WAL, or every file under a folder; what the file holds
beyond the rows' JSON (pages, indexes, free space, other tables) is not split by run.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from inspector.humanize import plural
from inspector.model import CheckpointInfo
from inspector.store.base import Store
from inspector.usage.report import CheckpointUsage, RunDetail, RunUsage, UsageReport, growth_curve

LOG_KINDS = frozenset({"openai-agents", "google-adk"})     # stores that append a row per checkpoint
Progress = Callable[[int, int], None]


def stored_by(kind: str, info: CheckpointInfo) -> int:
    """Bytes checkpoint ``info`` of a ``kind`` store added (see the module docstring)."""
    if kind in LOG_KINDS:
        return 0 if info.kind == "fork" else max(0, info.size_delta)
    return max(0, info.size)


def _on_disk(store: Store) -> tuple[int, int]:
    """(bytes on disk, of them WAL) of the store's files; (0, 0) for a server database."""
    backend, paths = store.info.backend, store.watch_paths()
    if backend == "folder" and paths:
        total = 0
        for folder, _dirs, files in os.walk(paths[0]):
            total += sum(_size(Path(folder) / name) for name in files)
        return total, 0
    if backend == "sqlite" and paths:
        wal = _size(Path(f"{paths[0]}-wal"))
        return _size(paths[0]) + wal, wal
    return 0, 0


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:        # gone meanwhile, or unreadable: counted as nothing
        return 0


def framework_usage(store: Store, run_id: str | None = None, *, progress: Progress | None = None) -> UsageReport:
    """Usage of a framework's store: total, per run (session), by checkpoint kind, growth; with
    ``run_id`` also that run's checkpoints."""
    kind = store.info.kind
    log = kind in LOG_KINDS
    if run_id is not None:
        store.get_run(run_id)         # the one-sentence "no such run"
    runs_info = store.list_runs()
    runs: list[RunUsage] = []
    fields: dict[str, int] = {}
    growth: list[tuple[float, int]] = []
    detail: list[CheckpointUsage] = []
    logical_total = count = damaged = 0
    for n, run in enumerate(runs_info):
        run_fields: dict[str, int] = {}
        stored = logical = 0
        checkpoints = store.list_checkpoints(run.id)
        for info in checkpoints:
            added = stored_by(kind, info)
            label = (info.kind if log else info.name) or "(checkpoint)"
            run_fields[label] = run_fields.get(label, 0) + added
            stored += added
            logical += info.size
            damaged += bool(info.damaged)
            growth.append((info.created, added))
            if run.id == run_id:
                detail.append(CheckpointUsage(id=info.id, seq=info.seq, created=info.created, logical=info.size,
                                              stored=added, unique=added, ops=info.ops,
                                              checks_passed=info.checks_passed, checks_total=info.checks_total))
        run_fields = {k: v for k, v in run_fields.items() if v}
        for label, size in run_fields.items():
            fields[label] = fields.get(label, 0) + size
        runs.append(RunUsage(run=run.id, name=run.name, status=run.status, checkpoints=len(checkpoints),
                             bytes=stored, logical_bytes=logical,
                             fields=dict(sorted(run_fields.items(), key=lambda kv: -kv[1])),
                             created=run.created, updated=run.updated))
        logical_total += logical
        count += len(checkpoints)
        if progress is not None:
            progress(n + 1, len(runs_info))
    content = sum(r.bytes for r in runs)
    total, wal = _on_disk(store)
    notes = [f"{plural(damaged, 'damaged checkpoint row')}: the sizes are what could be read."] if damaged else []
    if store.info.backend not in ("sqlite", "folder"):
        notes.append("The database server's own sizes are not read: on disk is the session data.")
    how = ("each checkpoint is one row appended to its session, which stored the bytes it added; by field: "
           "by checkpoint kind" if log else
           "each checkpoint is a whole snapshot, which stored its size; by field: by checkpoint name (task or method)")
    disk = "the files under the folder" if store.info.backend == "folder" else "the file and its WAL"
    return UsageReport(
        store=store.info.display, kind=kind, backend=store.info.backend, total_bytes=total or content,
        free_bytes=0, wal_bytes=wal, tables={}, content_bytes=content, rows_bytes=0, logical_bytes=logical_total,
        checkpoints=count, runs=tuple(sorted(runs, key=lambda r: -r.bytes)),
        fields=dict(sorted(fields.items(), key=lambda kv: -kv[1])), growth=growth_curve(growth),
        detail=RunDetail(run=run_id, checkpoints=tuple(detail)) if run_id is not None else None,
        notes=tuple(notes),
        method=(f"read through the {store.info.label or kind} reader (read-only): stored bytes are the JSON "
                f"its framework wrote; {how}; on disk: {disk}"))
