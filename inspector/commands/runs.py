"""``checkpoint-inspector runs STORE``: list the runs of a store."""

from __future__ import annotations

import argparse

from inspector.commands._common import (
    add_json_arg,
    add_store_arg,
    fmt_time,
    note_store,
    print_damaged,
    print_json_records,
    print_table,
)
from inspector.model import CheckpointInfo, RunInfo
from inspector.resume.status import EffectiveStatus, effective_statuses, shown_status
from inspector.store import open_reader
from inspector.store.refs import format_ref, parent_refs

HEADERS = ("ID", "NAME", "AGENT", "STATUS", "CKPTS", "UPDATED", "PARENT", "SCORE")


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``runs`` sub-command."""
    parser = sub.add_parser("runs", help="list runs (id, name, agent, status, checkpoints, score)")
    add_store_arg(parser)
    add_json_arg(parser)
    parser.add_argument("--filter", default="", help="only runs whose name, agent or id contains this")
    parser.add_argument("--status", action="append",
                        help="only runs with this status as shown (a dead 'running' run is 'crashed')")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the runs with the status the desktop app shows and each fork's origin as RUN:SEQ."""
    with open_reader(args.store) as store:
        note_store(store)
        runs = store.list_runs(text=args.filter)
        statuses = effective_statuses(store, runs)
        parents = parent_refs(store, runs)
    if args.status:
        runs = [r for r in runs if shown_status(r, statuses) in args.status]
    if args.json:
        print_json_records([run_json(r, statuses, parents) for r in runs])
    else:
        print_table(HEADERS, [run_row(r, statuses, parents) for r in runs])
        print_damaged((r.id, r.damaged) for r in runs)
    return 0


def run_row(r: RunInfo, statuses: dict[str, EffectiveStatus], parents: dict[str, CheckpointInfo]) -> tuple:
    """One table row of ``runs``."""
    parent = parents.get(r.id)
    return (r.id, r.name, r.agent, shown_status(r, statuses), r.checkpoint_count, fmt_time(r.updated),
            format_ref(parent) if parent is not None else (r.parent_run or ""),
            f"{r.checks_passed}/{r.checks_total}")


def run_json(r: RunInfo, statuses: dict[str, EffectiveStatus], parents: dict[str, CheckpointInfo]) -> dict:
    """One run of ``runs --json`` (``status`` as shown, ``stored_status`` as written)."""
    parent = parents.get(r.id)
    found = statuses.get(r.id)
    return {"id": r.id, "name": r.name, "agent": r.agent, "status": shown_status(r, statuses),
            "stored_status": r.status, "status_reason": found.reason if found else "",
            "checkpoints": r.checkpoint_count, "created": r.created, "updated": r.updated,
            "parent_run": r.parent_run, "parent_checkpoint": r.parent_checkpoint,
            "parent": format_ref(parent) if parent is not None else None, "error": r.last_error,
            "score": {"passed": r.checks_passed, "total": r.checks_total},
            "tasks": {"done": r.tasks_done, "total": r.tasks_total}, "damaged": r.damaged or None}
