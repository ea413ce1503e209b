"""The ``checkpoint-inspector`` command line: one sub-command per module in ``inspector.commands``."""

from __future__ import annotations

import argparse
import importlib
import logging
import pkgutil
import sys

import inspector.commands
from inspector import __version__
from inspector.errors import StoreError, TaskStateError

log = logging.getLogger(__name__)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every sub-command module registered (sorted by name)."""
    parser = argparse.ArgumentParser(
        prog="checkpoint-inspector",
        description="Inspect, diff, fork and resume agent checkpoints (native and LangGraph stores).")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug information")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in sorted(pkgutil.iter_modules(inspector.commands.__path__), key=lambda m: m.name):
        if not module.name.startswith("_"):
            importlib.import_module(f"inspector.commands.{module.name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; user-facing errors print one sentence and return 2."""
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    if args.command is None:
        args = parser.parse_args(["open", *(argv or [])])
    try:
        return int(args.func(args) or 0)
    except (StoreError, TaskStateError) as exc:
        print(f"checkpoint-inspector: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("checkpoint-inspector: interrupted.", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
