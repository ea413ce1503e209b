"""``bench big``: big legitimate states in the GUI and the CLI — time and peak RSS per case.

Three stores (``inspector.bench._big_store``): a LangGraph state written by the real
``SqliteSaver`` holding a 3,000,000-item list and a 1,000,000-key map, the same two states
recorded natively, and a native 200 MB string. Each command runs as users run it, in a fresh
process (its output read and thrown away); its wall time and peak RSS (``wait4``) are printed:

* ``gui state`` / ``gui diff``: ``open STORE --select B --tab state|diff --screenshot``, the
  window rendered once everything the tab asked for has arrived (the state tree, or the
  diff with its change list and side-by-side text);
* ``show``, ``show --json``, ``diff A B``.

The peer, measured in the same run: a fresh Python process that only gets the same state
into memory and writes it out as JSON — for LangGraph through LangGraph's own
``SqliteSaver.get_tuple``; for a native store by building the equal value in Python (the
least any reader must pay). Ratios are ours / peer.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from collections.abc import Callable

from inspector.bench._big_store import BigCase, build
from inspector.bench._util import dump, print_table

TIME_BUDGET_S = {"gui state": 15.0, "gui diff": 20.0, "show": 20.0, "show --json": 20.0, "diff": 15.0}
# the State and Diff tabs read big parts on demand (native pieces, LangGraph blobs, huge strings
# streamed): were 900 / 1,000 MB; ``diff`` was 1,000 MB
RSS_BUDGET_MB = {"gui state": 300, "gui diff": 400, "show": 1200, "show --json": 1200, "diff": 300}

_PEER_LG = """
import json, sqlite3, sys
from langgraph.checkpoint.sqlite import SqliteSaver
saver = SqliteSaver(sqlite3.connect(sys.argv[1], check_same_thread=False))
tuples = list(saver.list({"configurable": {"thread_id": "big"}}))
values = tuples[0].checkpoint["channel_values"]   # the newest checkpoint
sys.stdout.write(json.dumps(values, indent=2, default=str))
"""
_PEER_NATIVE = """
import json, sys
from inspector.bench._big_store import _two_states, _text, LIST_ITEMS, MAP_KEYS, STRING_CHARS, TAIL
scale = float(sys.argv[2])
if sys.argv[1] == "string":
    text = _text(max(10_000, int(STRING_CHARS * scale)))
    value = {"text": text[:-TAIL] + "the changed tail. " * (TAIL // 18)}
else:
    value = _two_states(max(10, int(LIST_ITEMS * scale)), max(10, int(MAP_KEYS * scale)))[1]
sys.stdout.write(json.dumps(value, indent=2))
"""


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``bench big``."""
    parser = sub.add_parser("big", help="big states (3M-item list, 1M-key map, 200 MB string) in the GUI and CLI")
    parser.add_argument("--scale", type=float, default=1.0, help="state sizes relative to the issue's (default 1)")
    parser.add_argument("--only", nargs="*", help="cases to run (langgraph, native, string)")
    parser.add_argument("--size", default="1024x700", help="GUI window size (default 1024x700)")
    parser.add_argument("--screenshots", help="keep the GUI screenshots in this folder")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(func=run)


def measure_child(argv: list[str], env: dict[str, str] | None = None, timeout: float = 600.0,
                  preexec: Callable[[], None] | None = None) -> dict[str, Any]:
    """Run ``argv`` in a fresh process, output read and discarded: wall seconds, peak RSS
    (MB: its own high-water mark, sampled as it runs, where the system keeps one), exit code
    and the end of stderr; killed after ``timeout`` seconds (``preexec`` runs in the child
    before it starts, e.g. to set rlimits)."""
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, env=env, preexec_fn=preexec)
        deadline = t0 + timeout
        killed = False
        high = 0
        while True:
            high = max(high, _high_water_kb(proc.pid))
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                killed = True
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.02)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        tail = err.read()[-600:].decode("utf-8", "replace")
    scale = 1024 * 1024 if sys.platform == "darwin" else 1024
    # ru_maxrss counts from the fork, so a big parent (a pytest session) lends the child its
    # size; the child's own high-water mark (Linux: VmHWM, reset by exec) does not
    peak_kb = high if high else usage.ru_maxrss * scale // 1024
    return {"s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "rss_mb": peak_kb / 1024,
            "rc": proc.returncode, "stderr": tail,
            "timed_out": killed}


def _high_water_kb(pid: int) -> int:
    """The peak RSS (kB) of a running process since it exec'd (Linux ``VmHWM``; 0 elsewhere)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as status:
            for line in status:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def gui_argv(case: BigCase, tab: str, png: Path, size: str = "1024x700") -> list[str]:
    """The screenshot command of one case and tab."""
    return [sys.executable, "-m", "inspector", "open", str(case.store), "--select", case.b, "--tab", tab,
            "--no-live", "--size", size, "--screenshot", str(png)]


def measure(cases: list[BigCase], scale: float, size: str, shots: Path) -> dict[str, Any]:
    """Every command on every case, and the peer."""
    env = {**os.environ, "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen")}
    ours = [sys.executable, "-m", "inspector"]
    out: dict[str, Any] = {}
    for case in cases:
        store = str(case.store)
        if case.name == "langgraph":
            peer = [sys.executable, "-c", _PEER_LG, store]
        else:
            peer = [sys.executable, "-c", _PEER_NATIVE, case.name, str(scale)]
        commands = {
            "gui state": gui_argv(case, "state", shots / f"{case.name}-state.png", size),
            "gui diff": gui_argv(case, "diff", shots / f"{case.name}-diff.png", size),
            "show": [*ours, "show", store, case.b],
            "show --json": [*ours, "show", "--json", store, case.b],
            "diff": [*ours, "diff", store, case.a, case.b],
        }
        rows = {name: measure_child(argv, env) for name, argv in commands.items()}
        rows["peer"] = measure_child(peer, env)
        for name, row in rows.items():
            if row["rc"] != 0:
                raise SystemExit(f"bench big: {case.name} {name} failed (exit {row['rc']}): {row['stderr']}")
        out[case.name] = {"what": case.what, "commands": rows}
    return out


def run(args: argparse.Namespace) -> int:
    """Build (or reuse) the stores and print each command's time and peak RSS."""
    log = (lambda m: print(m, file=sys.stderr)) if args.json else print
    # built in a child: a child's peak RSS (wait4) starts from its parent's at fork, so the
    # parent stays small
    subprocess.run([sys.executable, "-c", "import sys; from inspector.bench._big_store import build; "
                    "build(float(sys.argv[1]), log=lambda m: print(m, file=sys.stderr))", str(args.scale)],
                   check=True)
    cases = [c for c in build(args.scale, log=log) if not args.only or c.name in args.only]
    with tempfile.TemporaryDirectory(prefix="ci-bench-big-") as tmp:
        shots = Path(args.screenshots) if args.screenshots else Path(tmp)
        shots.mkdir(parents=True, exist_ok=True)
        result = measure(cases, args.scale, args.size, shots)
    result["budgets"] = {"seconds": TIME_BUDGET_S, "rss_mb": RSS_BUDGET_MB}
    result["load"] = os.getloadavg()[0]
    if args.json:
        dump(result)
        return 0
    for name, case in result.items():
        if name in ("budgets", "load"):
            continue
        peer = case["commands"]["peer"]
        print(f"\n{case['what']}  (peer: {peer['s']:.2f} s wall, {peer['cpu_s']:.2f} s CPU, {peer['rss_mb']:.0f} MB)")
        table = []
        for command, row in case["commands"].items():
            if command == "peer":
                continue
            rss = RSS_BUDGET_MB[command]
            ok = row["s"] <= TIME_BUDGET_S[command] and row["rss_mb"] <= rss
            table.append((command, row["s"], f"{row['s'] / peer['s']:.1f}x", row["cpu_s"],
                          f"{row['cpu_s'] / peer['cpu_s']:.1f}x", f"{row['rss_mb']:.0f}",
                          f"{row['rss_mb'] / peer['rss_mb']:.1f}x",
                          f"{TIME_BUDGET_S[command]:g} s / {rss} MB",
                          "ok" if ok else "MISSED"))
        print_table(("command (fresh process)", "wall s", "vs peer", "CPU s", "vs peer", "peak RSS MB", "vs peer",
                     "budget (wall, RSS)", ""), table)
    print(f"\nload average {result['load']:.1f} (wall times grow with it; the peer ran beside ours)")
    return 0
