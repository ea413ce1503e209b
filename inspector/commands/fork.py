"""``checkpoint-inspector fork STORE CHECKPOINT --reason TEXT``: fork a checkpoint into a new run."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from inspector.commands._common import COLON_RULE, add_budget_args
from inspector.errors import StoreError
from inspector.commands._frameworks import install as install_frameworks
from inspector.commands._langgraph import install as install_langgraph
from inspector.resume.fork import fork_with_edits, preview_fork
from inspector.resume.fork_spec import SpecEdit, parse_argv_option, parse_env_options
from inspector.store import open_store
from inspector.store.refs import resolve_checkpoint


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``fork`` sub-command."""
    parser = sub.add_parser(
        "fork", help="fork a checkpoint into a new run (optionally with an edited state)",
        description="Fork CHECKPOINT into a new run. The source run is never modified; unchanged "
                    "content is shared by reference. Prints the new run id (LangGraph stores: the "
                    "new branch checkpoint's id).")
    parser.add_argument("store", metavar="STORE", help="store path or SQLAlchemy URL (opened writable)")
    add_budget_args(parser)
    parser.add_argument("checkpoint", metavar="CHECKPOINT",
                        help="RUN:SEQ (RUN: id, unique id prefix, name or a part of one; SEQ < 0 counts from the end) "
                             f"or an id; {COLON_RULE}")
    parser.add_argument("--reason", required=True, help="why this fork exists (kept with the new run)")
    parser.add_argument("--set", dest="assignments", action="append", default=[], metavar="PATH=JSON",
                        help="edit the state, e.g. budget.total=123 or 'messages[2].content=\"x\"'")
    parser.add_argument("--set-task", dest="task_assignments", action="append", default=[],
                        metavar="PATH=JSON", help="edit the task state, e.g. 'tasks[0].status=\"done\"'")
    parser.add_argument("--state-file", metavar="F", help="replace the state by this JSON file (before --set)")
    parser.add_argument("--tasks-file", metavar="F", help="replace the task state by this JSON file")
    parser.add_argument("--name", help="name of the new run")
    parser.add_argument("--argv", metavar="CMD",
                        help="the fork's own resume command, replacing the original's: words split like a "
                             "POSIX shell, or a JSON array of strings (never run by a shell)")
    # --cwd (the fork's resume working directory) is shared with framework stores: _frameworks
    parser.add_argument("--env", dest="env", action="append", default=[], metavar="NAME=VALUE",
                        help="add or replace a variable of the fork's resume environment")
    parser.add_argument("--unset-env", dest="unset_env", action="append", default=[], metavar="NAME",
                        help="remove a variable from the fork's resume environment")
    parser.add_argument("--dry-run", action="store_true",
                        help="check the edits and print what would be written (the fork's resume "
                             "command too); write nothing")
    parser.set_defaults(func=run)
    install_langgraph(parser, "fork")   # LangGraph stores: --graph, --trusted, … and their handlers
    install_frameworks(parser, "fork")   # other adapters: their reason, or the framework's own command


def read_text(path: str | None) -> str | None:
    """A file's text, or a StoreError naming the file."""
    if path is None:
        return None
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise StoreError(f"Cannot read {path}: {getattr(err, 'strerror', None) or err}.") from err


def spec_edit(args: argparse.Namespace) -> SpecEdit:
    """The fork's resume-command options as a SpecEdit (empty: a copy of the original's)."""
    argv = getattr(args, "argv", None)
    cwd = getattr(args, "cwd", None)
    if cwd is not None and not Path(cwd).is_dir():     # else only resuming the fork would say it
        raise StoreError(f"The working directory {cwd!r} does not exist; the fork could not be resumed there.")
    return SpecEdit(argv=tuple(parse_argv_option(argv)) if argv is not None else None,
                    cwd=getattr(args, "cwd", None),
                    env=tuple(parse_env_options(getattr(args, "env", None) or ()).items()),
                    unset_env=tuple(getattr(args, "unset_env", None) or ()))


def run(args: argparse.Namespace) -> int:
    """Fork and print the new run id (warnings about its resume command on stderr)."""
    state_text, tasks_text = read_text(args.state_file), read_text(args.tasks_file)
    edit = spec_edit(args)
    with open_store(args.store, readonly=True) as store:
        preview = preview_fork(store, resolve_checkpoint(store, args.checkpoint).id, reason=args.reason,
                               state_text=state_text, tasks_text=tasks_text, assignments=args.assignments,
                               task_assignments=args.task_assignments, name=args.name, spec_edit=edit)
    if args.dry_run:
        print(preview.describe())
        return 0
    with open_store(args.store, readonly=False) as store:
        outcome = fork_with_edits(store, resolve_checkpoint(store, args.checkpoint).id, reason=args.reason, state_text=state_text,
                                  tasks_text=tasks_text, assignments=args.assignments,
                                  task_assignments=args.task_assignments, name=args.name, spec_edit=edit)
        native = store.info.kind == "native"
    for conflict in preview.conflicts:
        print(f"warning: the fork's resume command keeps {conflict.describe()}; "
              "fork again with --argv to change it", file=sys.stderr)
    # a native fork is a new run; a LangGraph fork is a new branch checkpoint of the thread
    print(outcome.run.id if native else outcome.checkpoint_id)
    for note in outcome.notes:
        print(f"note: {note}", file=sys.stderr)
    return 0
