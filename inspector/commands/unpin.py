"""``checkpoint-inspector unpin STORE CHECKPOINT``: let prune remove a checkpoint again."""

from __future__ import annotations

import argparse

from inspector.commands import pin
from inspector.commands._common import add_store_arg


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``unpin`` sub-command."""
    parser = sub.add_parser("unpin", help="unpin a checkpoint")
    add_store_arg(parser)
    parser.add_argument("checkpoint", metavar="CHECKPOINT", help="checkpoint id or RUN:SEQ")
    parser.set_defaults(func=pin.run, pinned=False)
