"""``checkpoint-inspector resume STORE CHECKPOINT``: show what will run, confirm, then launch it."""

from __future__ import annotations

import argparse
import sys

from inspector.commands._common import COLON_RULE, add_budget_args, at_least, confirm
from inspector.commands._frameworks import install as install_frameworks
from inspector.commands._langgraph import install as install_langgraph
from inspector.resume.launch import launch_exited, spawn
from inspector.resume.resume import FORK, plan_resume, start_resume
from inspector.store import open_store


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``resume`` sub-command."""
    parser = sub.add_parser(
        "resume", help="resume a run from a checkpoint (asks before running anything)",
        description="Resume from CHECKPOINT: the same run continues from its head when no live "
                    "process owns it; otherwise a fork is made and resumed. Prints the command it "
                    "will run and asks for confirmation unless --yes.")
    parser.add_argument("store", metavar="STORE", help="store path or SQLAlchemy URL (opened writable)")
    add_budget_args(parser)
    parser.add_argument("checkpoint", metavar="CHECKPOINT", help=f"checkpoint id or RUN:SEQ (RUN:-1 = head); {COLON_RULE}")
    parser.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation (scripts)")
    parser.add_argument("--wait", action="store_true", help="wait for the process and return its exit code")
    parser.add_argument("--reason", default=None, help="reason kept with the fork, when one is made")
    parser.add_argument("--threshold", type=at_least(0.001, float), default=30.0, metavar="SECONDS",
                        help="heartbeat age after which the current owner is presumed dead (default 30)")
    parser.set_defaults(func=run)
    install_langgraph(parser, "resume")    # LangGraph stores: --graph, --trusted, … and their handlers
    install_frameworks(parser, "resume")   # other adapters: their reason, or the framework's own command


def run(args: argparse.Namespace) -> int:
    """Plan, confirm, take ownership (or fork), launch; with --wait return the child's exit code."""
    with open_store(args.store, readonly=False) as store:
        plan = plan_resume(store, args.checkpoint, heartbeat_threshold=args.threshold)
        print(plan.describe(), flush=True)
        question = "Fork and run this command? [y/N] " if plan.mode == FORK else "Run this command? [y/N] "
        if not args.yes and not confirm(question):
            print("not resumed")
            return 1
        launch = start_resume(store, plan, reason=args.reason)
        if launch.forked:
            print(f"forked {plan.run.id}:{plan.checkpoint.seq} into run {launch.run_id}")
        print(f"resuming run {launch.run_id} (epoch {launch.epoch}): {launch.command_line()}", flush=True)
        proc = spawn(launch, store=store, new_session=not args.wait)
        if not args.wait:
            print(f"started pid {proc.pid}")
            return 0
        code = proc.wait()
        if code and launch_exited(store, launch, code):
            print(f"run {launch.run_id} marked failed: the process never took it over", file=sys.stderr)
    print(f"process exited with code {code}", file=sys.stderr)
    return code
