"""InspectorSaver on real graphs: what the inspector shows of its threads (both kinds of
semantics), storage by content, the heartbeat and owner, and PostgreSQL."""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import json
import operator
import os
import sqlite3
import time
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pydantic
import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages

from inspector.record.langgraph import LEAF, AsyncInspectorSaver, InspectorSaver
from inspector.store import open_store
from tests.conftest import blob_bytes, store_files_digest
from tests.lgcorpus import BY_NAME, cancelled


def _runs(store) -> dict:
    return {r.name: r for r in store.list_runs()}


def test_threads_are_runs_with_langgraph_and_native_semantics(tmp_path: Path) -> None:
    path = tmp_path / "agent.db"
    with InspectorSaver.from_conn_string(str(path)) as saver:
        for name in ("subgraph", "agent", "mapreduce"):
            BY_NAME[name].run(saver)
    before = store_files_digest(path)
    with open_store(str(path)) as store:
        runs = _runs(store)
        assert store.info.kind == "native"
        assert runs["agent-1"].status == "completed"
        assert runs["agent-1"].owner_pid == os.getpid() and runs["agent-1"].owner_host
        assert runs["agent-1"].labels["langgraph"] == {"thread_id": "agent-1", "checkpoint_ns": ""}
        failed = store.load(store.list_checkpoints(runs["mapreduce-2"].id)[-1].id)
        # LangGraph submits the failing task's error write from a callback that races the
        # shutdown of the step's executor, so the write (and with it what any saver can know
        # of the failure) is sometimes lost; the status follows what was stored
        if failed.meta["errors"]:
            assert runs["mapreduce-2"].status == "failed"
            assert "cannot process item 'bad'" in runs["mapreduce-2"].last_error
            errored = [t for t in failed.meta["tasks"] if t["status"] == "errored"]
            # LangGraph's own race: siblings still running (audit, or another work task) may be
            # stopped by the failure and write their CancelledError too; one task really failed
            real = [t["node"] for t in errored if not cancelled(t.get("error", ""))]
            assert real == ["work"] and {t["node"] for t in errored} <= {"work", "audit"}
        else:      # no write said why it stopped: the saver's close marks it interrupted
            assert runs["mapreduce-2"].status == "interrupted"
        assert runs["subgraph-2"].status == "interrupted"
        inner = runs["subgraph-2 › review"]
        assert inner.status == "interrupted" and inner.parent_run == runs["subgraph-2"].id
        # native task state from the todos channel, in the run row and the checkpoint
        assert (runs["agent-1"].tasks_done, runs["agent-1"].tasks_total) == (2, 2)
        head = store.list_checkpoints(runs["agent-1"].id)[-1]
        snap = store.load(head.id)
        assert snap.tasks["goal"] == "What is the weather in Oslo?"
        assert [t["status"] for t in snap.tasks["tasks"]] == ["done", "done"]
        first = snap.state["messages"][0]
        assert first["__type__"].endswith("HumanMessage") and first["content"] == "What is the weather in Oslo?"
        # LangGraph semantics: next, pending interrupt, subgraph lane
        waiting = store.load(store.list_checkpoints(runs["subgraph-2"].id)[-1].id)
        assert waiting.meta["next"] == ["review"]
        assert waiting.meta["interrupts"][0]["question"] == "Approve the draft?"
        assert waiting.meta["subgraphs"][0]["node"] == "review"
        assert waiting.meta["langgraph_metadata"]["source"] == "loop"
        kinds = [c.kind for c in store.list_checkpoints(runs["agent-1"].id)]
        assert kinds[0] == "input" and set(kinds[1:]) == {"loop"}
    assert store_files_digest(path) == before     # opening to read wrote nothing


class Chat(TypedDict):
    messages: Annotated[list, add_messages]


def _chat_graph(checkpointer):
    def reply(state: Chat) -> dict:
        n = len(state["messages"])
        return {"messages": [AIMessage(content=f"answer {n}: " + "x" * 900, id=f"ai-{n}")]}
    graph = StateGraph(Chat)
    graph.add_node("reply", reply)
    graph.add_edge(START, "reply")
    return graph.compile(checkpointer=checkpointer)


def test_the_async_saver_pauses_the_collector_from_the_loop_thread_while_a_call_runs(tmp_path: Path) -> None:
    """The worker builds thousands of acyclic containers per call; the main thread (the loop's)
    pauses the process's collector while it waits for the call, and restores it after."""
    seen: list[bool] = []

    class Watching(AsyncInspectorSaver):
        def put(self, *args, **kwargs):
            seen.append(gc.isenabled())      # runs on the saver's worker thread
            return super().put(*args, **kwargs)

    async def chat() -> list:
        async with Watching.from_conn_string(str(tmp_path / "chat.db")) as saver:
            graph = _chat_graph(saver)
            config = {"configurable": {"thread_id": "chat"}}
            for turn in range(3):
                await graph.ainvoke({"messages": [HumanMessage(content=f"q{turn}", id=f"h-{turn}")]}, config)
            return (await graph.aget_state(config)).values["messages"]

    assert gc.isenabled()
    messages = asyncio.run(chat())
    assert len(messages) == 6 and seen and not any(seen)
    assert gc.isenabled()


def test_bytes_grow_with_the_change_not_the_state(tmp_path: Path) -> None:
    path = tmp_path / "chat.db"
    with InspectorSaver.from_conn_string(str(path)) as saver:
        graph = _chat_graph(saver)
        config = {"configurable": {"thread_id": "chat"}}
        sizes = []
        for turn in range(60):
            graph.invoke({"messages": [HumanMessage(content=f"q{turn}", id=f"h-{turn}")]}, config)
            con = sqlite3.connect(path)
            sizes.append(con.execute("SELECT sum(length(data)) FROM ci_blobs").fetchone()[0])
            con.close()
        state = graph.get_state(config).values["messages"]
        assert len(state) == 120 and state[-1].content.startswith("answer 119")
    per_turn_early = (sizes[19] - sizes[9]) / 10
    per_turn_late = (sizes[59] - sizes[49]) / 10
    # the state at the end is 6× the state at turn 10; the bytes a turn adds are not
    assert per_turn_late < 1.5 * per_turn_early + 200, (per_turn_early, per_turn_late)
    con = sqlite3.connect(path)
    # messages are typed leaves holding LangGraph's msgpack; nothing is pickled
    assert con.execute("SELECT count(*) FROM ci_lg_checkpoints WHERE type = 'pickle'").fetchone()[0] == 0
    con.close()
    with open_store(str(path)) as store:
        run = _runs(store)["chat"]
        raw = store.read_piece(store.list_checkpoints(run.id)[-1].state_hash)
        assert "messages" in raw and LEAF not in json.dumps(store.load(f"{run.id}:-1").state)


def test_heartbeat_while_running(tmp_path: Path) -> None:
    path = tmp_path / "beat.db"
    with InspectorSaver.from_conn_string(str(path), heartbeat=0.1) as saver:
        sub = BY_NAME["subgraph"]
        graph = __import__("tests.lgcorpus.subgraph", fromlist=["build"]).build(saver)
        config = {"configurable": {"thread_id": "beat"}}
        graph.invoke({"topic": "x"}, config, interrupt_before=["review"])
        with open_store(str(path)) as store:
            run = _runs(store)["beat"]
            assert run.status == "running"
            first = run.heartbeat
        time.sleep(0.5)
        with open_store(str(path)) as store:
            assert _runs(store)["beat"].heartbeat > first
        assert sub.name == "subgraph"
    with open_store(str(path)) as store:   # closed: the beat stopped
        last = _runs(store)["beat"].heartbeat
    time.sleep(0.3)
    with open_store(str(path)) as store:
        assert _runs(store)["beat"].heartbeat == last


@pytest.mark.postgres
def test_postgres_graph_and_inspector(pg_url: str, pg_server) -> None:
    with InspectorSaver.from_conn_string(pg_url) as saver:
        BY_NAME["forks"].run(saver)
        graph = BY_NAME["forks"]
        history = list(__import__("tests.lgcorpus.forks", fromlist=["build"]).build(saver).get_state_history(
            {"configurable": {"thread_id": "forks-1"}}))
        assert {"update", "fork", "loop", "input"} <= {s.metadata["source"] for s in history}
        assert graph.name == "forks"
    with open_store(pg_url) as store:
        run = _runs(store)["forks-1"]
        cps = store.list_checkpoints(run.id)
        assert len(cps) == len(history)
        # several branches in one lane: some checkpoint is the parent of more than one
        parents = [c.parent_id for c in cps if c.parent_id is not None]
        assert len(parents) > len(set(parents))
    # a read-only role made by `init --readonly-role` sees the lanes with their LangGraph view
    from inspector.cli import main
    role = f"viewer_{os.urandom(4).hex()}"
    try:
        assert main(["init", pg_url, "--readonly-role", role]) == 0
        import sqlalchemy as sa
        viewer_url = sa.engine.make_url(pg_url).set(username=role).render_as_string(hide_password=False)
        with open_store(viewer_url) as store:
            run = _runs(store)["forks-1"]
            snap = store.load(f"{run.id}:-1")
            assert snap.meta["langgraph_metadata"]["source"] in ("loop", "update", "fork")
            assert snap.state["log"]
    finally:
        engine = sa.create_engine(pg_url, isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)
        with engine.connect() as conn:
            conn.exec_driver_sql(f'DROP OWNED BY "{role}"')
        engine.dispose()
        pg_server.admin(f'DROP ROLE IF EXISTS "{role}"')


def test_bench_write_workload_runs(capsys: pytest.CaptureFixture) -> None:
    from inspector.cli import main
    assert main(["bench", "langgraph", "--workload", "write", "--steps", "5", "--no-postgres", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    savers = [(r["backend"], r["mode"], r["saver"]) for r in result["rows"]]
    assert savers == [("memory", "sync", "reference floor"), ("memory", "async", "reference floor"),
                      ("sqlite", "sync", "SqliteSaver"), ("sqlite", "sync", "InspectorSaver"),
                      ("sqlite", "async", "AsyncSqliteSaver"), ("sqlite", "async", "AsyncInspectorSaver")]
    assert all(r["messages"] == 10 for r in result["rows"])
    assert all(r["bytes"] > 0 and r["above_floor_ms_per_step"] >= 0 for r in result["rows"] if r["backend"] != "memory")


def test_an_error_langgraph_never_hands_over_leaves_the_lane_interrupted_when_the_saver_closes(
        tmp_path: Path) -> None:
    """``GraphRecursionError`` is raised by LangGraph's loop with no write: the saver sees the
    calls of a step still running, so the lane stays ``running`` (its heartbeat going) while the
    saver is open; closing the saver marks it ``interrupted`` (a step left, nothing running it),
    not left to read as crashed once the process is gone."""
    from langgraph.errors import GraphRecursionError

    from inspector.resume.stuck import stuck_runs

    class Count(TypedDict):
        n: int

    path = tmp_path / "agent.db"
    with InspectorSaver.from_conn_string(str(path), heartbeat=0.05) as saver:
        builder = StateGraph(Count)
        builder.add_node("again", lambda s: {"n": s["n"] + 1})
        builder.add_edge(START, "again")
        builder.add_edge("again", "again")
        graph = builder.compile(checkpointer=saver)
        with pytest.raises(GraphRecursionError):
            graph.invoke({"n": 0}, {"configurable": {"thread_id": "loops"}, "recursion_limit": 3})
        assert graph.get_state({"configurable": {"thread_id": "loops"}}).next == ("again",)
        with open_store(str(path), readonly=True) as store:
            assert _runs(store)["loops"].status == "running"
        once = StateGraph(Count)
        once.add_node("once", lambda s: {"n": s["n"] + 1})
        once.add_edge(START, "once")
        once.compile(checkpointer=saver).invoke({"n": 0}, {"configurable": {"thread_id": "done"}})
    with open_store(str(path), readonly=True) as store:
        run = _runs(store)["loops"]
        assert run.status == "interrupted" and run.last_error is None
        # its score is its head's, as LangGraph's own stores show such a thread: "again" to run
        head = store.load(store.get_checkpoint(f"{run.id}:-1").id).info
        assert (run.tasks_done, run.tasks_total) == (head.tasks_done, head.tasks_total) == (0, 1)
        assert _runs(store)["done"].status == "completed"
        flagged = {d.run_id for d in stuck_runs(store, now=time.time() + 120, heartbeat_threshold=30)}
        assert run.id not in flagged


def test_checkpoint_bodies_are_compressed_and_old_raw_bodies_still_read(tmp_path: Path) -> None:
    path = tmp_path / "agent.db"
    with InspectorSaver.from_conn_string(str(path)) as saver:
        graph = _chat_graph(saver)
        for n in range(3):
            graph.invoke({"messages": [HumanMessage(content=f"q{n}", id=f"q-{n}")]}, {"configurable": {"thread_id": "c"}})
        expected = [t.checkpoint for t in saver.list({"configurable": {"thread_id": "c"}})]
    conn = sqlite3.connect(str(path))
    bodies = conn.execute("SELECT id, type, body FROM ci_lg_checkpoints").fetchall()
    assert bodies and all(bytes(b)[:4] == b"\x28\xb5\x2f\xfd" for _, _, b in bodies)   # zstd frames
    # a store written before bodies were compressed: the raw serde bytes read the same
    import zstandard
    first_id, tag, frame = bodies[0]
    conn.execute("UPDATE ci_lg_checkpoints SET body = ? WHERE id = ?",
                 (zstandard.ZstdDecompressor().decompress(bytes(frame)), first_id))
    conn.commit()
    conn.close()
    with InspectorSaver.from_conn_string(str(path)) as saver:
        assert [t.checkpoint for t in saver.list({"configurable": {"thread_id": "c"}})] == expected
    with open_store(str(path), readonly=True) as store:
        snap = store.load(first_id)
        assert snap.meta["channel_versions"] and "__error__" not in snap.state


def _recorded_calls(tmp_path: Path) -> list[tuple[str, tuple]]:
    """The put / put_writes calls LangGraph makes running the ReAct corpus graph (tool calls
    as Send tasks), in the order they reached the saver."""
    calls: list[tuple[str, tuple]] = []

    class Recording(InspectorSaver):
        def put(self, *args):        # type: ignore[override]
            calls.append(("put", args))
            return super().put(*args)

        def put_writes(self, config, writes, task_id, task_path=""):   # type: ignore[override]
            calls.append(("put_writes", (config, writes, task_id, task_path)))
            return super().put_writes(config, writes, task_id, task_path)

    with Recording.from_conn_string(str(tmp_path / "recorded.db")) as saver:
        BY_NAME["react"].run(saver)
    return calls


def _timeline(path: Path) -> list[tuple[str, str, str]]:
    with open_store(str(path)) as store:
        run = next(r for r in store.list_runs() if r.name == "react-1")
        return [(c.kind, c.name, c.change) for c in store.list_checkpoints(run.id)]


def test_a_step_is_named_from_its_parents_task_writes_even_when_they_arrive_after_it(tmp_path: Path) -> None:
    # LangGraph hands a saver a task's writes and the next checkpoint from background
    # threads, in no set order: the same calls replayed with every checkpoint's writes after
    # the put of its child give the same timeline as in order
    calls = _recorded_calls(tmp_path)
    late: list[tuple[str, tuple]] = []
    held: dict[str, list[tuple[str, tuple]]] = {}
    for kind, args in calls:
        if kind == "put_writes":
            held.setdefault(args[0]["configurable"]["checkpoint_id"], []).append((kind, args))
            continue
        late.append((kind, args))
        parent = args[0]["configurable"].get("checkpoint_id")
        late.extend(held.pop(parent, []))
    late.extend(c for rest in held.values() for c in rest)
    timelines = []
    for name, order in (("in-order.db", calls), ("late.db", late)):
        with InspectorSaver.from_conn_string(str(tmp_path / name)) as saver:
            for kind, args in order:
                getattr(saver, kind)(*args)
        timelines.append(_timeline(tmp_path / name))
    assert timelines[0] == timelines[1]
    assert ("loop", "tools", "messages") in timelines[1]       # Send tasks named by their node
    assert [n for k, n, _ in timelines[1] if k == "loop"].count("agent") >= 2


class _Log(TypedDict, total=False):
    log: Annotated[list, operator.add]
    n: int


def _log_thread(path: Path) -> dict:
    """A thread whose ``log`` two tasks write in one step; LangGraph's values by checkpoint id."""
    builder = StateGraph(_Log)
    builder.add_node("count", lambda s: {"n": s["n"] + 1})
    builder.add_node("left", lambda s: {"log": ["left"]})
    builder.add_node("right", lambda s: {"log": ["right"]})   # two tasks write log in one step
    builder.add_edge(START, "count")
    builder.add_edge("count", "left")
    builder.add_edge("count", "right")
    with InspectorSaver.from_conn_string(str(path)) as saver:
        graph = builder.compile(checkpointer=saver)
        graph.invoke({"n": 1}, {"configurable": {"thread_id": "t"}})
        return {s.config["configurable"]["checkpoint_id"]: s.values
                for s in graph.get_state_history({"configurable": {"thread_id": "t"}})}


def test_a_reducer_channel_not_yet_written_shows_empty_as_langgraph_shows_it(tmp_path: Path) -> None:
    path = tmp_path / "agent.db"
    expected = _log_thread(path)
    assert {"n": 2, "log": []} in expected.values()      # before left and right wrote, LangGraph shows log empty
    with open_store(str(path), readonly=True) as store:
        run = _runs(store)["t"]
        for info in store.list_checkpoints(run.id):
            snap = store.load(info.id)
            assert snap.state == expected[snap.meta["checkpoint_id"]], info.seq


def _join_graph(saver) -> Any:
    """A root-state graph whose node ``ask`` waits for ``b`` and ``c`` (a join barrier) and
    asks a question."""
    from langgraph.types import interrupt
    builder = StateGraph(Annotated[list, operator.add])
    builder.add_node("a", lambda s: ["a"])
    builder.add_node("b", lambda s: ["b"])
    builder.add_node("c", lambda s: ["c"])
    builder.add_node("ask", lambda s: ["ask:" + str(interrupt({"len": len(s)}))])
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("a", "c")
    builder.add_edge(["b", "c"], "ask")
    return builder.compile(checkpointer=saver)


def _join_run(saver) -> list[tuple]:
    from langgraph.types import Command
    graph = _join_graph(saver)
    config = {"configurable": {"thread_id": "j"}}
    for payload in (["start"], Command(resume="ok"), ["again"]):
        graph.invoke(payload, config)
    return [(s.metadata["step"], s.values, s.next) for s in graph.get_state_history(config)]


def test_a_join_barrier_holds_what_its_version_says(tmp_path: Path) -> None:
    # LangGraph adds to a barrier's set in place at a later step, possibly before the put of an
    # earlier checkpoint (whose barrier version it did not change) runs in the background: that
    # checkpoint keeps the barrier as it was put with its version, as LangGraph's own savers
    # that store by version (InMemorySaver, PostgresSaver) read it back; else get_state plans
    # ``ask`` before b and c ran again
    from langgraph.checkpoint.memory import InMemorySaver
    expected = _join_run(InMemorySaver())
    assert any(step == 5 and nxt == ("a",) for step, _, nxt in expected)
    for attempt in range(3):
        with InspectorSaver.from_conn_string(str(tmp_path / f"j{attempt}.db")) as saver:
            assert _join_run(saver) == expected


def test_a_damaged_pending_write_is_reported_and_spoils_no_other_checkpoint(tmp_path: Path) -> None:
    path = tmp_path / "agent.db"
    _log_thread(path)
    conn = sqlite3.connect(str(path))
    conn.execute("UPDATE ci_lg_writes SET codec = 0, data = ?, size = 4 WHERE channel = 'log'", (b"\xc1\xc1\xc1\xc1",))
    conn.commit()
    conn.close()
    with open_store(str(path), readonly=True) as store:
        run = _runs(store)["t"]
        damaged = 0
        for info in store.list_checkpoints(run.id):
            snap = store.load(info.id)
            assert "next" in snap.meta and "branch:to:count" not in snap.state    # still LangGraph's view
            if snap.problems:
                damaged += 1
                assert all(p.startswith("pending write 'log' of task ") for p in snap.problems)
        assert damaged == 1          # the step whose tasks wrote log; the others read as before


def test_a_damaged_langgraph_body_is_reported_and_the_state_still_reads(tmp_path: Path) -> None:
    # the body (versions, versions seen) of one checkpoint overwritten: that checkpoint says so,
    # its state (pieces of its own) still reads, and the others read as before
    path = tmp_path / "agent.db"
    _log_thread(path)
    conn = sqlite3.connect(str(path))
    conn.execute("UPDATE ci_lg_checkpoints SET body = ? WHERE id = (SELECT max(id) FROM ci_lg_checkpoints)",
                 (b"\xc1\xc1",))
    conn.commit()
    conn.close()
    with open_store(str(path), readonly=True) as store:
        run = _runs(store)["t"]
        infos = store.list_checkpoints(run.id)
        for info in infos:
            snap = store.load(info.id)
            if info is infos[-1]:
                assert snap.problems == ("the LangGraph checkpoint (versions, next) cannot be read: "
                                         "malformed msgpack (FormatError)",), snap.problems
                assert snap.state["log"] == ["left", "right"] and snap.state["n"] == 2
            else:
                assert not snap.problems


def test_a_sqlite_put_is_one_statement_and_adds_nothing_to_the_file(tmp_path: Path) -> None:
    # the put's view and trigger live in the writer connection's TEMP schema: the file holds
    # the store's own tables only, and every checkpoint is there with its parent and size
    path = tmp_path / "chat.db"
    with InspectorSaver.from_conn_string(str(path)) as saver:
        graph = _chat_graph(saver)
        config = {"configurable": {"thread_id": "chat"}}
        for turn in range(5):
            graph.invoke({"messages": [HumanMessage(content=f"q{turn}", id=f"h-{turn}")]}, config)
        history = list(graph.get_state_history(config))
    con = sqlite3.connect(path)
    names = {r[0] for r in con.execute("SELECT name FROM sqlite_master")}
    assert not any("lane_put" in n for n in names), names
    rows = con.execute("SELECT c.seq, c.parent_id, c.size, c.size_delta, l.checkpoint_id, l.parent_checkpoint_id "
                       "FROM ci_checkpoints c JOIN ci_lg_checkpoints l ON l.id = c.id ORDER BY c.seq").fetchall()
    run = con.execute("SELECT head_seq, checkpoint_count, status FROM ci_runs").fetchone()
    con.close()
    assert [r[0] for r in rows] == list(range(len(history))) and run == (len(rows) - 1, len(rows), "completed")
    by_cid = {r[4]: r for r in rows}
    for _, parent_id, size, delta, _, parent_cid in rows:
        if parent_cid is None:
            assert parent_id is None and delta == size
        else:     # the parent found by its LangGraph id, the size change from it
            parent = by_cid[parent_cid]
            assert parent_id is not None and delta == size - parent[2]
    assert [h.config["configurable"]["checkpoint_id"] for h in history] == [r[4] for r in reversed(rows)]


def test_a_thread_deleted_by_another_process_starts_again_at_the_next_step(tmp_path: Path) -> None:
    path = tmp_path / "chat.db"
    config = {"configurable": {"thread_id": "chat"}}
    with InspectorSaver.from_conn_string(str(path)) as saver:
        graph = _chat_graph(saver)
        for turn in range(3):
            graph.invoke({"messages": [HumanMessage(content=f"q{turn}", id=f"h-{turn}")]}, config)
        with InspectorSaver.from_conn_string(str(path)) as other:
            other.delete_thread("chat")
        # this saver still knows the lane's run and the pieces it stored: its next put finds
        # the run gone, and the lane starts again with every piece stored afresh
        graph.invoke({"messages": [HumanMessage(content="again", id="h-again")]}, config)
        state = graph.get_state(config).values["messages"]
        assert [m.content for m in state][:1] == ["again"] and len(state) == 2
    with open_store(str(path)) as store:
        run = _runs(store)["chat"]
        checkpoint = store.load(store.list_checkpoints(run.id)[-1].id)    # every piece is there
        assert len(checkpoint.state["messages"]) == 2


def test_many_pending_writes_and_pieces_in_one_call(tmp_path: Path) -> None:
    # more writes than one statement takes, and more new pieces than a put folds in
    path = tmp_path / "many.db"
    with InspectorSaver.from_conn_string(str(path)) as saver:
        config = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
        checkpoint = {"v": 4, "id": "1ef00000-0000-6000-8000-000000000001", "ts": "2026-01-01T00:00:00+00:00",
                      "channel_values": {f"k{i}": [f"value {i} " * 40] * 3 for i in range(40)},
                      "channel_versions": {f"k{i}": 1 for i in range(40)}, "versions_seen": {}}
        stored = saver.put(config, checkpoint, {"source": "input", "step": -1, "parents": {}}, {})
        writes = [(f"k{i % 40}", f"written {i}") for i in range(250)]
        saver.put_writes(stored, writes, "task-1")
        saver.put_writes(stored, writes[:3], "task-1")          # stored ones are kept
        got = saver.get_tuple(stored)
        assert got is not None and got.checkpoint["channel_values"] == checkpoint["channel_values"]
        assert got.pending_writes == [("task-1", c, v) for c, v in writes]


def test_a_failed_run_reads_its_error_as_a_langgraph_saver_thread_does(tmp_path: Path) -> None:
    # the run's error is what LangGraph's serializer stores for the exception (its repr), the
    # text the failed task shows and the one a SqliteSaver thread's run shows
    from langgraph.checkpoint.sqlite import SqliteSaver

    class Count(TypedDict):
        n: int

    def boom(state: Count) -> dict:
        raise ValueError("cannot process item 'bad'")

    def build(saver: Any) -> Any:
        builder = StateGraph(Count)
        builder.add_node("boom", boom)
        builder.add_edge(START, "boom")
        return builder.compile(checkpointer=saver)

    config = {"configurable": {"thread_id": "t"}}
    conn = sqlite3.connect(str(tmp_path / "lg.db"), check_same_thread=False)
    with pytest.raises(ValueError):
        build(SqliteSaver(conn)).invoke({"n": 1}, config)
    conn.close()
    with InspectorSaver.from_conn_string(str(tmp_path / "ours.db")) as saver, pytest.raises(ValueError):
        build(saver).invoke({"n": 1}, config)
    seen = []
    for name in ("lg.db", "ours.db"):
        with open_store(str(tmp_path / name)) as store:
            run = store.list_runs()[0]
            tasks = store.load(store.list_checkpoints(run.id)[-1].id).meta["tasks"]
            seen.append((run.status, run.last_error, [t.get("error") for t in tasks]))
    text = repr(ValueError("cannot process item 'bad'"))
    assert seen[0] == seen[1] == ("failed", text, [text])


def test_an_input_checkpoint_diff_names_the_langgraph_channels_it_changed(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture) -> None:
    # an input checkpoint holds the state of the step before and the input in __start__, which
    # the state leaves out: its diff shows no state change and says what did change, for a
    # thread of InspectorSaver and of SqliteSaver alike
    from langgraph.checkpoint.sqlite import SqliteSaver

    from inspector.cli import main

    config = {"configurable": {"thread_id": "chat"}}
    with InspectorSaver.from_conn_string(str(tmp_path / "ours.db")) as saver:
        graph = _chat_graph(saver)
        for turn in range(2):
            graph.invoke({"messages": [HumanMessage(content=f"q{turn}", id=f"h-{turn}")]}, config)
    conn = sqlite3.connect(str(tmp_path / "lg.db"), check_same_thread=False)
    graph = _chat_graph(SqliteSaver(conn))
    for turn in range(2):
        graph.invoke({"messages": [HumanMessage(content=f"q{turn}", id=f"h-{turn}")]}, config)
    conn.close()
    for name in ("ours.db", "lg.db"):
        with open_store(str(tmp_path / name)) as store:
            run = store.list_runs()[0]
            infos = store.list_checkpoints(run.id)
        second_input = [i for i in infos if i.kind == "input"][1]
        a, b = f"{run.id}:{second_input.seq - 1}", f"{run.id}:{second_input.seq}"
        assert main(["diff", str(tmp_path / name), a, b, "--exit-code"]) == 0
        out = capsys.readouterr().out
        assert "no state changes" in out and "LangGraph's own channels changed" in out and "__start__" in out
        assert main(["diff", str(tmp_path / name), a, b, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["hidden_channels_changed"] == ["__start__"]
        assert main(["diff", str(tmp_path / name), b, f"{run.id}:{second_input.seq + 2}", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["changes"]       # a step that answers: state changes


class _Doc(TypedDict):
    doc: str
    step: int


def _doc_graph(saver: Any) -> Any:
    def write(state: _Doc) -> dict:
        doc = state["doc"]
        at = doc.index("\n", len(doc) // 2) + 1          # a paragraph inserted in the middle
        return {"doc": doc[:at] + f"paragraph {state['step']}: " + "words " * 30 + "\n" + doc[at:],
                "step": state["step"] + 1}
    graph = StateGraph(_Doc)
    graph.add_node("write", write)
    graph.add_edge(START, "write")
    return graph.compile(checkpointer=saver)


def test_a_new_process_edits_a_long_text_channel_without_storing_it_whole_again(tmp_path: Path) -> None:
    """A long ``str`` channel stored as a text piece by one process: the next process's saver
    (nothing in memory) takes over its pieces when LangGraph reads the checkpoint, so its first
    edit costs the lines around it, not the whole text again."""
    path = tmp_path / "doc.db"
    import random
    rnd = random.Random(4)
    words = ["".join(rnd.choices("abcdefghijklmnopqrstuvwxyz", k=rnd.randint(2, 9))) for _ in range(2000)]
    doc = "".join(" ".join(rnd.choices(words, k=rnd.randint(2, 14))) + "\n" for _ in range(6000))   # ~0.3 MB
    config = {"configurable": {"thread_id": "doc"}}

    with InspectorSaver.from_conn_string(str(path)) as saver:      # the first process
        graph = _doc_graph(saver)
        graph.invoke({"doc": doc, "step": 0}, config)
        for step in (1, 2):
            graph.invoke({"step": step}, config)
    before = blob_bytes(path)
    with InspectorSaver.from_conn_string(str(path)) as saver:      # the next one
        graph = _doc_graph(saver)
        state = graph.invoke({"step": 10}, config)
    added = blob_bytes(path) - before
    assert added < 30_000, added          # the whole text compressed is ~140 KB
    with open_store(str(path)) as store:
        (run,) = store.list_runs()
        assert store.load(f"{run.id}:-1").state["doc"] == state["doc"]


class _Chat(TypedDict):
    messages: Annotated[list, add_messages]


def test_a_trimmed_message_history_costs_what_was_added(tmp_path: Path) -> None:
    """A graph keeping its last 300 messages (``RemoveMessage`` for the oldest, as
    ``trim_messages`` users do): every message moves down at every step, and the saver stored
    the whole history again at each put (~200 KB); now about what the step added."""
    import random
    from langchain_core.messages import RemoveMessage
    rnd = random.Random(3)

    def text() -> str:
        return " ".join("".join(rnd.choices("abcdefghijklmnopqrstuvwxyz", k=rnd.randint(2, 9))) for _ in range(40))

    def reply(state: _Chat) -> dict:
        old = state["messages"]
        drop = [RemoveMessage(id=m.id) for m in old[:max(0, len(old) + 1 - 300)]]
        return {"messages": [*drop, AIMessage(content=f"answer {len(old)}: " + text(), id=f"a{len(old)}-{old[-1].id}")]}
    graph = StateGraph(_Chat)
    graph.add_node("reply", reply)
    graph.add_edge(START, "reply")
    path = tmp_path / "chat.db"
    config = {"configurable": {"thread_id": "chat"}}

    # the messages' ids are given: LangGraph's random ones move the content-defined cuts from
    # run to run, and with them what a step stores (7-33 KB over 25 runs; 60 KB before)
    with InspectorSaver.from_conn_string(str(path)) as saver:
        app = graph.compile(checkpointer=saver)
        for i in range(160):
            app.invoke({"messages": [HumanMessage(content=f"question {i}: " + text(), id=f"q{i}")]}, config)
        assert len(app.get_state(config).values["messages"]) == 300
        before = blob_bytes(path)
        for i in range(160, 180):
            app.invoke({"messages": [HumanMessage(content=f"question {i}: " + text(), id=f"q{i}")]}, config)
        per_step = (blob_bytes(path) - before) / 20      # two puts a step (input, reply)
        state = app.get_state(config).values["messages"]
    assert per_step < 30_000, per_step
    with open_store(str(path)) as store:
        (run,) = store.list_runs()
        stored = store.load(f"{run.id}:-1").state["messages"]
        assert len(stored) == len(state) == 300


def test_a_chat_carrying_images_reads_back_as_langgraph_keeps_it(tmp_path: Path) -> None:
    """User turns carry 300 KB images (content parts); one turn edits an old message in place
    and hands it back (``add_messages`` replaces it by id). The groups of such a history are
    compared by their heavy prints; every checkpoint reads back as ``InMemorySaver`` keeps
    it, and each put encodes and decodes far less than the history."""
    import base64
    import random
    from langgraph.checkpoint.memory import InMemorySaver
    rnd = random.Random(5)
    images = [base64.b64encode(rnd.randbytes(225_000)).decode() for _ in range(24)]

    def reply(state: _Chat) -> dict:
        messages = state["messages"]
        if len(messages) == 31:       # an old message edited in place, and handed back
            old = messages[0]
            old.content[0]["text"] = "looked at again"
            return {"messages": [old, AIMessage(content="edited", id="edit")]}
        return {"messages": [AIMessage(content=f"I see {len(messages)}", id=f"a{len(messages)}")]}
    graph = StateGraph(_Chat)
    graph.add_node("reply", reply)
    graph.add_edge(START, "reply")
    path = tmp_path / "images.db"
    config = {"configurable": {"thread_id": "eyes"}}

    def turns(app: Any) -> None:
        # durability "sync": with "async" (the default) a put runs while the next step does, so
        # the in-place edit can race with the put of the checkpoint before it (as it can with
        # LangGraph's own savers); the comparison is of what each put was handed
        for i, image in enumerate(images):
            app.invoke({"messages": [HumanMessage(id=f"q{i}", content=[
                {"type": "text", "text": f"look {i}"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64," + image}}])]}, config,
                durability="sync")
    memory = InMemorySaver()
    turns(graph.compile(checkpointer=memory))
    with InspectorSaver.from_conn_string(str(path)) as saver:
        turns(graph.compile(checkpointer=saver))
        ours = [t.checkpoint["channel_values"] for t in saver.list(config)]
    theirs = [t.checkpoint["channel_values"] for t in memory.list(config)]
    assert len(ours) == len(theirs) >= 2 * len(images)
    for a, b in zip(ours, theirs, strict=True):
        assert a.keys() == b.keys()
        assert [(type(m), m.model_dump()) for m in a.get("messages", [])] == \
            [(type(m), m.model_dump()) for m in b.get("messages", [])]
    assert theirs[0]["messages"][0].content[0]["text"] == "looked at again"
    assert theirs[-2]["messages"][0].content[0]["text"] == "look 0"


def test_a_server_s_saver_keeps_the_caches_of_its_latest_threads_only(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A saver in a server meets thread after thread; each lane kept its caches (its encoder
    and packer buffer, its lowering, its last state: about the state again, 1.2 MB a thread of
    a small chat) for good, so memory grew with every thread ever served. Past the
    ``WARM_LANES`` used last, a lane drops them (and, once its graph has stopped, all but the
    latest checkpoints' names and scores); a cooled thread goes on as a new process's would."""
    from inspector.record import langgraph as saver_module
    monkeypatch.setattr(saver_module, "WARM_LANES", 3)
    path = tmp_path / "server.db"

    def reply(state: _Chat) -> dict:
        return {"messages": [AIMessage(content=f"answer {len(state['messages'])}")]}
    graph = StateGraph(_Chat)
    graph.add_node("reply", reply)
    graph.add_edge(START, "reply")
    with InspectorSaver.from_conn_string(str(path)) as saver:
        app = graph.compile(checkpointer=saver)
        for thread in range(12):
            for turn in range(3):
                app.invoke({"messages": [HumanMessage(content=f"q{turn}")]}, {"configurable": {"thread_id": f"t{thread}"}})
        warm = [key for key, lane in saver._lanes.items() if lane._encoder is not None or lane.state is not None]
        assert len(saver._lanes) == 12 and len(warm) <= 3, warm
        cold = saver._lanes[("t0", "")]
        assert cold.state is None and cold._lowering is None
        assert all(len(found) <= saver_module.COOL_KEEP for found in (cold.outputs, cold.named, cold.heads, cold.scored))
        # a cooled thread goes on: its state and history as LangGraph keeps them
        final = app.invoke({"messages": [HumanMessage(content="again")]}, {"configurable": {"thread_id": "t0"}})
        assert [m.content for m in final["messages"]] == ["q0", "answer 1", "q1", "answer 3", "q2", "answer 5",
                                                          "again", "answer 7"]
        history = [(s.next, len(s.values.get("messages", []))) for s in
                   app.get_state_history({"configurable": {"thread_id": "t0"}})]
    from langgraph.checkpoint.memory import InMemorySaver
    memory = graph.compile(checkpointer=InMemorySaver())
    for text in ("q0", "q1", "q2", "again"):
        memory.invoke({"messages": [HumanMessage(content=text)]}, {"configurable": {"thread_id": "t0"}})
    assert history == [(s.next, len(s.values.get("messages", []))) for s in
                       memory.get_state_history({"configurable": {"thread_id": "t0"}})]
    with open_store(str(path)) as store:
        runs = {r.name: r for r in store.list_runs()}
        assert runs["t0"].status == "completed" and runs["t0"].checkpoint_count == len(history)
        assert len(store.load(f"{runs['t0'].id}:-1").state["messages"]) == 8


@pytest.mark.parametrize("damage", ["UPDATE ci_lg_checkpoints SET body='text', type=x'ff'",
                                    "UPDATE ci_lg_checkpoints SET metadata=x'ff00'",
                                    "UPDATE ci_lg_checkpoints SET body=x'c1c1'"])
def test_a_damaged_stored_checkpoint_is_a_sentence_to_the_saver(tmp_path: Path, damage: str) -> None:
    """A checkpoint whose body or metadata column is damaged (the hostile corpus's lane cases):
    get_tuple and list raised TypeError, JSONDecodeError or ValueError from deep inside; they
    raise CorruptDataError naming the checkpoint and thread."""
    from inspector.errors import CorruptDataError
    path = tmp_path / "lanes.db"
    config = {"configurable": {"thread_id": "t"}}
    with InspectorSaver.from_conn_string(str(path)) as saver:
        graph = StateGraph(_Chat)
        graph.add_node("reply", lambda state: {"messages": [AIMessage(content="hi")]})
        graph.add_edge(START, "reply")
        graph.compile(checkpointer=saver).invoke({"messages": [HumanMessage(content="q")]}, config)
    with sqlite3.connect(path) as conn:
        conn.execute(damage)
    with InspectorSaver.from_conn_string(str(path)) as saver:
        with pytest.raises(CorruptDataError, match="of thread 't' cannot be decoded|body is not bytes"):
            saver.get_tuple(config)
        with pytest.raises(CorruptDataError, match="cannot be decoded|body is not bytes"):
            list(saver.list(config, filter={"source": "loop"}))


def test_a_damaged_pending_write_is_a_sentence_to_the_saver(tmp_path: Path) -> None:
    """A pending write whose typed leaf holds a number where its serialized bytes should be
    (the hostile corpus's ``lane_write_leaf_a_number``): get_tuple and list raised LangGraph's
    ValueError from its deserializer; they raise CorruptDataError naming the checkpoint."""
    from inspector.errors import CorruptDataError
    from tests.hostile.corpus import _LEAF_NUMBER, _lane_base
    path = tmp_path / "lanes.db"
    _lane_base(path)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE ci_lg_writes SET codec=0, data=?, size=?", (_LEAF_NUMBER, len(_LEAF_NUMBER)))
    config = {"configurable": {"thread_id": "t1"}}
    with (InspectorSaver.from_conn_string(str(path)) as saver,
          pytest.raises(CorruptDataError, match="pending writes of checkpoint .* of thread 't1' cannot be decoded")):
        for found in saver.list(config):
            saver.get_tuple(found.config)


def test_a_step_where_one_task_fails_and_another_interrupts_is_failed(tmp_path: Path) -> None:
    """The interrupt of a sibling written after the failure turned the run interrupted with no
    error, where reading SqliteSaver's rows of the same graph says failed."""
    from langgraph.graph import END
    from langgraph.types import interrupt

    class S(TypedDict, total=False):
        out: Annotated[list, operator.add]

    def asker(state: S) -> dict:
        time.sleep(0.1)          # its interrupt is written after the failure
        return {"out": [interrupt("ok?")]}

    def failer(state: S) -> dict:
        raise ValueError("boom")

    builder = StateGraph(S)
    builder.add_node("asker", asker)
    builder.add_node("failer", failer)
    builder.add_edge(START, "asker")
    builder.add_edge(START, "failer")
    builder.add_edge("asker", END)
    builder.add_edge("failer", END)
    with InspectorSaver.from_conn_string(str(tmp_path / "s.db")) as saver, pytest.raises(ValueError, match="boom"):
        builder.compile(checkpointer=saver).invoke({}, {"configurable": {"thread_id": "t"}})
    with open_store(str(tmp_path / "s.db")) as store:
        (run,) = store.list_runs()
        assert run.status == "failed" and "boom" in (run.last_error or "")


def test_a_bytearray_reads_back_as_langgraphs_own_savers_read_it(tmp_path: Path) -> None:
    """In a state, LangGraph's savers write a checkpoint's values in one encoding: a bytearray
    is bytes there (InspectorSaver kept a whole channel value's bytearray); a write is
    serialized alone, and a bytearray written whole stays one — in every saver."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    class S(TypedDict, total=False):
        d: dict
        top: Any

    def node(state: S) -> dict:
        return {"d": {"ba": bytearray(b"ab")}, "top": bytearray(b"ef")}

    builder = StateGraph(S)
    builder.add_node("node", node)
    builder.add_edge(START, "node")
    conn = sqlite3.connect(str(tmp_path / "lg.db"), check_same_thread=False)
    oracle = builder.compile(checkpointer=SqliteSaver(conn))
    oracle.invoke({}, {"configurable": {"thread_id": "t"}})
    theirs = oracle.get_state({"configurable": {"thread_id": "t"}}).values
    conn.close()
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    with InspectorSaver.from_conn_string(str(tmp_path / "s.db")) as saver:
        graph = builder.compile(checkpointer=saver)
        graph.invoke({}, {"configurable": {"thread_id": "t"}})
        ours = graph.get_state({"configurable": {"thread_id": "t"}}).values
        head = saver.get_tuple(config)
        saver.put_writes(head.config, [("top", bytearray(b"w"))], "task-1")
        written = saver.get_tuple(head.config).pending_writes
    assert ours == theirs and [type(v) for v in ours.values()] == [type(v) for v in theirs.values()]
    assert type(ours["top"]) is bytes
    assert [(c, type(v)) for _, c, v in written] == [("top", bytearray)]


def test_a_thread_with_update_state_forks_has_the_branches_sqlitesavers_has(tmp_path: Path) -> None:
    """A thread InspectorSaver wrote showed as one flat line in the window (no branch selector)
    where the same thread in SqliteSaver's file shows its branches: the store gives its tree."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    from inspector.store.branches import thread_branches

    class S(TypedDict, total=False):
        n: int
        limit: int

    def step(state: S) -> dict:
        return {"n": state.get("n", 0) + 1}

    builder = StateGraph(S)
    builder.add_node("step", step)
    builder.add_edge(START, "step")
    builder.add_conditional_edges("step", lambda s: "step" if s["n"] < s["limit"] else "__end__")

    def run(saver: Any) -> None:
        graph = builder.compile(checkpointer=saver)
        config = {"configurable": {"thread_id": "t"}}
        graph.invoke({"n": 0, "limit": 3}, config)
        first = list(graph.get_state_history(config))[-2]
        graph.update_state(first.config, {"limit": 1})      # a second child of an older checkpoint
        graph.invoke(None, config)

    conn = sqlite3.connect(str(tmp_path / "lg.db"), check_same_thread=False)
    run(SqliteSaver(conn))
    conn.close()
    with InspectorSaver.from_conn_string(str(tmp_path / "s.db")) as saver:
        run(saver)
    shapes = []
    for path in ("lg.db", "s.db"):
        with open_store(str(tmp_path / path)) as store:
            (thread,) = [r for r in store.list_runs() if r.parent_run is None]
            rows = store.topology(thread.id)
            assert rows is not None
            shapes.append(sorted(tuple(b.seqs) for b in thread_branches(rows)))
    assert shapes[0] == shapes[1] and len(shapes[0]) == 2


class _Item(pydantic.BaseModel):
    any: Any = None


@dataclasses.dataclass
class _Note:
    pair: Any = None


class _Typed(TypedDict):
    messages: Annotated[list, add_messages]
    item: _Item
    note: _Note


def _typed_graph(checkpointer):
    def step(state: _Typed) -> dict:
        return {"messages": [AIMessage("hi", id="a1", additional_kwargs={"pair": (1, 2)})],
                "item": _Item(any=(3, (4, 5))), "note": _Note(pair=("x", 1))}
    graph = StateGraph(_Typed)
    graph.add_node("step", step)
    graph.add_edge(START, "step")
    return graph.compile(checkpointer=checkpointer)


def _typed_values(values: dict) -> tuple:
    return values["messages"][1].additional_kwargs, values["item"].any, values["note"].pair


def test_tuples_inside_typed_values_read_back_as_after_a_restart(tmp_path: Path) -> None:
    """A tuple inside a message's ``additional_kwargs``, a pydantic ``Any`` field or a dataclass
    field is what LangGraph's serializer makes of it (a list) whether the state is read from
    the saver that put it, from one opened after a restart, or from ``SqliteSaver``: the same
    process's saver used to hand out copies of the very objects, tuples kept."""
    from langgraph.checkpoint.sqlite import SqliteSaver
    config = {"configurable": {"thread_id": "t"}}
    start = {"messages": [HumanMessage("q", id="h")], "item": _Item(), "note": _Note()}
    with InspectorSaver.from_conn_string(str(tmp_path / "inspector.db")) as saver:
        graph = _typed_graph(saver)
        graph.invoke(start, config)
        same = _typed_values(graph.get_state(config).values)
        again = _typed_values(graph.get_state(config).values)      # the copies the first read made
        graph.invoke({"messages": [HumanMessage("more", id="h2")]}, config)   # put again: still exact
        grown = graph.get_state(config).values
    with InspectorSaver.from_conn_string(str(tmp_path / "inspector.db")) as saver:
        restarted = _typed_values(_typed_graph(saver).get_state(config).values)
    with SqliteSaver.from_conn_string(str(tmp_path / "langgraph.db")) as saver:
        graph = _typed_graph(saver)
        graph.invoke(start, config)
        langgraph = _typed_values(graph.get_state(config).values)
    assert langgraph == ({"pair": [1, 2]}, [3, [4, 5]], ["x", 1])
    assert repr(same) == repr(again) == repr(restarted) == repr(langgraph)     # (repr: lists, not tuples)
    assert [m.content for m in grown["messages"]] == ["q", "hi", "more"]      # (the reply's id again: replaced)
