"""Branch an OpenAI Agents AdvancedSQLiteSession from a user turn through the SDK (run by your Python).

    python openai_agents_branch.py --db PATH --session ID --from-branch BRANCH --turn N [--name NAME]

Switches the session to BRANCH and calls ``create_branch_from_turn(N, NAME)``: the new branch
shares the turns before N (the SDK copies references, not messages). Continue it from your
code with ``AdvancedSQLiteSession(…).switch_to_branch(NAME)`` and ``Runner.run``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys


async def branch(args: argparse.Namespace) -> str:
    from agents.extensions.memory import AdvancedSQLiteSession
    session = AdvancedSQLiteSession(session_id=args.session, db_path=args.db)
    try:
        if args.from_branch != "main":
            await session.switch_to_branch(args.from_branch)
        return await session.create_branch_from_turn(args.turn, args.name)
    finally:
        session.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="openai_agents_branch")
    parser.add_argument("--db", required=True)
    parser.add_argument("--session", required=True)
    parser.add_argument("--from-branch", default="main")
    parser.add_argument("--turn", type=int, required=True)
    parser.add_argument("--name")
    args = parser.parse_args(argv)
    try:
        import agents  # noqa: F401
    except ImportError as err:
        print(f"openai_agents_branch: openai-agents is not installed in this Python ({sys.executable}): {err}",
              file=sys.stderr)
        return 3
    try:
        name = asyncio.run(branch(args))
    except ValueError as err:   # the SDK's refusal (a name used meanwhile, a turn gone): its sentence
        print(f"openai_agents_branch: {err}", file=sys.stderr)
        return 2
    print(f"openai_agents_branch: created branch {name!r} of session {args.session!r} from turn {args.turn}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
