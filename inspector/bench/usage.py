"""``bench usage``: the storage report and pruning on 10,000 runs / 1,000,000 checkpoints,
each beside the raw SQL that does the least equivalent work, in the same process.

* report: ``usage`` (piece walk by run, checkpoint and field, on-disk pages) vs one
  ``GROUP BY run_id`` over the checkpoints, one ``SUM(LENGTH(data))`` over the pieces and the
  page pragmas — the totals without attribution;
* prune: ``prune --keep-last N --apply`` (protections checked in every statement, seqs
  renumbered, pieces collected) on one copy vs a single ``DELETE`` of the same rows with
  the same rule and no protection but "not a running run" on another copy.
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

from inspector.bench._gui_store import GuiStoreSpec, cached_store
from inspector.bench._util import dump, print_table


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``bench usage``."""
    parser = sub.add_parser("usage", help="usage report and prune on 10k runs / 1M checkpoints vs raw SQL")
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--checkpoints", type=int, default=1_000_000)
    parser.add_argument("--keep-last", type=int, default=1, help="the prune rule (default: keep each run's head)")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(func=run)


def _raw_report(path: Path) -> dict[str, Any]:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        runs = con.execute("SELECT run_id, COUNT(*), SUM(size) FROM ci_checkpoints GROUP BY run_id").fetchall()
        blobs = con.execute("SELECT COUNT(*), SUM(LENGTH(data)) FROM ci_blobs").fetchone()
        pages = [con.execute(f"PRAGMA {p}").fetchone()[0] for p in ("page_size", "page_count", "freelist_count")]
    finally:
        con.close()
    return {"runs": len(runs), "pieces": blobs[0], "pages": pages}


def _raw_prune(path: Path, keep_last: int) -> int:
    con = sqlite3.connect(path, isolation_level=None)
    try:
        con.execute("BEGIN IMMEDIATE")
        cur = con.execute(
            "DELETE FROM ci_checkpoints WHERE id IN (SELECT c.id FROM ci_checkpoints c JOIN ci_runs r "
            "ON r.id = c.run_id WHERE r.status != 'running' AND c.seq <= r.head_seq - ?)", (keep_last,))
        con.execute("COMMIT")
        return cur.rowcount
    finally:
        con.close()


def _timed(fn: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def measure(spec: GuiStoreSpec, keep_last: int, log: Any = print) -> dict[str, Any]:
    """Run both comparisons; returns the figures."""
    from inspector.retention.api import apply_prune, plan_prune
    from inspector.retention.rules import make_rules
    from inspector.store import open_store
    from inspector.usage.api import store_usage

    source = cached_store(spec, log)
    with tempfile.TemporaryDirectory(prefix="bench-usage-") as tmp:
        ours_path, raw_path = Path(tmp) / "ours.db", Path(tmp) / "raw.db"
        shutil.copyfile(source, ours_path)
        shutil.copyfile(source, raw_path)
        raw_report_s, _ = _timed(lambda: _raw_report(ours_path))
        with open_store(ours_path) as store:
            report_s, report = _timed(lambda: store_usage(store))
        rules = make_rules(keep_last=keep_last)
        plan_s, plan = _timed(lambda: plan_prune(ours_path, rules))
        prune_s, done = _timed(lambda: apply_prune(ours_path, rules))
        raw_prune_s, raw_removed = _timed(lambda: _raw_prune(raw_path, keep_last))
    return {
        "store": {"runs": spec.runs, "checkpoints": spec.checkpoints, "bytes": report.total_bytes},
        "report": {"ours_s": report_s, "raw_sql_s": raw_report_s, "ratio": report_s / raw_report_s,
                   "runs": len(report.runs), "fields": len(report.fields)},
        "prune": {"ours_s": prune_s, "raw_sql_s": raw_prune_s, "ratio": prune_s / raw_prune_s,
                  "dry_run_s": plan_s, "removed": done.remove_checkpoints, "raw_removed": raw_removed,
                  "removed_fraction": done.remove_checkpoints / max(1, done.total_checkpoints),
                  "protected": plan.protected, "pieces_collected": done.pieces},
    }


def run(args: argparse.Namespace) -> int:
    """Print the figures (or JSON)."""
    spec = GuiStoreSpec(runs=args.runs, checkpoints=args.checkpoints,
                        long_run=min(100_000, max(1, args.checkpoints // 10)))
    result = measure(spec, args.keep_last, log=(lambda _l: None) if args.json else print)
    if args.json:
        dump(result)
        return 0
    r, p = result["report"], result["prune"]
    print(f"store: {spec.runs:,} runs, {spec.checkpoints:,} checkpoints, {result['store']['bytes'] / 1e6:.0f} MB")
    print_table(("task", "ours (s)", "raw SQL (s)", "ratio"),
                [("usage report (by run, field, on disk)", r["ours_s"], r["raw_sql_s"], f"{r['ratio']:.1f}x"),
                 (f"prune --keep-last {args.keep_last} --apply", p["ours_s"], p["raw_sql_s"], f"{p['ratio']:.1f}x")])
    print(f"prune removed {p['removed']:,} checkpoints ({100 * p['removed_fraction']:.1f} %; raw DELETE: "
          f"{p['raw_removed']:,}); dry run {p['dry_run_s']:.2f} s; kept although selected: {p['protected']}")
    return 0
