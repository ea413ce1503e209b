"""``checkpoint-inspector history STORE RUN [--task ID | --path PATH]``: where a run's task state
(or one value of its state) changed."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from inspector.commands._common import (add_json_arg, add_run_arg, add_store_arg, fmt_time, note_store,
                                        print_json_records, say)
from inspector.diff.history import TaskEvent, ValueEvent, task_history, value_history
from inspector.diff.model import format_path
from inspector.diff.serialize import change_json
from inspector.errors import StoreError
from inspector.humanize import plural
from inspector.resume.edits import parse_path
from inspector.store import open_reader
from inspector.store.refs import format_ref, resolve_run

if TYPE_CHECKING:
    import argparse


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``history`` sub-command."""
    parser = sub.add_parser("history", help="the checkpoints where a run's tasks changed (status, review, checks), "
                            "or one value of its state (--path)")
    add_store_arg(parser)
    add_run_arg(parser)
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--task", metavar="ID", help="only this task: its id, as diff and show --json print it (a wrong one lists them)")
    which.add_argument("--path", metavar="PATH", help="the value at this path of the state instead "
                       "(budget.total, messages[3].content, files[\"draft.md\"], or a path as diff prints it)")
    add_json_arg(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print each checkpoint where the task state (or the value at ``--path``) changed, with the changes."""
    if args.path is not None:
        return _value_run(args)
    with open_reader(args.store) as store:
        note_store(store)
        found = resolve_run(store, args.run)
        events = task_history(store, found.id)
    if args.task is not None:
        known = sorted({c.task_id for e in events for c in e.changes if c.task_id})
        events = [TaskEvent(e.checkpoint, kept, e.problem) for e in events
                  if (kept := tuple(c for c in e.changes if c.task_id == args.task)) or e.problem]
        if not any(e.changes for e in events):
            listed = ", ".join(known[:12]) + (", …" if len(known) > 12 else "")
            raise StoreError(f"Run {found.id} has no task {args.task!r} at any checkpoint"
                             + (f" (its tasks: {listed})" if known else " (it has no task state)"))
    if args.json:
        _print_json(events, lambda c: {"task": c.task_id, "title": c.title, "kind": c.kind, "old": c.old,
                                       "new": c.new, "check": c.name, "reviewer": c.reviewer,
                                       "regression": c.regression})
        return 0
    if not events:
        say(f"run {found.id} {found.name!r} has no task state at any checkpoint")
        return 0
    what = f"task {args.task!r}" if args.task is not None else "its tasks"
    count = sum(len(e.changes) for e in events)
    unread = sum(1 for e in events if e.problem)
    say(f"run {found.id} {found.name!r}: {what} changed at {plural(len(events) - unread, 'checkpoint')} "
        f"({plural(count, 'change')})" + (f"; {plural(unread, 'damaged checkpoint')} could not be read"
                                          if unread else ""))
    _print_events(events)
    return 0


def _value_run(args: argparse.Namespace) -> int:
    if not args.path.strip():
        raise StoreError("Give the path of a value (for example budget.total or 'messages[0].content').")
    path = parse_path(args.path)
    shown = format_path(path)
    with open_reader(args.store) as store:
        note_store(store)
        found = resolve_run(store, args.run)
        events: list[ValueEvent] = value_history(store, found.id, path)
    if args.json:
        _print_json(events, change_json)
        return 0
    unread = sum(1 for e in events if e.problem)
    if len(events) == unread:
        say(f"run {found.id} {found.name!r}: {shown} is at no checkpoint"
            + (f" that could be read ({plural(unread, 'damaged checkpoint')})" if unread else ""))
        for e in events:
            say(f"\n#{e.checkpoint.seq}  damaged: {e.problem}")
        return 0
    say(f"run {found.id} {found.name!r}: {shown} changed at {plural(len(events) - unread, 'checkpoint')}"
        + (f"; {plural(unread, 'damaged checkpoint')} could not be read" if unread else ""))
    _print_events(events)
    return 0


def _print_json(events: Sequence[TaskEvent | ValueEvent], change: Callable[[Any], dict]) -> None:
    """One record per checkpoint: where it is, its changes (``change`` makes each one's
    record) and, for a damaged one, why it could not be read."""
    print_json_records([{
        "checkpoint": format_ref(e.checkpoint), "id": e.checkpoint.id, "seq": e.checkpoint.seq,
        "kind": e.checkpoint.kind, "name": e.checkpoint.name, "created": e.checkpoint.created,
        "changes": [change(c) for c in e.changes], **({"damaged": e.problem} if e.problem else {})}
        for e in events])


def _print_events(events: Sequence[TaskEvent | ValueEvent]) -> None:
    """Each checkpoint (seq, step, time), then its changes, or why it could not be read."""
    for e in events:
        info = e.checkpoint
        say(f"\n#{info.seq}  {info.kind} {info.name}  {fmt_time(info.created)}")
        for change in e.changes:
            say(f"  {change.describe()}")
        if e.problem:
            say(f"  damaged: {e.problem}")
