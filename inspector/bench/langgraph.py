"""``bench langgraph``: listing a 10,000-checkpoint LangGraph thread, our adapter vs SqliteSaver.list.

The thread is written into a temporary file through the real ``SqliteSaver.put`` /
``put_writes`` (an agent loop: LangChain messages in a rolling window, a todos list,
trigger channels, each step's pending writes with a task path). A second, small thread
is produced by a real compiled ``StateGraph`` to check both readers agree on real output.
Both readers then list the big thread's whole history in the same process (best of
``--repeat`` / ``--saver-repeat``); the figure is SqliteSaver time / our time (target ≥ 10×).
"""

from __future__ import annotations

import argparse
import datetime as dt
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any
from collections.abc import Callable

from inspector.bench._util import dump, print_table
from inspector.errors import StoreError

TARGET_RATIO = 10.0
THREAD = "bench-thread"
GRAPH_THREAD = "graph-thread"
WINDOW = 20


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``bench langgraph``."""
    parser = sub.add_parser("langgraph", help="LangGraph: list a 10k-checkpoint thread (ours vs SqliteSaver.list), "
                            "or --workload write: LangGraph's savers vs InspectorSaver on a real graph")
    parser.add_argument("--workload", choices=("list", "write"), default="list",
                        help="list (default): read a LangGraph database; write: checkpoint savers on graph.invoke")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--checkpoints", type=int, default=10_000, help="checkpoints in the big thread")
    parser.add_argument("--graph-steps", type=int, default=50, help="loop turns of the real-graph thread")
    parser.add_argument("--repeat", type=int, default=3, help="runs of our listing (best is kept)")
    parser.add_argument("--saver-repeat", type=int, default=1,
                        help="runs of SqliteSaver.list (best is kept; one run takes ~20 s at 10k)")
    parser.add_argument("--keep", metavar="DIR", help="write the database into DIR and keep it")
    parser.add_argument("--check", action="store_true", help="exit 1 when the target is missed")
    from inspector.bench import _lgwrite as lgwrite
    lgwrite.add_arguments(parser)
    parser.set_defaults(func=run)


def _imports() -> tuple[Any, ...]:
    try:
        from langchain_core.messages import AIMessage, HumanMessage
        from langgraph.checkpoint.base.id import uuid6
        from langgraph.checkpoint.sqlite import SqliteSaver
    except ImportError as err:
        raise StoreError("bench langgraph needs langgraph and langgraph-checkpoint-sqlite "
                         f"installed ({err.name} is missing).") from err
    return SqliteSaver, uuid6, HumanMessage, AIMessage


def _version(n: int) -> str:
    return f"{n:032}.{0.5:016}"


def build_thread(saver: Any, count: int) -> None:
    """Write ``count`` checkpoints of one agent-loop thread through ``saver.put``/``put_writes``."""
    _, uuid6, human, ai = _imports()
    messages: list[Any] = [human(content="Refactor the billing module", id="m0")]
    todos = [{"content": f"todo {i}", "status": "pending"} for i in range(5)]
    config = {"configurable": {"thread_id": THREAD, "checkpoint_ns": ""}}
    versions: dict[str, str] = {}
    seen: dict[str, dict[str, str]] = {}
    for step in range(-1, count - 1):
        node = "agent" if step % 2 else "tools"
        trigger = f"branch:to:{node}"
        for channel in ("messages", "todos", trigger):
            versions[channel] = _version(step + 2)
        checkpoint = {"v": 4, "id": str(uuid6(clock_seq=step)),
                      "ts": dt.datetime.now(dt.UTC).isoformat(),
                      "channel_values": {"messages": list(messages), "todos": [dict(t) for t in todos],
                                         trigger: None},
                      "channel_versions": dict(versions), "versions_seen": {k: dict(v) for k, v in seen.items()},
                      "updated_channels": ["messages", "todos", trigger]}
        source = "input" if step < 0 else "loop"
        config = saver.put(config, checkpoint, {"source": source, "step": step, "parents": {}},
                           {c: versions[c] for c in ("messages", "todos", trigger)})
        reply = ai(content=f"step {step}: {node} did some work " + "x" * 200, id=f"m{step + 1}")
        branch = f"branch:to:{'tools' if node == 'agent' else 'agent'}"
        saver.put_writes(config, [("messages", [reply]), (branch, None)],
                         task_id=f"task-{step}", task_path=f"~__pregel_pull, {node}")
        messages = (messages + [reply])[-WINDOW:]
        todos[(step + 1) % 5]["status"] = "completed" if step % 3 else "in_progress"
        seen[node] = {trigger: versions[trigger]}


def build_graph_thread(saver: Any, steps: int) -> None:
    """A real compiled StateGraph looping agent ↔ tools ``steps`` times (real checkpoints)."""
    from typing import Annotated, TypedDict

    from langgraph.graph import END, START, StateGraph
    from langgraph.graph.message import add_messages
    _, _, human, ai = _imports()

    # functional form: real objects, not string annotations (this module uses __future__
    # annotations, so a class body's Annotated[...] would reach LangGraph as an unresolvable string)
    State = TypedDict("State", {"messages": Annotated[list, add_messages], "turns": int}, total=False)  # noqa: UP013

    def agent(state: State) -> dict:
        """Answer and count the turn."""
        return {"messages": [ai(content=f"turn {state.get('turns', 0)}")], "turns": state.get("turns", 0) + 1}

    def tools(state: State) -> dict:
        """Return a tool result."""
        return {"messages": [human(content="tool result")]}

    graph = StateGraph(State)
    graph.add_node("agent", agent)
    graph.add_node("tools", tools)
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", lambda s: END if s["turns"] >= steps else "tools", ["tools", END])
    graph.add_edge("tools", "agent")
    app = graph.compile(checkpointer=saver)
    app.invoke({"messages": [human(content="go")], "turns": 0},
               {"configurable": {"thread_id": GRAPH_THREAD}, "recursion_limit": steps * 2 + 10})


def _best(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def measure(path: Path, repeat: int, saver_repeat: int = 1) -> dict[str, Any]:
    """Time both readers on the database at ``path``."""
    from inspector.store import open_store
    saver_cls = _imports()[0]
    conn = sqlite3.connect(str(path), check_same_thread=False)
    saver = saver_cls(conn)
    cfg = {"configurable": {"thread_id": THREAD}}
    with open_store(path) as store:
        t_open0 = time.perf_counter()
        store.list_runs()
        runs_s = time.perf_counter() - t_open0
        ours_s, ours = _best(lambda: store.list_checkpoints(THREAD), repeat)
        page_s, _ = _best(lambda: store.list_checkpoints(THREAD, after_seq=4_999, limit=200), repeat)
        theirs_s, theirs = _best(lambda: list(saver.list(cfg)), saver_repeat)
        graph_ours = store.list_checkpoints(GRAPH_THREAD)
        graph_theirs = list(saver.list({"configurable": {"thread_id": GRAPH_THREAD}}))
        agree = (len(ours) == len(theirs) and len(graph_ours) == len(graph_theirs)
                 and [c.kind for c in reversed(graph_ours)] == [t.metadata["source"] for t in graph_theirs])
    conn.close()
    return {"checkpoints": len(ours), "ours_s": ours_s, "sqlitesaver_s": theirs_s,
            "ratio": theirs_s / ours_s if ours_s else float("inf"), "page_200_s": page_s,
            "list_runs_s": runs_s, "graph_checkpoints": len(graph_ours), "readers_agree": agree}


def run(args: argparse.Namespace) -> int:
    """Build the database, time both readers, print the figures (or the write workload)."""
    if getattr(args, "workload", "list") == "write":
        from inspector.bench import _lgwrite as lgwrite
        return lgwrite.run(args)
    saver_cls = _imports()[0]
    with tempfile.TemporaryDirectory(prefix="lg-bench-") as tmp:
        folder = Path(args.keep) if args.keep else Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "langgraph-bench.db"
        path.unlink(missing_ok=True)
        t0 = time.perf_counter()
        conn = sqlite3.connect(str(path), check_same_thread=False)
        saver = saver_cls(conn)
        saver.setup()
        conn.execute("PRAGMA synchronous=OFF")  # build speed only; reads are unaffected
        build_thread(saver, args.checkpoints)
        build_graph_thread(saver, args.graph_steps)
        conn.close()
        build_s = time.perf_counter() - t0
        result = {"build_s": build_s, "db_bytes": path.stat().st_size, **measure(path, args.repeat, args.saver_repeat),
                  "target_ratio": TARGET_RATIO}
    result["ok"] = result["ratio"] >= TARGET_RATIO and result["readers_agree"]
    if args.json:
        dump(result)
    else:
        print(f"LangGraph thread of {result['checkpoints']} checkpoints "
              f"({result['db_bytes'] / 1e6:.1f} MB, built in {build_s:.1f} s)")
        print_table(["reader", "seconds"], [["ours list_checkpoints (all)", result["ours_s"]],
                                            ["ours one page of 200", result["page_200_s"]],
                                            ["SqliteSaver.list (all)", result["sqlitesaver_s"]]])
        print(f"ratio: {result['ratio']:.1f}x faster (target >= {TARGET_RATIO:.0f}x) "
              f"{'OK' if result['ok'] else 'MISSED'}; readers agree: {result['readers_agree']}")
    return 1 if args.check and not result["ok"] else 0
