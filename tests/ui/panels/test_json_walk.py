"""Qt-free helpers behind the State tab: previews, sizes, search, and chat message detection."""

from __future__ import annotations

import json

from inspector.ui.models.json_walk import json_sizes, preview, scalar_size, search_paths, type_name
from inspector.ui.models.messages import build_conversation, find_message_lists, to_message


def test_previews_count_items_and_keys() -> None:
    assert preview(list(range(24))) == "[24 items]"
    assert preview({"a": 1, "b": 2, "c": 3, "d": 4, "e": 5}) == "{5 keys}"
    assert preview(list(range(3_000_000))) == "[3,000,000 items]"
    assert preview(dict.fromkeys(range(1_000_001))) == "{1,000,001 keys}"
    assert preview({"role": "user", "content": "hi"}) == "{2 keys}  user: hi"
    assert preview(None) == "null" and preview(True) == "true"
    long = "x" * 500
    assert len(preview(long)) == 160 and preview(long).endswith("…")
    assert preview("a\nb") == "a ⏎ b"


def test_type_names() -> None:
    assert type_name({"__type__": "langchain_core.messages.human.HumanMessage"}) == "HumanMessage"
    assert [type_name(v) for v in ({}, [], "", 1, 1.5, False, None)] == [
        "object", "array", "string", "integer", "number", "boolean", "null"]


def _reference_size(value) -> int:
    """The size json_sizes documents, item by item."""
    if isinstance(value, dict):
        return 2 + sum(scalar_size(str(k)) + 1 + _reference_size(v) for k, v in value.items()) + max(0, len(value) - 1)
    if isinstance(value, list):
        return 2 + sum(_reference_size(v) for v in value) + max(0, len(value) - 1)
    return scalar_size(value)


def test_json_sizes_of_flat_containers_equal_the_item_by_item_sum() -> None:
    flat = [1, -20, 3.5, float("inf"), "plain", "é ünïcode ✓", "", True, False, None, 10**30]
    value = {"flat": flat, "texts": {"ascii": "a", "wide": "日本語", 7: None},
             "numbers": list(range(5000)), "mixed": [flat, {"x": flat}, []], "empty": {}}
    sizes = json_sizes(value)
    for container in (value, flat, value["texts"], value["numbers"], value["mixed"], value["mixed"][1]):
        assert sizes[id(container)] == _reference_size(container)


def test_json_sizes_match_compact_json_for_ascii() -> None:
    value = {"a": [1, {"b": "text", "c": None}], "d": True, "e": 2.5}
    sizes = json_sizes(value)
    assert sizes[id(value)] == len(json.dumps(value, separators=(",", ":")))
    assert sizes[id(value["a"])] == len(json.dumps(value["a"], separators=(",", ":")))


def test_search_finds_keys_and_values_in_document_order() -> None:
    value = {"draft": "The Budget", "budget": {"total": 3}, "log": ["budget ok", 7]}
    assert search_paths(value, "BUDGET") == [("draft",), ("budget",), ("log", 0)]
    assert search_paths(value, "") == []
    assert search_paths(value, "nothing") == []


def test_demo_state_has_one_conversation(panels_store, beekeeping) -> None:
    state = panels_store.load(f"{beekeeping.id}:-1").state
    assert find_message_lists(state) == [("messages",)]
    conversation = build_conversation(state, ("messages",))
    assert len(conversation.messages) == len(state["messages"])
    assert {m.role for m in conversation.messages} == {"user", "assistant", "tool"}
    tool = next(m for m in conversation.messages if m.role == "tool")
    assert tool.label.startswith("tool · ")


def test_langchain_message_shapes() -> None:
    state = {"channel_values": {"messages": [
        {"__type__": "langchain_core.messages.system.SystemMessage", "content": "be brief"},
        {"__type__": "langchain_core.messages.human.HumanMessage", "content": [{"type": "text", "text": "hi"}]},
        {"__type__": "langchain_core.messages.ai.AIMessage", "content": "",
         "tool_calls": [{"name": "search", "args": {"q": "bees"}, "id": "c1"}]},
        {"type": "tool", "content": "3 hits", "name": "search", "tool_call_id": "c1"},
        {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "AIMessage"],
         "kwargs": {"content": "done"}},
    ]}}
    assert find_message_lists(state) == [("channel_values", "messages")]
    messages = build_conversation(state, ("channel_values", "messages")).messages
    assert [m.role for m in messages] == ["system", "user", "assistant", "tool", "assistant"]
    assert messages[1].text == "hi"
    assert messages[2].calls == ('search({"q": "bees"})',)
    assert messages[3].label == "tool · search"
    assert messages[4].text == "done"


def test_non_message_items_are_shown_not_dropped() -> None:
    message = to_message(3, {"weird": 1})
    assert message.role == "other" and '"weird"' in message.text
