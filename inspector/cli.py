"""The ``checkpoint-inspector`` command line: one sub-command per module in ``inspector.commands``."""

from __future__ import annotations

import functools
import importlib
import importlib.machinery
import os
import sys
from types import ModuleType, SimpleNamespace
from typing import TYPE_CHECKING, Any, NoReturn

import inspector.commands
from inspector import __version__
from inspector.commands._common import apply_budget_args, escape_control
from inspector.errors import StoreError, TaskStateError

if TYPE_CHECKING:
    import argparse

LOG_FORMAT = "%(levelname)s %(name)s: %(message)s"


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


def terminal_columns() -> int:
    """The columns ``shutil.get_terminal_size()`` gives, which argparse's help is wrapped to,
    without importing shutil (and with it zlib, bz2 and lzma) on every start-up."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        stdout = sys.__stdout__
        try:
            columns = os.get_terminal_size(stdout.fileno()).columns if stdout is not None else 0
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


@functools.cache
def _parser_class() -> type[argparse.ArgumentParser]:
    """The class of the CLI's parsers, made (with argparse imported) the first time it is needed."""
    import argparse

    class Parser(argparse.ArgumentParser):
        """argparse's parser, its help formatters told the terminal's width (sub-commands' parsers
        are of this class too)."""

        def _get_formatter(self) -> argparse.HelpFormatter:
            # the width argparse itself takes when none is given: the columns less 2
            return self.formatter_class(prog=self.prog, width=terminal_columns() - 2)  # type: ignore[call-arg]

        def error(self, message: str) -> NoReturn:
            # a run id or name may start with "-" (a LangGraph thread "-1"): argparse takes it for
            # an option and says only that a positional is missing; say how to give it
            dashed = next((a for a in _ARGV if a.startswith("-") and not a.startswith("--") and len(a) > 1
                           and a not in self._option_string_actions and a not in ("-v", "-h")), None)
            if dashed is not None and "--" not in _ARGV and "required" in message:
                message += (f"; {dashed!r} was taken for an option: a reference that starts with '-' "
                            f"goes after '--' (e.g. {self.prog} STORE -- {dashed})")
            # one sentence, as for every other mistake (argparse prints its usage block first);
            # an option no command knows is told by the top parser: the help to see is the command's
            message = message[:1].upper() + message[1:]
            helped = self.prog
            if message.startswith("Unrecognized arguments"):
                commands = next((a.choices for a in self._actions if isinstance(a, argparse._SubParsersAction)), {})
                chosen = next((a for a in _ARGV if a in commands), None)
                helped = f"{self.prog} {chosen}" if chosen else helped
            self.exit(2, f"{self.prog}: {escape_control(message)} (see {helped} --help).\n")

    return Parser


_ARGV: list[str] = []     # the command line being parsed (for the parser's error message)


def __getattr__(name: str) -> Any:
    """``Parser``, the class of the CLI's parsers, made when first asked for."""
    if name == "Parser":
        return _parser_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# The read commands a script runs most, parsed without argparse (whose import, with gettext,
# locale and their patterns, is a tenth of such a command's start-up) when the command line is
# only their positionals and flags: the same namespace argparse makes (tests/cli/test_fast_argv.py
# compares them). Anything else — help, an option with a value, an abbreviation, a misspelling,
# a value that starts with "-", too few or too many positionals — goes to argparse, which parses
# it or says what is wrong as it always has.
class _Attribute(str):
    """A default that is the command module's attribute of this name."""


# command: (positional dests, flags → dests, the other options' defaults)
_FAST: dict[str, tuple[tuple[str, ...], dict[str, str], dict[str, Any]]] = {
    "runs": (("store",), {"--json": "json"}, {"filter": "", "status": None}),
    "checkpoints": (("store", "run"), {"--json": "json"}, {}),
    "show": (("store", "checkpoint"), {"--json": "json"}, {}),
    "info": (("store",), {"--json": "json"}, {}),
    "diff": (("store", "a", "b"), {"--json": "json", "--exit-code": "exit_code"}, {"limit": _Attribute("DEFAULT_LIMIT")}),
}


def fast_args(argv: list[str]) -> SimpleNamespace | None:
    """The parsed arguments of a plain read-command line (see ``_FAST``), or None: argparse parses it."""
    verbose = False
    at = 0
    while at < len(argv) and argv[at] in ("-v", "--verbose"):
        verbose, at = True, at + 1
    if at == len(argv) or argv[at] not in _FAST:
        return None
    command = argv[at]
    positionals, flags, defaults = _FAST[command]
    given: list[str] = []
    set_flags = dict.fromkeys(flags.values(), False)
    for arg in argv[at + 1:]:
        if arg.startswith("-"):
            if arg not in flags:
                return None
            set_flags[flags[arg]] = True
        else:
            given.append(arg)
    if len(given) != len(positionals):
        return None
    module = importlib.import_module(f"inspector.commands.{command}")
    from inspector import limits

    return SimpleNamespace(
        verbose=verbose, command=command, **dict(zip(positionals, given, strict=True)),
        **{f"budget_{name}": None for name in limits.BUDGETS}, **set_flags,
        **{dest: getattr(module, value) if isinstance(value, _Attribute) else value
           for dest, value in defaults.items()},
        func=module.run)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser with every sub-command registered, or only ``only`` ('' for none).

    Registering one command keeps the GUI's start-up free of the other commands' imports
    (SQL, diff, LangGraph …); ``--help`` and unknown commands get the full parser.
    """
    parser = _parser_class()(
        prog="checkpoint-inspector",
        description="Inspect, diff, fork and resume agent checkpoints (native, LangGraph, OpenAI Agents, "
                    "CrewAI and Google ADK stores, and any an installed adapter reads).")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug information")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in command_modules() if only is None else [only] if only else []:
        importlib.import_module(f"inspector.commands.{name}").register(sub)
    return parser


def _configure(logging: ModuleType, verbose: bool) -> None:
    level = logging.DEBUG if verbose else logging.WARNING
    logging.basicConfig(level=level, format=LOG_FORMAT)
    for handler in logging.root.handlers:   # the terminal keeps this level when the app's log
        handler.setLevel(level)             # file takes INFO (its logger's level is lowered)
    if not verbose:
        # SQLAlchemy's pool logs, with a traceback, a connection it could not reset or close
        # on its way out: one the server dropped, whose failure the command says in its sentence
        logging.getLogger("sqlalchemy.pool").setLevel(logging.CRITICAL)


class _ConfigureLoggingOnImport:
    """A finder, first on ``sys.meta_path``, that lets ``logging`` load as usual and then
    configures it as the CLI does: start-up need not import logging (most commands never log),
    yet whatever logs later, here or in a library, logs in the CLI's format and level."""

    def __init__(self, verbose: bool) -> None:
        self.verbose = verbose

    def find_spec(self, name: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        if name != "logging":
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name)
        loader = spec.loader if spec is not None else None
        if loader is None:
            return spec
        load = loader.exec_module

        def exec_then_configure(module: ModuleType) -> None:
            load(module)
            _configure(module, self.verbose)

        loader.exec_module = exec_then_configure  # type: ignore[method-assign]  # this spec's own loader
        return spec


def configure_logging(verbose: bool) -> None:
    """Log at DEBUG (``-v``) or WARNING to stderr, from now if ``logging`` is loaded, else from
    the moment it is first imported."""
    if "logging" in sys.modules:
        _configure(sys.modules["logging"], verbose)
    elif verbose:
        import logging
        _configure(logging, verbose)
    elif not any(isinstance(f, _ConfigureLoggingOnImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _ConfigureLoggingOnImport(verbose))


def one_sentence(exc: BaseException) -> str:
    """The message of a user-facing error as one line that is safe in a terminal."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    text = escape_control(text)
    return text if text.endswith((".", "?", "!")) else text + "."


# top-level modules of the optional extras (pyproject.toml) → the extra that brings each
_EXTRAS = {"psycopg": "postgres", "deepdiff": "bench", "langgraph": "bench", "langchain_core": "bench",
           "aiosqlite": "bench"}


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; user-facing errors print one sentence and return 2; Ctrl-C, wherever it
    lands (loading a command's modules included), prints one and returns 130."""
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("checkpoint-inspector: interrupted.", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


def _main(argv: list[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args: Any = fast_args(argv)     # argparse's Namespace or its like
    if args is None:
        parser = build_parser(_wanted(argv))
        _ARGV[:] = argv
        args = parser.parse_args(argv)
        if args.command is None:
            args = parser.parse_args(["open", *argv])
    configure_logging(args.verbose)
    try:
        apply_budget_args(args)
        return int(args.func(args) or 0)
    except (StoreError, TaskStateError) as exc:
        print(f"checkpoint-inspector: {one_sentence(exc)}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as exc:     # an optional extra not installed (psycopg, deepdiff, langgraph …)
        module = (exc.name or "").split(".")[0]
        extra = _EXTRAS.get(module)
        if extra is None:
            raise
        print(f"checkpoint-inspector: This needs the {module} package, which is not installed: "
              f"install the package's {extra} extra (pip install 'checkpoint-inspector[{extra}]').", file=sys.stderr)
        return 2
    except RecursionError:   # a safety net: every walk of stored data is bounded (inspector.limits)
        import logging
        logging.getLogger(__name__).debug("recursion limit", exc_info=True)
        print("checkpoint-inspector: The data nests too deeply to be processed; lower --max-depth.",
              file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
