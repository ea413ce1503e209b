"""The benchmarks' real LangGraph graphs build and run (a bench run that raises is no figure)."""

from __future__ import annotations

from langgraph.checkpoint.memory import InMemorySaver

from inspector.bench.langgraph import GRAPH_THREAD, build_graph_thread


def test_bench_langgraph_graph_thread_runs() -> None:
    # the class-form State under __future__ annotations reached LangGraph as the string
    # "Annotated[list, add_messages]" and the run stopped with NameError
    saver = InMemorySaver()
    build_graph_thread(saver, 3)
    config = {"configurable": {"thread_id": GRAPH_THREAD, "checkpoint_ns": ""}}
    latest = saver.get_tuple(config)
    assert latest is not None
    assert latest.checkpoint["channel_values"]["turns"] == 3
    # go + (agent, tool) x 2 + the last agent turn
    assert len(latest.checkpoint["channel_values"]["messages"]) == 6
