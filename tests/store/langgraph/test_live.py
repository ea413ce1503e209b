"""How finished tasks' writes combine with a channel for the live head (``live.combine``)."""

from __future__ import annotations

from inspector.store.langgraph.live import combine

AI = "langchain_core.messages.ai.AIMessage"


def test_messages_merge_by_id_and_lists_concatenate() -> None:
    old = [{"__type__": AI, "id": "a", "content": "draft"}]
    new = [{"__type__": AI, "id": "a", "content": "final"}, {"__type__": AI, "id": "b", "content": "more"}]
    assert [m["content"] for m in combine(old, new)] == ["final", "more"]
    assert combine(["X"], ["Y"]) == ["X", "Y"] and combine(None, ["Y"]) == ["Y"]


def test_sets_maps_text_and_numbers() -> None:
    a = {"__type__": "builtins.set", "value": [1, 3]}
    assert combine(a, {"__type__": "builtins.set", "value": [2, 3]}) == {"__type__": "builtins.set", "value": [1, 2, 3]}
    assert combine({"k": 1}, {"j": 2}) == {"k": 1, "j": 2}
    assert combine("ab", "c") == "abc" and combine(2, 3) == 5 and combine(True, False) is False


def test_a_fork_made_while_the_store_is_open_shows_in_the_branch_counts(tmp_path) -> None:
    """Child counts and the channels written are read once per thread and kept while the
    store's cursor stays (a big thread's every page and checkpoint read them again before):
    a fork LangGraph adds meanwhile moves the cursor, and the next listing counts it."""
    from tests.lgcorpus import sqlite_saver
    from tests.lgcorpus.forks import build
    from tests.lgcorpus._util import cfg

    from inspector.store import open_store
    path = tmp_path / "lg.db"
    with sqlite_saver(path) as saver:
        graph = build(saver)
        graph.invoke({"topic": "release", "mode": "act", "log": []}, cfg("t"))
        first = list(graph.get_state_history(cfg("t")))[-2]        # the checkpoint after the input
        with open_store(path) as store:
            before = {i.seq: i.branch_count for i in store.list_checkpoints("t")}
            seq = next(i.seq for i in store.list_checkpoints("t")
                       if str(i.id).endswith(first.config["configurable"]["checkpoint_id"]))
            assert before[seq] == 0
            graph.update_state(first.config, {"mode": "skip"})           # a second child of it
            after = {i.seq: i.branch_count for i in store.list_checkpoints("t")}
            info = store.get_checkpoint(f"t:{seq}")
        assert after[seq] == 1 and info.branch_count == 1
