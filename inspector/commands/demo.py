"""``checkpoint-inspector demo``: build the demo store by running agents, then open the GUI on it."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from inspector.demo.build import build_demo_store, default_store_path, stop_agents_of


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``demo`` sub-command."""
    parser = sub.add_parser("demo", help="build the demo store (real agent runs) and open it")
    parser.add_argument("--store", default=None, help=f"where to build it (default {default_store_path()})")
    parser.add_argument("--rebuild", action="store_true", help="rebuild even if the store exists")
    parser.add_argument("--no-gui", action="store_true", help="only build the store")
    parser.add_argument("--no-stuck", action="store_true", help="skip the hung agent process")
    add_gui_arguments: Callable[[argparse.ArgumentParser], None] | None
    try:
        from inspector.commands.open import add_gui_arguments
    except ImportError:  # the GUI command is optional in a core-only install
        add_gui_arguments = None
    if add_gui_arguments is not None:
        add_gui_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Build (if needed) and open the demo store."""
    if args.store and "://" in args.store:
        # the demo's agents record into a file beside their workspaces; a URL taken for a path
        # made a SQLite file under "./postgresql+psycopg:/…" and left the database empty
        print(f"checkpoint-inspector: the demo store is a SQLite file: give --store a file path, not a "
              f"{args.store.split('://')[0]}:// URL.", file=sys.stderr)
        return 2
    store = Path(args.store).expanduser() if args.store else default_store_path()
    window_only = [f"--{name}" for name in ("screenshot", "select", "tab") if getattr(args, name, None)]
    if args.no_gui and window_only:
        print(f"checkpoint-inspector: --no-gui only builds the store; {', '.join(window_only)} "
              f"{'needs' if len(window_only) == 1 else 'need'} the window.", file=sys.stderr)
        return 2
    if not args.no_gui:
        from inspector.ui.app import display_problem

        problem = display_problem(getattr(args, "screenshot", None) is not None)
        if problem is not None:   # say so before spending time on agents nobody can watch
            print(f"checkpoint-inspector: {problem}", file=sys.stderr)
            return 2
    if args.rebuild or not store.exists():
        print(f"building the demo store at {store} …")
        build_demo_store(store, log=lambda line: print(f"  {line}"), include_stuck=not args.no_stuck)
    if args.no_gui:
        print(store)
        return 0
    from inspector.commands.open import open_gui
    try:
        return open_gui(str(store), args)
    finally:    # the agent hung on purpose (a stuck run to look at) goes with the window
        stop_agents_of(store.resolve())
