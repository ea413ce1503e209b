"""Forks, resumes, replays and interrupt answers made by the inspector equal LangGraph's own.

For every corpus graph: the inspector acts on one copy of the corpus database (through the
user's graph, in the runner subprocess — ``fork_langgraph``, ``plan_resume``/``start_resume``)
and LangGraph's own API (``update_state``, ``invoke(None, …)``, ``Command(resume=…)``) does the
same on another copy; the thread's head values and ``next`` must then be equal, and the
inspector must read its own result as LangGraph does. Forks use the inspector's default node
(LangGraph's real writer of the checkpoint: ``tools`` for a ToolNode step) and edit typed
values in their display form (they go back as their types). A failed fork or resume leaves
the database's bytes unchanged.

Two ways through: the user's code path (``fork_langgraph``, ``plan_resume``/``start_resume``,
one runner process per action, every head compared after each action) for graphs that between
them cover every operation (fork, resume, replay, answer) on SQLite and PostgreSQL; and the
sweep over every corpus graph on both backends, with all of a graph's operations in ONE runner
process (``run_graph_ops``) and the heads of every touched thread compared afterwards.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import re
import subprocess
from decimal import Decimal
from pathlib import Path
from typing import Any
from collections.abc import Callable, Iterator

import pytest

from inspector.resume.langgraph import fork_langgraph, graph_op, plan_resume, run_graph_ops, start_resume
from inspector.resume.launch import spawn
from inspector.store import open_store
from inspector.errors import StoreError
from inspector.store.langgraph.settings import GraphSettings
from tests.conftest import store_files_digest

from . import BY_NAME, copy_sqlite, open_graph, postgres_saver, sqlite_saver
from .expected import display

REPO = str(Path(__file__).resolve().parents[2])
RANDOM_ID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def _normal(value: Any) -> Any:
    """Display form with the random ids add_messages gives messages without an id blanked."""
    if isinstance(value, dict):
        return {k: "<random id>" if k == "id" and isinstance(v, str) and RANDOM_ID.match(v) else _normal(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_normal(v) for v in value]
    return value


def _head(saver: Any, scenario: str, thread: str) -> tuple[Any, tuple]:
    state = open_graph(BY_NAME[scenario], saver).get_state({"configurable": {"thread_id": thread}})
    return _normal(display(state.values)), tuple(sorted(state.next))


_copy = copy_sqlite


def _pick(saver: Any, scenario: str, thread: str, pred: Callable[[Any], bool]) -> Any:
    graph = open_graph(BY_NAME[scenario], saver)
    found = [s for s in graph.get_state_history({"configurable": {"thread_id": thread}}) if pred(s)]
    assert found, f"no checkpoint to act on in {thread}"
    return found[-1]


def _step(n: int) -> Callable[[Any], bool]:
    return lambda s: s.metadata.get("step") == n and s.metadata.get("source") == "loop"


# scenario → (thread, checkpoint chooser, edits in display form, the same as Python values,
#             the node LangGraph's writer is)
FORKS: dict[str, tuple] = {
    "react": ("react-1", _step(2), {}, {}, "tools"),
    "agent": ("agent-1", _step(3),
              {"todos": [{"content": "Only answer", "status": "in_progress"}]},
              {"todos": [{"content": "Only answer", "status": "in_progress"}]}, "tools"),
    "subgraph": ("subgraph-1", _step(1), {"topic": "changed"}, {"topic": "changed"}, "prepare"),
    "mapreduce": ("mapreduce-1", _step(1), {"items": ["x", "bad"]}, {"items": ["x", "bad"]}, "split"),
    "typed": ("typed-2", _step(1),
              {"priority": {"__type__": "tests.lgcorpus.typed.Priority", "value": "low"},
               "amount": {"__type__": "decimal.Decimal", "value": "99.95"},
               "due": {"__type__": "datetime.datetime", "value": "2027-01-01T00:00:00+00:00"},
               "wait": {"__type__": "datetime.timedelta", "value": "2 days, 0:00:01"}},
              None, "fill"),
    "durability": ("durability-sync", _step(1), {"n": 10}, {"n": 10}, "first"),
    "forks": ("forks-1", lambda s: s.next == ("act",) and s.metadata.get("source") == "loop",
              {"mode": "skip"}, {"mode": "skip"}, "plan"),
    "channels": ("channels-1", _step(1), {"best": 1, "topic": "edited"}, {"best": 1, "topic": "edited"}, "score"),
}
ANSWERS = {"subgraph": ("subgraph-2", "yes, publish"), "typed": ("typed-2", {"ok": False})}
REPLAYS = {"forks": ("forks-1", _step(0)), "react": ("react-1", _step(0))}


def _typed_values() -> dict:
    from .typed import Priority
    return {"priority": Priority.LOW, "amount": Decimal("99.95"),
            "due": dt.datetime(2027, 1, 1, tzinfo=dt.UTC), "wait": dt.timedelta(days=2, seconds=1)}


def _inspector_resume(target: str, ref: str, scenario: Any, **answer: Any) -> int:
    with open_store(target) as store:
        plan = plan_resume(store, ref, graph=scenario.graph, trusted=scenario.trusted or None, cwd=REPO,
                           quiet_seconds=0, **answer)
        launch = start_resume(store, plan)
    return spawn(launch, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).wait(timeout=120)


def _langgraph_resume(graph: Any, config: dict, code: int) -> None:
    """LangGraph's own resume; it fails exactly when the inspector's runner failed (mapreduce:
    the item "bad" raises on both sides)."""
    try:
        graph.invoke(None, config)
    except ValueError:
        assert code == 1
    else:
        assert code == 0


def _check(scenario_name: str, ours_target: str, ours_saver: Any, theirs_saver: Any,
           act_theirs: Callable[[Any], None], thread: str) -> None:
    act_theirs(open_graph(BY_NAME[scenario_name], theirs_saver))
    assert _head(ours_saver, scenario_name, thread) == _head(theirs_saver, scenario_name, thread)
    with open_store(ours_target) as store:                 # and the inspector reads its own result
        store.use_graph_channels(KINDS[scenario_name], None,   # (with the graph set, as for these actions)
                                 COMBINERS[scenario_name])
        snap = store.load(f"{thread}:-1")                  # as LangGraph's get_state() reads the head
        state = open_graph(BY_NAME[scenario_name], ours_saver).get_state({"configurable": {"thread_id": thread}})
        assert state.config["configurable"]["checkpoint_id"] == snap.meta["checkpoint_id"]
        assert (_normal(snap.state), tuple(sorted(snap.meta["next"]))) == \
            (_normal(display(state.values)), tuple(sorted(state.next)))


def run_equivalence(name: str, ours: str, theirs: str, saver_for: Callable[[str], Any]) -> None:
    """Fork + resume, replay and answer (where the scenario has them) on both copies."""
    scenario = BY_NAME[name]
    thread, pick, edits, py_edits, writer = FORKS[name]
    with saver_for(ours) as a, saver_for(theirs) as b:
        source = _pick(a, name, thread, pick)
        cid = source.config["configurable"]["checkpoint_id"]
        with open_store(ours, readonly=False) as store:
            result = fork_langgraph(store, f"{thread}@{cid}", reason="equivalence", edits=edits,
                                    graph=scenario.graph, trusted=scenario.trusted or None, force=True)
        assert result.mode == "graph"
        values = _typed_values() if py_edits is None else py_edits
        _check(name, ours, a, b, lambda g: g.update_state(
            {"configurable": {"thread_id": thread, "checkpoint_ns": "", "checkpoint_id": cid}}, values, as_node=writer), thread)
        code = _inspector_resume(ours, f"{thread}:-1", scenario)
        _check(name, ours, a, b, lambda g: _langgraph_resume(g, {"configurable": {"thread_id": thread}}, code),
               thread)
        if name in REPLAYS:
            rthread, rpick = REPLAYS[name]
            old = _pick(a, name, rthread, rpick).config["configurable"]["checkpoint_id"]
            assert _inspector_resume(ours, f"{rthread}@{old}", scenario) == 0
            _check(name, ours, a, b, lambda g: g.invoke(
                None, {"configurable": {"thread_id": rthread, "checkpoint_ns": "", "checkpoint_id": old}}), rthread)
        if name in ANSWERS:
            athread, answer = ANSWERS[name]
            from langgraph.types import Command
            assert _inspector_resume(ours, f"{athread}:-1", scenario, answer=answer) == 0
            _check(name, ours, a, b, lambda g: g.invoke(Command(resume=answer),
                                                        {"configurable": {"thread_id": athread}}), athread)


def run_equivalence_batched(name: str, ours: str, theirs: str, saver_for: Callable[[str], Any]) -> None:
    """The same operations as ``run_equivalence``, the inspector's all in one runner process;
    then every touched thread's head is compared (values and next) and read back by the inspector."""
    scenario = BY_NAME[name]
    thread, pick, edits, py_edits, writer = FORKS[name]
    with saver_for(ours) as a:
        cid = _pick(a, name, thread, pick).config["configurable"]["checkpoint_id"]
        old = _pick(a, name, REPLAYS[name][0], REPLAYS[name][1]).config["configurable"]["checkpoint_id"] \
            if name in REPLAYS else None
    with open_store(ours, readonly=False) as store:
        ops = [graph_op(store, "fork", f"{thread}@{cid}", values=edits, reason="equivalence"),
               graph_op(store, "resume", thread=thread)]
        if old is not None:
            ops.append(graph_op(store, "resume", f"{REPLAYS[name][0]}@{old}"))
        if name in ANSWERS:
            ops.append(graph_op(store, "answer", thread=ANSWERS[name][0], values=ANSWERS[name][1]))
        results = run_graph_ops(store, ops, settings=GraphSettings(graph=scenario.graph, trusted=scenario.trusted,
                                                                    cwd=REPO))
    assert ops[0].as_node == writer and results[0].error is None, results[0]
    assert any(line.startswith("forked ") for line in results[0].lines)
    with saver_for(theirs) as b:
        graph = open_graph(scenario, b)
        graph.update_state({"configurable": {"thread_id": thread, "checkpoint_ns": "", "checkpoint_id": cid}},
                           _typed_values() if py_edits is None else py_edits, as_node=writer)
        _langgraph_resume(graph, {"configurable": {"thread_id": thread}}, 0 if results[1].error is None else 1)
        touched = {thread}
        if old is not None:
            assert results[2].error is None, results[2]
            graph.invoke(None, {"configurable": {"thread_id": REPLAYS[name][0], "checkpoint_ns": "",
                                                 "checkpoint_id": old}})
            touched.add(REPLAYS[name][0])
        if name in ANSWERS:
            from langgraph.types import Command
            assert results[-1].error is None, results[-1]
            graph.invoke(Command(resume=ANSWERS[name][1]), {"configurable": {"thread_id": ANSWERS[name][0]}})
            touched.add(ANSWERS[name][0])
    with saver_for(ours) as a, saver_for(theirs) as b:
        for each in sorted(touched):
            _check(name, ours, a, b, lambda _g: None, each)


KINDS: dict[str, Any] = {}    # scenario → its graph's channel kinds (filled by config_home)
COMBINERS: dict[str, Any] = {}  # scenario → its graph's reducers, run in its runner (likewise)


@pytest.fixture
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, graph_kinds: Any, graph_combiner: Any) -> Path:
    for name in FORKS:
        KINDS.setdefault(name, graph_kinds(name))
        COMBINERS.setdefault(name, graph_combiner(name))
    folder = tmp_path / "config"
    monkeypatch.setenv("CHECKPOINT_INSPECTOR_CONFIG_DIR", str(folder))
    monkeypatch.chdir(REPO)
    return folder


# the user's code path, one runner per action: forks covers fork, resume and replay, subgraph
# fork, resume and answer (inside a subgraph); durability (fork, resume) on PostgreSQL
USER_PATH_SQLITE = ["forks", "subgraph"]
USER_PATH_POSTGRES = ["durability"]


@pytest.mark.parametrize("name", USER_PATH_SQLITE)
def test_inspector_actions_equal_langgraph_sqlite(corpus_sqlite, tmp_path, config_home, name) -> None:
    ours = _copy(corpus_sqlite, tmp_path / "ours.db")
    theirs = _copy(corpus_sqlite, tmp_path / "theirs.db")
    run_equivalence(name, str(ours), str(theirs), sqlite_saver)


@pytest.mark.parametrize("name", sorted(FORKS))
def test_every_graphs_actions_equal_langgraph_sqlite(corpus_sqlite, tmp_path, config_home, name) -> None:
    ours = _copy(corpus_sqlite, tmp_path / "ours.db")
    theirs = _copy(corpus_sqlite, tmp_path / "theirs.db")
    run_equivalence_batched(name, str(ours), str(theirs), sqlite_saver)


@contextlib.contextmanager
def _pg_copies(corpus_pg: str, pg_server: Any) -> Iterator[tuple[str, str]]:
    import uuid

    import sqlalchemy as sa
    source = sa.engine.make_url(corpus_pg).database
    names = [f"t_{uuid.uuid4().hex[:12]}" for _ in range(2)]
    for db in names:
        pg_server.admin(f'CREATE DATABASE "{db}" TEMPLATE "{source}"')
    try:
        yield pg_server.url_for(names[0]), pg_server.url_for(names[1])
    finally:
        for db in names:
            pg_server.drop_database(db)


@pytest.mark.postgres
@pytest.mark.parametrize("name", USER_PATH_POSTGRES)
def test_inspector_actions_equal_langgraph_postgres(corpus_pg, pg_server, config_home, name) -> None:
    with _pg_copies(corpus_pg, pg_server) as (ours, theirs):
        run_equivalence(name, ours, theirs, postgres_saver)


@pytest.mark.postgres
@pytest.mark.parametrize("name", sorted(FORKS))
def test_every_graphs_actions_equal_langgraph_postgres(corpus_pg, pg_server, config_home, name) -> None:
    with _pg_copies(corpus_pg, pg_server) as (ours, theirs):
        run_equivalence_batched(name, ours, theirs, postgres_saver)


def test_a_batch_keeps_going_after_a_failed_operation(corpus_sqlite, tmp_path, config_home) -> None:
    """One bad operation says why; the others still run; a failed fork in a batch writes nothing."""
    target = _copy(corpus_sqlite, tmp_path / "ours.db")
    with sqlite_saver(target) as saver:
        cid = _pick(saver, "typed", "typed-2", _step(1)).config["configurable"]["checkpoint_id"]
    bogus = {"priority": {"__type__": "tests.lgcorpus.typed.Priority", "value": "urgent"}}
    with open_store(str(target), readonly=False) as store:
        before = store.count_checkpoints("typed-2")
        ops = [graph_op(store, "fork", f"typed-2@{cid}", values=bogus, reason="bad"),
               graph_op(store, "answer", thread="typed-2", values={"ok": True})]
        results = run_graph_ops(store, ops, settings=GraphSettings(graph=BY_NAME["typed"].graph, trusted=True,
                                                                    cwd=REPO))
        assert results[0].error and "urgent" in results[0].error and results[1].error is None
        assert not any(line.startswith("forked ") for line in results[0].lines)
        assert store.count_checkpoints("typed-2") > before
        assert store.get_run("typed-2").status == "completed"


def test_failed_graph_fork_writes_nothing(corpus_sqlite, tmp_path, config_home) -> None:
    """An Enum edited to a value it does not have: update_state is staged, the graph's schema
    refuses it, and the database's bytes are unchanged; LangGraph still reads the thread."""
    target = _copy(corpus_sqlite, tmp_path / "ours.db")
    before = store_files_digest(target)
    with sqlite_saver(target) as saver:
        cid = _pick(saver, "typed", "typed-2", _step(1)).config["configurable"]["checkpoint_id"]
    bogus = {"priority": {"__type__": "tests.lgcorpus.typed.Priority", "value": "urgent"}}
    with open_store(str(target), readonly=False) as store:
        with pytest.raises(StoreError, match="fork failed"):
            fork_langgraph(store, f"typed-2@{cid}", reason="bad", edits=bogus, graph=BY_NAME["typed"].graph,
                           trusted=True, force=True)
        with pytest.raises(StoreError, match="fork failed"):   # a value update_state itself refuses
            fork_langgraph(store, f"typed-2@{cid}", reason="bad", edits={"count": "not a number"},
                           graph=BY_NAME["typed"].graph, trusted=True, force=True)
    assert store_files_digest(target) == before
    with sqlite_saver(target) as saver:
        assert open_graph(BY_NAME["typed"], saver).get_state({"configurable": {"thread_id": "typed-2"}}).next \
            == ("review",)


def test_failed_resume_writes_nothing(corpus_sqlite, tmp_path, config_home) -> None:
    target = _copy(corpus_sqlite, tmp_path / "ours.db")
    before = store_files_digest(target)
    with open_store(str(target)) as store:
        plan = plan_resume(store, "typed-2:-1", answer="x", graph="tests.lgcorpus.typed:no_such_graph",
                           cwd=REPO, quiet_seconds=0)
        launch = start_resume(store, plan)
    assert spawn(launch, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).wait(timeout=120) == 1
    assert store_files_digest(target) == before
