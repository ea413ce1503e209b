"""Fork or resume a CrewAI crew from a checkpoint through crewai itself (run by your Python).

    python crewai_runner.py resume --restore-from PATH [--location LOC] [--provider json|sqlite] [--setup MOD:FN]
    python crewai_runner.py fork --restore-from PATH --branch NAME [--location LOC] [--provider …] [--setup MOD:FN]

``resume`` is ``Crew.from_checkpoint(config).kickoff(inputs)``; ``fork`` is
``Crew.fork(config, branch=NAME).kickoff(inputs)``, with checkpointing on to the same store so
the new snapshots appear in the inspector. A restored crew gets crewai's default LLM (and no
tools): ``--setup module:function`` is called with the crew first, so your code can set them.
"""

from __future__ import annotations

import argparse
import importlib
import sys


def use_newer_sqlite() -> None:
    """crewai's SQLite provider needs SQLite >= 3.45 (jsonb()); when this Python's is older and
    pysqlite3 (a newer SQLite) is installed, the provider is given that one."""
    import sqlite3
    if tuple(int(x) for x in sqlite3.sqlite_version.split(".")[:2]) >= (3, 45):
        return
    try:
        import pysqlite3.dbapi2 as newer
    except ImportError:
        print(f"crewai_runner: this Python's SQLite is {sqlite3.sqlite_version}; crewai's SQLite provider "
              "needs 3.45 or newer (install pysqlite3-binary, or use a newer Python).", file=sys.stderr)
        return
    from crewai.state.provider import sqlite_provider
    sqlite_provider.sqlite3 = newer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="crewai_runner")
    parser.add_argument("action", choices=["resume", "fork"])
    parser.add_argument("--restore-from", required=True)
    parser.add_argument("--location", required=True)
    parser.add_argument("--provider", choices=["json", "sqlite"], default="json")
    parser.add_argument("--branch")
    parser.add_argument("--setup", help="module:function called with the restored crew before kickoff")
    args = parser.parse_args(argv)
    try:
        from crewai import Crew
        from crewai.state.checkpoint_config import CheckpointConfig
        from crewai.state.provider.sqlite_provider import SqliteProvider
    except ImportError as err:
        print(f"crewai_runner: crewai is not installed in this Python ({sys.executable}): {err}", file=sys.stderr)
        return 3
    if args.provider == "sqlite":
        use_newer_sqlite()
    extra = {"provider": SqliteProvider()} if args.provider == "sqlite" else {}
    config = CheckpointConfig(location=args.location, restore_from=args.restore_from,
                              on_events=["task_completed"], **extra)
    if args.action == "fork":
        crew = Crew.fork(config, branch=args.branch)
    else:
        crew = Crew.from_checkpoint(config)
    # the snapshot carries the checkpoint settings of the run that wrote it (its location may be
    # where the store was then): write the new snapshots into the store that was opened
    crew.checkpoint = CheckpointConfig(location=args.location, on_events=["task_completed"], **extra)
    if args.setup:
        module, _, name = args.setup.partition(":")
        sys.path.insert(0, "")
        getattr(importlib.import_module(module), name)(crew)
    result = crew.kickoff(inputs=crew.checkpoint_inputs or None)
    print(f"crewai_runner: {args.action} finished: {getattr(result, 'raw', result)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
