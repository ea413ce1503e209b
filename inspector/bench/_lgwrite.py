"""``bench langgraph --workload write``: LangGraph's savers against ``InspectorSaver`` on a real graph.

A real ``StateGraph`` (a ``messages`` channel with ``add_messages``; each ``graph.invoke`` adds a
short question and a ~1 KB answer) runs ``--steps`` invokes on one thread, once per saver. The
savers compared and the same graph without a checkpointer each run in a fresh process of their
own and take turns, ``BLOCKS`` blocks of steps each in an order that rotates, so that a change in
the machine's speed during the run (other tenants of a shared VM, the disk's flush latency)
falls on each of them alike, and none runs beside another's heap:

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
import functools
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
BLOCKS = 10          # turns each saver of a comparison takes (steps / BLOCKS invokes each)


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


class _Runner:
    """One graph going through the workload a block of steps at a time (its time summed): the
    history is carried by the checkpointer, or passed in as input without one."""

    def __init__(self, checkpointer: Any) -> None:
        self.checkpointer = checkpointer
        self.graph = build_graph(checkpointer)
        self.config = {"configurable": {"thread_id": THREAD}}
        self.history: list = []
        self.step = 0
        self.seconds = 0.0

    def run(self, steps: int) -> None:
        t0 = time.perf_counter()
        for step in range(self.step, self.step + steps):
            if self.checkpointer is None:
                self.history = self.graph.invoke({"messages": self.history + [_question(step)]})["messages"]
            else:
                self.graph.invoke({"messages": [_question(step)]}, self.config)
        self.seconds += time.perf_counter() - t0
        self.step += steps

    async def arun(self, steps: int) -> None:
        t0 = time.perf_counter()
        for step in range(self.step, self.step + steps):
            if self.checkpointer is None:
                self.history = (await self.graph.ainvoke({"messages": self.history + [_question(step)]}))["messages"]
            else:
                await self.graph.ainvoke({"messages": [_question(step)]}, self.config)
        self.seconds += time.perf_counter() - t0
        self.step += steps


def _turns(steps: int, names: list[str]) -> Iterator[tuple[str, int]]:
    """(who, how many steps) in the order the participants take their turns: ``BLOCKS`` rounds
    (fewer for a short run), each participant once a round, the order rotating by one each round."""
    rounds = max(1, min(BLOCKS, steps))
    sizes = [steps // rounds + (1 if r < steps % rounds else 0) for r in range(rounds)]
    for r, size in enumerate(sizes):
        shift = r % len(names)
        for name in names[shift:] + names[:shift]:
            yield name, size


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


# -- taking turns, each participant in a process of its own ---------------------------------
# A participant is (saver kind, target): "" for the graph without a checkpointer, "floor",
# "sqlite"/"postgres" for LangGraph's savers, "inspector" for ours (a SQLite path or a URL).
Spec = tuple[str, str]


def _open(spec: Spec, mode: str) -> Any:
    """The context manager that opens a participant's saver (None: no checkpointer)."""
    kind, target = spec
    if not kind:
        return contextlib.nullcontext(None)
    from inspector.record.langgraph import AsyncInspectorSaver, InspectorSaver
    openers: dict[tuple[str, str], Callable[[], Any]] = {
        ("floor", "sync"): _floor_saver, ("floor", "async"): _async_floor_saver,
        ("sqlite", "sync"): lambda: _sqlite_saver(Path(target)),
        ("sqlite", "async"): lambda: _async_sqlite_saver(Path(target)),
        ("postgres", "sync"): lambda: _postgres_saver(target),
        ("postgres", "async"): lambda: _async_postgres_saver(target),
        ("inspector", "sync"): lambda: InspectorSaver.from_conn_string(target),
        ("inspector", "async"): lambda: AsyncInspectorSaver.from_conn_string(target)}
    return openers[(kind, mode)]()


def _participant(conn: Any, spec: Spec, mode: str) -> None:
    """A participant's process: opens its saver, then runs the blocks of steps it is sent
    (("run", n) → its seconds so far) until ("end",) (→ the messages of its final state)."""
    try:
        if mode == "sync":
            with _open(spec, mode) as saver:
                runner = _Runner(saver)
                conn.send(("ready",))
                while (msg := conn.recv())[0] == "run":
                    runner.run(msg[1])
                    conn.send(("ran", runner.seconds))
                conn.send(("end", _final_length(saver) if saver is not None else 2 * runner.step))
            return

        async def go() -> None:
            async with _open(spec, mode) as saver:
                runner = _Runner(saver)
                conn.send(("ready",))
                while (msg := conn.recv())[0] == "run":
                    await runner.arun(msg[1])
                    conn.send(("ran", runner.seconds))
                length = 2 * runner.step
                if saver is not None:
                    state = await runner.graph.aget_state({"configurable": {"thread_id": THREAD}})
                    length = len(state.values["messages"])
                conn.send(("end", length))
        asyncio.run(go())
    except BaseException as err:     # reported to the parent, which stops the run
        conn.send(("error", f"{type(err).__name__}: {err}"))


def _take_turns(participants: dict[str, Spec], mode: str, steps: int) -> dict[str, tuple[float, int]]:
    """Each participant (name → spec) in a fresh process of its own, the processes taking
    turns (``_turns``): name → (seconds of its steps, messages of its final state). Separate
    processes, so that none runs with another's heap (the collector passes over all of it)."""
    import multiprocessing
    ctx = multiprocessing.get_context("spawn")
    procs: dict[str, tuple[Any, Any]] = {}

    def ask(name: str, msg: tuple) -> tuple:
        conn = procs[name][0]
        if msg:
            conn.send(msg)
        got = conn.recv() if procs[name][1].is_alive() or conn.poll() else ("error", "it exited")
        if got[0] == "error":
            raise StoreError(f"bench langgraph: {name or 'the graph without a checkpointer'} failed ({got[1]}).")
        return got

    try:
        for name, spec in participants.items():
            here, there = ctx.Pipe()
            proc = ctx.Process(target=_participant, args=(there, spec, mode), daemon=True)
            proc.start()
            procs[name] = (here, proc)
        for name in procs:
            ask(name, ())
        seconds: dict[str, float] = {}
        for name, size in _turns(steps, list(procs)):
            seconds[name] = ask(name, ("run", size))[1]
        return {name: (seconds[name], ask(name, ("end",))[1]) for name in procs}
    finally:
        for _, proc in procs.values():
            proc.join(timeout=60)
            if proc.is_alive():
                proc.kill()


def _measure(savers: dict[str, tuple[Spec, Callable[[], int]]], mode: str, steps: int) -> tuple[float, list[dict]]:
    """The savers (name → (spec, bytes on disk)) and the graph without a checkpointer taking
    turns: the bare graph's seconds and a row per saver."""
    found = _take_turns({"": ("", ""), **{name: spec for name, (spec, _) in savers.items()}}, mode, steps)
    return found[""][0], [{"saver": name, "seconds": found[name][0], "bytes": size(), "messages": found[name][1]}
                          for name, (_, size) in savers.items()]


def measure(steps: int, folder: Path, pg: _Pg | None) -> dict:
    """The reference floors, then every saver pair on SQLite (and PostgreSQL when ``pg`` is
    given), each taking turns with the graph without a checkpointer."""
    rows: list[dict] = []
    bases: dict[str, float] = {}

    def add(backend: str, kind: str, bare: float, found: list[dict]) -> None:
        if backend == "memory":
            floor, = found
            floor.update(backend="memory", mode=kind, checkpoint_ms_per_step=max(floor["seconds"] - bare, 0.0) / steps * 1e3,
                         ms_per_step=floor["seconds"] / steps * 1e3, bytes_per_step=0.0, bytes=0)
            rows.append(floor)
            return
        bases.setdefault(kind, bare)
        theirs, ours = found
        rows.extend(_pair(backend, kind, theirs, ours, bare, steps))

    for kind in ("sync", "async"):
        add("memory", kind, *_measure({"reference floor": (("floor", ""), lambda: 0)}, kind, steps))
    for kind in ("sync", "async"):
        theirs_path, ours_path = folder / f"langgraph-{kind}.db", folder / f"inspector-{kind}.db"
        add("sqlite", kind, *_measure({
            ("SqliteSaver" if kind == "sync" else "AsyncSqliteSaver"):
                (("sqlite", str(theirs_path)), functools.partial(_file_bytes, theirs_path)),
            ("InspectorSaver" if kind == "sync" else "AsyncInspectorSaver"):
                (("inspector", str(ours_path)), functools.partial(_file_bytes, ours_path))}, kind, steps))
    if pg is not None:
        for kind in ("sync", "async"):
            theirs_url, ours_url = pg.target(), pg.target()
            add("postgresql", kind, *_measure({
                ("PostgresSaver" if kind == "sync" else "AsyncPostgresSaver"):
                    (("postgres", theirs_url), functools.partial(_pg_bytes, theirs_url)),
                ("InspectorSaver" if kind == "sync" else "AsyncInspectorSaver"):
                    (("inspector", ours_url), functools.partial(_pg_bytes, ours_url))}, kind, steps))
    floors = {r["mode"]: r["checkpoint_ms_per_step"] for r in rows if r["backend"] == "memory"}
    for row in rows:
        if row["backend"] != "memory":
            row["above_floor_ms_per_step"] = max(row["checkpoint_ms_per_step"] - floors[row["mode"]], 0.0)
    return {"steps": steps, "blocks": min(BLOCKS, steps), "baseline_sync_ms_per_step": bases["sync"] / steps * 1e3,
            "baseline_async_ms_per_step": bases["async"] / steps * 1e3, "rows": rows,
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
        print(f"{result['steps']} graph.invoke steps (~1 KB added per step), the savers compared taking turns "
              f"{result['blocks']} times; graph without a checkpointer (taking its turns too): "
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
