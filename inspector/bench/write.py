"""``bench write``: W1 (growing chat state) vs LangGraph's SqliteSaver, W2 intervals, and the
shapes of ``_write_shapes`` / ``_write_graph`` (W3 big maps, W4 dense changes, W5 a real graph, W6 a long text
edited in place, W1's floor)."""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable
from typing import Any
import sqlite3
import tempfile
import time
from pathlib import Path

from inspector.bench._util import dump, print_table, summary_ms
from inspector.record import Checkpointer, Interval
from inspector.bench._w1 import w1_states

SYNCHRONOUS = "NORMAL"   # both stores run WAL + synchronous=NORMAL (same durability)


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``bench write``."""
    parser = sub.add_parser("write", help="save cost vs LangGraph SqliteSaver (W1) and intervals (W2)")
    parser.add_argument("--steps", type=int, default=1000, help="W1 steps (default 1000)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--skip-langgraph", action="store_true", help="do not run SqliteSaver")
    parser.add_argument("--only", default="w1,w2,w3,w3k,w4,w4m,w5,w6,w6l,w6m,w7,floor",
                        help="comma-separated workloads to run (default: w1,w2,w3,w3k,w4,w4m,w5,w6,w6l,w6m,w7,floor; "
                             "w3k is W3-keys, a file removed and one added per save; "
                             "w4m is W4-maps, the records as a map of id → record; w6l is W6-list, the "
                             "text in one of 1,000 notes in a list; w6m is W6-map, the text as one of "
                             "1,000 files in a map by path)")
    parser.add_argument("--w3-steps", type=int, default=40, help="saves per W3 size (default 40)")
    parser.add_argument("--w3-sizes", default="0.1,1,10,50", help="W3 state sizes in MB (default 0.1,1,10,50)")
    parser.add_argument("--w4-steps", type=int, default=20, help="saves per W4 density (default 20)")
    parser.add_argument("--w5-steps", type=int, default=1000, help="W5 graph steps (default 1000)")
    parser.add_argument("--w6-steps", type=int, default=40, help="saves per W6 size (default 40)")
    parser.add_argument("--w6-sizes", default="0.1,1,10", help="W6 text sizes in MB (default 0.1,1,10)")
    parser.add_argument("--w7-steps", type=int, default=40, help="saves per W7 size (default 40)")
    parser.add_argument("--w7-sizes", default="0.1,1,10", help="W7 history sizes in MB (default 0.1,1,10)")
    parser.set_defaults(func=run)


def _file_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


def run_ours(path: Path, steps: int, interval: Interval | None = None) -> dict:
    """Save W1 through the recording library; per-save timings and bytes on disk."""
    times: list[float] = []
    with Checkpointer(path, name="bench", agent="bench", interval=interval, heartbeat=3600) as cp:
        for state, tasks in w1_states(steps):
            t0 = time.perf_counter()
            cp.save(state, kind="llm", name="step", tasks=tasks)
            times.append(time.perf_counter() - t0)
        cp.store.engine.dispose()
    _checkpoint_wal(path)
    written = cp.last.seq + 1 if cp.last else 0
    return {"saves": len(times), "snapshots": written, **summary_ms(times),
            "total_s": sum(times), "bytes": _file_bytes(path)}


def _checkpoint_wal(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def run_langgraph(path: Path, steps: int) -> dict:
    """Save the same W1 states through SqliteSaver.put (one checkpoint per step)."""
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.base import ChannelVersions, create_checkpoint, empty_checkpoint
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(path, check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.setup()
    conn.execute(f"PRAGMA synchronous={SYNCHRONOUS}")
    config: RunnableConfig = {"configurable": {"thread_id": "bench", "checkpoint_ns": ""}}
    checkpoint = empty_checkpoint()
    times: list[float] = []
    for step, (state, tasks) in enumerate(w1_states(steps)):
        checkpoint = create_checkpoint(checkpoint, None, step)
        checkpoint["channel_values"] = {**state, "tasks": tasks}
        versions: ChannelVersions = {k: str(step + 1) for k in checkpoint["channel_values"]}
        checkpoint["channel_versions"] = versions
        t0 = time.perf_counter()
        config = saver.put(config, checkpoint, {"source": "loop", "step": step, "parents": {}}, versions)
        times.append(time.perf_counter() - t0)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return {"saves": len(times), "snapshots": len(times), **summary_ms(times),
            "total_s": sum(times), "bytes": _file_bytes(path)}


def run_w2(tmp: Path, steps: int) -> list[dict]:
    """The interval trade-off: write time and bytes against operations a recovery replays."""
    rows = []
    for every in (1, 5, 20):
        res = run_ours(tmp / f"w2-{every}.db", steps, Interval.every(every))
        rows.append({"every": every, "snapshots": res["snapshots"], "total_write_s": res["total_s"],
                     "bytes": res["bytes"], "max_replay_ops": every - 1,
                     "mean_replay_ops": (every - 1) / 2})
    return rows


def run(args: argparse.Namespace) -> int:
    """Run the chosen workloads (W1 ours vs SqliteSaver, W2, W3, W4, W5, W6, W7, W1's floor); print
    tables or JSON."""
    from inspector.bench import _write_graph as write_graph
    from inspector.bench import _write_shapes as write_shapes
    only = {w.strip().lower() for w in args.only.split(",") if w.strip()}
    result: dict = {"durability": f"WAL, synchronous={SYNCHRONOUS} (every store)"}
    with tempfile.TemporaryDirectory(prefix="ci-bench-write-") as tmpdir:
        tmp = Path(tmpdir)
        if "w1" in only:
            ours = run_ours(tmp / "ours.db", args.steps)
            theirs = None if args.skip_langgraph else run_langgraph(tmp / "langgraph.db", args.steps)
            result.update(_w1(ours, theirs, args.steps))
        if "w2" in only:
            result["w2"] = run_w2(tmp, args.steps)
        if "floor" in only:
            result["floor"] = write_shapes.run_floor(tmp, args.steps)
        if "w3" in only:
            result["w3"] = write_shapes.run_w3(tmp, args.w3_steps, _sizes(args.w3_sizes))
        if "w3k" in only:
            result["w3k"] = write_shapes.run_w3(tmp, args.w3_steps, _sizes(args.w3_sizes), keys=True)
        if "w4" in only:
            result["w4"] = write_shapes.run_w4(tmp, args.w4_steps)
        if "w4m" in only:
            result["w4m"] = write_shapes.run_w4(tmp, args.w4_steps, as_map=True)
        if "w5" in only and not args.skip_langgraph:
            result["w5"] = write_graph.run_w5(tmp, args.w5_steps)
        for place in write_shapes.W6_PLACES:
            if place in only:
                result[place] = write_shapes.run_w6(tmp, args.w6_steps, _sizes(args.w6_sizes), place)
        if "w7" in only:
            result["w7"] = write_shapes.run_w7(tmp, args.w7_steps, _sizes(args.w7_sizes))
    result["targets"] = targets(result)
    if args.json:
        dump(result)
        return 0
    _print(result, args.steps)
    shows: list[tuple[str, Callable[[Any], None]]] = [
        ("floor", write_shapes.print_floor), ("w3", write_shapes.print_w3), ("w3k", write_shapes.print_w3_keys),
        ("w4", write_shapes.print_w4), ("w4m", write_shapes.print_w4_maps), ("w5", write_graph.print_w5),
        *((place, functools.partial(write_shapes.print_w6, place=place)) for place in write_shapes.W6_PLACES),
        ("w7", write_shapes.print_w7)]
    for key, show in shows:
        if key in result:
            show(result[key])
    if result["targets"]:
        print("\ntargets: " + " · ".join(f"{name} {'met' if ok else 'MISSED'}" for name, ok in result["targets"].items()))
    return 0


def _sizes(text: str) -> tuple[float, ...]:
    """State sizes in MB from a comma-separated option."""
    return tuple(float(x) for x in text.split(",") if x.strip())


def targets(result: dict) -> dict[str, bool]:
    """Every target the workloads run have, met or not, by name (the design's bars: issue 16)."""
    from inspector.bench._write_shapes import W3_TARGET, W6_PLACES
    out: dict[str, bool] = {}
    for name, ok in result.get("targets_met", {}).items():
        out[f"W1 {name}"] = ok
    if "floor" in result:
        out["W1 <= 2x its floor"] = result["floor"]["ratio"] <= 2
    big = [r for r in result.get("w3", []) if r["mb"] == 50]
    if big:
        ours = big[0]["ours"]
        out["W3 at 50 MB <= 10 KB and 5 ms"] = (ours["bytes_per_save"] <= W3_TARGET["bytes"]
                                               and ours["median_ms"] <= W3_TARGET["ms"])
    for key, name in (("w3k", "W3-keys"), ("w4", "W4"), ("w4m", "W4-maps"),
                      *((place, spec[2]) for place, spec in W6_PLACES.items()), ("w7", "W7")):
        if result.get(key):
            out[f"{name} <= json+zstd"] = all(r["time_ratio"] >= 1 and r["bytes_ratio"] >= 1 for r in result[key])
    return out


def _w1(ours: dict, theirs: dict | None, steps: int) -> dict:
    result: dict = {"workload": f"W1: {steps} steps, +~1 KB/step, snapshot every step", "ours": ours,
                    "sqlitesaver": theirs}
    if theirs:
        result["ratios"] = {
            "median_speedup": theirs["median_ms"] / ours["median_ms"],
            "p95_speedup": theirs["p95_ms"] / ours["p95_ms"],
            "file_size_ratio": theirs["bytes"] / ours["bytes"]}
        result["targets_met"] = {"median >= 3x": result["ratios"]["median_speedup"] >= 3,
                                 "p95 >= 10x": result["ratios"]["p95_speedup"] >= 10,
                                 "file >= 100x smaller": result["ratios"]["file_size_ratio"] >= 100}
    return result


def _print(result: dict, steps: int) -> None:
    if "ours" in result:
        _print_w1(result)
    if "w2" in result:
        print(f"\nW2 interval trade-off ({steps} operations):")
        print_table(("every N ops", "snapshots", "write s", "file MB", "replay ops max", "replay ops mean"),
                    [(w["every"], w["snapshots"], w["total_write_s"], f"{w['bytes'] / 1e6:.2f}",
                      w["max_replay_ops"], w["mean_replay_ops"]) for w in result["w2"]])


def _print_w1(result: dict) -> None:
    print(result["workload"] + "; " + result["durability"])
    rows = []
    for label, res in (("checkpoint-inspector", result["ours"]), ("SqliteSaver", result["sqlitesaver"])):
        if res:
            rows.append((label, res["median_ms"], res["p95_ms"], res["max_ms"],
                         f"{res['bytes'] / 1e6:.2f} MB", f"{res['bytes'] / max(res['snapshots'], 1) / 1e3:.2f} KB"))
    print_table(("store", "median ms", "p95 ms", "max ms", "file", "per checkpoint"), rows)
    if "ratios" in result:
        r = result["ratios"]
        met = result["targets_met"]
        print(f"\nratios: median {r['median_speedup']:.1f}x faster ({'met' if met['median >= 3x'] else 'MISSED'} ≥3x), "
              f"p95 {r['p95_speedup']:.1f}x faster ({'met' if met['p95 >= 10x'] else 'MISSED'} ≥10x), "
              f"file {r['file_size_ratio']:.0f}x smaller ({'met' if met['file >= 100x smaller'] else 'MISSED'} ≥100x)")
