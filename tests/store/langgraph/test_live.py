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
