"""``checkpoint-inspector runs STORE``: list the runs of a store."""

from __future__ import annotations

import argparse

from inspector.commands._common import add_json_arg, add_store_arg, fmt_time, print_damaged, print_json, print_table
from inspector.store import open_store


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``runs`` sub-command."""
    parser = sub.add_parser("runs", help="list runs (id, name, agent, status, checkpoints, score)")
    add_store_arg(parser)
    add_json_arg(parser)
    parser.add_argument("--filter", default="", help="only runs whose name, agent or id contains this")
    parser.add_argument("--status", action="append", help="only runs with this stored status")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the runs."""
    with open_store(args.store) as store:
        runs = store.list_runs(text=args.filter, statuses=args.status)
    if args.json:
        print_json([dict(id=r.id, name=r.name, agent=r.agent, status=r.status,
                         checkpoints=r.checkpoint_count, created=r.created, updated=r.updated,
                         parent_run=r.parent_run, parent_checkpoint=r.parent_checkpoint,
                         score={"passed": r.checks_passed, "total": r.checks_total},
                         tasks={"done": r.tasks_done, "total": r.tasks_total},
                         damaged=r.damaged or None) for r in runs])
        return 0
    print_table(("ID", "NAME", "AGENT", "STATUS", "CKPTS", "UPDATED", "PARENT", "SCORE"),
                [(r.id, r.name, r.agent, r.status, r.checkpoint_count, fmt_time(r.updated),
                  f"{r.parent_run}:{r.parent_checkpoint}" if r.parent_run else "",
                  f"{r.checks_passed}/{r.checks_total}") for r in runs])
    print_damaged((r.id, r.damaged) for r in runs)
    return 0
