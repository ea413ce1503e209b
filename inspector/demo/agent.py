"""The demo agent: deterministic, no LLM, no network, recorded through ``inspector.record``.

Fault injection (ignored when the process was launched to resume a run):
``--crash-at N`` dies with SIGKILL before step N, ``--hang-at N`` stops heart-beating and
sleeps before step N, ``--fail-at N`` raises an error in step N, ``--stop-at N`` stops
cleanly before step N (status ``interrupted``, e.g. waiting for a human).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from pathlib import Path

from inspector.demo.plan import TOPICS, Tools
from inspector.demo.steps import PLAN, initial_state, initial_tasks
from inspector.errors import OwnershipLost, StoreError
from inspector.record import Checkpointer, Interval

EXIT_OWNERSHIP_LOST = 3


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The demo agent's options (shared by ``demo-agent`` and ``python -m inspector.demo``)."""
    parser.add_argument("--store", required=True, help="store path or URL to record into")
    parser.add_argument("--name", default=None, help="run name")
    parser.add_argument("--seed", type=int, default=1, help="seed (choose topic and text)")
    parser.add_argument("--topic", default=None, help="report topic (default: from seed)")
    parser.add_argument("--interval", default="step", help="'step', N operations, or Ns seconds")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds each step takes")
    parser.add_argument("--heartbeat", type=float, default=1.0, help="heartbeat period in seconds")
    parser.add_argument("--workspace", default=None, help="folder for the tools' files")
    parser.add_argument("--approve-first", action="store_true", help="the reviewer approves at once")
    parser.add_argument("--crash-at", type=int, default=None, metavar="N", help="SIGKILL itself before step N")
    parser.add_argument("--hang-at", type=int, default=None, metavar="N", help="hang before step N")
    parser.add_argument("--hang-for", type=float, default=3600.0, help="seconds a hang lasts")
    parser.add_argument("--fail-at", type=int, default=None, metavar="N", help="raise an error in step N")
    parser.add_argument("--stop-at", type=int, default=None, metavar="N", help="stop before step N")


def _workspace(args: argparse.Namespace, run_id: str) -> Path:
    if args.workspace:
        return Path(args.workspace)
    if "://" not in args.store:
        return Path(args.store).expanduser().resolve().parent / "workspaces" / run_id
    return Path.cwd() / "workspaces" / run_id


def run(args: argparse.Namespace) -> int:
    """Run (or resume) the demo agent; returns the process exit code."""
    topic = args.topic or TOPICS[args.seed % len(TOPICS)]
    cp = Checkpointer(args.store, name=args.name or f"report: {topic}", agent="demo-agent",
                      interval=Interval.parse(args.interval), heartbeat=args.heartbeat,
                      labels={"seed": args.seed, "topic": topic})
    faults = not cp.resumed
    try:
        with cp:
            if cp.resumed:
                state, tasks = cp.restored_state, cp.restored_tasks
                print(f"resumed run {cp.run_id} (epoch {cp.epoch}) at step {state['step']}", flush=True)
            else:
                state, tasks = initial_state(topic, args.seed, args.approve_first), initial_tasks(topic)
                cp.save(state, kind="input", name="goal", tasks=tasks)
            tools = Tools(_workspace(args, cp.run_id), args.seed)
            while state["step"] < len(PLAN):
                n = state["step"] + 1
                if faults:
                    _inject(cp, args, n)
                    if args.stop_at == n:
                        cp.finish("interrupted", f"stopped before step {n}: waiting for a human")
                        return 0
                step = PLAN[state["step"]]
                if faults and args.fail_at == n:
                    raise RuntimeError(f"tool {step.name!r} failed: simulated error at step {n}")
                if args.delay:
                    time.sleep(args.delay)
                step.run(state, tasks, tools)
                state["log"].append(step.name)
                state["step"] = n
                saved = cp.save(state, kind=step.kind, name=step.name, tasks=tasks,
                                meta={"task": step.task, "step": n})
                print(f"step {n:2d}/{len(PLAN)}  {step.kind:<4} {step.name:<24} "
                      f"{'checkpoint #' + str(saved.seq) if saved else '(not snapshotted)'}", flush=True)
            final = cp.save(state, kind="final", name="done", tasks=tasks)
            print(f"done: run {cp.run_id} completed at checkpoint #{final.seq if final else '?'}", flush=True)
        return 0
    except OwnershipLost as err:
        print(f"demo agent: {err}", file=sys.stderr)
        return EXIT_OWNERSHIP_LOST
    except StoreError as err:
        print(f"demo agent: {err}", file=sys.stderr)
        return 2
    except RuntimeError as err:
        print(f"demo agent: {err}", file=sys.stderr)
        return 1


def _inject(cp: Checkpointer, args: argparse.Namespace, n: int) -> None:
    if args.crash_at == n:
        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGKILL)
    if args.hang_at == n:
        cp.pause_heartbeat()
        print(f"demo agent: hanging before step {n}", flush=True)
        time.sleep(args.hang_for)


def main(argv: list[str] | None = None) -> int:
    """``python -m inspector.demo``."""
    parser = argparse.ArgumentParser(prog="python -m inspector.demo", description=__doc__.splitlines()[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))
