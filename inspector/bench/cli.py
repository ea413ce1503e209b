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

# raw sqlite3 doing the least equivalent work: the same rows fetched and written out, the
# file opened as ours opens a clean store (immutable: plain mode=ro would leave a -wal and a
# -shm beside it, and ours would then read it as a store a writer is at work on)
_RAW_PRELUDE = ("import sqlite3, sys, json\n"
                "c = sqlite3.connect('file:' + sys.argv[1] + '?mode=ro&immutable=1', uri=True)\n"
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
    parser.add_argument("--repeat", type=int, default=9, help="runs of each command (median and minimum; default 9)")
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--checkpoints", type=int, default=1_000_000)
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(func=run)


# a user's installed package has its bytecode cached: the children may write theirs (one
# untimed run first), where PYTHONDONTWRITEBYTECODE in this environment would make every
# fresh process compile the package's sources again (raw sqlite3 imports only the standard
# library, whose bytecode is always cached)
_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _one_run(argv: list[str]) -> tuple[float, float]:
    """Wall and CPU time (user + system) of ``argv`` in a fresh process, its output read and
    discarded."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, check=False, env=_ENV)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"bench cli: {' '.join(argv)} failed: {proc.stderr.decode(errors='replace')[-400:]}")
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def _stats(samples: list[float]) -> dict[str, float]:
    return {"median": statistics.median(samples), "min": min(samples)}


def _check_clean(store: Path) -> None:
    """Every command must find the store as the first one did: without ``-wal`` or ``-shm``."""
    left = [p.name for p in (store.with_name(store.name + "-wal"), store.with_name(store.name + "-shm")) if p.exists()]
    if left:
        raise SystemExit(f"bench cli: a command left {' and '.join(left)} beside the store")


def _times(argvs: list[list[str]], repeat: int, store: Path) -> list[dict[str, dict[str, float]]]:
    """For each of ``argvs``, the median and minimum wall and CPU time in a fresh process,
    after one untimed run of each. The commands take turns (ours, raw, ours, raw …), so that
    a burst of other work on the machine falls on both rather than on one side's runs."""
    for argv in argvs:
        subprocess.run(argv, capture_output=True, check=False, env=_ENV)
        _check_clean(store)
    samples: list[tuple[list[float], list[float]]] = [([], []) for _ in argvs]
    for _ in range(repeat):
        for argv, (walls, cpus) in zip(argvs, samples, strict=True):
            wall, cpu = _one_run(argv)
            _check_clean(store)
            walls.append(wall)
            cpus.append(cpu)
    return [{"wall": _stats(walls), "cpu": _stats(cpus)} for walls, cpus in samples]


def _in_process_diff_ms(store_path: Path, a: str, b: str, repeat: int) -> dict[str, dict[str, float]]:
    """The same diff with the store already open (the second and later runs): median and
    minimum wall and CPU ms of this process."""
    from inspector.diff import diff_checkpoints
    from inspector.store import open_store

    walls, cpus = [], []
    with open_store(store_path) as store:
        diff_checkpoints(store, a, b)
        for _ in range(repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            diff_checkpoints(store, a, b)
            walls.append((time.perf_counter() - t0) * 1e3)
            cpus.append((time.process_time() - c0) * 1e3)
    return {"wall": _stats(walls), "cpu": _stats(cpus)}


def _ms(times: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    return {kind: {stat: value * 1e3 for stat, value in stats.items()} for kind, stats in times.items()}


def measure(store: Path, repeat: int, diff_to: int = 60_000) -> dict[str, Any]:
    """Every command's fresh-process time beside raw sqlite3 (ms, median and minimum, wall
    and CPU), the ratios of both, and the diff's overheads."""
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
        ours_t, raw_t = map(_ms, _times([argv, raw_argv], repeat, store))
        rows[name] = {"ours_ms": ours_t, "raw_ms": raw_t,
                      "ratio": {kind: {stat: ours_t[kind][stat] / raw_t[kind][stat] for stat in ("median", "min")}
                                for kind in ("wall", "cpu")}}
    a, b = f"{LONG_RUN_ID}:5", f"{LONG_RUN_ID}:{diff_to}"
    fresh, python = map(_ms, _times([[*ours, "diff", str(store), a, b], [sys.executable, "-c", "pass"]], repeat, store))
    inproc = _in_process_diff_ms(store, a, b, repeat)
    overhead = {kind: {stat: fresh[kind][stat] - inproc[kind][stat] for stat in ("median", "min")}
                for kind in ("wall", "cpu")}
    return {"commands": rows,
            "diff": {"a": a, "b": b, "fresh_ms": fresh, "in_process_ms": inproc, "overhead_ms": overhead,
                     "python_startup_ms": python}}


def _verdict(met: bool) -> str:
    return "ok" if met else "MISSED"


def _pair(ours: dict[str, float], raw: dict[str, float]) -> str:
    return f"{ours['median']:.0f} / {raw['median']:.0f} ({ours['min']:.0f} / {raw['min']:.0f})"


def run(args: argparse.Namespace) -> int:
    """Build (or reuse) the store and print each command beside raw sqlite3."""
    spec = GuiStoreSpec(runs=args.runs, checkpoints=max(args.checkpoints, args.runs),
                        long_run=min(100_000, max(1, max(args.checkpoints, args.runs) // 10)))
    log = (lambda m: print(m, file=sys.stderr)) if args.json else print
    source = cached_store(spec, log)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="ci-bench-cli-") as tmp:
        result = measure(working_copy(source, Path(tmp)), max(1, args.repeat), min(60_000, spec.long_run - 1))
    result["store"] = {"runs": spec.runs, "checkpoints": spec.checkpoints, "long_run": spec.long_run}
    result["targets"] = {"ratio": TARGET_RATIO, "diff_overhead_ms": TARGET_DIFF_OVERHEAD_MS}
    result["repeat"] = max(1, args.repeat)
    result["load_average"] = {"before": load_before, "after": os.getloadavg()}
    if args.json:
        dump(result)
        return 0
    table = []
    for name, r in result["commands"].items():
        wall, cpu = r["ratio"]["wall"], r["ratio"]["cpu"]
        table.append((name, _pair(r["ours_ms"]["wall"], r["raw_ms"]["wall"]),
                      f"{wall['median']:.2f}x ({wall['min']:.2f}x)",
                      _pair(r["ours_ms"]["cpu"], r["raw_ms"]["cpu"]), f"{cpu['median']:.2f}x ({cpu['min']:.2f}x)",
                      f"{_verdict(wall['median'] <= TARGET_RATIO)} / {_verdict(cpu['median'] <= TARGET_RATIO)}"))
    loads = result["load_average"]
    print(f"load average (1, 5, 15 min) before {' / '.join(f'{x:.1f}' for x in loads['before'])},"
          f" after {' / '.join(f'{x:.1f}' for x in loads['after'])};"
          f" {result['repeat']} runs of each, ours and raw taking turns: median (min)")
    print_table(("command (fresh process)", "wall ms ours / raw", "wall ratio", "CPU ms ours / raw", "CPU ratio",
                 f"median <= {TARGET_RATIO:g}x: wall / CPU"), table)
    d = result["diff"]
    over, fresh, inproc, python = d["overhead_ms"], d["fresh_ms"], d["in_process_ms"], d["python_startup_ms"]
    for kind in ("wall", "cpu"):
        print(f"diff {d['a']} → {d['b']}, {kind}: fresh process {fresh[kind]['median']:.0f} ms"
              f" ({fresh[kind]['min']:.0f}), in process {inproc[kind]['median']:.1f} ms ({inproc[kind]['min']:.1f})"
              f" → overhead {over[kind]['median']:.0f} ms ({over[kind]['min']:.0f}),"
              f" target <= {TARGET_DIFF_OVERHEAD_MS} ms: {_verdict(over[kind]['median'] <= TARGET_DIFF_OVERHEAD_MS)};"
              f" Python itself starts in {python[kind]['median']:.0f} ms ({python[kind]['min']:.0f})")
    return 0
