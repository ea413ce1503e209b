"""A corpus of real LangGraph graphs, run by the real ``langgraph`` / ``langchain`` packages.

``SCENARIOS`` lists every kind of graph the LangGraph adapter must read exactly as LangGraph
does. Each ``Scenario`` builds its graph with ``graph.compile(checkpointer=checkpointer)`` (or
the prebuilt constructors' ``checkpointer=``), drives it (invoke, ``interrupt()`` +
``Command(resume=…)``, ``update_state`` forks, replays), and returns the thread configs it
used. Thread ids start with the scenario's name, so every scenario can share one database.

* ``scenario.run(checkpointer)`` — with a sync saver (``SqliteSaver``, ``PostgresSaver``).
* ``scenario.arun(checkpointer)`` — an async variant (``AsyncSqliteSaver``,
  ``AsyncPostgresSaver``), where the scenario has one (``durability`` modes).
* ``scenario.graph`` — ``module:attr`` of a factory returning the compiled graph without a
  checkpointer: what a user gives the inspector as ``--graph`` (the tests' working directory
  is the repository root, so ``tests.lgcorpus…`` imports there).
* ``scenario.trusted`` — the graph's state holds the scenario's own classes (Enum, dataclass,
  pydantic), which LangGraph only revives with ``LANGGRAPH_STRICT_MSGPACK`` off.

The fake chat models reply by the conversation alone (``fakes.ScriptedToolModel``), so a
replay in another process gives the same messages with the same ids. No network is used.

Helpers: ``sqlite_saver(path)`` / ``postgres_saver(url)`` (context managers) and
``run_all(checkpointer)`` / ``arun_all(checkpointer)``.
"""

from __future__ import annotations

import contextlib
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from collections.abc import Awaitable, Callable, Iterator

from . import channels, durability, forks, mapreduce, react, subgraph, typed


@dataclass(frozen=True)
class Scenario:
    """One graph of the corpus and how it is driven."""

    name: str
    description: str
    graph: str
    run: Callable[[Any], list[dict]]
    arun: Callable[[Any], Awaitable[list[dict]]] | None = None
    trusted: bool = False


SCENARIOS: list[Scenario] = [
    Scenario("react", "create_react_agent with a ToolNode (two tool calls as Send tasks), "
             "then a replay from the tool step", "tests.lgcorpus.react:build_react", react.run_react),
    Scenario("agent", "langchain.agents.create_agent with TodoListMiddleware and a tool",
             "tests.lgcorpus.react:build_agent", react.run_agent),
    Scenario("subgraph", "interrupt() inside a subgraph; one thread answered with "
             "Command(resume=…), one left waiting", "tests.lgcorpus.subgraph:build", subgraph.run),
    Scenario("mapreduce", "Send map-reduce with a multi-source join; one thread has a failing task",
             "tests.lgcorpus.mapreduce:build", mapreduce.run),
    Scenario("typed", "a pydantic state with Enum, dataclass, datetime, date, timedelta, UUID, "
             "Decimal, bytes, numpy arrays and image content blocks; an interrupt",
             "tests.lgcorpus.typed:build", typed.run, trusted=True),
    Scenario("durability", "durability sync / async / exit (async variant for AsyncSqliteSaver)",
             "tests.lgcorpus.durability:build", durability.run, durability.arun),
    Scenario("forks", "update_state forks (routing change, __copy__) and replays made by LangGraph",
             "tests.lgcorpus.forks:build", forks.run),
    Scenario("channels", "a reducer written once, a custom reducer, an ephemeral value and a topic; "
             "one thread fails with a finished sibling's write pending", "tests.lgcorpus.channels:build",
             channels.run),
]

BY_NAME = {s.name: s for s in SCENARIOS}


def run_all(checkpointer: Any) -> dict[str, list[dict]]:
    """Run every scenario on a sync saver; thread configs by scenario name."""
    return {s.name: s.run(checkpointer) for s in SCENARIOS}


async def arun_all(checkpointer: Any) -> dict[str, list[dict]]:
    """Run the scenarios that have an async variant on an async saver."""
    return {s.name: await s.arun(checkpointer) for s in SCENARIOS if s.arun is not None}


@contextlib.contextmanager
def sqlite_saver(path: str | Path) -> Iterator[Any]:
    """A ``SqliteSaver`` on a file (closed afterwards)."""
    from langgraph.checkpoint.sqlite import SqliteSaver
    conn = sqlite3.connect(str(path), check_same_thread=False)
    try:
        yield SqliteSaver(conn)
    finally:
        conn.close()


def copy_sqlite(src: str | Path, dst: str | Path) -> Path:
    """A consistent copy of a SQLite database (the backup API, so a -wal is included); ``dst``."""
    a, b = sqlite3.connect(str(src)), sqlite3.connect(str(dst))
    try:
        a.backup(b)
    finally:
        b.close()
        a.close()
    return Path(dst)


def libpq_url(url: str) -> str:
    """A SQLAlchemy ``postgresql+psycopg://`` URL as the libpq URL LangGraph takes."""
    return url.replace("postgresql+psycopg://", "postgresql://", 1)


@contextlib.contextmanager
def postgres_saver(url: str) -> Iterator[Any]:
    """A ``PostgresSaver`` with its tables set up."""
    from langgraph.checkpoint.postgres import PostgresSaver
    with PostgresSaver.from_conn_string(libpq_url(url)) as saver:
        saver.setup()
        yield saver


def thread_config(thread_id: str, checkpoint_id: str | None = None, ns: str = "") -> dict:
    """A run config for a thread (and optionally one checkpoint)."""
    conf: dict[str, Any] = {"thread_id": thread_id, "checkpoint_ns": ns}
    if checkpoint_id is not None:
        conf["checkpoint_id"] = checkpoint_id
    return {"configurable": conf}


def build_sqlite(path: str | Path) -> dict[str, list[dict]]:
    """Write the whole corpus into a new SqliteSaver file; the sync durability threads are
    written by ``AsyncSqliteSaver`` (the async variant) into the same file."""
    import asyncio
    with sqlite_saver(path) as saver:
        threads = {s.name: s.run(saver) for s in SCENARIOS if s.arun is None}

    async def _async() -> dict[str, list[dict]]:
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
        async with AsyncSqliteSaver.from_conn_string(str(path)) as asaver:
            return await arun_all(asaver)

    threads.update(asyncio.run(_async()))
    return {s.name: threads[s.name] for s in SCENARIOS}


def build_postgres(url: str) -> dict[str, list[dict]]:
    """Write the whole corpus into a PostgresSaver database (``url``: SQLAlchemy or libpq);
    the async variants run on ``AsyncPostgresSaver``."""
    import asyncio
    with postgres_saver(url) as saver:
        threads = {s.name: s.run(saver) for s in SCENARIOS if s.arun is None}

    async def _async() -> dict[str, list[dict]]:
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
        async with AsyncPostgresSaver.from_conn_string(libpq_url(url)) as asaver:
            return await arun_all(asaver)

    threads.update(asyncio.run(_async()))
    return {s.name: threads[s.name] for s in SCENARIOS}


def cancelled(error: Any) -> bool:
    """A task error that says the task was cancelled (LangGraph keeps errors as their repr): when
    a task fails, LangGraph may stop siblings still running, and they write their CancelledError
    too (its own race; mapreduce-2's audit or another work task)."""
    return type(error).__name__ == "CancelledError" or str(error).startswith("CancelledError")


def open_graph(scenario: Scenario, checkpointer: Any) -> Any:
    """The scenario's compiled graph bound to ``checkpointer`` (for get_state_history etc.)."""
    import importlib
    module, _, attr = scenario.graph.partition(":")
    return getattr(importlib.import_module(module), attr)(checkpointer)
