"""``checkpoint-inspector stuck STORE``: list stuck and crashed runs with their diagnosis."""

from __future__ import annotations

import argparse

from inspector.commands._common import add_json_arg, add_store_arg, at_least, print_json_records, print_table, say
from inspector.model import CheckpointInfo
from inspector.resume.liveness import fmt_age
from inspector.resume.stuck import stuck_runs
from inspector.store import open_reader


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``stuck`` sub-command."""
    parser = sub.add_parser("stuck", help="list stuck or crashed runs and what they were doing")
    add_store_arg(parser)
    add_json_arg(parser)
    parser.add_argument("--threshold", type=at_least(0.001, float), default=30.0, metavar="SECONDS",
                        help="heartbeat age after which a running run is stuck (default 30)")
    parser.add_argument("--verbose-diagnosis", "-d", action="store_true", help="print the full diagnosis")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the stuck runs (exit code 0 even when there are some)."""
    with open_reader(args.store) as store:
        found = stuck_runs(store, heartbeat_threshold=args.threshold)
    if args.json:
        print_json_records([{"run": d.run_id, "status": d.status, "summary": d.summary, "reasons": list(d.reasons),
                     "since_checkpoint": d.since_checkpoint, "heartbeat_age": d.owner.heartbeat_age,
                     "last_checkpoint": _checkpoint(d.last_checkpoint), "last_tool": _checkpoint(d.last_tool),
                     "loop": d.loop, "pending_reviews": list(d.pending_reviews),
                     "waiting_for": list(d.waiting_for),
                     "suggested": f"{d.run_id}:{d.suggested_checkpoint.seq}" if d.suggested_checkpoint else None}
                    for d in found])
        return 0
    if not found:
        say("no stuck runs")
        return 0
    if args.verbose_diagnosis:
        for d in found:
            say(f"{d.run_id}  {d.describe()}\n")
        return 0
    print_table(("RUN", "STATUS", "SINCE", "LAST CHECKPOINT", "RESUME FROM", "WHY"),
                [(d.run_id, d.status, fmt_age(d.since_checkpoint),
                  f"#{d.last_checkpoint.seq} {d.last_checkpoint.name}" if d.last_checkpoint else "",
                  f"{d.run_id}:{d.suggested_checkpoint.seq}" if d.suggested_checkpoint else "",
                  "; ".join(d.reasons)) for d in found])
    return 0


def _checkpoint(info: CheckpointInfo | None) -> dict | None:
    """A checkpoint of a diagnosis as ``checkpoints --json`` gives its main fields."""
    if info is None:
        return None
    return {"id": info.id, "seq": info.seq, "kind": info.kind, "name": info.name, "created": info.created,
            "change": info.change}
