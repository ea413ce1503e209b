"""Graphs whose data lives in ``__``-named channels: LangGraph's functional API (an
entrypoint's return value in ``__end__``, what it saved in ``__previous__``, its ``@task`` calls
as PUSH tasks) and a ``StateGraph`` whose state is not a mapping (``__root__``). Written by the
real ``langgraph`` package through ``SqliteSaver`` and through ``InspectorSaver``; every
checkpoint's state is compared with the channel values LangGraph's own saver API returns."""

from __future__ import annotations

import operator
import sqlite3
from pathlib import Path
from typing import Annotated, Any

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.func import entrypoint, task
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from inspector.record.langgraph import InspectorSaver
from inspector.store import open_store
from inspector.store.langgraph.pregel import DATA_CHANNELS, is_control_channel, node_of, task_label

from .lg_graphs import config


def test_data_channels_are_not_control_channels() -> None:
    for channel in ("__root__", "__end__", "__previous__"):
        assert not is_control_channel(channel)
    for channel in ("__start__", "__interrupt__", "__pregel_tasks", "__return__", "branch:to:x"):
        assert is_control_channel(channel)


def test_functional_calls_are_named_by_the_task_that_made_them() -> None:
    assert node_of("~__pregel_pull, workflow") == task_label("~__pregel_pull, workflow") == "workflow"
    call = "~__pregel_push, ~__pregel_pull, workflow, 0000000002, 0000000001"
    assert node_of(call) == "workflow"
    assert task_label(call) == "workflow call 3"
    nested = ("~__pregel_push, ~__pregel_push, ~__pregel_pull, workflow, 0000000000, 0000000001, "
              "0000000004, 0000000001")
    assert node_of(nested) == "workflow"
    assert task_label(nested).startswith("workflow call")
    # a Send packet keeps its index (named from the checkpoint's packets elsewhere)
    assert node_of("~__pregel_push, 0000000001") == "push:0000000001"
    assert task_label("~__pregel_push, 0000000001") == "push:0000000001"


def _functional(saver: Any) -> tuple[Any, list[dict]]:
    @task
    def double(x: int) -> int:
        return x * 2

    @task
    def ask(total: int) -> int:
        return interrupt({"question": f"add to {total}?"}) + total

    @entrypoint(checkpointer=saver)
    def workflow(n: int, *, previous: Any = None) -> entrypoint.final[int, int]:
        total = sum(f.result() for f in [double(i) for i in range(n)]) + (previous or 0)
        return entrypoint.final(value=ask(total).result(), save=total)

    workflow.invoke(3, config("fn"))
    workflow.invoke(Command(resume=5), config("fn"))
    workflow.invoke(2, config("fn"))
    workflow.invoke(Command(resume=1), config("fn"))
    return workflow, [config("fn")]


def _root_graph(saver: Any) -> Any:
    graph = StateGraph(Annotated[list, operator.add])
    graph.add_node("grow", lambda items: [f"item {len(items)}"])
    graph.add_edge(START, "grow")
    graph.add_edge("grow", END)
    return graph.compile(checkpointer=saver)


def _root_state(saver: Any) -> tuple[Any, list[dict]]:
    compiled = _root_graph(saver)
    compiled.invoke(["seed"], config("root"))
    compiled.invoke(["more"], config("root"))
    return compiled, [config("root")]


def _expected(saver: Any, graph: Any, configs: list[dict], root: bool) -> dict[str, tuple[dict, list, list]]:
    """LangGraph checkpoint id → (the data channels as LangGraph gives them: the channel
    values its saver API returns, and a stored root state as ``get_state`` shows it; the
    nodes ``get_state`` says run next; the ids of its interrupts)."""
    out = {}
    for c in configs:
        for t in list(saver.list(c)):
            values = t.checkpoint["channel_values"]
            found = {k: v for k, v in values.items() if k in DATA_CHANNELS}
            snapshot = graph.get_state(t.config)
            if root and "__root__" in values:
                found["__root__"] = snapshot.values
            out[t.config["configurable"]["checkpoint_id"]] = (found, list(snapshot.next),
                                                               sorted(i.id for i in snapshot.interrupts))
    return out


@pytest.mark.parametrize("writer", ["SqliteSaver", "InspectorSaver"])
@pytest.mark.parametrize("scenario", [_functional, _root_state], ids=["functional", "root-state"])
def test_data_channels_show_as_state_at_every_checkpoint(tmp_path: Path, writer: str, scenario: Any) -> None:
    db = tmp_path / "graph.db"
    if writer == "SqliteSaver":
        conn = sqlite3.connect(str(db), check_same_thread=False)
        saver = SqliteSaver(conn)
        graph, configs = scenario(saver)
        expected = _expected(saver, graph, configs, scenario is _root_state)
        conn.close()
    else:
        with InspectorSaver.from_conn_string(str(db)) as saver:
            graph, configs = scenario(saver)
            expected = _expected(saver, graph, configs, scenario is _root_state)
    assert any(found for found, _, _ in expected.values())
    with open_store(str(db), readonly=True) as store:
        (run,) = store.list_runs()
        infos = store.list_checkpoints(run.id)
        assert len(infos) == len(expected)
        for info in infos:
            snap = store.load(info.id)
            # (an empty reducer channel the checkpoint does not store shows as LangGraph shows
            # it, its empty value, where the adapter infers the graph's reducers: not compared)
            shown = {k: v for k, v in snap.state.items() if k not in snap.meta.get("empty_reducers", ())}
            interrupts = sorted(i["id"] for i in snap.meta["interrupts"])
            assert (shown, snap.meta["next"], interrupts) == expected[snap.meta["checkpoint_id"]], info.seq
            assert all(t["node"] and not t["node"].startswith("push:") for t in snap.meta["tasks"])
        names = {info.name for info in infos if info.kind == "loop"}
        # a step is named by the node that ran (``__start__`` maps a StateGraph's input)
        assert names == ({"workflow"} if scenario is _functional else {"__start__", "grow"})
        if scenario is _functional:
            first = store.load(infos[0].id)       # the input checkpoint the first call ran from
            labels = [t["node"] for t in first.meta["tasks"]]      # calls in the order they were made
            assert labels == ["workflow", "workflow call 1", "workflow call 2", "workflow call 3",
                              "workflow call 4"]
            assert any(i["question"] == "add to 6?" for i in first.meta["interrupts"])


def test_raw_fork_of_what_an_entrypoint_saved_drives_its_next_call(tmp_path: Path) -> None:
    from inspector.store.langgraph.fork import raw_fork

    db = tmp_path / "fn.db"
    conn = sqlite3.connect(str(db), check_same_thread=False)

    @entrypoint(checkpointer=SqliteSaver(conn))
    def tally(n: int, *, previous: Any = None) -> entrypoint.final[int, int]:
        total = n + (previous or 0)
        return entrypoint.final(value=total, save=total)

    assert tally.invoke(2, config("t")) == 2
    with open_store(str(db), readonly=False) as store:
        head = store.list_checkpoints("t")[-1]
        assert store.load(head.id).state == {"__end__": 2, "__previous__": 2}
        raw_fork(store, head.id, {"__previous__": 100}, reason="start the tally at 100", quiet_seconds=0)
    assert tally.get_state(config("t")).values == 2          # the fork is the head; its return value kept
    assert tally.invoke(1, config("t")) == 101
    conn.close()


TALLY = '''
from typing import Any
from langgraph.func import entrypoint


@entrypoint()
def tally(n: int, *, previous: Any = None) -> entrypoint.final[int, int]:
    total = n + (previous or 0)
    return entrypoint.final(value=total, save=total)
'''


def test_fork_through_an_entrypoint_edits_what_it_saved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib
    import sys

    from inspector.resume.langgraph import fork_langgraph
    from inspector.store.langgraph.settings import GraphSettings, save_settings

    monkeypatch.setenv("CHECKPOINT_INSPECTOR_CONFIG_DIR", str(tmp_path / "config"))   # not the user's settings
    project = tmp_path / "project"
    project.mkdir()
    (project / "fn_entry.py").write_text(TALLY)
    db = tmp_path / "fn.db"
    sys.path.insert(0, str(project))
    try:
        tally = importlib.import_module("fn_entry").tally
    finally:
        sys.path.remove(str(project))
    conn = sqlite3.connect(str(db), check_same_thread=False)
    tally.checkpointer = SqliteSaver(conn)
    assert tally.invoke(2, config("t")) == 2
    with open_store(str(db), readonly=False) as store:
        save_settings(store.info.url, GraphSettings(graph="fn_entry:tally", cwd=str(project)))
        head = store.list_checkpoints("t")[-1]
        result = fork_langgraph(store, head.id, edits={"__previous__": 100}, reason="start at 100", quiet_seconds=0)
        assert result.mode == "graph"
        # the entrypoint's writers got one entrypoint.final: the return value kept, the saved value set
        assert store.load(result.checkpoint_id).state == {"__end__": 2, "__previous__": 100}
    assert tally.invoke(1, config("t")) == 101
    conn.close()
