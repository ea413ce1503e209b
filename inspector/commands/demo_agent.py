"""``checkpoint-inspector demo-agent``: run the deterministic demo agent once."""

from __future__ import annotations

import argparse

from inspector.demo.agent import add_arguments
from inspector.demo.agent import run as run_agent


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``demo-agent`` sub-command."""
    parser = sub.add_parser("demo-agent", help="run the demo agent (records into --store)")
    add_arguments(parser)
    parser.set_defaults(func=run_agent)
