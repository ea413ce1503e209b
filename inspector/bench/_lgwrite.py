"""``bench langgraph --workload write``: LangGraph's savers against ``InspectorSaver`` on a real graph.

A real ``StateGraph`` (a ``messages`` channel with ``add_messages``; each ``graph.invoke`` adds a
short question and a ~1 KB answer) runs ``--steps`` invokes on one thread, once per saver:

* SQLite: ``SqliteSaver`` vs ``InspectorSaver`` (sync ``invoke``), ``AsyncSqliteSaver`` vs
  ``AsyncInspectorSaver`` (``ainvoke``), each on a new file;
* PostgreSQL: ``PostgresSaver`` vs ``InspectorSaver``, ``AsyncPostgresSaver`` vs
  ``AsyncInspectorSaver``, each in a new database (``--pg-url``, else a temporary server).

Checkpoint time per step = (the run's time − the same graph's time without a checkpointer, which
is given the whole history as input so its state grows alike) / steps. The *reference floor*
(``ReferenceFloorSaver``, sync and async) keeps what LangGraph hands it by reference in memory,
with no copy, check, serialization or I/O: its checkpoint time is LangGraph's own cost of having
a checkpointer at all (``create_checkpoint``, its copies, the background put executor, the
``put_writes`` plumbing), which no saver can go below. Bytes on disk = the SQLite
file with its WAL, or the PostgreSQL tables' total relation size. Ratios are taken against the
LangGraph saver measured in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any
from collections.abc import Callable, Iterator

import sqlalchemy as sa

from inspector.bench._util import dump, print_table
from inspector.errors import StoreError

if TYPE_CHECKING:
    from inspector.bench.fleet import _Pg

THREAD = "bench-chat"
ANSWER = 1000        # characters of each answer (~1 KB per step)
TARGET_TIME = 5.0    # SQLite: at least 5x less checkpoint time per step than SqliteSaver
TARGET_BYTES = 100.0  # SQLite: at least 100x smaller


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of the write workload (on ``bench langgraph``)."""
    parser.add_argument("--steps", type=int, default=1000, help="graph.invoke calls (write workload; default 1000)")
    parser.add_argument("--pg-url", help="PostgreSQL server to write into (write workload; default: a temporary "
                        "server; each saver gets a new database)")
    parser.add_argument("--no-postgres", action="store_true", help="write workload: SQLite only")


def _imports() -> Any:
    try:
        from langchain_core.messages import AIMessage, HumanMessage
        from langgraph.graph import START, StateGraph
        from langgraph.graph.message import add_messages
    except ImportError as err:
        raise StoreError(f"bench langgraph needs langgraph installed ({err.name} is missing).") from err
    return AIMessage, HumanMessage, START, StateGraph, add_messages


def build_graph(checkpointer: Any) -> Any:
    """messages (add_messages) → one node answering with ~1 KB."""
    from typing import Annotated, TypedDict
    ai, _, start, state_graph, add_messages = _imports()
    # the functional form: real objects, not annotations this module (``__future__``) would
    # leave as strings LangGraph cannot resolve from a local scope
    State = TypedDict("State", {"messages": Annotated[list, add_messages]})  # noqa: UP013

    def answer(state: dict) -> dict:
        n = len(state["messages"])
        text = f"answer {n}: " + ("lorem ipsum dolor sit amet " * 40)[:ANSWER]
        return {"messages": [ai(content=text, id=f"a-{n}")]}

    graph = state_graph(State)
    graph.add_node("answer", answer)
    graph.add_edge(start, "answer")
    return graph.compile(checkpointer=checkpointer)


def _question(step: int) -> Any:
    return _imports()[1](content=f"question {step}", id=f"q-{step}")


def run_sync(checkpointer: Any, steps: int) -> float:
    """Seconds for ``steps`` invokes on one thread (history carried by the checkpointer, or
    passed in as input without one)."""
    graph = build_graph(checkpointer)
    config = {"configurable": {"thread_id": THREAD}}
    history: list = []
    t0 = time.perf_counter()
    for step in range(steps):
        if checkpointer is None:
            history = graph.invoke({"messages": history + [_question(step)]})["messages"]
        else:
            graph.invoke({"messages": [_question(step)]}, config)
    return time.perf_counter() - t0


async def run_async(checkpointer: Any, steps: int) -> float:
    """``run_sync`` with ``ainvoke``."""
    graph = build_graph(checkpointer)
    config = {"configurable": {"thread_id": THREAD}}
    history: list = []
    t0 = time.perf_counter()
    for step in range(steps):
        if checkpointer is None:
            history = (await graph.ainvoke({"messages": history + [_question(step)]}))["messages"]
        else:
            await graph.ainvoke({"messages": [_question(step)]}, config)
    return time.perf_counter() - t0


class ReferenceFloorSaver:
    """The reference floor: a saver that stores every ``put`` / ``put_writes`` argument by
    reference (no copy, no serialization) and hands the very same objects back. Not a usable
    saver (a caller's later in-place change shows in what it returns), only the measure of
    what LangGraph itself costs with a checkpointer. Built on first use (LangGraph is optional)."""

    @staticmethod
    def make() -> Any:
        from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple, get_checkpoint_id

        class Floor(BaseCheckpointSaver):
            def __init__(self) -> None:
                super().__init__()
                self.checkpoints: dict[tuple, tuple] = {}
                self.writes: dict[tuple, list] = {}
                self.latest: dict[tuple, str] = {}

            def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
                conf = config["configurable"]
                lane = (conf["thread_id"], conf.get("checkpoint_ns", ""))
                self.checkpoints[(*lane, checkpoint["id"])] = (checkpoint, metadata, conf.get("checkpoint_id"))
                self.latest[lane] = checkpoint["id"]
                return {"configurable": {"thread_id": lane[0], "checkpoint_ns": lane[1],
                                         "checkpoint_id": checkpoint["id"]}}

            def put_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
                conf = config["configurable"]
                key = (conf["thread_id"], conf.get("checkpoint_ns", ""), conf["checkpoint_id"])
                self.writes.setdefault(key, []).extend((task_id, channel, value) for channel, value in writes)

            def get_tuple(self, config: Any) -> Any:
                conf = config["configurable"]
                lane = (conf["thread_id"], conf.get("checkpoint_ns", ""))
                checkpoint_id = get_checkpoint_id(config) or self.latest.get(lane)
                found = self.checkpoints.get((*lane, checkpoint_id))
                if found is None:
                    return None
                checkpoint, metadata, parent = found
                here: Any = {"configurable": {"thread_id": lane[0], "checkpoint_ns": lane[1], "checkpoint_id": checkpoint_id}}
                up: Any = ({"configurable": {"thread_id": lane[0], "checkpoint_ns": lane[1], "checkpoint_id": parent}}
                      if parent else None)
                return CheckpointTuple(here, checkpoint, metadata, up, self.writes.get((*lane, checkpoint_id), []))

            async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
                return self.put(config, checkpoint, metadata, new_versions)

            async def aput_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
                self.put_writes(config, writes, task_id, task_path)

            async def aget_tuple(self, config: Any) -> Any:
                return self.get_tuple(config)

        return Floor()


@contextlib.contextmanager
def _floor_saver() -> Iterator[Any]:
    yield ReferenceFloorSaver.make()


@contextlib.asynccontextmanager
async def _async_floor_saver() -> Any:
    yield ReferenceFloorSaver.make()


def _final_length(checkpointer: Any) -> int:
    graph = build_graph(checkpointer)
    return len(graph.get_state({"configurable": {"thread_id": THREAD}}).values["messages"])


def _file_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())


def _pg_bytes(url: str) -> int:
    engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn:
            return int(conn.exec_driver_sql(
                "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
                "JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = 'public' AND c.relkind = 'r'").scalar_one())
    finally:
        engine.dispose()


def _libpq(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://", 1)


# -- the savers, each opened on a new target ------------------------------------------------
@contextlib.contextmanager
def _sqlite_saver(path: Path) -> Iterator[Any]:
    from langgraph.checkpoint.sqlite import SqliteSaver
    conn = sqlite3.connect(str(path), check_same_thread=False)
    try:
        yield SqliteSaver(conn)
    finally:
        conn.close()


@contextlib.contextmanager
def _postgres_saver(url: str) -> Iterator[Any]:
    from langgraph.checkpoint.postgres import PostgresSaver
    with PostgresSaver.from_conn_string(_libpq(url)) as saver:
        saver.setup()
        yield saver


@contextlib.asynccontextmanager
async def _async_sqlite_saver(path: Path) -> Any:
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    async with AsyncSqliteSaver.from_conn_string(str(path)) as saver:
        yield saver


@contextlib.asynccontextmanager
async def _async_postgres_saver(url: str) -> Any:
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    async with AsyncPostgresSaver.from_conn_string(_libpq(url)) as saver:
        await saver.setup()
        yield saver


def _measure_sync(name: str, opener: Callable[[], Any], steps: int, size: Callable[[], int]) -> dict:
    with opener() as saver:
        seconds = run_sync(saver, steps)
        length = _final_length(saver)
    return {"saver": name, "seconds": seconds, "bytes": size(), "messages": length}


def _measure_async(name: str, opener: Callable[[], Any], steps: int, size: Callable[[], int]) -> dict:
    async def go() -> dict:
        async with opener() as saver:
            seconds = await run_async(saver, steps)
            graph = build_graph(saver)
            state = await graph.aget_state({"configurable": {"thread_id": THREAD}})
        return {"saver": name, "seconds": seconds, "messages": len(state.values["messages"])}
    result = asyncio.run(go())
    result["bytes"] = size()
    return result


def measure(steps: int, folder: Path, pg: _Pg | None) -> dict:
    """Every saver pair on SQLite (and PostgreSQL when ``pg`` is given), with the baselines."""
    from inspector.record.langgraph import AsyncInspectorSaver, InspectorSaver
    base_sync = run_sync(None, steps)
    base_async = asyncio.run(run_async(None, steps))
    rows: list[dict] = []
    for kind in ("sync", "async"):
        if kind == "sync":
            floor = _measure_sync("reference floor", _floor_saver, steps, lambda: 0)
        else:
            floor = _measure_async("reference floor", _async_floor_saver, steps, lambda: 0)
        baseline = base_sync if kind == "sync" else base_async
        floor.update(backend="memory", mode=kind, checkpoint_ms_per_step=max(floor["seconds"] - baseline, 0.0) / steps * 1e3,
                     ms_per_step=floor["seconds"] / steps * 1e3, bytes_per_step=0.0)
        rows.append(floor)

    def sqlite_pair(kind: str) -> None:
        ours_path, theirs_path = folder / f"inspector-{kind}.db", folder / f"langgraph-{kind}.db"
        if kind == "sync":
            theirs = _measure_sync("SqliteSaver", lambda: _sqlite_saver(theirs_path), steps,
                                   lambda: _file_bytes(theirs_path))
            ours = _measure_sync("InspectorSaver", lambda: InspectorSaver.from_conn_string(str(ours_path)),
                                 steps, lambda: _file_bytes(ours_path))
        else:
            theirs = _measure_async("AsyncSqliteSaver", lambda: _async_sqlite_saver(theirs_path), steps,
                                    lambda: _file_bytes(theirs_path))
            ours = _measure_async("AsyncInspectorSaver", lambda: AsyncInspectorSaver.from_conn_string(str(ours_path)),
                                  steps, lambda: _file_bytes(ours_path))
        rows.extend(_pair("sqlite", kind, theirs, ours, base_sync if kind == "sync" else base_async, steps))

    def pg_pair(pg: _Pg, kind: str) -> None:
        theirs_url, ours_url = pg.target(), pg.target()
        if kind == "sync":
            theirs = _measure_sync("PostgresSaver", lambda: _postgres_saver(theirs_url), steps,
                                   lambda: _pg_bytes(theirs_url))
            ours = _measure_sync("InspectorSaver", lambda: InspectorSaver.from_conn_string(ours_url), steps,
                                 lambda: _pg_bytes(ours_url))
        else:
            theirs = _measure_async("AsyncPostgresSaver", lambda: _async_postgres_saver(theirs_url), steps,
                                    lambda: _pg_bytes(theirs_url))
            ours = _measure_async("AsyncInspectorSaver", lambda: AsyncInspectorSaver.from_conn_string(ours_url),
                                  steps, lambda: _pg_bytes(ours_url))
        rows.extend(_pair("postgresql", kind, theirs, ours, base_sync if kind == "sync" else base_async, steps))

    sqlite_pair("sync")
    sqlite_pair("async")
    if pg is not None:
        pg_pair(pg, "sync")
        pg_pair(pg, "async")
    floors = {r["mode"]: r["checkpoint_ms_per_step"] for r in rows if r["backend"] == "memory"}
    for row in rows:
        if row["backend"] != "memory":
            row["above_floor_ms_per_step"] = max(row["checkpoint_ms_per_step"] - floors[row["mode"]], 0.0)
    return {"steps": steps, "baseline_sync_ms_per_step": base_sync / steps * 1e3,
            "baseline_async_ms_per_step": base_async / steps * 1e3, "rows": rows,
            "load": os.getloadavg()[0]}


def _pair(backend: str, kind: str, theirs: dict, ours: dict, baseline: float, steps: int) -> list[dict]:
    for row in (theirs, ours):
        row.update(backend=backend, mode=kind,
                   checkpoint_ms_per_step=max(row["seconds"] - baseline, 0.0) / steps * 1e3,
                   ms_per_step=row["seconds"] / steps * 1e3, bytes_per_step=row["bytes"] / steps)
    if theirs["messages"] != ours["messages"] or theirs["messages"] != 2 * steps:
        raise StoreError(f"the savers disagree on the final state ({theirs['messages']} vs {ours['messages']} messages)")
    ours["time_ratio"] = (theirs["checkpoint_ms_per_step"] / ours["checkpoint_ms_per_step"]
                          if ours["checkpoint_ms_per_step"] else float("inf"))
    ours["bytes_ratio"] = theirs["bytes"] / ours["bytes"] if ours["bytes"] else float("inf")
    ours["peer"] = theirs["saver"]
    return [theirs, ours]


def run(args: argparse.Namespace) -> int:
    """Run the write workload and print its table."""
    _imports()
    pg_context: Any = contextlib.nullcontext(None)
    if not args.no_postgres:
        from inspector.bench.fleet import _postgres
        pg_context = _postgres(args.pg_url)
    with tempfile.TemporaryDirectory(prefix="lg-write-bench-") as tmp, pg_context as pg:
        result = measure(args.steps, Path(args.keep) if args.keep else Path(tmp), pg)
    sqlite_sync = next(r for r in result["rows"] if r["backend"] == "sqlite" and r["mode"] == "sync"
                       and r["saver"] == "InspectorSaver")
    ok = sqlite_sync["time_ratio"] >= TARGET_TIME and sqlite_sync["bytes_ratio"] >= TARGET_BYTES
    for row in result["rows"]:
        if row["backend"] == "postgresql" and "time_ratio" in row:
            ok = ok and row["time_ratio"] > 1 and row["bytes_ratio"] > 1
    result["ok"] = ok
    if args.json:
        dump(result)
    else:
        print(f"{result['steps']} graph.invoke steps (~1 KB added per step); graph without a checkpointer: "
              f"{result['baseline_sync_ms_per_step']:.2f} ms/step sync, {result['baseline_async_ms_per_step']:.2f} "
              f"ms/step async; load {result['load']:.1f}")
        print_table(["backend", "mode", "saver", "ms/step", "checkpoint ms/step", "above floor", "MB on disk",
                     "KB/step", "time ×", "size ×"],
                    [[r["backend"], r["mode"], r["saver"], r["ms_per_step"], r["checkpoint_ms_per_step"],
                      r.get("above_floor_ms_per_step", ""), r["bytes"] / 1e6, r["bytes_per_step"] / 1e3,
                      f"{r['time_ratio']:.1f}" if "time_ratio" in r else "",
                      f"{r['bytes_ratio']:.0f}" if "bytes_ratio" in r else ""] for r in result["rows"]])
        print("reference floor: a saver keeping LangGraph's objects by reference in memory (no copy, check, "
              "serialization or I/O) — LangGraph's own cost of a checkpointer, which no saver goes below; "
              "above floor = a saver's checkpoint time minus the floor's (same mode, same run)")
        print(f"targets: SQLite >= {TARGET_TIME:.0f}x less checkpoint time and >= {TARGET_BYTES:.0f}x smaller than "
              f"SqliteSaver; PostgreSQL ahead of PostgresSaver on both: {'OK' if ok else 'MISSED'}")
    return 1 if args.check and not ok else 0
