"""The ``checkpoint-inspector`` command line: one sub-command per module in ``inspector.commands``."""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys

import inspector.commands
from inspector import __version__
from inspector.commands._common import apply_budget_args, escape_control
from inspector.errors import StoreError, TaskStateError

log = logging.getLogger(__name__)


def command_modules() -> list[str]:
    """Names of the sub-command modules (``demo_agent`` is the ``demo-agent`` command)."""
    return sorted({name[:-3] for folder in inspector.commands.__path__ for name in os.listdir(folder)
                   if name.endswith(".py") and not name.startswith("_")})


def _wanted(argv: list[str]) -> str | None:
    """The one command module a command line needs, so start-up imports only that module
    ('' for none: ``--version``); None when every command is needed (help, unknown)."""
    first = next((a for a in argv if not a.startswith("-")), None)
    if first is None:
        if any(a in ("-h", "--help") for a in argv):
            return None
        return "" if "--version" in argv else "open"
    name = first.replace("-", "_")
    return name if name in command_modules() else None


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser with every sub-command registered, or only ``only`` ('' for none).

    Registering one command keeps the GUI's start-up free of the other commands' imports
    (SQL, diff, LangGraph …); ``--help`` and unknown commands get the full parser.
    """
    parser = argparse.ArgumentParser(
        prog="checkpoint-inspector",
        description="Inspect, diff, fork and resume agent checkpoints (native, LangGraph, OpenAI Agents, "
                    "CrewAI and Google ADK stores, and any an installed adapter reads).")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug information")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in command_modules() if only is None else [only] if only else []:
        importlib.import_module(f"inspector.commands.{name}").register(sub)
    return parser


def one_sentence(exc: BaseException) -> str:
    """The message of a user-facing error as one line that is safe in a terminal."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    text = escape_control(text)
    return text if text.endswith((".", "?", "!")) else text + "."


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; user-facing errors print one sentence and return 2."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(_wanted(argv))
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    if args.command is None:
        args = parser.parse_args(["open", *argv])
    try:
        apply_budget_args(args)
        return int(args.func(args) or 0)
    except (StoreError, TaskStateError) as exc:
        print(f"checkpoint-inspector: {one_sentence(exc)}", file=sys.stderr)
        return 2
    except RecursionError:   # a safety net: every walk of stored data is bounded (inspector.limits)
        log.debug("recursion limit", exc_info=True)
        print("checkpoint-inspector: The data nests too deeply to be processed; lower --max-depth.",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("checkpoint-inspector: interrupted.", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
