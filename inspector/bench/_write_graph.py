"""``bench write`` W5: a real LangGraph ``StateGraph`` with ``add_messages``, checkpointed by
``SqliteSaver`` inside ``graph.invoke``, against the same states saved through ``Checkpointer``.

The graph loops agent -> tool -> agent, each node adding one message of ~600 characters.
It runs three times in the same process: without a checkpointer (the graph's own cost),
with ``SqliteSaver`` (WAL, synchronous=NORMAL), and once more streaming its states, which
are then saved through ``Checkpointer`` one per step. The saver's cost per step is the
difference between the first two runs divided by its checkpoints.
"""

from __future__ import annotations

import random
import sqlite3
import string
import time
from pathlib import Path
from typing import Any

from inspector.bench._util import summary_ms
from inspector.errors import StoreError
from inspector.record import Checkpointer

SYNCHRONOUS = "NORMAL"


def _graph(steps: int, checkpointer: Any = None) -> Any:
    try:
        from typing import Annotated, TypedDict

        from langchain_core.messages import AIMessage, ToolMessage
        from langgraph.graph import END, START, StateGraph
        from langgraph.graph.message import add_messages
    except ImportError as err:
        raise StoreError(f"bench write W5 needs langgraph installed ({err.name} is missing).") from err
    rnd = random.Random(7)
    alphabet = string.ascii_lowercase + "     "
    # functional form: real objects, not strings (this module uses __future__ annotations)
    State = TypedDict("State", {"messages": Annotated[list, add_messages], "turns": int}, total=False)  # noqa: UP013

    def agent(state: State) -> dict:
        """Answer and count the turn."""
        turn = state.get("turns", 0)
        return {"messages": [AIMessage(content="".join(rnd.choices(alphabet, k=600)), id=f"ai-{turn}")],
                "turns": turn + 1}

    def tool(state: State) -> dict:
        """A tool result."""
        turn = state["turns"]
        return {"messages": [ToolMessage(content="".join(rnd.choices(alphabet, k=600)), tool_call_id=f"c{turn}",
                                         id=f"tool-{turn}")]}

    graph = StateGraph(State)
    graph.add_node("agent", agent)
    graph.add_node("tool", tool)
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", lambda s: END if s["turns"] * 2 >= steps else "tool", ["tool", END])
    graph.add_edge("tool", "agent")
    return graph.compile(checkpointer=checkpointer)


def _input() -> dict:
    from langchain_core.messages import HumanMessage
    return {"messages": [HumanMessage(content="Refactor the billing module", id="human-0")], "turns": 0}


def _config(steps: int) -> dict:
    return {"configurable": {"thread_id": "w5"}, "recursion_limit": steps * 2 + 20}


def _plain(state: dict) -> dict:
    from langchain_core.messages import message_to_dict
    return {"messages": [message_to_dict(m) for m in state.get("messages", [])], "turns": state.get("turns", 0)}


def run_w5(tmp: Path, steps: int) -> dict:
    """W5: ours vs SqliteSaver inside graph.invoke, per step and on disk."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    _graph(20).invoke(_input(), _config(20))      # warm-up: imports, first compile
    t0 = time.perf_counter()
    _graph(steps).invoke(_input(), _config(steps))
    bare_s = time.perf_counter() - t0

    path = tmp / "w5-sqlitesaver.db"
    conn = sqlite3.connect(path, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA synchronous={SYNCHRONOUS}")
    saver = SqliteSaver(conn)
    saver.setup()
    t0 = time.perf_counter()
    _graph(steps, saver).invoke(_input(), _config(steps))
    saved_s = time.perf_counter() - t0
    checkpoints = conn.execute("SELECT count(*) FROM checkpoints").fetchone()[0]
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    saver_bytes = sum(p.stat().st_size for p in tmp.glob("w5-sqlitesaver.db*"))

    states = [_plain(s) for s in _graph(steps).stream(_input(), _config(steps), stream_mode="values")]
    ours_path = tmp / "w5-ours.db"
    times = []
    with Checkpointer(ours_path, name="w5", agent="bench", heartbeat=3600) as cp:
        for state in states:
            t0 = time.perf_counter()
            cp.save(state, kind="step", name="step", force=True)
            times.append(time.perf_counter() - t0)
    conn = sqlite3.connect(ours_path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    ours_bytes = sum(p.stat().st_size for p in tmp.glob("w5-ours.db*"))
    saver_ms = (saved_s - bare_s) / max(checkpoints, 1) * 1e3
    ours = summary_ms(times)
    return {"steps": len(states), "saver_checkpoints": checkpoints, "graph_alone_s": bare_s,
            "graph_with_saver_s": saved_s, "saver_ms_per_checkpoint": saver_ms,
            "saver_invoke_ms_per_step": saved_s / max(checkpoints, 1) * 1e3, "ours": ours,
            "ours_mean_ms": ours["mean_ms"], "saver_bytes": saver_bytes, "ours_bytes": ours_bytes,
            "time_ratio": saver_ms / ours["mean_ms"], "bytes_ratio": saver_bytes / max(ours_bytes, 1)}


def print_w5(res: dict) -> None:
    """W5's figures."""
    print(f"\nW5 real StateGraph (add_messages), {res['steps']} states: graph.invoke alone {res['graph_alone_s']:.2f} s, "
          f"with SqliteSaver {res['graph_with_saver_s']:.2f} s ({res['saver_checkpoints']} checkpoints, WAL, "
          f"synchronous={SYNCHRONOUS})")
    print(f"  SqliteSaver: {res['saver_ms_per_checkpoint']:.3f} ms per checkpoint (invoke with minus without), "
          f"{res['saver_bytes'] / 1e6:.2f} MB")
    print(f"  ours (Checkpointer.save of the same states): mean {res['ours']['mean_ms']:.3f} ms, median "
          f"{res['ours']['median_ms']:.3f} ms, {res['ours_bytes'] / 1e6:.2f} MB")
    print(f"  ratios: {res['time_ratio']:.1f}x faster per checkpoint, {res['bytes_ratio']:.0f}x smaller on disk")
