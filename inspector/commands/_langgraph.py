"""The LangGraph side of ``checkpoint-inspector fork`` / ``resume`` (options and handlers).

``install(parser, "fork"|"resume")`` — called at the end of a command's ``register`` — adds
the LangGraph options (``--graph``, ``--trusted``, ``--force``; fork: ``--raw``,
``--as-node``; resume: ``--answer``) and wraps the command so that LangGraph stores go to
the handlers here while every other store goes to the command's own ``run`` unchanged.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from inspector.commands._common import confirm, refuse_options, run_launch
from inspector.errors import StoreError
from inspector.resume.edits import apply_assignments, parse_json_text
from inspector.resume.fork import LANGGRAPH_SPEC
from inspector.resume.langgraph import (
    fork_langgraph,
    plan_resume,
    settings_for,
    start_resume,
)
from inspector.store import open_store
from inspector.store.langgraph.fork import DEFAULT_QUIET_SECONDS
from inspector.store.langgraph.settings import save_settings
from inspector.store.refs import resolve_checkpoint

_UNSET: Any = object()
OPTIONS = {"graph": "--graph", "trusted": "--trusted", "force": "--force", "raw": "--raw",
           "as_node": "--as-node", "answer": "--answer"}


def add_options(parser: argparse.ArgumentParser, command: str) -> None:
    """The LangGraph options of ``fork`` or ``resume``."""
    group = parser.add_argument_group("LangGraph stores")
    group.add_argument("--graph", metavar="MODULE:ATTR",
                       help="the compiled graph, as in langgraph.json (remembered for this store)")
    group.add_argument("--trusted", action="store_true",
                       help="let LangGraph revive any type named in the database (no "
                            "LANGGRAPH_STRICT_MSGPACK); only for databases you trust")
    group.add_argument("--force", action="store_true",
                       help=f"act even if the thread wrote a checkpoint in the last "
                            f"{DEFAULT_QUIET_SECONDS:g} s (it may be mid-run)")
    if command == "fork":
        group.add_argument("--raw", action="store_true",
                           help="write the fork row directly, without the graph (no reducers or routing)")
        group.add_argument("--as-node", metavar="NODE",
                           help="apply the edit as this node (default: the node that wrote the checkpoint)")
    else:
        group.add_argument("--answer", metavar="JSON",
                           help="the value answering a pending interrupt() (JSON, e.g. '\"yes\"'); when "
                                "several wait, an object keyed by interrupt id (or a unique prefix of 4+ "
                                "characters), e.g. '{\"f347\": \"yes\", \"26e0\": \"no\"}' — resume without "
                                "--answer lists their ids; an id left out stays waiting")


def install(parser: argparse.ArgumentParser, command: str) -> None:
    """Add the options and route LangGraph stores to this module's handlers."""
    add_options(parser, command)
    original: Callable[[argparse.Namespace], int] = parser.get_default("func")
    handler = fork_command if command == "fork" else resume_command

    def run(args: argparse.Namespace) -> int:
        with open_store(args.store) as probe:
            kind = probe.info.kind
            if kind != "langgraph":
                refuse_options(args, OPTIONS, "LangGraph stores", probe.info.display, kind)
            # one reference syntax for every store: names, id prefixes, RUN:-1 …
            args.checkpoint = resolve_checkpoint(probe, args.checkpoint).id
        if getattr(args, "dry_run", False):
            return original(args)      # a preview reads only; the same code for every store
        return handler(args) if kind == "langgraph" else original(args)

    parser.set_defaults(func=run)


def _remember(store: Any, args: argparse.Namespace) -> None:
    if args.graph:
        path = save_settings(store.info.url, settings_for(store).merged(graph=args.graph))
        print(f"remembered graph {args.graph} for {store.info.display} in {path}", file=sys.stderr)


def _edited_state(store: Any, args: argparse.Namespace) -> Any:
    if getattr(args, "task_assignments", None) or getattr(args, "tasks_file", None):
        raise StoreError(f"A LangGraph task state is derived from the {store.task_channel!r} channel; "
                         f"edit that channel with --set (e.g. '{store.task_channel}[0].status=\"completed\"').")
    state_file = getattr(args, "state_file", None)
    if not args.assignments and state_file is None:
        return _UNSET
    base = store.load(args.checkpoint).state
    if state_file is not None:
        try:
            base = parse_json_text(Path(state_file).read_text(encoding="utf-8"), "state file")
        except (OSError, UnicodeDecodeError) as err:
            raise StoreError(f"Cannot read {state_file}: {getattr(err, 'strerror', None) or err}.") from err
    return apply_assignments(base, list(args.assignments), "state")


def fork_command(args: argparse.Namespace) -> int:
    """Fork a LangGraph checkpoint; prints the new checkpoint id (limits of a raw fork on stderr)."""
    if any(getattr(args, name, None) for name in ("argv", "cwd", "env", "unset_env", "name")):
        raise StoreError(LANGGRAPH_SPEC)
    with open_store(args.store, readonly=False) as store:
        state = _edited_state(store, args)
        result = fork_langgraph(store, args.checkpoint, reason=args.reason,
                                **({} if state is _UNSET else {"state": state}), graph=args.graph,
                                raw=args.raw, as_node=args.as_node, trusted=args.trusted or None,
                                force=args.force)
        _remember(store, args)
    print(result.checkpoint_id)
    what = "raw fork (without the graph)" if result.mode == "raw" else "forked through the graph"
    print(f"{what}; edited: {', '.join(result.edited) or 'nothing'}"
          + (f"; next: {', '.join(result.next)}" if result.next else ""), file=sys.stderr)
    for limit in result.limits:
        print(f"note: {limit}", file=sys.stderr)
    return 0


def resume_command(args: argparse.Namespace) -> int:
    """Plan, show, confirm and run the LangGraph runner; with --wait return its exit code."""
    # no --answer: pass nothing (plan_resume's own "no answer" default; a sentinel of this
    # module would be taken for an answer value)
    answer = ({} if getattr(args, "answer", None) is None
              else {"answer": parse_json_text(args.answer, "--answer value")})
    with open_store(args.store) as store:
        if args.graph:       # a graph given now is loaded first: one that cannot be is not run nor remembered
            from inspector.resume.graph_channels import graph_report
            graph_report(store.info.url, settings_for(store, graph=args.graph, trusted=args.trusted or None))
        plan = plan_resume(store, args.checkpoint, **answer, graph=args.graph,
                           trusted=args.trusted or None, force=args.force)
        print(plan.describe(), flush=True)
        if not args.yes and not confirm("Run this command? [y/N] "):
            print("not resumed")
            return 1
        launch = start_resume(store, plan)
        _remember(store, args)
    print(f"running: {launch.command_line()}", flush=True)
    return run_launch(launch, wait=args.wait)
