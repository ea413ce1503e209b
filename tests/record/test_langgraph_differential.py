"""Differential: every graph of ``tests/lgcorpus`` run once with LangGraph's ``SqliteSaver`` and
once with ``InspectorSaver`` gives the same ``get_state_history`` (values, next, tasks with
their errors, interrupts and subgraph states, metadata source/step, the fork structure) at
every checkpoint — which covers what the scenarios do: ``update_state`` forks, replays and
``Command(resume=…)``. The async durability variants compare ``AsyncSqliteSaver`` with
``AsyncInspectorSaver``.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from inspector.record.langgraph import AsyncInspectorSaver, InspectorSaver
from tests.lgcorpus import SCENARIOS, cancelled, open_graph, sqlite_saver


UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def _norm(value: Any, ids: dict[str, int], drop_ids: bool = False) -> Any:
    """A value with checkpoint ids replaced by their position (ids are time-based) and random
    uuid4 message ids (``add_messages`` makes them) by a placeholder. With ``drop_ids``
    message ids go altogether: a task's written message gets its id from ``add_messages``
    *in place* while LangGraph's background thread may be serializing the write, so whether
    a stored write has it is a race in LangGraph itself (SqliteSaver shows both)."""
    if type(value).__module__ == "numpy" and hasattr(value, "tolist"):
        return {"__numpy__": str(getattr(value, "dtype", "")), "shape": list(getattr(value, "shape", ())),
                "data": value.tolist()}
    if isinstance(value, BaseModel):
        value = {"__type__": type(value).__name__, **value.model_dump()}
    if isinstance(value, str):
        if value in ids:
            return f"<checkpoint {ids[value]}>"
        return "<uuid>" if UUID.match(value) else value
    if isinstance(value, dict):
        return {k: _norm(v, ids, drop_ids) for k, v in value.items()
                if not (drop_ids and k == "id" and "__type__" in value)}
    if isinstance(value, (list, tuple)):
        return [_norm(v, ids, drop_ids) for v in value]
    return value


def _interrupt(item: Any) -> Any:
    return {"value": _norm(item.value, {})}


def _snapshot(snap: Any, ids: dict[str, int]) -> dict:
    parent = snap.parent_config["configurable"]["checkpoint_id"] if snap.parent_config else None
    meta = {k: v for k, v in snap.metadata.items() if k not in ("run_id", "thread_id")}
    # A step where a task failed is racy in LangGraph itself: a sibling task that finishes
    # after the failure has shut the step's executor down cannot submit its writes
    # ("cannot schedule new futures after shutdown"), so whether its result is stored varies
    # from run to run with any saver. There, only the failed task's result is compared.
    # A sibling cancelled by the failure (CancelledError) or not (no error) varies the same way.
    racy = any(t.error and not cancelled(t.error) for t in snap.tasks)
    return {
        "id": ids.get(snap.config["configurable"]["checkpoint_id"]),
        "parent": ids.get(parent) if parent else None,
        "values": _norm(snap.values, ids),
        "next": list(snap.next),
        "metadata": _norm({k: v for k, v in meta.items() if k != "parents"}, ids),
        "tasks": [_task(t, ids, racy and (not t.error or cancelled(t.error))) for t in snap.tasks],
        "interrupts": [_interrupt(i) for i in snap.interrupts],
    }



def _task(t: Any, ids: dict[str, int], racy_sibling: bool) -> dict:
    """One task of a snapshot; a sibling of a failed task has its error and result as "<racy>"."""
    return {"name": t.name, "path": list(t.path),
            "error": "<racy>" if racy_sibling else repr(t.error) if t.error else None,
            "interrupts": [_interrupt(i) for i in t.interrupts],
            "result": "<racy>" if racy_sibling else _norm(t.result, ids, drop_ids=True),
            "state": _subgraph(t.state)}


def _subgraph(state: Any) -> Any:
    if state is None or isinstance(state, dict):   # a config (not expanded) or nothing
        return None if state is None else "config"
    return {"values": _norm(state.values, {}), "next": list(state.next),
            "tasks": [{"name": t.name, "interrupts": [_interrupt(i) for i in t.interrupts]} for t in state.tasks]}


def _history(graph: Any, config: dict) -> list[dict]:
    snaps = list(graph.get_state_history(config))
    ids = {s.config["configurable"]["checkpoint_id"]: n for n, s in enumerate(reversed(snaps))}
    out = []
    for snap in snaps:
        # get_state with subgraphs expands the subgraph state of each pending task
        full = graph.get_state(snap.config, subgraphs=True)
        out.append(_snapshot(full, ids))
    return out


def _threads(scenario: Any, saver: Any, configs: list[dict]) -> dict:
    graph = open_graph(scenario, saver)
    return {c["configurable"]["thread_id"]: _history(graph, c) for c in configs}


def _difference(a: Any, b: Any, path: str = "") -> str | None:
    """Where two normalised histories first differ (for a readable failure)."""
    if type(a) is not type(b):
        return f"{path}: {a!r} != {b!r}"
    if isinstance(a, dict):
        for key in sorted(set(a) | set(b), key=str):
            if key not in a or key not in b:
                return f"{path}.{key}: only on one side"
            found = _difference(a[key], b[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} items != {len(b)} items"
        for n, (x, y) in enumerate(zip(a, b)):
            found = _difference(x, y, f"{path}[{n}]")
            if found:
                return found
        return None
    return None if a == b else f"{path}: {a!r} != {b!r}"


def _run_sync(scenario: Any, make: Any) -> dict:
    with make() as saver:
        configs = scenario.run(saver)
        return _threads(scenario, saver, configs)


@pytest.fixture(autouse=True)
def _trusted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LANGGRAPH_STRICT_MSGPACK", raising=False)


def _runs(path: Path) -> dict[str, tuple]:
    """What the inspector's runs list shows of each thread (its root lane in our store): status
    and how many tasks and checks. A head still to run reads "interrupted" in both once the
    graph has stopped. (How many are done is each run's own: when a task fails, LangGraph may
    cancel siblings still running, or they finish first; ``_rows_off_board`` holds each store
    to its own tasks.)"""
    from inspector.store import open_store
    with open_store(path) as store:
        return {r.name: ("interrupted" if r.status == "running" else r.status, r.tasks_total, r.checks_total)
                for r in store.list_runs() if " › " not in r.name}


def _rows_off_board(path: Path) -> list[str]:
    """Checkpoints whose timeline row's checks are not what their Tasks tab counts (LangGraph's
    view: the tasks of the step after each, its next nodes, its task channel)."""
    from inspector import taskstate
    from inspector.store import open_store
    off = []
    with open_store(path) as store:
        for run in store.list_runs():
            for info in store.list_checkpoints(run.id):
                tasks = store.load(info.id).tasks
                board = taskstate.score(tasks) if tasks else taskstate.Score()
                if (info.checks_passed, info.checks_total) != (board.checks_passed, board.checks_total):
                    off.append(f"{run.name}:{info.seq} ({info.kind} {info.name}): row "
                               f"{info.checks_passed}/{info.checks_total}, tab {board.checks_passed}/{board.checks_total}")
                if info.seq == run.head_seq and (run.checks_passed, run.checks_total) != (
                        board.checks_passed, board.checks_total):
                    off.append(f"{run.name}: the run {run.checks_passed}/{run.checks_total}, its head's tab "
                               f"{board.checks_passed}/{board.checks_total}")
    return off


@pytest.mark.parametrize("scenario", [s for s in SCENARIOS if s.arun is None], ids=lambda s: s.name)
def test_same_history_as_sqlite_saver(scenario: Any, tmp_path: Path) -> None:
    expected = _run_sync(scenario, lambda: sqlite_saver(tmp_path / "lg.db"))
    got = _run_sync(scenario, lambda: InspectorSaver.from_conn_string(str(tmp_path / "native.db")))
    assert expected and sum(len(h) for h in expected.values()) > 1
    assert got == expected, _difference(got, expected)
    # and the inspector lists each thread alike from either store: status, tasks and checks
    assert _runs(tmp_path / "native.db") == _runs(tmp_path / "lg.db")
    # and each checkpoint's checks in the timeline are its Tasks tab's, in either store
    assert _rows_off_board(tmp_path / "native.db") == [] and _rows_off_board(tmp_path / "lg.db") == []


@pytest.mark.parametrize("scenario", [s for s in SCENARIOS if s.arun is None], ids=lambda s: s.name)
def test_same_history_with_every_idle_lane_cooled(scenario: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A saver keeps no lane warm (``WARM_LANES`` 0): every lane but one between a get_tuple and
    its put is cooled at every call, a running graph's too (as a server's saver cools the threads
    it met longest ago), and each put encodes from nothing but the last forms of LangGraph's own
    channels. LangGraph's view, the runs list and the checks are as before."""
    from inspector.record import langgraph as saver_module
    monkeypatch.setattr(saver_module, "WARM_LANES", 0)
    expected = _run_sync(scenario, lambda: sqlite_saver(tmp_path / "lg.db"))
    got = _run_sync(scenario, lambda: InspectorSaver.from_conn_string(str(tmp_path / "native.db")))
    assert got == expected, _difference(got, expected)
    assert _runs(tmp_path / "native.db") == _runs(tmp_path / "lg.db")
    assert _rows_off_board(tmp_path / "native.db") == []


@pytest.mark.parametrize("scenario", [s for s in SCENARIOS if s.arun is not None], ids=lambda s: s.name)
def test_same_history_async(scenario: Any, tmp_path: Path) -> None:
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    async def run(make: Any) -> dict:
        async with make() as saver:
            configs = await scenario.arun(saver)
            graph = open_graph(scenario, saver)
            out = {}
            for c in configs:
                snaps = [s async for s in graph.aget_state_history(c)]
                ids = {s.config["configurable"]["checkpoint_id"]: n for n, s in enumerate(reversed(snaps))}
                out[c["configurable"]["thread_id"]] = [
                    _snapshot(await graph.aget_state(s.config, subgraphs=True), ids) for s in snaps]
            return out

    expected = asyncio.run(run(lambda: AsyncSqliteSaver.from_conn_string(str(tmp_path / "lg.db"))))
    got = asyncio.run(run(lambda: AsyncInspectorSaver.from_conn_string(str(tmp_path / "native.db"))))
    assert expected and got == expected, _difference(got, expected)
    assert _rows_off_board(tmp_path / "native.db") == [] and _rows_off_board(tmp_path / "lg.db") == []
