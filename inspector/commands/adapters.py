"""``checkpoint-inspector adapters``: the store adapters installed (built-in and third-party)."""

from __future__ import annotations

import argparse

from inspector.commands._common import add_json_arg, print_json, print_table
from inspector.store.adapters import BUILTIN, ENTRY_POINT_GROUP, adapters


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``adapters`` sub-command."""
    parser = sub.add_parser("adapters", help="list the store adapters (kinds of stores this can open)")
    add_json_arg(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print each adapter's kind, name, origin and capabilities."""
    builtin = {spec.partition(":")[0] for spec in BUILTIN}
    rows = []
    for a in adapters():
        origin = "built-in" if type(a).__module__ in builtin else f"{type(a).__module__} ({ENTRY_POINT_GROUP})"
        caps = {k: a.capabilities.get(k).available for k in ("fork", "resume", "live")}
        rows.append((a.kind, a.label, origin, caps))
    if args.json:
        print_json([{"kind": k, "label": lab, "origin": o, "capabilities": c} for k, lab, o, c in rows])
        return 0
    print_table(("KIND", "NAME", "FROM", "FORK", "RESUME", "LIVE"),
                [(k, lab, o, *("yes" if c[x] else "no" for x in ("fork", "resume", "live")))
                 for k, lab, o, c in rows])
    print(f"\nThird-party adapters register under the entry-point group {ENTRY_POINT_GROUP!r}.")
    return 0
