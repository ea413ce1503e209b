"""What an edit changes, for review before a fork: structural lines (or a unified text diff)."""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from typing import Any

from inspector.codec.exact import canonical

MAX_LINES = 400


@dataclass(frozen=True)
class EditLine:
    """One line of an edit review: ``tag`` is '+', '-', '~' (changed), '↕' (moved) or '#' (heading)."""

    tag: str
    text: str


def _short(value: Any, limit: int = 80) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    text = text.replace("\n", "⏎")
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _describe(change: Any) -> EditLine:
    from inspector.diff.model import ADDED, MOVED, REMOVED, Move, NumberDelta, TextDelta
    from inspector.diff.text import render_delta

    where = change.display_path
    if change.op == ADDED:
        return EditLine("+", f"+ {where} = {_short(change.new)}")
    if change.op == REMOVED:
        return EditLine("-", f"- {where} (was {_short(change.old)})")
    if change.op == MOVED and isinstance(change.detail, Move):
        return EditLine("↕", f"↕ {where} moved from [{change.detail.source}] to [{change.detail.target}]")
    if isinstance(change.detail, TextDelta):
        rendered = render_delta(change.detail).replace("\n", "⏎")
        return EditLine("~", f"~ {where}: {rendered}")
    if isinstance(change.detail, NumberDelta):
        return EditLine("~", f"~ {where}: {_short(change.old)} → {_short(change.new)} ({change.detail.text()})")
    return EditLine("~", f"~ {where}: {_short(change.old)} → {_short(change.new)}")


def _structural(old: Any, new: Any) -> list[EditLine] | None:
    try:
        from inspector.diff.api import diff_values
    except ImportError:  # pragma: no cover - the diff package ships with the app
        return None
    return [_describe(change) for change in diff_values(old, new)]


def _task_lines(old: Any, new: Any) -> list[EditLine] | None:
    try:
        from inspector.diff.tasks import diff_tasks
    except ImportError:  # pragma: no cover
        return None
    return [EditLine(c.describe()[:1] if c.describe()[:1] in "+-~" else "~", c.describe())
            for c in diff_tasks(old, new)]


def _unified(old: Any, new: Any, label: str) -> list[EditLine]:
    a = json.dumps(old, indent=2, ensure_ascii=False).splitlines()
    b = json.dumps(new, indent=2, ensure_ascii=False).splitlines()
    lines = []
    for text in difflib.unified_diff(a, b, f"{label} (original)", f"{label} (edited)", lineterm=""):
        tag = text[:1] if text[:1] in "+-" and not text.startswith(("+++", "---")) else "#"
        lines.append(EditLine(tag, text))
    return lines


def text_diff_lines(old_text: str, new_text: str, label: str, context: int = 3) -> list[EditLine]:
    """A unified diff of two JSON texts (what the user typed against the original)."""
    out: list[EditLine] = []
    for text in difflib.unified_diff(old_text.splitlines(), new_text.splitlines(),
                                     f"{label} (original)", f"{label} (edited)", n=context, lineterm=""):
        if text.startswith(("+++", "---")):
            continue
        out.append(EditLine("@" if text.startswith("@@") else (text[:1] if text[:1] in "+-" else " "), text))
    return out


def _edited(old: Any, new: Any) -> bool:
    """True when ``new`` is not the very value ``old`` (``==`` takes 1 for True or 1.0)."""
    return new is not old and (new != old or canonical(new) != canonical(old))


def edit_lines(old_state: Any, new_state: Any, old_tasks: Any, new_tasks: Any) -> list[EditLine]:
    """Review lines for a fork's edits of the state and the task state (empty: no edit)."""
    out: list[EditLine] = []
    if _edited(old_state, new_state):
        out.append(EditLine("#", "State"))
        out += _structural(old_state, new_state) or _unified(old_state, new_state, "state")
    if _edited(old_tasks, new_tasks):
        out.append(EditLine("#", "Task state"))
        semantic = _task_lines(old_tasks, new_tasks)
        if semantic:  # status, progress, review and check transitions say it best
            out += semantic
        else:         # e.g. a check's detail text: show the raw field changes
            out += _structural(old_tasks, new_tasks) or _unified(old_tasks, new_tasks, "tasks")
    if len(out) > MAX_LINES:
        out = out[:MAX_LINES] + [EditLine("#", f"… {len(out) - MAX_LINES} more lines")]
    return out


def edit_text(lines: list[EditLine]) -> str:
    """The review as plain text (CLI, logs, tests)."""
    return "\n".join(line.text if line.tag == "#" else f"  {line.text}" for line in lines)
