"""Small helpers the scenarios share."""

from __future__ import annotations

from typing import Any


def cfg(thread_id: str, checkpoint_id: str | None = None) -> dict:
    """A run config for a thread (and optionally one checkpoint)."""
    conf: dict[str, Any] = {"thread_id": thread_id}
    if checkpoint_id is not None:
        conf["checkpoint_id"] = checkpoint_id
    return {"configurable": conf}


def find(graph: Any, thread_id: str, pred: Any) -> Any:
    """The newest snapshot of the thread's history for which ``pred(snapshot)`` holds."""
    for snap in graph.get_state_history(cfg(thread_id)):
        if pred(snap):
            return snap
    raise LookupError(f"no matching checkpoint in {thread_id}")


def oldest(graph: Any, thread_id: str, pred: Any) -> Any:
    """The oldest snapshot of the thread's history for which ``pred(snapshot)`` holds."""
    found = [s for s in graph.get_state_history(cfg(thread_id)) if pred(s)]
    if not found:
        raise LookupError(f"no matching checkpoint in {thread_id}")
    return found[-1]
