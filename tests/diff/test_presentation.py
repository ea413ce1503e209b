"""How ``checkpoint-inspector diff`` words a change: messages say what they are, values that
print alike are told apart, numbers say nothing meaningless, and ``--json`` names the types
JSON cannot show (real stores written by the recorder and by LangGraph's SqliteSaver)."""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path
from typing import Annotated, Any

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from inspector.diff.preview import short_repr
from inspector.record import Checkpointer
from inspector.store import open_store

from .test_cli import cli


class ChatState(TypedDict):
    messages: Annotated[list, add_messages]


def write_langgraph_chat(path: Path) -> tuple[str, str]:
    """A LangGraph agent through SqliteSaver: a system and a human message, then an AI message
    calling ``write_file`` and the tool's answer. The ids of the checkpoint after the input
    (2 messages) and of the last one (4 messages)."""
    def agent(state: ChatState) -> dict:
        if len(state["messages"]) > 2:
            return {}
        return {"messages": [AIMessage(content="", id="ai-0", tool_calls=[{
            "id": "call_0", "name": "write_file",
            "args": {"path": "src/f0.py", "content": {"lines": ["x = 0"], "mode": "w"}}}])]}

    def tools(state: ChatState) -> dict:
        call = state["messages"][-1].tool_calls[0]
        return {"messages": [ToolMessage(content=json.dumps({"ok": True, "path": call["args"]["path"]}),
                                         tool_call_id=call["id"], id="tool-call_0")]}

    builder = StateGraph(ChatState)
    builder.add_node("agent", agent)
    builder.add_node("tools", tools)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", lambda s: "tools" if getattr(s["messages"][-1], "tool_calls", None) else END)
    builder.add_edge("tools", "agent")
    conn = sqlite3.connect(str(path), check_same_thread=False)
    try:
        graph = builder.compile(checkpointer=SqliteSaver(conn))
        graph.invoke({"messages": [SystemMessage(content="sys", id="sys"),
                                   HumanMessage(content="Write 3 files", id="h1")]},
                     {"configurable": {"thread_id": "chat"}})
    finally:
        conn.close()
    with open_store(path) as store:
        infos = [i for i in store.list_checkpoints("chat") if not i.lane]
        counts = [len(store.load(i.id).state.get("messages") or []) for i in infos]
    return infos[counts.index(2)].id, infos[-1].id


def _two_steps(path: Path, old: Any, new: Any) -> str:
    with Checkpointer(path, name="shown", heartbeat=3600) as cp:
        cp.save(old, force=True)
        cp.save(new, force=True)
        return cp.run_id


def _text_changes(path: Path, a: str, b: str) -> list[str]:
    done = cli("diff", str(path), a, b)
    assert done.returncode == 0, done.stderr
    return [line.strip() for line in done.stdout.split("changes (", 1)[1].splitlines()[1:] if line.strip()]


def _json_changes(path: Path, a: str, b: str) -> dict[str, dict]:
    done = cli("diff", str(path), a, b, "--json")
    assert done.returncode == 0, done.stderr
    return {c["display"]: c for c in json.loads(done.stdout)["changes"]}


def test_an_added_langchain_message_says_what_it_is(tmp_path: Path) -> None:
    """Added LangChain messages printed ``{…10 keys}``: now their class, id and what they hold."""
    path = tmp_path / "lg.db"
    first, last = write_langgraph_chat(path)
    lines = _text_changes(path, first, last)
    assert "+ messages[2] = AIMessage ai-0: tool_calls write_file(path='src/f0.py', …)" in lines
    assert """+ messages[3] = ToolMessage tool-call_0: '{"ok": true, "path": "src/f0.py"}'""" in lines
    assert not any("keys}" in line for line in lines)


def test_a_removed_plain_message_too_long_to_show_says_what_it_is(tmp_path: Path) -> None:
    """An OpenAI-style message (arguments a JSON string) and a tool answer; a short one that
    fits stays shown whole."""
    call = {"id": "call_0", "type": "function",
            "function": {"name": "edit_file", "arguments": json.dumps({"path": "src/m0.py", "edits": [1]})}}
    chat = [{"role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_0", "content": "ok: edited src/m0.py (12 lines changed)"}]
    run = _two_steps(tmp_path / "s.db", {"messages": chat, "n": 1}, {"messages": chat[:1], "n": 1})
    lines = _text_changes(tmp_path / "s.db", f"{run}:0", f"{run}:1")
    assert lines == ["- messages[1] (was assistant: tool_calls edit_file(path='src/m0.py', edits=[…]))",
                     "- messages[2] (was tool call_0: 'ok: edited src/m0.py (12 lines changed)')"]
    assert short_repr(chat[0]) == "{'role': 'user', 'content': 'hi'}"


def test_strings_that_print_alike_are_told_apart(tmp_path: Path) -> None:
    """NFD against NFC, a skin-tone modifier, a difference past the preview's cut: each printed
    ``'café' → 'café'``; a visible difference prints as before."""
    old = {"comb": "cafe\u0301", "k": "\u00e9", "u": "hello 👋🏽 world", "late": "x" * 70 + "a", "rtl": "abc"}
    new = {"comb": "caf\u00e9", "k": "e\u0301", "u": "hello 👋🏿 world", "late": "x" * 70 + "b", "rtl": "abd"}
    run = _two_steps(tmp_path / "s.db", old, new)
    lines = _text_changes(tmp_path / "s.db", f"{run}:0", f"{run}:1")
    assert lines == [
        "~ comb: 'cafe\\u0301' → 'café' (same text once normalised: NFD → NFC)",
        "~ k: 'é' → 'e\\u0301' (same text once normalised: NFC → NFD)",
        "~ u: 'hello 👋\\U0001f3fd world' → 'hello 👋\\U0001f3ff world' "
        "(only combining, modifier or invisible code points differ)",
        "~ late: '…xxxxxxxxxxa' → '…xxxxxxxxxxb' (first difference at character 70)",
        "~ rtl: 'abc' → 'abd'"]


def test_numbers_say_no_meaningless_difference(tmp_path: Path) -> None:
    """``1.5 → nan (+nan)`` and ``1 → 1.0 (+0)`` said nothing true: no difference with a side
    that is not finite, the types when they changed."""
    old = {"y": 1.5, "z": math.inf, "a": 1, "h": 1, "v": 2}
    new = {"y": math.nan, "z": -math.inf, "a": 1.0, "h": 2.5, "v": 5}
    run = _two_steps(tmp_path / "s.db", old, new)
    lines = _text_changes(tmp_path / "s.db", f"{run}:0", f"{run}:1")
    assert lines == ["~ y: 1.5 → nan", "~ z: inf → -inf", "~ a: 1 → 1.0 (int → float)",
                     "~ h: 1 → 2.5 (+1.5, int → float)", "~ v: 2 → 5 (+3)"]


def test_json_names_the_types_it_cannot_show(tmp_path: Path) -> None:
    """Bytes are hex and NaN is "NaN": a bytes or non-finite side has its type even when both
    sides have the same type, added and removed values too; a list that became a map says so;
    every other change is the record it was."""
    old = {"small": b"abc", "y": 1.5, "z": math.inf, "g": [1, 2], "gone": math.nan, "n": 1, "s": "a"}
    new = {"small": b"abd", "y": math.nan, "z": -math.inf, "g": {"0": 1, "1": 2}, "blob": b"\x00", "n": 2,
           "s": "b"}
    run = _two_steps(tmp_path / "s.db", old, new)
    changes = _json_changes(tmp_path / "s.db", f"{run}:0", f"{run}:1")
    types = {name: (c.get("old_type"), c.get("new_type")) for name, c in changes.items()}
    assert types == {"small": ("bytes", "bytes"), "y": ("float", "float"), "z": ("float", "float"),
                     "g": ("list", "dict"), "gone": ("float", None), "blob": (None, "bytes"),
                     "n": (None, None), "s": (None, None)}
    assert (changes["small"]["old"], changes["small"]["new"]) == ("616263", "616264")
    assert changes["n"] == {"path": ["n"], "display": "n", "op": "changed", "old": 1, "new": 2,
                            "detail": {"kind": "number", "delta": 1}}
    assert changes["s"] == {"path": ["s"], "display": "s", "op": "changed", "old": "a", "new": "b"}
