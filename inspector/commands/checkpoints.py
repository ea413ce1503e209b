"""``checkpoint-inspector checkpoints STORE RUN``: list a run's checkpoints."""

from __future__ import annotations

import argparse

from inspector.commands._common import (add_json_arg, add_store_arg, fmt_size, fmt_time, note_store, print_damaged,
                                        print_json_records, print_table)
from inspector.store import open_reader
from inspector.store.refs import resolve_run


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``checkpoints`` sub-command."""
    parser = sub.add_parser("checkpoints", help="list a run's checkpoints")
    add_store_arg(parser)
    parser.add_argument("run", metavar="RUN", help="run id, unique id prefix or name (a LangGraph thread id)")
    add_json_arg(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the checkpoints of one run."""
    with open_reader(args.store) as store:
        note_store(store)
        cps = store.list_checkpoints(resolve_run(store, args.run).id)
    if args.json:
        print_json_records([dict(id=c.id, seq=c.seq, kind=c.kind, name=c.name, created=c.created,
                         parent=c.parent_id, size=c.size, size_delta=c.size_delta, ops=c.ops,
                         tasks={"done": c.tasks_done, "total": c.tasks_total},
                         score={"passed": c.checks_passed, "total": c.checks_total},
                         change=c.change, lane=c.lane, damaged=c.damaged or None) for c in cps])
        return 0
    print_table(("SEQ", "ID", "KIND", "NAME", "TIME", "SIZE", "OPS", "SCORE", "CHANGE"),
                [(c.seq, c.id, c.kind, c.name, fmt_time(c.created), fmt_size(c.size), c.ops,
                  f"{c.checks_passed}/{c.checks_total}", c.change) for c in cps])
    print_damaged((f"#{c.seq}", c.damaged) for c in cps)
    return 0
