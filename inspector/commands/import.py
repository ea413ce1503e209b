"""``checkpoint-inspector import SRC DST``: copy a LangGraph checkpoint database into a native store.

SRC is a ``SqliteSaver`` file or a ``PostgresSaver`` database; DST a native store path or URL
(created when missing) that ``InspectorSaver`` then continues. Every thread, namespace,
branch, checkpoint and pending write is copied, then LangGraph's own saver on SRC and
``InspectorSaver`` on DST are compared checkpoint by checkpoint. Without ``--apply`` nothing
is written to DST: the copy is made into a temporary file to show what it holds and its size.
SRC is only read.
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from inspector.commands._common import add_budget_args, add_json_arg, escape_control, fmt_size, print_json
from inspector.errors import StoreError
from inspector.humanize import plural


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``import`` sub-command."""
    parser = sub.add_parser("import", help="copy a LangGraph checkpoint database into a native store "
                            "(dry run unless --apply)")
    parser.add_argument("source", metavar="SRC", help="LangGraph SqliteSaver file or PostgresSaver URL")
    parser.add_argument("destination", metavar="DST", help="native store path or URL (created if missing)")
    parser.add_argument("--apply", action="store_true", help="write DST (default: a dry run into a temporary file)")
    parser.add_argument("--no-verify", action="store_true", help="skip the checkpoint-by-checkpoint comparison")
    add_json_arg(parser)
    add_budget_args(parser)
    parser.set_defaults(func=run)


def _size(target: str) -> int:
    from inspector.store.engine import parse_target
    tgt = parse_target(target)
    if tgt.backend == "sqlite":
        assert tgt.path is not None
        return sum(p.stat().st_size for p in (tgt.path, Path(f"{tgt.path}-wal")) if p.exists())
    engine = sa.create_engine(tgt.url, poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn:
            return int(conn.exec_driver_sql(
                "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c JOIN pg_namespace n "
                "ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind = 'r'").scalar_one())
    finally:
        engine.dispose()


def _copy(source: Any, destination: str) -> Any:
    from inspector.store import create_store
    from inspector.store.native.lanes import LaneStore
    from inspector.store.native.lgimport import import_threads
    store = create_store(destination)
    try:
        lanes = LaneStore(store)
        try:
            return import_threads(source.reader, lanes)
        finally:
            lanes.close()
    finally:
        store.close()


def _check_destination(destination: str) -> None:
    """StoreError when a local destination cannot become a native store file."""
    if "://" in destination:
        return
    path = Path(destination)
    if path.is_dir():
        raise StoreError(f"{destination} is a directory; give the path of a new store file.")
    if not path.parent.is_dir():
        raise StoreError(f"The folder {path.parent} does not exist; create it or give another destination.")


def run(args: argparse.Namespace) -> int:
    """Copy (or dry-run), verify, report."""
    from inspector.store import open_store
    from inspector.store.langgraph.store import LangGraphStore
    source = open_store(args.source)
    try:
        if not isinstance(source, LangGraphStore):
            raise StoreError(f"{source.info.display} is not a LangGraph checkpoint database "
                             "(import copies SqliteSaver / PostgresSaver databases).")
        src_bytes = _size(args.source)
        _check_destination(args.destination)     # a dry run says what --apply would refuse
        with tempfile.TemporaryDirectory(prefix="ci-import-") as tmp:
            target = args.destination if args.apply else str(Path(tmp) / "dry-run.db")
            report = _copy(source, target)
            if not args.apply:
                con = sqlite3.connect(target)
                con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                con.close()
            dst_bytes = _size(target)
            verification = None
            if not args.no_verify:
                import logging
                from inspector.record.lgverify import verify
                serde_log = logging.getLogger("langgraph.checkpoint.serde.jsonplus")
                level = serde_log.level
                serde_log.setLevel(logging.ERROR)   # strict mode names each type it leaves raw
                try:
                    verification = verify(args.source, target, report.thread_ids)
                finally:
                    serde_log.setLevel(level)
    finally:
        source.close()
    result = {"applied": bool(args.apply), "source": args.source, "destination": args.destination,
              "threads": report.threads, "lanes": report.lanes, "checkpoints": report.checkpoints,
              "pending_writes": report.writes, "skipped": report.skipped, "source_bytes": src_bytes,
              "destination_bytes": dst_bytes,
              "verified_checkpoints": verification.checkpoints if verification else None,
              "differences": verification.differences if verification else None}
    if args.json:
        print_json(result)
    else:
        verb = "Copied" if args.apply else "Would copy"
        print(f"{verb} {plural(report.threads, 'thread')} ({plural(report.lanes, 'lane')}), "
              f"{plural(report.checkpoints, 'checkpoint')} and {plural(report.writes, 'pending write')} "
              f"from {args.source} to {args.destination}.")
        ratio = f" ({src_bytes / dst_bytes:.1f}x smaller)" if dst_bytes and src_bytes > dst_bytes else ""
        print(f"Files on disk: {fmt_size(src_bytes)} the LangGraph database, {fmt_size(dst_bytes)} the native "
              f"store{ratio} (whole files, empty tables and indexes included; `usage` compares the histories "
              "alone).")
        for line in report.skipped[:20]:
            print(f"  skipped {escape_control(line)}")
        if verification is not None:
            if verification.differences:
                print(f"Verification FAILED ({plural(len(verification.differences), 'difference')}, "
                      f"{plural(verification.checkpoints, 'checkpoint')} compared):")
                for line in verification.differences[:20]:
                    print(f"  {escape_control(line)}")     # (ids and tags as a damaged file holds them)
            else:
                print(f"Verified: LangGraph's saver on the source and InspectorSaver on the copy list the same "
                      f"{verification.checkpoints} checkpoints (values, versions, metadata, parents, pending writes).")
        if not args.apply:
            print("Dry run: nothing was written. Run again with --apply to write the destination.")
    if report.skipped or (verification is not None and verification.differences):
        return 1
    return 0
