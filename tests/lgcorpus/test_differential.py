"""The inspector against LangGraph itself, for EVERY checkpoint of every corpus graph.

For each thread and each of its namespaces, LangGraph's ``get_state_history`` is compared
with what the LangGraph adapter reports for the same checkpoint — values (control channels
hidden, typed values in their display form, ``expected.display``), ``next``, tasks (id and
node name), errors, interrupts (id and value), parent, namespace, source and step — and the
thread's head with ``get_state(subgraphs=True)`` (subgraph lanes of the head's tasks). On
SQLite (SqliteSaver + AsyncSqliteSaver) and PostgreSQL (PostgresSaver + AsyncPostgresSaver).
"""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa

from inspector.store.langgraph import LangGraphStore
from inspector.store.langgraph.ids import parse_id

from . import SCENARIOS, open_graph, postgres_saver, sqlite_saver
from .expected import display

SCENARIO_IDS = [s.name for s in SCENARIOS]
# without the graph, channel kinds are inferred from the thread's writes; the channels scenario
# holds what only the graph can tell (a reducer written once, a custom reducer, ephemeral values)
INFERRED_IDS = [n for n in SCENARIO_IDS if n != "channels"]


def _namespaces(saver: Any, thread: str) -> list[str]:
    return sorted({t.config["configurable"]["checkpoint_ns"]
                   for t in saver.list({"configurable": {"thread_id": thread}})})


def _expected(snap: Any) -> dict:
    conf = snap.config["configurable"]
    parent = (snap.parent_config or {}).get("configurable", {}).get("checkpoint_id")
    return {
        "ns": conf["checkpoint_ns"], "parent": parent,
        "source": snap.metadata.get("source"), "step": snap.metadata.get("step"),
        "values": display(snap.values),
        "next": sorted(snap.next),
        "tasks": sorted((t.id, t.name) for t in snap.tasks),
        "errors": sorted((t.id, t.name, str(t.error)) for t in snap.tasks if t.error is not None),
        "interrupts": sorted((t.id, i.id, repr(display(i.value))) for t in snap.tasks for i in t.interrupts),
    }


def _reported(store: LangGraphStore, thread: str, ns: str, checkpoint_id: str) -> dict:
    snap = store.load(f"{thread}@{ns}@{checkpoint_id}" if ns else f"{thread}@{checkpoint_id}")
    meta = snap.meta
    return {
        "ns": meta["checkpoint_ns"], "parent": meta["parent_checkpoint_id"],
        "source": meta["source"], "step": meta["step"],
        "values": snap.state,
        "next": sorted(meta["next"]),
        "tasks": sorted((t["task_id"], t["node"]) for t in meta["tasks"]),
        "errors": sorted((e["task_id"], e["node"], e["error"]) for e in meta["errors"]),
        "interrupts": sorted((i["task_id"], i["id"], repr(i["value"])) for i in meta["interrupts"]),
    }


def _langgraph_view(saver: Any, scenario: Any) -> list[dict]:
    """What LangGraph reports for every thread of the scenario: each namespace's checkpoints
    (the latest as get_state shows it, live), the head with its subgraph lanes."""
    graph = open_graph(scenario, saver)
    threads = sorted({t.config["configurable"]["thread_id"] for t in saver.list(None)
                      if t.config["configurable"]["thread_id"].startswith(scenario.name + "-")})
    assert threads, f"no threads of {scenario.name}"
    found = []
    for thread in threads:
        checkpoints = []
        for ns in _namespaces(saver, thread):
            config = {"configurable": {"thread_id": thread, "checkpoint_ns": ns}}
            for n, snap in enumerate(graph.get_state_history(config)):
                cid = snap.config["configurable"]["checkpoint_id"]
                if n == 0:   # the namespace's latest: get_state() shows it live (finished tasks' writes applied)
                    snap = graph.get_state(config, subgraphs=True)
                    assert snap.config["configurable"]["checkpoint_id"] == cid
                checkpoints.append((ns, cid, _expected(snap)))
        head = graph.get_state({"configurable": {"thread_id": thread}}, subgraphs=True)
        lanes = [(t.state.config["configurable"], _expected(t.state)) for t in head.tasks
                 if t.state is not None and hasattr(t.state, "values")]
        found.append({"thread": thread, "checkpoints": checkpoints, "head_id": head.config["configurable"]["checkpoint_id"],
                      "head": _expected(head), "lanes": lanes,
                      "lane_ids": sorted((t.id, t.state.config["configurable"]["checkpoint_ns"]) for t in head.tasks
                                         if t.state is not None)})
    return found


def _provable(saver: Any, thread: str) -> set[str]:
    """The channels whose kind the thread's data can tell without the graph: committed in a
    checkpoint (a version), or written by several tasks of one step (a reducer; a last-value
    channel refuses that). A channel only ever written by one task of a step that failed is
    neither: ``store/langgraph/reducers.py`` cannot prove it a reducer, so it cannot show it."""
    tuples = list(saver.list({"configurable": {"thread_id": thread}}))
    versioned = {ch for t in tuples for ch in t.checkpoint["channel_versions"]}
    several = {ch for t in tuples for ch in {w[1] for w in (t.pending_writes or [])}
               if len({w[0] for w in t.pending_writes if w[1] == ch}) > 1}
    return versioned | several


def _differ(want: dict, got: dict, unknown: set[str]) -> list[str]:
    """The keys of LangGraph's view (``want``) the inspector's (``got``) reports otherwise. A
    channel in ``unknown`` (with inferred kinds, one the thread's data cannot tell a reducer) that
    the inspector leaves out is not a difference: the graph gives it its empty value (``[]``),
    which no store holds — in a map-reduce where one task wrote ``results`` and its siblings failed
    or were cancelled (LangGraph's cancellation race), that is ``results``."""
    if unknown and "values" in want:
        want = {**want, "values": {k: v for k, v in want["values"].items()
                                   if k not in unknown or k in got["values"]}}
    return [key for key in want if want[key] != got[key]]


def compare_scenario(saver: Any, store: LangGraphStore, scenario: Any, view: list[dict] | None = None,
                     inferred: bool = False) -> tuple[int, list[str]]:
    """(checkpoints compared, mismatch descriptions) for one scenario (``view``: LangGraph's
    side, ``_langgraph_view``, when already read; ``inferred``: the store infers channel kinds)."""
    compared, problems = 0, []
    for entry in view if view is not None else _langgraph_view(saver, scenario):
        thread = entry["thread"]
        unknown: set[str] = set()
        if inferred:
            unknown = {k for _, _, want in entry["checkpoints"] for k in want["values"]} - _provable(saver, thread)
        listed = {str(i.id) for i in store.list_checkpoints(thread)}
        seen = set()
        for ns, cid, want in entry["checkpoints"]:
            got = _reported(store, thread, ns, cid)
            seen.add(f"{thread}@{ns}@{cid}" if ns else f"{thread}@{cid}")
            compared += 1
            for key in _differ(want, got, unknown):
                problems.append(f"{thread} ns={ns!r} step {want['step']} ({want['source']}) "
                                f"{key}: LangGraph {want[key]!r} != inspector {got[key]!r}")
        if seen != listed:
            problems.append(f"{thread}: listed {sorted(listed - seen)} not in LangGraph, "
                            f"missing {sorted(seen - listed)}")
        info = store.get_checkpoint(f"{thread}:-1")
        root = store.load(f"{thread}@{entry['head_id']}").meta
        got_root_lanes = sorted((s["task_id"], s["lane"]) for s in root["subgraphs"])
        got_head = _reported(store, thread, "", entry["head_id"])
        problems += [f"{thread} head {k}: get_state {entry['head'][k]!r} != inspector {got_head[k]!r}"
                     for k in _differ(entry["head"], got_head, unknown)]
        for conf, want_lane in entry["lanes"]:   # subgraph lanes of the head, as get_state(subgraphs=True) shows them
            got_lane = _reported(store, thread, conf["checkpoint_ns"], conf["checkpoint_id"])
            problems += [f"{thread} head lane {conf['checkpoint_ns']} {k}: get_state {want_lane[k]!r} != "
                         f"inspector {got_lane[k]!r}" for k in _differ(want_lane, got_lane, unknown)]
        if entry["lane_ids"] != got_root_lanes:
            problems.append(f"{thread} head subgraphs: LangGraph {entry['lane_ids']} != inspector {got_root_lanes}")
        if parse_id(str(info.id)).ns:
            problems.append(f"{thread}:-1 is {info.id}, not the root head {entry['head_id']}")
    return compared, problems


def _store(url: str, channels: Any = None, combiner: Any = None) -> LangGraphStore:
    engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
    store = LangGraphStore(engine, url)
    if channels is not None:
        store.use_graph_channels(channels, None, combiner)
    return store


def _differential(url: str, saver_for: Any, target: Any, name: str, channels: Any, combiner: Any) -> None:
    """LangGraph's view read once, compared with the store reading channel kinds from the graph
    (custom reducers combined by the graph in its runner, as ``attach`` sets it up) and (but for
    the channels scenario, which holds what only the graph knows) with inferred ones."""
    scenario = next(s for s in SCENARIOS if s.name == name)
    stores = {"graph": _store(url, channels, combiner)}
    if name in INFERRED_IDS:
        stores["inferred"] = _store(url)
    problems: list[str] = []
    try:
        with saver_for(target) as saver:
            view = _langgraph_view(saver, scenario)
            for label, store in stores.items():
                compared, found = compare_scenario(saver, store, scenario, view, inferred=label == "inferred")
                print(f"{name}: {compared} checkpoints compared ({label} channel kinds)")
                assert compared
                problems += [f"[{label} channel kinds] {p}" for p in found]
    finally:
        for store in stores.values():
            store.close()
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", SCENARIO_IDS)
def test_every_checkpoint_matches_langgraph_sqlite(corpus_sqlite, graph_kinds, graph_combiner, name: str) -> None:
    """With the graph's channel kinds (asked of the graph in its runner), and inferred ones."""
    _differential(f"sqlite:///file:{corpus_sqlite}?mode=ro&uri=true", sqlite_saver, corpus_sqlite, name,
                  graph_kinds(name), graph_combiner(name))


@pytest.mark.postgres
@pytest.mark.parametrize("name", SCENARIO_IDS)
def test_every_checkpoint_matches_langgraph_postgres(corpus_pg, graph_kinds, graph_combiner, name: str) -> None:
    _differential(corpus_pg, postgres_saver, corpus_pg, name, graph_kinds(name), graph_combiner(name))


def test_inferred_kinds_are_labelled_and_graph_kinds_name_the_graph(corpus_sqlite, graph_kinds) -> None:
    """Without the graph a reducer written once is not shown (nothing proves it) and the
    shown empty reducers say they are inferred; with it, the snapshot names the graph."""
    url = f"sqlite:///file:{corpus_sqlite}?mode=ro&uri=true"
    inferred, exact = _store(url), _store(url, graph_kinds("channels"))
    try:
        first = inferred.load("channels-1:0")
        assert first.meta["channel_kinds"] == "inferred" and "once" not in first.state
        assert exact.load("channels-1:0").state == {"once": [], "best": 0, "trail": ""}
        assert exact.load("channels-1:0").meta["channel_kinds"] == "graph tests.lgcorpus.channels:build"
        results = inferred.load("mapreduce-1:0")
        assert results.state["results"] == [] and any("inferred reducers" in n for n in results.meta["notes"])
    finally:
        inferred.close()
        exact.close()


def test_a_custom_reducer_on_the_live_head_is_combined_by_the_graph(corpus_sqlite, graph_kinds, graph_combiner) -> None:
    """channels-2's head: ``tag`` finished (``trail`` → the graph's ``join_trail``), ``check``
    failed. With the graph set, its own reducer combines the pending write in its runner and the
    head equals ``get_state()``; with kinds but no combiner it stays as stored, with the note."""
    url = f"sqlite:///file:{corpus_sqlite}?mode=ro&uri=true"
    combiner = graph_combiner("channels")
    combined, kept = _store(url, graph_kinds("channels"), combiner), _store(url, graph_kinds("channels"))
    try:
        with sqlite_saver(corpus_sqlite) as saver:
            want = display(open_graph(next(s for s in SCENARIOS if s.name == "channels"), saver)
                           .get_state({"configurable": {"thread_id": "channels-2"}}).values)
        runs = combiner.runs
        snap = combined.load("channels-2:-1")
        assert want["trail"] == "score > tag" and snap.state == want
        assert snap.meta["live"]["combined_by_graph"] == ["trail"] and snap.meta["live"]["not_combined"] == []
        assert any("tests.lgcorpus.channels.join_trail" in n and "run in its runner" in n for n in snap.meta["notes"])
        assert combined.load("channels-2:-1").state == want and combiner.runs <= runs + 1     # cached
        stored = kept.load("channels-2:-1")
        assert stored.state["trail"] == "score" and stored.meta["live"]["not_combined"] == ["trail"]
        assert {k: v for k, v in stored.state.items() if k != "trail"} == {k: v for k, v in want.items() if k != "trail"}
        assert any("join_trail" in n and "never runs" in n for n in stored.meta["notes"])
    finally:
        combined.close()
        kept.close()


def _listing_problems(saver: Any, store: LangGraphStore, scenario: Any) -> list[str]:
    """Timeline names and Change column against LangGraph: a loop checkpoint is named by the
    nodes whose tasks its parent ran (PUSH tasks by their Send node); an update/fork row lists
    the channels update_state changed (a __copy__ fork: ``copy``)."""
    graph = open_graph(scenario, saver)
    problems = []
    threads = sorted({t.config["configurable"]["thread_id"] for t in saver.list(None)
                      if t.config["configurable"]["thread_id"].startswith(scenario.name + "-")})
    for thread in threads:
        snaps = {}
        for ns in _namespaces(saver, thread):
            for snap in graph.get_state_history({"configurable": {"thread_id": thread, "checkpoint_ns": ns}}):
                snaps[(ns, snap.config["configurable"]["checkpoint_id"])] = snap
        for info in store.list_checkpoints(thread):
            key = parse_id(str(info.id))
            snap = snaps[(key.ns, key.checkpoint_id)]
            parent_id = (snap.parent_config or {}).get("configurable", {}).get("checkpoint_id")
            parent = snaps.get((key.ns, parent_id)) if parent_id else None
            if info.kind == "loop" and parent is not None:
                ran = sorted({t.name for t in parent.tasks if t.result is not None})
                if info.name != ", ".join(ran):
                    problems.append(f"{info.id}: named {info.name!r}, LangGraph ran {ran}")
            if info.kind in ("update", "fork") and parent is not None:
                moved = sorted(k for k in set(snap.values) | set(parent.values)
                               if repr(display(snap.values.get(k))) != repr(display(parent.values.get(k))))
                want = ", ".join(moved) if moved else "copy" if info.kind == "fork" else ""
                if info.change != want and not (moved and set(info.change.split(", ")) >= set(moved)):
                    problems.append(f"{info.id}: change {info.change!r}, LangGraph changed {moved}")
    return problems


@pytest.mark.parametrize("name", SCENARIO_IDS)
def test_timeline_names_and_changes_match_langgraph(corpus_sqlite, name: str) -> None:
    scenario = next(s for s in SCENARIOS if s.name == name)
    store = _store(f"sqlite:///file:{corpus_sqlite}?mode=ro&uri=true")
    try:
        with sqlite_saver(corpus_sqlite) as saver:
            problems = _listing_problems(saver, store, scenario)
    finally:
        store.close()
    assert not problems, "\n".join(problems)


def test_run_statuses_follow_langgraph(corpus_sqlite, tmp_path) -> None:
    """Thread statuses: a fork made through update_state waits to be resumed (interrupted, never
    running, so never stuck); a failed task → failed; an interrupt → interrupted; done → completed."""
    import shutil

    from inspector.resume.stuck import stuck_runs
    target = tmp_path / "c.db"
    shutil.copyfile(corpus_sqlite, target)
    with sqlite_saver(target) as saver:
        graph = open_graph(next(s for s in SCENARIOS if s.name == "forks"), saver)
        first = list(graph.get_state_history({"configurable": {"thread_id": "forks-1"}}))[-2]
        graph.update_state(first.config, {"mode": "skip"}, as_node="plan")
    store = _store(f"sqlite:///file:{target}?mode=ro&uri=true")
    try:
        runs = {r.id: r for r in store.list_runs()}
        assert runs["forks-1"].status == "interrupted"            # written a moment ago, yet waiting
        assert runs["mapreduce-2"].status == "failed"
        assert runs["subgraph-2"].status == runs["typed-2"].status == "interrupted"
        assert runs["react-1"].status == runs["durability-exit"].status == "completed"
        assert "forks-1" not in {d.run_id for d in stuck_runs(store)}
    finally:
        store.close()


def test_adjacent_diffs_leave_step_tasks_out_and_edits_are_not_regressions(corpus_sqlite, tmp_path) -> None:
    import shutil

    from inspector.diff.checkpoints import diff_checkpoints
    target = tmp_path / "c.db"
    shutil.copyfile(corpus_sqlite, target)
    with sqlite_saver(target) as saver:
        graph = open_graph(next(s for s in SCENARIOS if s.name == "agent"), saver)
        head = graph.get_state({"configurable": {"thread_id": "agent-1"}})
        todos = [dict(t) for t in head.values["todos"]]
        todos[0]["status"] = "in_progress"                       # completed → in progress, by hand
        graph.update_state(head.config, {"todos": todos}, as_node="model")
    store = _store(f"sqlite:///file:{target}?mode=ro&uri=true")
    try:
        infos = store.list_checkpoints("agent-1")
        for old, new in zip(infos, infos[1:]):
            if new.kind != "loop" or str(new.parent_id) != str(old.id):
                continue
            result = diff_checkpoints(store, old.id, new.id, three_way=False)
            assert not [c for c in result.task_changes if c.task_id.startswith("node:")], (old.seq, new.seq)
        fork = infos[-1]
        assert fork.kind == "update"
        result = diff_checkpoints(store, fork.parent_id, fork.id, three_way=False)
        status = [c for c in result.task_changes if c.kind == "status"]
        assert status and status[0].new == "in_progress" and not any(c.regression for c in result.task_changes)
        assert "regression" not in result.summary
    finally:
        store.close()


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def test_timeline_says_what_a_waiting_checkpoint_asks(request, backend) -> None:
    """A checkpoint with a pending interrupt shows its question in the Change column — in the
    subgraph lane and on the main-graph step that ran the subgraph; an answered one does not."""
    url = (f"sqlite:///file:{request.getfixturevalue('corpus_sqlite')}?mode=ro&uri=true" if backend == "sqlite"
           else request.getfixturevalue("corpus_pg"))
    store = _store(url)
    try:
        waiting = [i for i in store.list_checkpoints("subgraph-2") if i.change.startswith("waiting: ")]
        assert {bool(i.lane) for i in waiting} == {True, False}
        assert all("Approve the draft?" in i.change for i in waiting)
        assert not [i for i in store.list_checkpoints("subgraph-1") if i.change.startswith("waiting: ")]
        typed = [i for i in store.list_checkpoints("typed-2") if i.change.startswith("waiting: ")]
        assert [i.seq for i in typed] == [2] and "Approve the amount?" in typed[0].change
    finally:
        store.close()


@pytest.mark.postgres
def test_run_statuses_are_the_same_on_both_backends(corpus_sqlite, corpus_pg) -> None:
    lite, pg = _store(f"sqlite:///file:{corpus_sqlite}?mode=ro&uri=true"), _store(corpus_pg)
    try:
        assert {r.id: (r.status, r.checkpoint_count) for r in lite.list_runs()} == \
            {r.id: (r.status, r.checkpoint_count) for r in pg.list_runs()}
    finally:
        lite.close()
        pg.close()
