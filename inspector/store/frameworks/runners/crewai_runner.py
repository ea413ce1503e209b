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
    extra = {"provider": SqliteProvider()} if args.provider == "sqlite" else {}
    config = CheckpointConfig(location=args.location, restore_from=args.restore_from,
                              on_events=["task_completed"], **extra)
    if args.action == "fork":
        crew = Crew.fork(config, branch=args.branch)
    else:
        crew = Crew.from_checkpoint(config)
    if args.setup:
        module, _, name = args.setup.partition(":")
        sys.path.insert(0, "")
        getattr(importlib.import_module(module), name)(crew)
    result = crew.kickoff(inputs=crew.checkpoint_inputs or None)
    print(f"crewai_runner: {args.action} finished: {getattr(result, 'raw', result)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
