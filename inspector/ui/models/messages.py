"""Qt-free: find message lists in a state and normalise chat messages of many shapes.

Recognised shapes: ``{"role", "content"}`` dicts (OpenAI style, the demo agent), LangChain
messages as decoded by the LangGraph adapter (``{"__type__": "...HumanMessage", ...}``), the
``{"type": "human", "content": ...}`` dict form, and LangChain ``lc`` constructor envelopes.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass
from typing import Any

ROLES = ("user", "assistant", "tool", "system", "other")
_ROLE_WORDS = {"user": "user", "human": "user", "assistant": "assistant", "ai": "assistant",
               "model": "assistant", "tool": "tool", "function": "tool", "system": "system",
               "developer": "system"}
_CLASS_ROLES = {"HumanMessage": "user", "AIMessage": "assistant", "ToolMessage": "tool",
                "FunctionMessage": "tool", "SystemMessage": "system"}
_SKIP_FIELDS = {"role", "content", "type", "__type__", "id", "tool_calls", "additional_kwargs",
                "response_metadata", "example", "invalid_tool_calls", "usage_metadata", "lc"}
MAX_DEPTH = 4
SAMPLE = 50


@dataclass(frozen=True)
class ChatMessage:
    """One message ready to show: role bucket, label, text, tool calls and small extras."""

    index: int
    role: str                           # one of ROLES
    label: str                          # what the header says ("tool · search_sources")
    text: str
    calls: tuple[str, ...] = ()
    extras: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Conversation:
    """A message list found in a state, at ``path``."""

    path: tuple
    messages: tuple[ChatMessage, ...]


def _unwrap(item: Any) -> tuple[str | None, dict] | None:
    """(class name or None, fields) for a message-like dict, None otherwise."""
    if not isinstance(item, dict):
        return None
    tag = item.get("__type__")
    if isinstance(tag, str) and ("Message" in tag.rsplit(".", 1)[-1]):
        return tag.rsplit(".", 1)[-1], item
    if item.get("lc") in (1, 2) and isinstance(item.get("id"), list) and isinstance(item.get("kwargs"), dict):
        name = str(item["id"][-1]) if item["id"] else ""
        return (name, item["kwargs"]) if "Message" in name else None
    if "content" in item and (isinstance(item.get("role"), str) or item.get("type") in _ROLE_WORDS
                              or item.get("type") == "chat"):
        return None, item
    return None


def is_message(item: Any) -> bool:
    """True for a dict that looks like a chat message."""
    return _unwrap(item) is not None


def is_message_list(value: Any) -> bool:
    """True for a non-empty list whose (sampled) items are mostly messages."""
    if not isinstance(value, list) or not value:
        return False
    sample = value[:SAMPLE]
    return sum(1 for item in sample if is_message(item)) >= max(1, int(len(sample) * 0.6))


def find_message_lists(state: Any, max_depth: int = MAX_DEPTH) -> list[tuple]:
    """Paths of message lists in ``state`` (breadth first, so shallow ``messages`` come first)."""
    found: list[tuple] = []
    queue: deque[tuple[tuple, Any]] = deque([((), state)])
    while queue:
        path, node = queue.popleft()
        if is_message_list(node):
            found.append(path)
            continue
        if len(path) >= max_depth:
            continue
        if isinstance(node, dict):
            queue.extend(((*path, k), v) for k, v in node.items() if isinstance(v, (dict, list)))
        elif isinstance(node, list):
            queue.extend(((*path, i), v) for i, v in enumerate(node[:SAMPLE]) if isinstance(v, dict))
    return found


def _role(cls: str | None, fields: dict) -> str:
    if cls:
        base = cls.removesuffix("Chunk")
        if base in _CLASS_ROLES:
            return _CLASS_ROLES[base]
    word = fields.get("role") if isinstance(fields.get("role"), str) else fields.get("type")
    return _ROLE_WORDS.get(str(word).lower(), "other") if word is not None else "other"


def _part_text(part: Any) -> str:
    if isinstance(part, str):
        return part
    if isinstance(part, dict):
        kind = part.get("type")
        if isinstance(part.get("text"), str):
            return part["text"]
        if kind in ("image_url", "image", "input_image"):
            return "[image]"
        if kind == "tool_use":
            return f"[tool use: {part.get('name', '?')}]"
    return _compact(part)


def content_text(content: Any) -> str:
    """Plain text of a message content (a string or a list of content parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_part_text(p) for p in content)
    return _compact(content)


def _compact(value: Any, limit: int = 400) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=repr)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _calls(fields: dict) -> tuple[str, ...]:
    calls = fields.get("tool_calls")
    if not calls and isinstance(fields.get("additional_kwargs"), dict):
        calls = fields["additional_kwargs"].get("tool_calls")
    out = []
    for call in calls if isinstance(calls, list) else []:
        if not isinstance(call, dict):
            continue
        fn = nested if isinstance(nested := call.get("function"), dict) else call
        args = fn.get("args", fn.get("arguments", {}))
        args_text = args if isinstance(args, str) else _compact(args, 200)
        out.append(f"{fn.get('name', '?')}({args_text})")
    return tuple(out)


def _extras(fields: dict) -> tuple[tuple[str, str], ...]:
    out = []
    for key, value in fields.items():
        if key in _SKIP_FIELDS or value in (None, "", [], {}):
            continue
        out.append((str(key), value if isinstance(value, str) else _compact(value, 120)))
    return tuple(out[:6])


def to_message(index: int, item: Any) -> ChatMessage:
    """Normalise one list item (non-messages become an 'other' message showing their JSON)."""
    unwrapped = _unwrap(item)
    if unwrapped is None:
        return ChatMessage(index, "other", "item", _compact(item, 4000))
    cls, fields = unwrapped
    role = _role(cls, fields)
    extras = _extras(fields)
    name = fields.get("name") or fields.get("tool")
    label = role if role != "other" else str(fields.get("role") or fields.get("type") or cls or "message")
    if isinstance(name, str) and name:
        label = f"{label} · {name}"
        extras = tuple(e for e in extras if e[0] not in ("name", "tool"))
    return ChatMessage(index, role, label, content_text(fields.get("content")), _calls(fields), extras)


def build_conversation(state: Any, path: tuple) -> Conversation:
    """The messages of the list at ``path`` in ``state``."""
    node = state
    for part in path:
        node = node[part]
    items = node if isinstance(node, list) else []
    return Conversation(path, tuple(to_message(i, item) for i, item in enumerate(items)))
