"""``checkpoint-inspector prune STORE``: retention rules, a dry run unless ``--apply``."""

from __future__ import annotations

import argparse

from inspector.commands._common import (
    add_json_arg,
    add_langgraph_write_args,
    add_store_arg,
    fmt_size,
    print_json,
    print_table,
    refuse_langgraph_write_options,
    stderr_progress,
)
from inspector.record.summary import summarize
from inspector.resume.status import effective_statuses
from inspector.retention.api import apply_prune, plan_prune
from inspector.retention.rules import RENUMBERED, PrunePlan, make_rules
from inspector.store import open_store
from inspector.store.refs import resolve_run

TOP = 20


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``prune`` sub-command."""
    parser = sub.add_parser("prune", help="remove old checkpoints by rules (a dry run unless --apply)")
    add_store_arg(parser)
    parser.add_argument("--keep-last", type=int, metavar="N", help="keep the N most recent checkpoints of each run")
    parser.add_argument("--older-than", metavar="DURATION", help="only checkpoints older than this (30d, 12h, 1d12h…)")
    parser.add_argument("--run", action="append", default=[], metavar="RUN", help="only this run (repeatable)")
    parser.add_argument("--status", action="append", default=[], metavar="STATUS[,STATUS]",
                        help="only runs with these statuses, as runs shows them (completed,crashed,…)")
    parser.add_argument("--apply", action="store_true", help="really delete (default: print what would go)")
    parser.add_argument("--vacuum", action="store_true", help="after deleting, give the space back to the OS")
    add_langgraph_write_args(parser, "rows")
    add_json_arg(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Plan or apply the prune and print what it does."""
    with open_store(args.store) as probe:     # runs named as every command names them; options checked
        refuse_langgraph_write_options(args, probe)
        runs = [resolve_run(probe, text).id for text in args.run]
    rules = make_rules(keep_last=args.keep_last, older_than=args.older_than, runs=runs, statuses=args.status)
    if args.apply:
        progress = stderr_progress(args)
        result = apply_prune(args.store, rules, vacuum=args.vacuum, langgraph_write=args.langgraph_write,
                             progress=progress, backup=args.backup, diagnose=effective_statuses, describe=summarize)
    else:
        result = plan_prune(args.store, rules, diagnose=effective_statuses)
    if args.json:
        print_json(result.to_json())
    else:
        print_plan(result, vacuumed=bool(args.apply and args.vacuum))
    return 0


def print_plan(plan: PrunePlan, vacuumed: bool = False) -> None:
    """What would go (or went), per run, and the bytes."""
    if plan.runs:
        print_table(("RUN", "NAME", "STATUS", "REMOVE", "KEEP"),
                    [(r.run, r.name[:30], r.status, r.remove, r.keep) for r in plan.runs[:TOP]])
        if len(plan.runs) > TOP:
            print(f"… and {len(plan.runs) - TOP:,} more runs")
        print()
    verb = "Removed" if plan.applied else "Would remove"
    pieces = "pieces" if plan.kind == "native" else "blobs"
    runs = "run" if len(plan.runs) == 1 else "runs"
    print(f"{verb} {plan.remove_checkpoints:,} of {plan.total_checkpoints:,} checkpoints in {len(plan.runs):,} {runs}"
          + (f" and {plan.pieces:,} unreferenced {pieces}" if plan.pieces or plan.kind == "native" else "")
          + f": {fmt_size(plan.bytes)} ({fmt_size(plan.rows_bytes)} of rows"
          + (f", {fmt_size(plan.content_bytes)} of content" if plan.content_bytes or plan.kind == "native" else "")
          + ").")
    kept = {k: v for k, v in plan.protected.items() if v}
    if kept:
        print("Kept although selected: " + ", ".join(f"{v:,} ({k})" for k, v in kept.items()) + ".")
    if plan.backup:
        print(f"Backup written first: {plan.backup}")
    if plan.applied:
        before, after, wal = plan.on_disk()     # the file, then its log apart (see PrunePlan.on_disk)
        freed = "" if vacuumed or after < before else \
            " (the freed space stays in the file for new checkpoints; --vacuum gives it back to the disk)"
        print(f"On disk: {fmt_size(before)} before, {fmt_size(after)} after{freed}.")
        if wal or plan.wal_before:
            print(f"Write-ahead log: {fmt_size(plan.wal_before)} before, {fmt_size(wal)} after (every writer's "
                  "changes, this prune's among them, until SQLite folds them into the file).")
        if plan.remove_checkpoints:
            print(RENUMBERED)
    else:
        print("Dry run: nothing was changed (add --apply to prune).")
    for note in plan.notes:
        print(f"note: {note}")
