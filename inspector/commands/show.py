"""``checkpoint-inspector show STORE CHECKPOINT``: state, task state and metadata of one checkpoint."""

from __future__ import annotations

from typing import TYPE_CHECKING

from inspector import taskstate
from inspector.commands._common import (COLON_RULE, add_json_arg, add_store_arg, dumps, fmt_size, fmt_time, note_store,
                                       print_json, say, use_graph_kinds)
from inspector.model import RunInfo, Snapshot
from inspector.resume.status import effective_statuses, shown_status
from inspector.store import open_reader
from inspector.store.refs import format_ref, resolve_checkpoint

if TYPE_CHECKING:
    import argparse

STATUS_MARK = {"done": "✓", "in_progress": "…", "pending": " ", "blocked": "!", "failed": "✗"}


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``show`` sub-command."""
    parser = sub.add_parser("show", help="show one checkpoint (state, task state, metadata)")
    add_store_arg(parser)
    parser.add_argument("checkpoint", metavar="CHECKPOINT",
                        help="RUN:SEQ (RUN: id, unique id prefix, name or a part of one; SEQ < 0 counts from the end), "
                             f"RUN alone (its head) or a checkpoint id; {COLON_RULE}")
    add_json_arg(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print one checkpoint."""
    with open_reader(args.store) as store:
        note_store(store)
        use_graph_kinds(store)
        snap = store.load(resolve_checkpoint(store, args.checkpoint).id)
        run = store.get_run(snap.info.run_id)
        status = shown_status(run, effective_statuses(store, [run]))
    info = snap.info
    if args.json:
        print_json({"checkpoint": info, "ref": format_ref(info), "run": {"id": run.id, "name": run.name,
                    "status": status, "error": run.last_error, **({"damaged": run.damaged} if run.damaged else {})},
                    "state": snap.state, "tasks": snap.tasks,
                    "meta": snap.meta, "problems": list(snap.problems)})
        return 0
    print_header(snap, run, status)
    say(f"created {fmt_time(info.created)}  size {fmt_size(info.size)}  ops since previous {info.ops}")
    if info.change:
        say(f"change: {info.change}")
    for problem in snap.problems:
        say(f"damaged: {problem}")
    if run.damaged:       # (what runs lists under the table: the run's row, as the window marks it)
        say(f"damaged: run: {run.damaged}")
    if snap.tasks:
        score = taskstate.score(snap.tasks)
        say(f"\ntasks ({score.tasks_done}/{score.tasks_total} done, checks {score}): {snap.tasks.get('goal', '')}")
        for task in snap.tasks.get("tasks", []):
            review = (task.get("review") or {}).get("status", "none")
            checks = " ".join(("✓" if c.get("passed") else "✗" if c.get("passed") is False else "?")
                              + c.get("name", "") for c in task.get("checks", []))
            say(f"  [{STATUS_MARK.get(task.get('status'), '?')}] {task.get('title')} "
                  f"({task.get('status')}, {task.get('progress', 0):.0%}"
                  f"{', review ' + review if review != 'none' else ''}) {checks}".rstrip())
    say("\nstate:")
    say(dumps(snap.state))
    if snap.meta:
        say("\nmetadata:")
        say(dumps(snap.meta))
    return 0


def print_header(snap: Snapshot, run: RunInfo, status: str) -> None:
    """The checkpoint as RUN:SEQ, then its run with the status shown and, first, a run's error."""
    info = snap.info
    say(f"checkpoint {format_ref(info)}  (id {info.id})  {info.kind} {info.name}")
    head = "" if info.seq == run.head_seq else f", head {run.id}:{run.head_seq}"
    say(f"run {run.id} {run.name!r}: {status}, {run.checkpoint_count} "
          f"checkpoint{'' if run.checkpoint_count == 1 else 's'}{head}")
    if run.last_error:
        say(f"{'reason' if run.status == 'interrupted' else 'error'}: {run.last_error}")
