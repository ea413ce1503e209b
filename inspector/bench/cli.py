"""``bench cli``: read commands in a fresh process beside raw ``sqlite3`` doing the same work.

Each command runs as a user runs it (``python -m inspector …``, a new process, output to a
pipe that is read and thrown away), on the 10,000-run / 1,000,000-checkpoint store of
``bench gui``. Beside it, a fresh ``python -c`` process with the standard library's ``sqlite3``
runs the query that fetches the same rows and writes them out; the ratio is ours / raw.
``diff`` is also timed in this process (the same diff, store already open), so the figure
that matters there is the fresh process minus the in-process time.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from inspector.bench._gui_store import LONG_RUN_ID, GuiStoreSpec, cached_store, working_copy
from inspector.bench._util import dump, print_table

TARGET_RATIO = 2.0            # read commands within 2x of raw SQL
TARGET_DIFF_OVERHEAD_MS = 100  # a fresh `diff` within 100 ms of the same diff in process

# raw sqlite3 doing the least equivalent work: the same rows fetched and written out
_RAW_PRELUDE = ("import sqlite3, sys, json\n"
                "c = sqlite3.connect('file:' + sys.argv[1] + '?mode=ro', uri=True)\n"
                "w = sys.stdout.write\n")
RAW = {
    "runs": "for r in c.execute('SELECT * FROM ci_runs ORDER BY updated DESC, id'): w('  '.join(map(str, r)) + '\\n')",
    "runs --json": "w(json.dumps([list(r) for r in c.execute('SELECT * FROM ci_runs ORDER BY updated DESC, id')]))",
    "checkpoints": ("for r in c.execute('SELECT id, run_id, seq, kind, name, created, size, ops, checks_passed, "
                    "checks_total, change FROM ci_checkpoints WHERE run_id = ? ORDER BY seq', (sys.argv[2],)): "
                    "w('  '.join(map(str, r)) + '\\n')"),
    "checkpoints --json": ("w(json.dumps([list(r) for r in c.execute('SELECT id, run_id, seq, kind, name, created, "
                           "parent_id, size, size_delta, ops, tasks_done, tasks_total, checks_passed, checks_total, "
                           "change FROM ci_checkpoints WHERE run_id = ? ORDER BY seq', (sys.argv[2],))]))"),
    "show": ("import zstandard\n"
             "row = c.execute('SELECT * FROM ci_checkpoints WHERE run_id = ? AND seq = 5', (sys.argv[2],)).fetchone()\n"
             "digest = c.execute('SELECT state_hash FROM ci_checkpoints WHERE run_id = ? AND seq = 5',"
             " (sys.argv[2],)).fetchone()[0]\n"
             "codec, size, data = c.execute('SELECT codec, size, data FROM ci_blobs WHERE hash = ?', (digest,)).fetchone()\n"
             "raw = zstandard.ZstdDecompressor().decompress(data, max_output_size=size) if codec else data\n"
             "w(repr(row) + repr(len(raw)) + '\\n')"),
}


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``bench cli``."""
    parser = sub.add_parser("cli", help="read commands in a fresh process vs raw sqlite3 (10k runs / 1M checkpoints)")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each command (median; default 5)")
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--checkpoints", type=int, default=1_000_000)
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(func=run)


# a user's installed package has its bytecode cached: the children may write theirs (one
# untimed run first), where PYTHONDONTWRITEBYTECODE in this environment would make every
# fresh process compile the package's sources again (raw sqlite3 imports only the standard
# library, whose bytecode is always cached)
_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _times_s(argv: list[str], repeat: int) -> tuple[float, float]:
    """Median wall time and median CPU time (user + system) of ``argv`` in a fresh process,
    its output read and discarded, after one untimed run. On a busy machine the CPU time is
    the steadier figure."""
    subprocess.run(argv, capture_output=True, check=False, env=_ENV)
    walls, cpus = [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run(argv, capture_output=True, check=False, env=_ENV)
        walls.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if proc.returncode != 0:
            raise SystemExit(f"bench cli: {' '.join(argv)} failed: {proc.stderr.decode(errors='replace')[-400:]}")
    return statistics.median(walls), statistics.median(cpus)


def _in_process_diff_ms(store_path: Path, a: str, b: str, repeat: int) -> tuple[float, float]:
    """The same diff with the store already open (the second and later runs; median wall
    and CPU ms of this process)."""
    from inspector.diff import diff_checkpoints
    from inspector.store import open_store

    walls, cpus = [], []
    with open_store(store_path) as store:
        diff_checkpoints(store, a, b)
        for _ in range(repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            diff_checkpoints(store, a, b)
            walls.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
    return statistics.median(walls) * 1e3, statistics.median(cpus) * 1e3


def measure(store: Path, repeat: int, diff_to: int = 60_000) -> dict[str, Any]:
    """Every command's fresh-process time beside raw sqlite3, and the diff's overheads."""
    ours = [sys.executable, "-m", "inspector"]
    commands = {
        "runs": [*ours, "runs", str(store)],
        "runs --json": [*ours, "runs", str(store), "--json"],
        "checkpoints": [*ours, "checkpoints", str(store), LONG_RUN_ID],
        "checkpoints --json": [*ours, "checkpoints", str(store), LONG_RUN_ID, "--json"],
        "show": [*ours, "show", str(store), f"{LONG_RUN_ID}:5"],
    }
    rows = {}
    for name, argv in commands.items():
        raw_argv = [sys.executable, "-c", _RAW_PRELUDE + RAW[name], str(store), LONG_RUN_ID]
        (ours_s, ours_cpu), (raw_s, raw_cpu) = _times_s(argv, repeat), _times_s(raw_argv, repeat)
        rows[name] = {"ours_s": ours_s, "raw_s": raw_s, "ratio": ours_s / raw_s,
                      "ours_cpu_s": ours_cpu, "raw_cpu_s": raw_cpu, "cpu_ratio": ours_cpu / raw_cpu}
    a, b = f"{LONG_RUN_ID}:5", f"{LONG_RUN_ID}:{diff_to}"
    fresh_s, fresh_cpu_s = _times_s([*ours, "diff", str(store), a, b], repeat)
    inproc_ms, inproc_cpu_ms = _in_process_diff_ms(store, a, b, repeat)
    python_s, python_cpu_s = _times_s([sys.executable, "-c", "pass"], repeat)
    return {"commands": rows,
            "diff": {"fresh_ms": fresh_s * 1e3, "in_process_ms": inproc_ms, "overhead_ms": fresh_s * 1e3 - inproc_ms,
                     "a": a, "b": b, "fresh_cpu_ms": fresh_cpu_s * 1e3, "in_process_cpu_ms": inproc_cpu_ms,
                     "overhead_cpu_ms": fresh_cpu_s * 1e3 - inproc_cpu_ms,
                     "python_startup_ms": python_s * 1e3, "python_startup_cpu_ms": python_cpu_s * 1e3}}


def _verdict(met: bool) -> str:
    return "ok" if met else "MISSED"


def run(args: argparse.Namespace) -> int:
    """Build (or reuse) the store and print each command beside raw sqlite3."""
    spec = GuiStoreSpec(runs=args.runs, checkpoints=max(args.checkpoints, args.runs),
                        long_run=min(100_000, max(1, max(args.checkpoints, args.runs) // 10)))
    log = (lambda m: print(m, file=sys.stderr)) if args.json else print
    source = cached_store(spec, log)
    with tempfile.TemporaryDirectory(prefix="ci-bench-cli-") as tmp:
        result = measure(working_copy(source, Path(tmp)), max(1, args.repeat), min(60_000, spec.long_run - 1))
    result["store"] = {"runs": spec.runs, "checkpoints": spec.checkpoints, "long_run": spec.long_run}
    result["targets"] = {"ratio": TARGET_RATIO, "diff_overhead_ms": TARGET_DIFF_OVERHEAD_MS}
    result["load_average"] = os.getloadavg()
    if args.json:
        dump(result)
        return 0
    table = [(name, round(r["ours_s"] * 1e3), round(r["raw_s"] * 1e3), f"{r['ratio']:.1f}x",
              round(r["ours_cpu_s"] * 1e3), round(r["raw_cpu_s"] * 1e3), f"{r['cpu_ratio']:.1f}x",
              f"{_verdict(r['ratio'] <= TARGET_RATIO)} / {_verdict(r['cpu_ratio'] <= TARGET_RATIO)}")
             for name, r in result["commands"].items()]
    print(f"load average {' / '.join(f'{x:.1f}' for x in result['load_average'])} (1, 5, 15 min)")
    print_table(("command (fresh process)", "ours ms", "raw sqlite3 ms", "ratio", "ours CPU ms", "raw CPU ms",
                 "CPU ratio", f"<= {TARGET_RATIO:g}x: wall / CPU"), table)
    d = result["diff"]
    verdict = _verdict(d["overhead_ms"] <= TARGET_DIFF_OVERHEAD_MS)
    cpu_verdict = _verdict(d["overhead_cpu_ms"] <= TARGET_DIFF_OVERHEAD_MS)
    print(f"diff {d['a']} → {d['b']}: fresh process {d['fresh_ms']:.0f} ms, in process {d['in_process_ms']:.1f} ms"
          f" → overhead {d['overhead_ms']:.0f} ms (target <= {TARGET_DIFF_OVERHEAD_MS} ms: {verdict});"
          f" CPU {d['fresh_cpu_ms']:.0f} ms vs {d['in_process_cpu_ms']:.1f} ms → overhead {d['overhead_cpu_ms']:.0f} ms"
          f" ({cpu_verdict});"
          f" Python itself starts in {d['python_startup_ms']:.0f} ms ({d['python_startup_cpu_ms']:.0f} ms CPU)")
    return 0
