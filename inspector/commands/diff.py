"""``checkpoint-inspector diff STORE A B``: what changed between two checkpoints."""

from __future__ import annotations

from typing import TYPE_CHECKING

from inspector.commands._common import (COLON_RULE, add_json_arg, add_store_arg, at_least, note_store, print_json_with_list, say,
                                        use_graph_kinds)
from inspector.diff import Change, DiffResult, TextDelta, describe_divergence, diff_checkpoints, to_json
from inspector.diff.serialize import change_json
from inspector.diff.grouping import ItemRange, group_changes
from inspector.diff.text import render_delta
from inspector.store.refs import format_ref, resolve_checkpoint

if TYPE_CHECKING:
    import argparse

DEFAULT_LIMIT = 500


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``diff`` sub-command."""
    parser = sub.add_parser(
        "diff", help="diff two checkpoints (state and task state)",
        description="Show what changed from checkpoint A to checkpoint B: a summary line, the "
                    "task changes, then the structural changes. A and B are RUN:SEQ (RUN: a run id, "
                    "a unique id prefix, a name or a part of one; a negative SEQ counts from the end of the run), "
                    f"a RUN alone (its head) or checkpoint ids; {COLON_RULE}.")
    add_store_arg(parser)
    parser.add_argument("a", metavar="A", help="the older checkpoint (RUN:SEQ or id)")
    parser.add_argument("b", metavar="B", help="the newer checkpoint (RUN:SEQ or id)")
    add_json_arg(parser)
    parser.add_argument("--limit", type=at_least(0), default=DEFAULT_LIMIT,
                        help=f"print at most this many lines of structural changes (default {DEFAULT_LIMIT}; "
                             "0: all)")
    parser.add_argument("--exit-code", action="store_true",
                        help="exit 1 when the checkpoints differ, 0 when they are equal")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Open the store read-only, diff, print."""
    from inspector.store import open_reader

    with open_reader(args.store) as store:
        note_store(store)
        use_graph_kinds(store)
        result = diff_checkpoints(store, resolve_checkpoint(store, args.a), resolve_checkpoint(store, args.b))
    if args.json:
        print_json_with_list(to_json(result, changes=False), "changes", map(change_json, result.changes))
    else:
        print_text(result, args.limit)
    return 1 if args.exit_code and not result.empty else 0


def print_text(result: DiffResult, limit: int = DEFAULT_LIMIT) -> None:
    """The human form: header, summary, lineage, task changes, structural changes."""
    a, b = result.a, result.b
    if a is not None and b is not None:
        say(f"diff {format_ref(a)} → {format_ref(b)}  (ids {a.id} → {b.id})")
        if a.run_id != b.run_id or result.three_way is not None:
            say(describe_divergence(result.ancestor, a, b))
    say(f"summary: {result.summary}")
    if result.task_changes:
        say(f"\ntasks ({len(result.task_changes)}):")
        for change in result.task_changes:
            say(f"  {change.describe()}")
    say(f"\nchanges ({len(result.changes)}):" if result.changes else "\nno state changes")
    if not result.changes and result.hidden:
        say(f"LangGraph's own channels changed (not part of the state; `show --json` has them under "
            f"meta.control_channels): {', '.join(str(h) for h in result.hidden)}")
    _print_changes(result.changes, limit)
    if result.three_way is not None:
        three = result.three_way
        where = format_ref(three.ancestor)
        say(f"\nsince the common ancestor {where}: A changed {len(three.to_a)}, "
              f"B changed {len(three.to_b)}, both changed {len(three.both_changed)} path(s)")
        for path in three.both_changed[:20]:
            say(f"  both: {Change(path, 'changed').display_path}")


def _print_changes(changes: tuple[Change, ...], limit: int) -> None:
    """One line per change, items added or removed together in one line (see grouping)."""
    rows = group_changes(changes)
    shown = rows if limit <= 0 else rows[:limit]
    for row in shown:
        say(f"  {row.describe()}")
        if isinstance(row.detail, TextDelta):
            text = render_delta(row.detail).replace("\n", "\n      ")
            say(f"      {text}")
    if len(shown) < len(rows):
        hidden = sum(len(row.changes) if isinstance(row, ItemRange) else 1 for row in rows[len(shown):])
        say(f"  … {hidden} more (use --limit 0 or --json)")
