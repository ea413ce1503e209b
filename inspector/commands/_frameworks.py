"""``fork`` / ``resume`` on stores of other adapters: the adapter's reason when it lacks the
action, else the framework command (``inspector.resume.frameworks``), shown and confirmed."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from inspector.commands._common import confirm, refuse_options, run_launch
from inspector.commands._langgraph import OPTIONS as LANGGRAPH_OPTIONS
from inspector.store import open_store
from inspector.store.refs import resolve_checkpoint

CORE_KINDS = ("native", "langgraph")
_SHARED = {"python": "--python", "branch": "--branch", "setup": "--setup"}
_OPTIONS = {"fork": {**_SHARED, "yes": "--yes", "wait": "--wait"},       # a native fork's --cwd is its own
            "resume": {**_SHARED, "cwd": "--cwd"}}                      # resume's --yes/--wait are everyone's
# … and those a framework's own command has no place for (it forks or resumes as it is)
_EDITS = {"fork": {"assignments": "--set", "task_assignments": "--set-task", "state_file": "--state-file",
                   "tasks_file": "--tasks-file"}, "resume": {}}
_NATIVE = {"fork": {"name": "--name", "argv": "--argv", "env": "--env", "unset_env": "--unset-env"}, "resume": {}}


def install(parser: argparse.ArgumentParser, command: str) -> None:
    """Route stores that are neither native nor LangGraph to ``framework_command``."""
    parser.add_argument("--python", metavar="PATH",
                        help="framework stores: your Python (remembered per store; default: python3 on PATH)")
    parser.add_argument("--cwd", metavar="DIR",
                        help=("the fork's resume working directory; " if command == "fork" else "")
                        + "framework stores: working directory of the command (remembered per store)")
    parser.add_argument("--branch", metavar="NAME", help="framework stores: name of the new branch")
    parser.add_argument("--setup", metavar="MODULE:FUNCTION",
                        help="CrewAI: called with the restored crew before kickoff (set its LLM and tools)")
    if command == "fork":
        parser.add_argument("--yes", "-y", action="store_true", help="framework stores: do not ask before running")
        parser.add_argument("--wait", action="store_true", help="framework stores: wait for the command")
    original: Callable[[argparse.Namespace], int] = parser.get_default("func")

    def run(args: argparse.Namespace) -> int:
        with open_store(args.store) as probe:
            kind, display = probe.info.kind, probe.info.display
            if kind in CORE_KINDS:
                refuse_options(args, _OPTIONS[command], "framework stores (OpenAI Agents, CrewAI, ADK)", display, kind)
                return original(args)
            name = probe.info.label or kind
            refuse_options(args, _EDITS[command], "native and LangGraph stores", display, name)
            refuse_options(args, _NATIVE[command], "native stores", display, name)
            refuse_options(args, LANGGRAPH_OPTIONS, "LangGraph stores", display, name)
            # one reference syntax for every store: names, id prefixes, RUN:-1 …
            args.checkpoint = str(resolve_checkpoint(probe, args.checkpoint).id)
        return framework_command(args, command)

    parser.set_defaults(func=run)


def framework_command(args: argparse.Namespace, action: str) -> int:
    """Plan, print, confirm, start (and with --wait, wait for) the framework's command."""
    from inspector.resume.frameworks import plan, remember

    with open_store(args.store) as store:
        found = plan(store, args.checkpoint, action, python=args.python, cwd=args.cwd, branch=args.branch,
                     setup=args.setup)
    print(found.describe(), flush=True)
    if getattr(args, "dry_run", False):
        print("Dry run: nothing was run or written (drop --dry-run to run it).")
        return 0
    if not args.yes and not confirm("Run this command? [y/N] "):
        print(f"not {'forked' if action == 'fork' else 'resumed'}")
        return 1
    launch = found.launch()
    saved = remember(found.store_url, args.python, args.cwd)
    if saved is not None:
        print(f"remembered --python/--cwd for {args.store} in {saved}", file=sys.stderr)
    return run_launch(launch, wait=args.wait)
