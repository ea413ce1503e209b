"""``bench gui``: the desktop inspector on 10,000 runs / 1,000,000 checkpoints, offscreen.

Measures first paint of the runs list (from process launch), the timeline of a
100,000-checkpoint run (opened on its head) and a jump halfway back in it, peak RSS, live
latency (a writer process commits → the row is in the timeline model; median of 50) and CPU
used over 10 idle seconds; and the raw SQL time of the same first pages, to show the app's
overhead as a ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from inspector.bench import PROBE_ENV
from inspector.bench._gui_store import (LIVE_RUN_ID, LONG_RUN_ID, GuiStoreSpec, cached_store,
                                        working_copy)
from inspector.bench._util import dump, print_table
from inspector.errors import StoreError

TARGETS = {"first_paint_s": 1.0, "timeline_100k_s": 0.5, "peak_rss_mb": 400.0,
           "live_latency_median_ms": 300.0, "idle_cpu_percent": 1.0}
STAGE_TIMEOUT = 120.0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``bench gui``."""
    parser = sub.add_parser("gui", help="GUI responsiveness on 10k runs / 1M checkpoints (offscreen)")
    parser.add_argument("--runs", type=int, default=10_000, help="runs in the generated store")
    parser.add_argument("--checkpoints", type=int, default=1_000_000, help="checkpoints in the store")
    parser.add_argument("--long-run", type=int, default=None,
                        help="checkpoints of the biggest run (default 100,000, at most a tenth of the total)")
    parser.add_argument("--commits", type=int, default=50, help="live commits to time")
    parser.add_argument("--idle", type=float, default=10.0, help="seconds of idle CPU measurement")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(func=run)


def raw_sql_ms(path: Path) -> dict[str, float]:
    """Median raw sqlite3 time of the same first pages the app loads."""
    from inspector.ui.models.checkpoint_pages import PAGE_SIZE
    from inspector.ui.models.run_tree import FIRST_PAGE

    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    queries = {
        "runs_first_page_ms": ("SELECT * FROM ci_runs ORDER BY updated DESC, id LIMIT ?", (FIRST_PAGE,)),
        "timeline_first_page_ms": ("SELECT id, run_id, seq, parent_id, kind, name, created, state_hash, "
                                   "tasks_hash, size, size_delta, ops, tasks_done, tasks_total, checks_passed, "
                                   "checks_total, change, epoch FROM ci_checkpoints WHERE run_id = ? AND seq > -1 "
                                   "ORDER BY seq LIMIT ?", (LONG_RUN_ID, PAGE_SIZE)),
    }
    out = {}
    for name, (sql, params) in queries.items():
        samples = []
        for _ in range(7):
            t0 = time.perf_counter()
            con.execute(sql, params).fetchall()
            samples.append(time.perf_counter() - t0)
        out[name] = statistics.median(samples) * 1000
    con.close()
    return out


class _Lines:
    """Reads a process's stdout lines (JSON) on a thread; ``next(event)`` waits for one."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.queue: queue.Queue = queue.Queue()
        self.stash: dict[str, list[dict]] = {}
        self.proc = proc
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None  # started with stdout=PIPE
        for line in self.proc.stdout:
            try:
                self.queue.put(json.loads(line))
            except ValueError:
                continue
        self.queue.put(None)

    def next(self, event: str, timeout: float = STAGE_TIMEOUT) -> dict:
        if self.stash.get(event):
            return self.stash[event].pop(0)
        deadline = time.time() + timeout
        while True:
            try:
                item = self.queue.get(timeout=max(0.01, deadline - time.time()))
            except queue.Empty:
                raise StoreError(f"The GUI probe did not report {event} within {timeout:.0f} s.") from None
            if item is None:
                raise StoreError(f"The GUI probe exited (code {self.proc.wait()}) before reporting {event}.")
            if item.get("event") == event:
                return item
            self.stash.setdefault(item.get("event", ""), []).append(item)


def _live_latency(store: Path, probe: _Lines, commits: int) -> list[float]:
    writer = subprocess.Popen([sys.executable, "-m", "inspector.bench._gui_store", str(store),
                               "--run", LIVE_RUN_ID, "--count", str(commits), "--interval", "0.25"],
                              stdout=subprocess.PIPE, text=True)
    committed = {}
    assert writer.stdout is not None  # started with stdout=PIPE
    for line in writer.stdout:
        item = json.loads(line)
        committed[item["seq"]] = item["t"]
    if writer.wait() != 0:
        raise StoreError("The live writer process failed.")
    seen: dict[int, float] = {}
    while len(seen) < len(committed):
        item = probe.next("row", timeout=30)
        seen[item["seq"]] = item["t"]
    return [(seen[s] - committed[s]) * 1000 for s in committed if s in seen]


def cli_startup_s(env: dict[str, str] | None = None) -> float:
    """Median time of ``checkpoint-inspector --version``: what every command pays before it runs."""
    samples = []
    for _ in range(3):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "inspector", "--version"], capture_output=True, check=True, env=env)
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def probe_env(store: Path) -> dict[str, str]:
    """The app's environment: offscreen, private settings, the probe, and Python's bytecode
    cache in a private folder (written on the first launch, as for any installed app, even
    where the environment sets PYTHONDONTWRITEBYTECODE)."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONUNBUFFERED="1",
               XDG_CONFIG_HOME=str(store.parent / "config"),  # leave the user's settings alone
               PYTHONPYCACHEPREFIX=str(store.parent / "pycache"),
               **{PROBE_ENV: f"{LONG_RUN_ID},{LIVE_RUN_ID}"})
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _launch(store: Path, env: dict[str, str]) -> subprocess.Popen:
    # the app's start-up, as `checkpoint-inspector open STORE` runs it, with the probe attached
    return subprocess.Popen([sys.executable, "-m", "inspector.bench._gui_probe", str(store)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)


def first_launch_paint_s(store: Path, env: dict[str, str]) -> float:
    """First paint of the very first launch, while Python compiles every module's bytecode;
    the launch then goes on until the live stage, so the modules loaded later are compiled too."""
    launched = time.time()
    proc = _launch(store, env)
    try:
        lines = _Lines(proc)
        painted = lines.next("runs_painted")["t"] - launched
        lines.next("live_ready")
        return painted
    finally:
        proc.kill()
        proc.wait()


def measure(store: Path, commits: int, idle: float, env: dict[str, str]) -> dict[str, Any]:
    """Run the probe on ``store`` and collect every figure."""
    import psutil

    launched = time.time()
    proc = _launch(store, env)
    lines = _Lines(proc)
    try:
        painted = lines.next("runs_painted")
        timeline = lines.next("timeline_painted")
        all_runs = lines.next("runs_all_loaded")
        jump = lines.next("timeline_jump_painted")
        lines.next("live_ready")
        latencies = _live_latency(store, lines, commits)
        ps = psutil.Process(proc.pid)
        time.sleep(1.0)  # let the last live poll finish
        before = ps.cpu_times()
        time.sleep(idle)
        after = ps.cpu_times()
        assert proc.stdin is not None  # started with stdin=PIPE
        proc.stdin.write("quit\n")
        proc.stdin.flush()
        done = lines.next("done")
    finally:
        if proc.poll() is None:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
    cpu = (after.user - before.user) + (after.system - before.system)
    return {
        "first_paint_s": painted["t"] - launched,
        "first_paint_cpu_s": painted["cpu_s"],
        "runs_first_page_in_app_ms": (painted["t"] - painted["open_started"]) * 1000,
        "runs_all_listed_s": all_runs["t"] - launched,
        "timeline_100k_s": timeline["ms"] / 1000,
        "timeline_rows": timeline["rows"],
        "timeline_jump_ms": jump["ms"],
        "timeline_jump_row": jump["row"],
        "peak_rss_mb": done["peak_rss_mb"],
        "live_latency_median_ms": statistics.median(latencies),
        "live_latency_max_ms": max(latencies),
        "live_commits": len(latencies),
        "idle_cpu_percent": cpu / idle * 100,
    }


def run(args: argparse.Namespace) -> int:
    """Generate (or reuse) the store, run the probe, print the figures against the targets."""
    total = max(args.checkpoints, args.runs)
    spec = GuiStoreSpec(runs=args.runs, checkpoints=total,
                        long_run=args.long_run if args.long_run is not None else min(100_000, max(1, total // 10)))
    log = (lambda m: print(m, file=sys.stderr)) if args.json else print
    source = cached_store(spec, log)
    with tempfile.TemporaryDirectory(prefix="ci-bench-gui-") as tmp:
        store = working_copy(source, Path(tmp))
        raw = raw_sql_ms(store)
        env = probe_env(store)
        first_launch = first_launch_paint_s(store, env)
        result = measure(store, args.commits, args.idle, env)
        result["first_paint_first_launch_s"] = first_launch
        result["cli_startup_s"] = cli_startup_s(env)
    result.update(raw)
    result["timeline_overhead_ratio"] = result["timeline_100k_s"] * 1000 / max(raw["timeline_first_page_ms"], 1e-6)
    result["runs_overhead_ratio"] = result["runs_first_page_in_app_ms"] / max(raw["runs_first_page_ms"], 1e-6)
    result["store"] = {"runs": spec.runs, "checkpoints": spec.checkpoints, "long_run": spec.long_run,
                       "bytes": source.stat().st_size}
    result["targets"] = TARGETS
    result["pass"] = {k: result[k] <= v for k, v in TARGETS.items()}
    if args.json:
        dump(result)
        return 0
    rows = [(k, round(result[k], 3), v, "ok" if result["pass"][k] else "MISSED") for k, v in TARGETS.items()]
    print_table(("measure", "value", "target", ""), rows)
    print(f"raw SQL: runs first page {raw['runs_first_page_ms']:.2f} ms"
          f" (app {result['runs_first_page_in_app_ms']:.0f} ms,"
          f" x{result['runs_overhead_ratio']:.0f}); timeline first page {raw['timeline_first_page_ms']:.2f} ms"
          f" (app {result['timeline_100k_s'] * 1000:.0f} ms, x{result['timeline_overhead_ratio']:.0f})")
    print(f"of the first paint, {result['cli_startup_s']:.2f} s is the CLI starting up "
          f"(`checkpoint-inspector --version` alone); the app's CPU time by then "
          f"{result['first_paint_cpu_s']:.2f} s; the very first launch (compiling bytecode) painted "
          f"after {result['first_paint_first_launch_s']:.2f} s")
    print(f"all {spec.runs:,} runs listed {result['runs_all_listed_s']:.2f} s after launch")
    print(f"the run opens on its head; jump to #{result['timeline_jump_row']:,} of {result['timeline_rows']:,} "
          f"checkpoints (a page not read yet): {result['timeline_jump_ms']:.0f} ms;"
          f" live latency max {result['live_latency_max_ms']:.0f} ms over {result['live_commits']} commits")
    return 0
