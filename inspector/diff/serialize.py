"""JSON form of diff results for scripts (``checkpoint-inspector diff --json``).

A change is ``{path, display, op, old, new, detail}`` (``old`` absent for an added value,
``new`` for a removed one; a bytes key in ``path`` is its hex and " (bytes)"); ``old_type``
and ``new_type`` name the types of the sides it has whenever JSON would not tell them: the
type changed, or a side is bytes (hex) or a float that is not finite ("NaN"). A change of
two huge strings whose text delta left unchanged text out (``detail.elided`` true: the
``"…"`` segments give how many characters were not kept) has ``old_length`` and
``new_length`` (characters) instead of ``old`` and ``new``: its ``detail.segments`` are the
diff, never two copies of a 200 MB string.
"""

from __future__ import annotations

import math
from typing import Any

from inspector.diff.model import (ADDED, REMOVED, Change, DiffResult, Move, NumberDelta, TaskChange,
                                  TextDelta)
from inspector.diff.text import elided
from inspector.lazy import LazyText
from inspector.model import CheckpointInfo


def plain(value: Any) -> Any:
    """A JSON-able copy: bytes as hex, tuples as lists, other keys as strings (no recursion)."""
    holder = [None]
    stack: list[tuple[Any, Any, Any]] = [(holder, 0, value)]
    while stack:
        parent, slot, item = stack.pop()
        if isinstance(item, dict):
            out: Any = {}
            for k, v in item.items():
                key = k if isinstance(k, str) else str(k)
                out[key] = None
                stack.append((out, key, v))
        elif isinstance(item, (list, tuple)):
            out = [None] * len(item)
            stack.extend((out, i, v) for i, v in enumerate(item))
        elif isinstance(item, (bytes, bytearray)):
            out = bytes(item).hex()
        elif item is None or isinstance(item, (str, int, float, bool)):
            out = item
        else:
            out = repr(item)
        parent[slot] = out
    return holder[0]


def detail_json(detail: Any) -> dict | None:
    """A change detail as a small object with a ``kind``."""
    if isinstance(detail, TextDelta):
        return {"kind": "text", "unit": detail.unit, "added": detail.added, "removed": detail.removed,
                "elided": elided(detail), "segments": [list(s) for s in detail.segments]}
    if isinstance(detail, NumberDelta):
        return {"kind": "number", "delta": detail.delta}
    if isinstance(detail, Move):
        return {"kind": "move", "from": detail.source, "to": detail.target}
    return None


def _length(text: str | LazyText) -> int:
    """Characters of a string (one compared streamed: its known count, else its bytes)."""
    if isinstance(text, LazyText):
        return text.chars if text.chars is not None else text.length
    return len(text)


def path_json(path: tuple) -> list:
    """A path as JSON: a key that is bytes says so ("6162 (bytes)", as ``show --json`` says a
    key's type), apart from the string key "6162"; other parts as ``plain`` makes them."""
    return [f"{bytes(p).hex()} (bytes)" if isinstance(p, (bytes, bytearray)) else plain(p) for p in path]


def change_json(change: Change) -> dict:
    """One structural change as JSON."""
    out: dict[str, Any] = {"path": path_json(change.path), "display": change.display_path,
                           "op": change.op}
    if isinstance(change.detail, TextDelta) and elided(change.detail) \
            and isinstance(change.old, (str, LazyText)) and isinstance(change.new, (str, LazyText)):
        out["old_length"], out["new_length"] = _length(change.old), _length(change.new)
        out["detail"] = detail_json(change.detail)
        return out
    if change.op != ADDED:
        out["old"] = plain(change.old)
    if change.op != REMOVED:
        out["new"] = plain(change.new)
    out.update(_types(change))
    detail = detail_json(change.detail)
    if detail is not None:
        out["detail"] = detail
    return out


def _types(change: Change) -> dict[str, str]:
    """``old_type``/``new_type`` of the sides a change's JSON holds, when JSON alone would not
    tell them: the two types differ ("NaN" and NaN, b"ab" and "6162", a list and a map), or a
    side is bytes (written as hex, like a string) or a float that is not finite (written as
    "NaN", "Infinity", like a string); else none, as before."""
    sides = {name: value for name, value, op in (("old", change.old, ADDED), ("new", change.new, REMOVED))
             if change.op != op}
    kinds = {name: _type_name(value) for name, value in sides.items()}
    if len(set(kinds.values())) > 1 or any(map(_unfaithful, sides.values())):
        return {f"{name}_type": kind for name, kind in kinds.items()}
    return {}


def _type_name(value: Any) -> str:
    """A value's type name (a streamed string is a str; any map a dict, any list a list)."""
    if isinstance(value, (str, LazyText)):
        return "str"
    if isinstance(value, dict):
        return "dict"
    return "list" if isinstance(value, list) else type(value).__name__


def _unfaithful(value: Any) -> bool:
    """A leaf JSON writes as something else: bytes as a hex string, NaN or ±inf as a string."""
    return isinstance(value, (bytes, bytearray)) or (isinstance(value, float) and not math.isfinite(value))


def task_change_json(change: TaskChange) -> dict:
    """One task change as JSON, with its one-line description."""
    out: dict[str, Any] = {name: plain(getattr(change, name)) for name in change.__match_args__}
    out["text"] = change.describe()
    return out


def checkpoint_json(info: CheckpointInfo | None) -> dict | None:
    """The identity of a checkpoint (id, run, seq, kind, name)."""
    if info is None:
        return None
    return {"id": info.id, "run_id": info.run_id, "seq": info.seq, "kind": info.kind,
            "name": info.name, "ref": f"{info.run_id}:{info.seq}"}


def to_json(result: DiffResult, changes: bool = True) -> dict:
    """The whole result as one JSON object (without ``changes``: its "changes" an empty list,
    for a writer that streams them, ``change_json`` one at a time)."""
    out: dict[str, Any] = {
        "summary": result.summary,
        "a": checkpoint_json(result.a),
        "b": checkpoint_json(result.b),
        "ancestor": checkpoint_json(result.ancestor),
        "task_changes": [task_change_json(c) for c in result.task_changes],
        "changes": [change_json(c) for c in result.changes] if changes else [],
        "stats": plain(result.stats),
    }
    if result.hidden:      # (only then: the other outputs stay as they were)
        out["hidden_channels_changed"] = [str(name) for name in result.hidden]
    if result.three_way is not None:
        out["three_way"] = {
            "ancestor": checkpoint_json(result.three_way.ancestor),
            "to_a": [change_json(c) for c in result.three_way.to_a],
            "to_b": [change_json(c) for c in result.three_way.to_b],
            "both_changed": [path_json(p) for p in result.three_way.both_changed],
        }
    return out
