"""``checkpoint-inspector open [STORE]``: the desktop inspector (also the default command)."""

from __future__ import annotations

import argparse
import sys

from inspector.commands._common import add_budget_args
from inspector.demo.paths import default_store_path

TABS = ("state", "tasks", "metadata", "diff")


def add_gui_arguments(parser: argparse.ArgumentParser) -> None:
    """Options shared by every command that opens the window (``open``, ``demo``)."""
    group = parser.add_argument_group("window")
    group.add_argument("--screenshot", metavar="PATH", default=None,
                       help="render the loaded window to a PNG (no display needed) and exit")
    group.add_argument("--select", metavar="RUN[:SEQ]", default=None,
                       help="select a run (id, id prefix, name or a part of one) and optionally checkpoint SEQ")
    group.add_argument("--tab", choices=TABS, default=None, help="detail tab to show")
    group.add_argument("--theme", choices=("auto", "light", "dark"), default=None,
                       help="colour theme (default: the one chosen in View ▸ Theme, else the system's)")
    group.add_argument("--no-live", action="store_true", help="do not follow changes to the store")
    group.add_argument("--size", metavar="WxH", default="1400x900", type=_size,
                       help="window size for --screenshot (default 1400x900; a size below the window's "
                            "minimum, about 650x440, renders at that minimum)")


MAX_SIDE = 8192      # a screenshot's width and height at most (Qt's painter fails far beyond)


def _size(text: str) -> tuple[int, int]:
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"{text!r} is not WIDTHxHEIGHT") from err
    if not (0 < width <= MAX_SIDE and 0 < height <= MAX_SIDE):
        raise argparse.ArgumentTypeError(f"{text!r} is not a window size: width and height from 1 to {MAX_SIDE}")
    return width, height


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``open`` sub-command."""
    parser = sub.add_parser("open", help="open the desktop inspector on a store (the default command)")
    parser.add_argument("store", metavar="STORE", nargs="?", default=None,
                        help=f"store path or SQLAlchemy URL (default: the demo store {default_store_path()} "
                             "if it exists)")
    add_gui_arguments(parser)
    add_budget_args(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Open the window on the given store, the demo store, or the welcome page."""
    store = args.store
    if store is None and default_store_path().exists():
        store = str(default_store_path())
    return open_gui(store, args)


def open_gui(store: str | None, args: argparse.Namespace) -> int:
    """Start the GUI on ``store`` with the window options in ``args``; returns the exit code."""
    screenshot = getattr(args, "screenshot", None)
    from inspector.ui.app import display_problem

    problem = display_problem(screenshot is not None)
    if problem is not None:
        print(f"checkpoint-inspector: {problem}", file=sys.stderr)
        return 2
    try:
        from inspector.ui.app import run_gui
    except ImportError as err:
        print(f"checkpoint-inspector: the desktop app needs PySide6 ({err}).", file=sys.stderr)
        return 2
    return run_gui(store, screenshot=screenshot, select=getattr(args, "select", None),
                   tab=getattr(args, "tab", None), theme=getattr(args, "theme", None),
                   live=not getattr(args, "no_live", False),
                   size=getattr(args, "size", None) or (1400, 900))
