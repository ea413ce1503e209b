"""JSON form of diff results for scripts (``checkpoint-inspector diff --json``).

A change is ``{path, display, op, old, new, detail}`` (``old`` absent for an added value,
``new`` for a removed one; a bytes key in ``path`` is its hex and " (bytes)"). A change of two huge strings whose text delta left unchanged
text out (``detail.elided`` true: the ``"…"`` segments give how many characters were not
kept) has ``old_length`` and ``new_length`` (characters) instead of ``old`` and ``new``: its
``detail.segments`` are the diff, never two copies of a 200 MB string.
"""

from __future__ import annotations

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
    if change.op not in (ADDED, REMOVED):
        kinds = _scalar_type(change.old), _scalar_type(change.new)
        if None not in kinds and kinds[0] != kinds[1]:
            # a value of another type may print the same ("NaN" and NaN, b"ab" and "6162"): say both
            out["old_type"], out["new_type"] = kinds
    detail = detail_json(change.detail)
    if detail is not None:
        out["detail"] = detail
    return out


def _scalar_type(value: Any) -> str | None:
    """A leaf value's type name (a streamed string is a str), None for a map or a list."""
    if isinstance(value, (dict, list, tuple)):
        return None
    return "str" if isinstance(value, LazyText) else type(value).__name__


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
