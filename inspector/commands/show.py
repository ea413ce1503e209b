"""``checkpoint-inspector show STORE CHECKPOINT``: state, task state and metadata of one checkpoint."""

from __future__ import annotations

import argparse

from inspector import taskstate
from inspector.commands._common import (add_json_arg, add_store_arg, dumps, escape_control, fmt_size, fmt_time,
                                        print_json)
from inspector.store import open_store

STATUS_MARK = {"done": "✓", "in_progress": "…", "pending": " ", "blocked": "!", "failed": "✗"}


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``show`` sub-command."""
    parser = sub.add_parser("show", help="show one checkpoint (state, task state, metadata)")
    add_store_arg(parser)
    parser.add_argument("checkpoint", metavar="CHECKPOINT", help="checkpoint id or RUN:SEQ")
    add_json_arg(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print one checkpoint."""
    with open_store(args.store) as store:
        snap = store.load(args.checkpoint)
    info = snap.info
    if args.json:
        print_json({"checkpoint": info, "state": snap.state, "tasks": snap.tasks, "meta": snap.meta,
                    "problems": list(snap.problems)})
        return 0
    print(escape_control(f"checkpoint {info.id}  run {info.run_id}  #{info.seq}  {info.kind} {info.name}"))
    print(f"created {fmt_time(info.created)}  size {fmt_size(info.size)}  ops since previous {info.ops}")
    if info.change:
        print(escape_control(f"change: {info.change}"))
    for problem in snap.problems:
        print(escape_control(f"damaged: {problem}"))
    if snap.tasks:
        score = taskstate.score(snap.tasks)
        print(escape_control(f"\ntasks ({score.tasks_done}/{score.tasks_total} done, checks {score}): "
                             f"{snap.tasks.get('goal', '')}"))
        for task in snap.tasks.get("tasks", []):
            review = (task.get("review") or {}).get("status", "none")
            checks = " ".join(("✓" if c.get("passed") else "✗" if c.get("passed") is False else "?")
                              + c.get("name", "") for c in task.get("checks", []))
            print(escape_control(f"  [{STATUS_MARK.get(task.get('status'), '?')}] {task.get('title')} "
                  f"({task.get('status')}, {task.get('progress', 0):.0%}"
                  f"{', review ' + review if review != 'none' else ''}) {checks}".rstrip()))
    print("\nstate:")
    print(dumps(snap.state))
    if snap.meta:
        print("\nmetadata:")
        print(dumps(snap.meta))
    return 0
