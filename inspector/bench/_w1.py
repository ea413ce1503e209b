"""W1, the write benchmark's main workload: a chat-like state that grows by about 1 KB a step."""

from __future__ import annotations

import random
import string
from collections.abc import Iterator
from typing import Any


def w1_states(steps: int, seed: int = 42) -> Iterator[tuple[dict, dict]]:
    """A chat-like state growing by about 1 KB per step, with a task state of 10 tasks."""
    rnd = random.Random(seed)
    alphabet = string.ascii_lowercase + "      "
    state: dict = {"messages": [], "step": 0, "scratchpad": {"notes": "", "tool": None}}
    tasks: dict[str, Any] = {"goal": "answer the user", "tasks": [
        {"id": f"t{i}", "title": f"Task {i}", "status": "pending", "progress": 0.0,
         "checks": [{"name": f"check {i}", "passed": None}]} for i in range(10)]}
    for step in range(steps):
        role = ("user", "assistant", "tool")[step % 3]
        content = "".join(rnd.choices(alphabet, k=900))
        state["messages"].append({"role": role, "content": content, "id": f"msg-{step}"})
        state["step"] = step
        state["scratchpad"] = {"notes": content[:60], "tool": "search" if role == "tool" else None}
        task = tasks["tasks"][(step // 100) % 10]
        task["status"] = "done" if step % 100 == 99 else "in_progress"
        task["progress"] = (step % 100) / 100
        task["checks"][0]["passed"] = True if step % 100 == 99 else None
        yield state, tasks
