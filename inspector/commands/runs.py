"""``checkpoint-inspector runs STORE``: list the runs of a store."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from inspector.commands._common import (
    add_json_arg,
    add_store_arg,
    fmt_times,
    note_store,
    print_damaged,
    print_columns,
    print_json_records,
    write_json_lines,
)
from inspector.commands._jsonlines import RecordTemplate
from inspector.model import CheckpointInfo, parse_statuses
from inspector.resume.status import EffectiveStatus, effective_statuses
from inspector.store import open_reader
from inspector.store.base import RUN_ROW
from inspector.store.refs import format_ref, parent_refs

if TYPE_CHECKING:
    import argparse

HEADERS = ("ID", "NAME", "AGENT", "STATUS", "CKPTS", "UPDATED", "PARENT", "SCORE")


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``runs`` sub-command."""
    parser = sub.add_parser("runs", help="list runs (id, name, agent, status, checkpoints, score)")
    add_store_arg(parser)
    add_json_arg(parser)
    parser.add_argument("--filter", default="", help="only runs whose name, agent or id contains this")
    parser.add_argument("--status", action="append", metavar="STATUS[,STATUS]",
                        help="only runs with these statuses as shown (a dead 'running' run is 'crashed')")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the runs with the status the desktop app shows and each fork's origin as RUN:SEQ."""
    wanted = parse_statuses(args.status or [])  # a word that is no status is refused before the store opens
    with open_reader(args.store) as store:
        note_store(store)
        listing = store.run_rows(text=args.filter)
        statuses = effective_statuses(store, listing.runs)
        parents = parent_refs(store, listing.runs)
    rows = listing.rows
    if wanted:
        rows = [r for r in rows if _shown(r, statuses) in wanted]
    if args.json:
        lines = json_lines(rows, statuses, parents)
        if lines is None:
            print_json_records([run_json(r, statuses, parents) for r in rows])
        else:
            write_json_lines(lines)
    else:
        print_columns(HEADERS, run_columns(rows, statuses, parents))
        print_damaged((r[0], r[_DAMAGED]) for r in rows)
    return 0


_DAMAGED = RUN_ROW.index("damaged")


def _shown(row: tuple, statuses: dict[str, EffectiveStatus]) -> str:
    """The status shown for the run of a ``RUN_ROW`` row (see ``shown_status``)."""
    found = statuses.get(row[0])
    return found.status if found is not None else row[3]


def run_columns(rows: list[tuple], statuses: dict[str, EffectiveStatus],
                parents: dict[str, CheckpointInfo]) -> list[Sequence[Any]]:
    """The table of ``runs`` column by column (``HEADERS``) from ``RUN_ROW`` rows."""
    if not rows:
        return [[] for _ in HEADERS]
    (ids, names, agents, stored, counts, _created, updated, parent_runs, _parent_cps, _errors, passed, total,
     *_) = zip(*rows, strict=True)
    status = [_shown(r, statuses) for r in rows] if statuses else stored
    origin = [format_ref(parents[i]) if i in parents else (p or "") for i, p in zip(ids, parent_runs, strict=True)]
    return [ids, names, agents, status, counts, fmt_times(updated), origin,
            [f"{p}/{t}" for p, t in zip(passed, total, strict=True)]]


_TEMPLATE = RecordTemplate([
    ("id", "str"), ("name", "str"), ("agent", "str"), ("status", "str"), ("stored_status", "str"),
    ("status_reason", "str"), ("checkpoints", "int"), ("created", "float"), ("updated", "float"),
    ("parent_run", "str?"), ("parent_checkpoint", "int?"), ("parent", "str?"), ("error", "str?"),
    (("score", "passed"), "int"), (("score", "total"), "int"), (("tasks", "done"), "int"),
    (("tasks", "total"), "int"), ("damaged", "null")])       # run_json's fields


def json_lines(rows: list[tuple], statuses: dict[str, EffectiveStatus],
               parents: dict[str, CheckpointInfo]) -> list[str] | None:
    """The lines of ``runs --json`` (``run_json`` encoded) from one text template, or None
    when some value is not plain (``_jsonlines``)."""
    if not rows:
        return []
    (ids, names, agents, stored, counts, created, updated, parent_runs, parent_cps, errors, passed, total, done,
     tasks, damaged, *_) = zip(*rows, strict=True)
    found = [statuses.get(i) for i in ids] if statuses else None
    shown = [f.status if f else s for f, s in zip(found, stored, strict=True)] if found else stored
    reasons = [f.reason if f else "" for f in found] if found else [""] * len(ids)
    origin = [format_ref(parents[i]) if i in parents else None for i in ids] if parents else [None] * len(ids)
    return _TEMPLATE.lines([ids, names, agents, shown, stored, reasons, counts, created, updated, parent_runs,
                            parent_cps, origin, errors, passed, total, done, tasks, damaged])


def run_json(row: tuple, statuses: dict[str, EffectiveStatus], parents: dict[str, CheckpointInfo]) -> dict:
    """One run of ``runs --json`` from its ``RUN_ROW`` row (``status`` as shown,
    ``stored_status`` as written)."""
    (ident, name, agent, status, count, created, updated, parent_run, parent_checkpoint, error, passed, total,
     done, tasks, damaged, *_) = row
    parent = parents.get(ident)
    found = statuses.get(ident)
    return {"id": ident, "name": name, "agent": agent, "status": found.status if found else status,
            "stored_status": status, "status_reason": found.reason if found else "",
            "checkpoints": count, "created": created, "updated": updated,
            "parent_run": parent_run, "parent_checkpoint": parent_checkpoint,
            "parent": format_ref(parent) if parent is not None else None, "error": error,
            "score": {"passed": passed, "total": total},
            "tasks": {"done": done, "total": tasks}, "damaged": damaged or None}
