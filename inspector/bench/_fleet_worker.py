"""One fleet agent process: records N checkpoints with the recording library, reports as JSON lines.

Run as ``python -m inspector.bench._fleet_worker STORE --count N``. It prints
``{"ready": true, "run": ID}`` once connected, optionally waits for a line on stdin (a start
barrier, ``--wait-go``), then saves; with ``--each`` it prints ``{"seq": N}`` after every save
returned (so a test knows which checkpoints were committed), and finally
``{"done": true, "run": ID, "start": t0, "end": t1, "latencies": [...]}``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

TOPICS = ("plan", "search", "read", "edit", "test", "review")


def agent_state(name: str, step: int) -> dict[str, Any]:
    """The deterministic state of agent ``name`` after ``step`` steps (tests compare to it)."""
    history = [{"role": "tool" if i % 3 else "assistant", "step": i,
                "content": f"{name} step {i}: {TOPICS[i % len(TOPICS)]} " + "x" * (40 + i % 50)}
               for i in range(step + 1)]
    return {"agent": name, "step": step, "messages": history,
            "scratch": {"topic": TOPICS[step % len(TOPICS)], "attempt": step % 7},
            "notes": "n" * 600}


def agent_tasks(step: int, count: int) -> dict[str, Any]:
    """A small task state whose checks pass as the agent progresses."""
    done = step * 4 // max(count, 1)
    return {"goal": "fleet bench", "tasks": [
        {"id": f"t{i}", "title": f"task {i}", "status": "done" if i < done else "in_progress",
         "progress": 1.0 if i < done else 0.5,
         "checks": [{"name": "passes", "passed": i < done}]} for i in range(4)]}


def main(argv: list[str] | None = None) -> int:
    """Record ``--count`` checkpoints into STORE; exit 0 when all were written."""
    parser = argparse.ArgumentParser(prog="fleet-worker")
    parser.add_argument("store")
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--name", default="fleet")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds to sleep between saves")
    parser.add_argument("--wait-go", action="store_true", help="wait for a line on stdin first")
    parser.add_argument("--each", action="store_true", help="print every committed seq")
    parser.add_argument("--heartbeat", type=float, default=2.0)
    args = parser.parse_args(argv)

    from inspector.record import Checkpointer

    def say(obj: dict) -> None:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()

    with Checkpointer(args.store, name=args.name, agent="fleet-worker", heartbeat=args.heartbeat,
                      labels={"bench": "fleet"}) as cp:
        say({"ready": True, "run": cp.run_id})
        if args.wait_go:
            sys.stdin.readline()
        latencies: list[float] = []
        start = time.time()
        for step in range(args.count):
            tasks = agent_tasks(step, args.count) if step % 25 == 0 else None
            t0 = time.perf_counter()
            info = cp.save(agent_state(args.name, step), kind="tool" if step % 2 else "llm",
                           name=TOPICS[step % len(TOPICS)], tasks=tasks)
            latencies.append(time.perf_counter() - t0)
            if args.each and info is not None:
                say({"seq": info.seq, "id": info.id})
            if args.delay:
                time.sleep(args.delay)
        end = time.time()
    say({"done": True, "run": cp.run_id, "start": start, "end": end, "latencies": latencies})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
