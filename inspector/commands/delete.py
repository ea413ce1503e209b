"""``checkpoint-inspector delete STORE RUN [RUN …]``: delete whole runs, or threads of a LangGraph
database (a dry run unless ``--apply``)."""

from __future__ import annotations

import argparse

from inspector.commands._common import (add_json_arg, add_langgraph_write_args, add_store_arg, fmt_size, print_json,
                                        print_table, refuse_langgraph_write_options, stderr_progress)
from inspector.errors import StoreError
from inspector.humanize import plural
from inspector.retention.delete import DeletePlan, apply_delete, plan_delete
from inspector.store import open_store
from inspector.resume.status import quick_statuses, still_working


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``delete`` sub-command."""
    parser = sub.add_parser("delete", help="delete whole runs of a native store, or threads of a LangGraph "
                                           "database (a dry run unless --apply)")
    add_store_arg(parser)
    parser.add_argument("runs", nargs="+", metavar="RUN",
                        help="run id, unique id prefix, name or a part of one (several: delete them together)")
    parser.add_argument("--apply", action="store_true", help="really delete (default: print what would go)")
    add_langgraph_write_args(parser, "threads")
    add_json_arg(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Plan or apply the delete and print what it does (or the first thing that stops it)."""
    with open_store(args.store) as probe:
        refuse_langgraph_write_options(args, probe)
    if args.apply:
        progress = stderr_progress(args)
        result = apply_delete(args.store, args.runs, alive=still_working, progress=progress,
                              langgraph_write=args.langgraph_write, backup=args.backup)
    else:
        result = plan_delete(args.store, args.runs, alive=still_working, sized=True)
    if args.json:
        print_json(result.to_json())
        return 2 if result.blockers else 0
    print_plan(result)
    if result.blockers:     # every reason, in one line (each is a sentence)
        raise StoreError(f"Cannot delete {plural(len(result.runs), 'run')}: " + " ".join(result.blockers))
    return 0


def print_plan(plan: DeletePlan) -> None:
    """The runs, and what was done or would be (what stops it is the caller's sentence)."""
    shown = quick_statuses(plan.runs)     # as runs prints them: a dead "running" run is crashed
    print_table(("RUN", "NAME", "STATUS", "CHECKPOINTS"),
                [(r.id, r.name[:40], shown[r.id].status if r.id in shown else r.status, r.checkpoint_count)
                 for r in plan.runs])
    print()
    for thread in plan.threads:
        print(f"LangGraph thread {thread!r} (written by InspectorSaver) goes whole: every lane of it.")
    if plan.langgraph:
        what = (f"{plural(len(plan.runs), 'LangGraph thread')} ({plural(plan.checkpoints, 'checkpoint')}, "
                "with their pending writes, as LangGraph's delete_thread takes them)")
        if plan.applied:
            print(f"Deleted {what}." + (f" Backup written first: {plan.backup}" if plan.backup else ""))
        elif not plan.blockers:
            print(f"Would delete {what}: {fmt_size(plan.rows_bytes)} of rows. Dry run: nothing was changed "
                  "(add --apply --langgraph-write to delete; a SQLite file is backed up first).")
        return
    what = f"{plural(len(plan.runs), 'run')} ({plural(plan.checkpoints, 'checkpoint')})"
    if plan.applied:
        print(f"Deleted {what}; collected {plural(plan.pieces, 'unreferenced piece')} "
              f"({fmt_size(plan.content_bytes)}).")
    elif not plan.blockers:
        print(f"Would delete {what} and {plural(plan.pieces, 'unreferenced piece')}: {fmt_size(plan.bytes)} "
              f"({fmt_size(plan.rows_bytes)} of rows, {fmt_size(plan.content_bytes)} of content). "
              "Dry run: nothing was changed (add --apply to delete).")
    for note in plan.notes:
        print(f"note: {note}")
