"""``checkpoint-inspector checkpoints STORE RUN``: list a run's checkpoints."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from inspector.commands._common import (add_json_arg, add_store_arg, fmt_size, fmt_time, note_store, print_damaged,
                                        print_json_records, print_table)
from inspector.store import open_reader
from inspector.store.refs import resolve_run


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``checkpoints`` sub-command."""
    parser = sub.add_parser("checkpoints", help="list a run's checkpoints")
    add_store_arg(parser)
    parser.add_argument("run", metavar="RUN", help="run id, unique id prefix or name (a LangGraph thread id)")
    add_json_arg(parser)
    parser.set_defaults(func=run)


class _Memo(dict):
    """``fn`` of each value, worked out once per distinct value (a long run repeats sizes and
    scores; its times are seconds apart)."""

    def __init__(self, fn: Callable[[Any], str]) -> None:
        super().__init__()
        self.fn = fn

    def __missing__(self, key: Any) -> str:
        value = self[key] = self.fn(key)
        return value


def _second(ts: Any) -> Any:
    """A time as the key of what ``fmt_time`` prints for it (a positive time to the second)."""
    return int(ts) if type(ts) is float and 0 < ts < 1e11 else ts


def run(args: argparse.Namespace) -> int:
    """Print the checkpoints of one run."""
    with open_reader(args.store) as store:
        note_store(store)
        cps = store.list_checkpoints(resolve_run(store, args.run).id)
    if args.json:
        print_json_records([{"id": c.id, "seq": c.seq, "kind": c.kind, "name": c.name, "created": c.created,
                            "parent": c.parent_id, "size": c.size, "size_delta": c.size_delta, "ops": c.ops,
                            "tasks": {"done": c.tasks_done, "total": c.tasks_total},
                            "score": {"passed": c.checks_passed, "total": c.checks_total},
                            "change": c.change, "lane": c.lane, "damaged": c.damaged or None} for c in cps])
        return 0
    seconds, sizes, scores = _Memo(fmt_time), _Memo(fmt_size), _Memo(lambda s: f"{s[0]}/{s[1]}")
    print_table(("SEQ", "ID", "KIND", "NAME", "TIME", "SIZE", "OPS", "SCORE", "CHANGE"),
                [(c.seq, c.id, c.kind, c.name, seconds[_second(c.created)], sizes[c.size], c.ops,
                  scores[c.checks_passed, c.checks_total], c.change) for c in cps])
    print_damaged((f"#{c.seq}", c.damaged) for c in cps)
    return 0
