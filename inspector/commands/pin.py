"""``checkpoint-inspector pin STORE CHECKPOINT``: keep a checkpoint from ever being pruned."""

from __future__ import annotations

import argparse

from inspector.commands._common import add_store_arg
from inspector.retention.pins import set_pin


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``pin`` sub-command."""
    parser = sub.add_parser("pin", help="pin a checkpoint (prune never removes it)")
    add_store_arg(parser)
    parser.add_argument("checkpoint", metavar="CHECKPOINT", help="checkpoint id or RUN:SEQ")
    parser.add_argument("--note", default="", help="why it is pinned")
    parser.set_defaults(func=run, pinned=True)


def run(args: argparse.Namespace) -> int:
    """Pin or unpin (``args.pinned``) and say what happened."""
    info, changed = set_pin(args.store, args.checkpoint, args.pinned, note=getattr(args, "note", ""))
    state = "pinned" if args.pinned else "unpinned"
    print(f"{info.run_id}:{info.seq} (id {info.id}) {'is now' if changed else 'was already'} {state}.")
    return 0
