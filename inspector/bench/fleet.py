"""``bench fleet``: save throughput and latency with 1, 4, 16 agent processes on SQLite and
PostgreSQL, and the live latency from a commit to the inspector's LISTEN callback."""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from collections.abc import Iterator

import sqlalchemy as sa

from inspector.bench._fleet_worker import agent_state
from inspector.bench._pgserver import TempPostgres
from inspector.bench._util import dump, print_table, summary_ms
from inspector.errors import StoreError
from inspector.record import Checkpointer
from inspector.store import create_store, open_store
from inspector.watch.pg_listen import make_pg_watcher

BACKENDS = ("sqlite", "postgresql")


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``bench fleet``."""
    parser = sub.add_parser("fleet", help="many writer processes on SQLite and PostgreSQL; NOTIFY latency")
    parser.add_argument("--pg-url", help="PostgreSQL database to write into (default: start a temporary "
                                         "server with fsync and synchronous_commit on)")
    parser.add_argument("--writers", default="1,4,16", help="writer process counts (default 1,4,16)")
    parser.add_argument("--count", type=int, default=200, help="checkpoints per writer (default 200)")
    parser.add_argument("--live", type=int, default=50, help="NOTIFY latency samples (default 50)")
    parser.add_argument("--backends", default=",".join(BACKENDS), help="sqlite,postgresql")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(func=run)


# -- PostgreSQL targets ---------------------------------------------------------------
class _Pg:
    """Where the PostgreSQL rounds write: fresh databases on our own server, or the given URL."""

    def __init__(self, server: TempPostgres | None, url: str) -> None:
        self.server, self.url = server, url

    def target(self) -> str:
        """A store URL for one round (a new database when the server is ours)."""
        if self.server is None:
            return self.url
        name = f"bench_{uuid.uuid4().hex[:8]}"
        engine = sa.create_engine(self.url, isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)
        with engine.connect() as conn:
            conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
        engine.dispose()
        return self.server.url_for(name)

    def settings(self) -> dict[str, str]:
        """Durability settings of the server, printed with the figures."""
        engine = sa.create_engine(self.url, poolclass=sa.pool.NullPool)
        try:
            with engine.connect() as conn:
                return {k: conn.exec_driver_sql(f"SHOW {k}").scalar_one()
                        for k in ("server_version", "fsync", "synchronous_commit", "max_connections")}
        finally:
            engine.dispose()


@contextlib.contextmanager
def _postgres(url: str | None) -> Iterator[_Pg]:
    if url:
        yield _Pg(None, url)
        return
    server = TempPostgres(durable=True).start()
    try:
        yield _Pg(server, server.url)
    finally:
        server.stop()


# -- save throughput ---------------------------------------------------------------------
def _spawn(url: str, index: int, count: int) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "inspector.bench._fleet_worker", url, "--name",
                             f"agent-{index}", "--count", str(count), "--wait-go"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def measure_saves(url: str, backend: str, writers: int, count: int) -> dict:
    """Start ``writers`` agent processes, release them together, collect their save timings."""
    create_store(url).close()
    procs = [_spawn(url, i, count) for i in range(writers)]
    try:
        for proc in procs:   # start barrier: everyone connected and created its run
            line = proc.stdout.readline() if proc.stdout else ""
            if not line:
                raise StoreError(f"A bench writer failed to start: {proc.communicate()[1].strip()[-500:]}")
        for proc in procs:
            assert proc.stdin is not None   # spawned with stdin=PIPE
            proc.stdin.write("go\n")
            proc.stdin.flush()
        reports = []
        for proc in procs:
            out, err = proc.communicate(timeout=3600)
            if proc.returncode != 0:
                raise StoreError(f"A bench writer failed: {err.strip()[-500:]}")
            reports.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    latencies = [x for r in reports for x in r["latencies"]]
    wall = max(r["end"] for r in reports) - min(r["start"] for r in reports)
    return {"backend": backend, "writers": writers, "checkpoints": len(latencies), "wall_s": wall,
            "per_s": len(latencies) / wall, **summary_ms(latencies)}


# -- live latency ------------------------------------------------------------------------
def measure_live(url: str, samples: int) -> dict:
    """Time from ``save()`` to the listener's callback for the same run, ``samples`` times."""
    create_store(url).close()
    arrived = threading.Event()
    stamp: list[float] = [0.0]
    watched: set[str] = set()

    def on_change(run_ids: frozenset | None) -> None:
        if run_ids and run_ids & watched:
            stamp[0] = time.perf_counter()
            arrived.set()

    store = open_store(url)
    listener = make_pg_watcher(store, on_change)
    assert listener is not None
    listener.start()
    end_to_end, after_return, saves = [], [], []
    try:
        deadline = time.monotonic() + 30
        while listener.state != "listening" and time.monotonic() < deadline:
            time.sleep(0.01)
        with Checkpointer(url, name="live", heartbeat=3600) as cp:
            watched.add(cp.run_id)
            time.sleep(0.2)
            for step in range(samples):
                arrived.clear()
                t0 = time.perf_counter()
                cp.save(agent_state("live", step))
                t1 = time.perf_counter()
                if not arrived.wait(10):
                    raise StoreError("A notification did not arrive within 10 s.")
                end_to_end.append(stamp[0] - t0)
                after_return.append(max(0.0, stamp[0] - t1))
                saves.append(t1 - t0)
                time.sleep(0.02)
    finally:
        listener.stop()
        store.close()
    return {"samples": samples, "save_to_callback": summary_ms(end_to_end),
            "return_to_callback": summary_ms(after_return), "save": summary_ms(saves)}


# -- command -------------------------------------------------------------------------
def run(args: argparse.Namespace) -> int:
    """Run every round and print the tables (or JSON)."""
    writers = [int(x) for x in args.writers.split(",") if x.strip()]
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    unknown = set(backends) - set(BACKENDS)
    if unknown:
        raise StoreError(f"Unknown backend {sorted(unknown)[0]!r}; use sqlite and/or postgresql.")
    result: dict = {"count_per_writer": args.count, "saves": [], "live": None, "postgresql": None}
    with tempfile.TemporaryDirectory(prefix="bench-fleet-") as tmp:
        if "sqlite" in backends:
            for n in writers:
                result["saves"].append(measure_saves(str(Path(tmp) / f"fleet-{n}.db"), "sqlite", n, args.count))
                _progress(args, result["saves"][-1])
        if "postgresql" in backends:
            with _postgres(args.pg_url) as pg:
                result["postgresql"] = pg.settings()
                for n in writers:
                    result["saves"].append(measure_saves(pg.target(), "postgresql", n, args.count))
                    _progress(args, result["saves"][-1])
                if args.live:
                    result["live"] = measure_live(pg.target(), args.live)
    if args.json:
        dump(result)
    else:
        _print(result)
    return 0


def _progress(args: argparse.Namespace, row: dict) -> None:
    if not args.json:
        print(f"  … {row['backend']} × {row['writers']}: {row['per_s']:.0f} checkpoints/s", file=sys.stderr)


def _print(result: dict) -> None:
    pg = result["postgresql"]
    if pg:
        print(f"PostgreSQL {pg['server_version']}: fsync={pg['fsync']}, "
              f"synchronous_commit={pg['synchronous_commit']}; SQLite: WAL, synchronous=NORMAL")
    print(f"Save throughput and latency ({result['count_per_writer']} checkpoints per writer process)")
    print_table(("backend", "writers", "checkpoints", "wall s", "ckpt/s", "median ms", "p95 ms", "max ms"),
                [(r["backend"], r["writers"], r["checkpoints"], r["wall_s"], round(r["per_s"], 1),
                  r["median_ms"], r["p95_ms"], r["max_ms"]) for r in result["saves"]])
    live = result["live"]
    if live:
        print(f"\nLive latency over LISTEN/NOTIFY ({live['samples']} saves)")
        print_table(("interval", "median ms", "p95 ms", "max ms"), [
            (name, live[key]["median_ms"], live[key]["p95_ms"], live[key]["max_ms"])
            for name, key in (("save() start → callback", "save_to_callback"),
                              ("save() returned → callback", "return_to_callback"),
                              ("save() itself", "save"))])
