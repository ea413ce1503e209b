"""``checkpoint-inspector usage STORE [RUN]``: why the store is the size it is (native and
LangGraph stores, and the session stores of the OpenAI Agents SDK, CrewAI and Google ADK)."""

from __future__ import annotations

import argparse
import dataclasses

from inspector.commands._common import (
    add_json_arg,
    add_store_arg,
    fmt_size,
    print_json,
    print_table,
)
from inspector.humanize import plural
from inspector.resume.status import quick_statuses
from inspector.store import open_reader
from inspector.store.refs import resolve_run
from inspector.usage.api import store_usage
from inspector.usage.frameworks import LOG_KINDS
from inspector.usage.report import UsageReport

TOP = 15


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``usage`` sub-command."""
    parser = sub.add_parser("usage", help="storage used by run, checkpoint and field, and on disk")
    add_store_arg(parser)
    parser.add_argument("run", metavar="RUN", nargs="?", help="also show this run checkpoint by checkpoint")
    add_json_arg(parser)
    parser.add_argument("--all", action="store_true", help=f"list every run (default: the {TOP} biggest)")
    parser.add_argument("--no-pieces", action="store_true",
                        help="totals only: skip the piece walk (no split by run and field; for huge stores)")
    parser.set_defaults(func=run)


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f} %" if whole else ""


def part_word(kind: str) -> str:
    """What the report splits the bytes by: a native state's fields, LangGraph's channels, a
    framework log's checkpoint kinds or a snapshot store's steps (``inspector.usage.frameworks``)."""
    return {"native": "FIELD", "langgraph": "CHANNEL"}.get(kind) or ("KIND" if kind in LOG_KINDS else "STEP")


def run(args: argparse.Namespace) -> int:
    """Print the report."""
    with open_reader(args.store) as store:
        run_id = resolve_run(store, args.run).id if args.run else None
        report = store_usage(store, run_id, pieces=not args.no_pieces)
        shown = quick_statuses(store.list_runs())     # the status ``runs`` and the app show (crashed, stuck)
    if shown:
        report = dataclasses.replace(report, runs=tuple(
            dataclasses.replace(r, status=shown[r.run].status) if r.run in shown else r for r in report.runs))
    if args.json:
        print_json(report.to_json())
        return 0
    print_report(report, every_run=args.all)
    return 0


def print_report(report: UsageReport, every_run: bool = False) -> None:
    """The report as text tables."""
    print(f"{report.store} ({report.kind}, {report.backend}): {fmt_size(report.total_bytes)} on disk"
          + (f", {fmt_size(report.free_bytes)} of it free pages (--vacuum gives them back)" if report.free_bytes else "")
          + (f", WAL {fmt_size(report.wal_bytes)}" if report.wal_bytes else ""))
    if report.kind in ("native", "langgraph"):
        print(f"{plural(report.checkpoints, 'checkpoint')} in {plural(len(report.runs), 'run')}; states decode to "
              f"{fmt_size(report.logical_bytes)}, stored as {fmt_size(report.content_bytes)} of content "
              f"and {fmt_size(report.rows_bytes)} of checkpoint rows")
    else:
        print(f"{plural(report.checkpoints, 'checkpoint')} in {plural(len(report.runs), 'run')}; their framework "
              f"stored {fmt_size(report.content_bytes)} of data for them")
    if report.tables:
        print()
        print_table(("TABLE", "ON DISK", "SHARE"), [(name, fmt_size(n), _share(n, report.total_bytes))
                                                 for name, n in sorted(report.tables.items(), key=lambda kv: -kv[1])])
    whole = sum(report.fields.values())
    print()
    part = part_word(report.kind)
    print_table((part, "STORED", "SHARE"),
                [(name, fmt_size(n), _share(n, whole)) for name, n in list(report.fields.items())[:TOP]])
    if report.channels:
        print()
        print_table(("CHANNEL", "STORED", "RE-WRITTEN UNCHANGED", "VERSIONS"),
                    [(c.name, fmt_size(c.bytes), f"{fmt_size(c.unchanged_bytes)} ({_share(c.unchanged_bytes, c.bytes)})",
                      c.versions) for c in report.channels[:TOP]])
    if report.ours is not None:
        print(f"\nThe same history in this project's store (content and rows, not a whole file): "
              f"about {fmt_size(report.ours.bytes)} ({report.ours.pieces:,} pieces; {report.ours.method})")
    runs = report.runs if every_run else report.runs[:TOP]
    print()
    print_table(("RUN", "NAME", "STATUS", "CKPTS", "STORED", "SHARE", "LOGICAL", f"BIGGEST {part}"),
                [(r.run, _cut(r.name, 30), r.status, r.checkpoints, fmt_size(r.bytes), _share(r.bytes, whole),
                  fmt_size(r.logical_bytes), next(iter(r.fields), "")) for r in runs])
    if len(runs) < len(report.runs):
        print(f"… and {len(report.runs) - len(runs):,} more runs (--all lists them)")
    if report.detail is not None:
        print(f"\nRun {report.detail.run}, checkpoint by checkpoint:")
        print_table(("SEQ", "LOGICAL", "STORED", "UNIQUE", "OPS", "SCORE"),
                    [(c.seq, fmt_size(c.logical), fmt_size(c.stored), fmt_size(c.unique), c.ops,
                      f"{c.checks_passed}/{c.checks_total}") for c in report.detail.checkpoints])
        if report.detail.tradeoff:
            print("\nInterval trade-off (the same run with a snapshot every N checkpoints):")
            print_table(("EVERY", "SNAPSHOTS", "WRITTEN", "REPLAY MAX", "REPLAY MEAN"),
                        [(t.every, t.snapshots, fmt_size(t.write_bytes), t.replay_max, f"{t.replay_mean:g}")
                         for t in report.detail.tradeoff])
    for note in report.notes:
        print(f"note: {note}")


def _cut(text: str, width: int) -> str:
    """``text`` in ``width`` characters, an ellipsis saying when it was cut."""
    return text if len(text) <= width else text[:width - 1] + "\u2026"
