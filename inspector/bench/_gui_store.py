"""Synthetic native stores for the GUI benchmark: many runs and checkpoints, written fast.

Rows go straight into the native tables (SQLAlchemy Core bulk inserts) and every
checkpoint points at one of a handful of shared states, so a million checkpoints cost
little disk. Generated stores are cached in the temp directory, keyed by their parameters.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa

from inspector import taskstate
from inspector.store import create_store, init_schema
from inspector.store.native import blobs
from inspector.codec import PieceEncoder, encode_flat
from inspector.store.native.schema import blobs as blob_table
from inspector.store.native.schema import checkpoints, meta, runs

GENERATOR_VERSION = 1
BATCH = 20_000
KINDS = ("llm", "tool", "tool", "llm", "step")
NAMES = ("plan", "search_sources", "write_file notes.md", "summarize", "draft", "review_draft")
CHANGES = ("+1 msg · +1 log · step", "+1 log · step · files", "+1 msg · step · draft",
           "+1 msg · +1 log · step · Draft → done · checks 3/5 → 4/5", "")
LONG_RUN_ID = "bench-long-run"
LIVE_RUN_ID = "bench-live-run"


@dataclass(frozen=True)
class GuiStoreSpec:
    """How big the generated store is."""

    runs: int = 10_000
    checkpoints: int = 1_000_000
    long_run: int = 100_000   # checkpoints of the biggest run (the one the timeline opens)

    @property
    def key(self) -> str:
        """The cache key (file name stem)."""
        return f"gui-v{GENERATOR_VERSION}-{self.runs}r-{self.checkpoints}c-{self.long_run}l"


def cache_dir() -> Path:
    """Where generated stores are kept between benchmark runs."""
    return Path(tempfile.gettempdir()) / "checkpoint-inspector-bench"


def _states() -> tuple[list[tuple[bytes, int]], list[tuple[bytes, taskstate.Score]], dict[bytes, bytes]]:
    pieces: dict[bytes, bytes] = {}
    states, tasks = [], []
    for i in range(8):
        state = {"goal": "Write and publish a short report", "step": i,
                 "messages": [{"role": "assistant", "content": f"message {j} " * 8} for j in range(i * 3)],
                 "log": [f"step {j}" for j in range(i)], "draft": "lorem ipsum " * (i * 20)}
        digest, size, new = PieceEncoder().encode(state)
        pieces.update(new)
        states.append((digest, size))
        task_state = {"goal": "Write and publish a short report", "tasks": [
            {"id": f"t{k}", "title": f"Task {k}", "status": "done" if k < i else "pending",
             "checks": [{"name": "ok", "passed": k < i}]} for k in range(5)]}
        task_state = taskstate.validate(task_state)
        digest, _size, new = encode_flat(task_state)
        pieces.update(new)
        tasks.append((digest, taskstate.score(task_state)))
    return states, tasks, pieces


def _run_sizes(spec: GuiStoreSpec) -> list[int]:
    others = max(0, spec.runs - 2)
    rest = max(0, spec.checkpoints - spec.long_run - 1)
    sizes = [spec.long_run, 1]
    if others:
        base, extra = divmod(rest, others)
        sizes += [base + (1 if i < extra else 0) for i in range(others)]
    return sizes[: spec.runs]


def _status(i: int) -> str:
    return ("completed", "completed", "completed", "failed", "interrupted", "completed", "running")[i % 7]


def generate(path: Path, spec: GuiStoreSpec, log=print) -> Path:
    """Write a new store at ``path`` following ``spec`` (replacing any file there)."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    engine = sa.create_engine(f"sqlite:///{path}")
    sa.event.listen(engine, "connect", _fast_pragmas)
    init_schema(engine, str(path))
    states, tasks, pieces = _states()
    now = time.time()
    with engine.begin() as conn:
        rows = []
        for digest, raw in pieces.items():
            codec, data = blobs.compress(raw)
            rows.append({"hash": digest, "codec": codec, "size": len(raw), "data": data})
        conn.execute(blob_table.insert(), rows)
    sizes = _run_sizes(spec)
    next_id = 1
    run_rows, cp_rows = [], []
    first_ids: list[int] = []
    host = "bench-host-" + socket.gethostname()
    for r, count in enumerate(sizes):
        run_id = LONG_RUN_ID if r == 0 else LIVE_RUN_ID if r == 1 else f"run{r:06d}"
        start = now - 86_400 * 3 + r * 20.0
        fork = r > 10 and r % 50 == 0
        parent = f"run{r - 7:06d}" if fork and r - 7 >= 2 else None
        status = "running" if r == 1 else ("forked" if parent else _status(r))
        first_ids.append(next_id)
        for seq in range(count):
            phase = min(7, seq * 8 // max(count, 1))
            digest, size = states[phase]
            tdigest, score = tasks[phase]
            cp_rows.append((
                next_id, run_id, seq, next_id - 1 if seq else None,
                "input" if seq == 0 else KINDS[seq % len(KINDS)], NAMES[seq % len(NAMES)],
                start + seq * 0.5, digest, tdigest, "{}", size,
                (size - states[0][1]) if seq else size, 1, score.tasks_done, score.tasks_total,
                score.checks_passed, score.checks_total, CHANGES[seq % len(CHANGES)] if seq else "", 1))
            next_id += 1
        last_score = tasks[7][1] if count > 1 else tasks[0][1]
        updated = start + (count - 1) * 0.5 if count else start
        if r == 1:
            updated = now
        parent_cp = first_ids[r - 7] + 3 if parent else None
        run_rows.append(dict(
            id=run_id, name=f"bench run {r}" if r > 1 else ("long run (100k)" if r == 0 else "live run"),
            agent=("planner", "coder", "reviewer")[r % 3], status=status, created=start, updated=updated,
            owner_host=host, owner_pid=1, heartbeat=updated, epoch=1,
            resume_spec=None, resumable=True, parent_run=parent, parent_checkpoint=parent_cp,
            fork_reason="bench fork" if parent else None, labels=json.dumps({"bench": True}),
            head_seq=count - 1, checkpoint_count=count,
            tasks_done=last_score.tasks_done, tasks_total=last_score.tasks_total,
            checks_passed=last_score.checks_passed, checks_total=last_score.checks_total))
        if len(cp_rows) >= BATCH:
            _flush(engine, cp_rows)
            cp_rows = []
    _flush(engine, cp_rows)
    with engine.begin() as conn:
        conn.execute(runs.insert(), run_rows)
        conn.execute(meta.insert(), [{"key": "bench_complete", "value": spec.key}])
    with engine.connect() as conn:
        conn.exec_driver_sql("PRAGMA journal_mode=WAL")
    engine.dispose()
    return path


def _fast_pragmas(dbapi_conn, _record) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=OFF")
    cur.execute("PRAGMA synchronous=OFF")
    cur.close()


def _flush(engine: sa.Engine, rows: list[tuple]) -> None:
    # Core builds the statement; rows go to the driver's executemany as plain tuples (in
    # column order), several times faster than binding a million dicts one by one
    if not rows:
        return
    names = [c.name for c in checkpoints.c]
    sql = str(checkpoints.insert().compile(dialect=engine.dialect, column_keys=names))
    with engine.begin() as conn:
        conn.exec_driver_sql(sql, rows)


def cached_store(spec: GuiStoreSpec, log=print) -> Path:
    """The generated store for ``spec`` (generated on first use, then reused)."""
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{spec.key}.db"
    if path.exists() and _complete(path, spec):
        return path
    log(f"generating {spec.runs:,} runs / {spec.checkpoints:,} checkpoints at {path} (cached for next time) …")
    tmp = folder / f"{spec.key}.{os.getpid()}.tmp.db"
    generate(tmp, spec, log)
    for suffix in ("-wal", "-shm"):
        Path(f"{tmp}{suffix}").unlink(missing_ok=True)
    os.replace(tmp, path)
    return path


def _complete(path: Path, spec: GuiStoreSpec) -> bool:
    try:
        engine = sa.create_engine(f"sqlite:///file:{path}?mode=ro&uri=true")
        with engine.connect() as conn:
            value = conn.execute(sa.select(meta.c.value).where(meta.c.key == "bench_complete")).scalar()
        engine.dispose()
        return value == spec.key
    except sa.exc.SQLAlchemyError:
        return False


def working_copy(source: Path, folder: Path) -> Path:
    """A private copy of a cached store (the live benchmark writes to it)."""
    target = folder / "gui-bench.db"
    shutil.copyfile(source, target)
    return target


def write_live(path: Path, run_id: str, count: int, interval: float) -> None:
    """Append ``count`` checkpoints to ``run_id``, one commit every ``interval`` s.

    Prints one JSON line per commit (seq and commit time) for the benchmark to match
    with the moment the row shows up in the GUI.
    """
    from inspector.store.native.writer import NativeWriter, NewCheckpoint

    with create_store(path) as store:
        writer = NativeWriter(store)
        run = store.get_run(run_id)
        head = store.get_checkpoint(f"{run_id}:-1")
        assert head.state_hash is not None  # a native checkpoint always has its state's digest
        for _ in range(count):
            time.sleep(interval)
            info = writer.append(run_id, run.epoch, NewCheckpoint(
                kind="tool", name="live step", state_hash=head.state_hash, tasks_hash=head.tasks_hash,
                pieces={}, size=head.size, meta={}, change="+1 log · step"))
            print(json.dumps({"seq": info.seq, "t": time.time()}), flush=True)


if __name__ == "__main__":  # the live writer process of ``bench gui``
    import argparse

    parser = argparse.ArgumentParser(prog="python -m inspector.bench._gui_store")
    parser.add_argument("store")
    parser.add_argument("--run", default=LIVE_RUN_ID)
    parser.add_argument("--count", type=int, default=50)
    parser.add_argument("--interval", type=float, default=0.25)
    ns = parser.parse_args()
    write_live(Path(ns.store), ns.run, ns.count, ns.interval)
