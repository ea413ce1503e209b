"""Semantic task state for a LangGraph checkpoint (valid under ``inspector.taskstate``).

* goal — the text of the first human message in ``messages`` ("" when there is none).
* one task per item of the task channel (``todos`` by default: a list of
  ``{content, status}``; plain strings work too). Statuses map pending → pending,
  in_progress → in_progress, completed → done, failed/error/cancelled → failed,
  blocked → blocked; unknown → pending. A channel already holding ``{goal, tasks}`` is used as is.
* one task per node task of the pending step (id ``node:<name>``; LangGraph's own
  ``__start__``-style tasks are left out): finished → done,
  errored → failed, interrupted → blocked with review *requested* (the interrupt's question
  as note), not run → pending; each has one check: "finished" (passed true, or null while not
  run), or "failed" (passed false, the error as detail) for a task that raised.
"""

from __future__ import annotations

from typing import Any

from inspector.errors import TaskStateError
from inspector.store.langgraph.lazy import EncodedItems
from inspector.taskstate import DEFAULT_TASK_CHANNEL, NODE_TASK_PREFIX, validate

STATUS_MAP = {"pending": "pending", "todo": "pending", "not_started": "pending", "open": "pending",
              "in_progress": "in_progress", "in-progress": "in_progress", "active": "in_progress",
              "running": "in_progress", "doing": "in_progress",
              "completed": "done", "complete": "done", "done": "done", "finished": "done",
              "blocked": "blocked", "waiting": "blocked",
              "failed": "failed", "error": "failed", "errored": "failed", "cancelled": "failed",
              "canceled": "failed"}
NODE_STATUS = {"finished": "done", "errored": "failed", "interrupted": "blocked", "pending": "pending"}
TITLE_KEYS = ("content", "title", "task", "description", "name", "text")


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # multimodal message parts
        return " ".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content).strip()
    return ""


GOAL_CHANNEL = "messages"     # the channel whose first human message is a thread's goal


def goal_of(values: dict) -> str:
    """The first human message's text in the ``messages`` channel (a list, or the items of
    one kept encoded, decoded until that message: ``EncodedItems``)."""
    messages = values.get(GOAL_CHANNEL)
    if isinstance(messages, EncodedItems):
        # (a human message's encoding holds "human" as its type or "HumanMessage" in its class)
        messages = messages.holding(b"human", b"HumanMessage")
    elif not isinstance(messages, list):
        return ""
    for msg in messages:
        if isinstance(msg, dict) and (msg.get("type") == "human"
                                      or str(msg.get("__type__", "")).endswith("HumanMessage")):
            return _text(msg.get("content"))
    return ""


def _todo_task(item: Any, index: int, used: set[str]) -> dict:
    if not isinstance(item, dict):
        item = {"content": item if isinstance(item, str) else str(item)}
    title = next((item[k] for k in TITLE_KEYS if isinstance(item.get(k), str) and item[k]), None)
    raw_id = item.get("id")
    task_id = str(raw_id) if isinstance(raw_id, (str, int)) and not isinstance(raw_id, bool) else ""
    if not task_id or task_id in used:
        task_id = f"todo-{index + 1}"
    used.add(task_id)
    status = STATUS_MAP.get(str(item.get("status", "pending")).lower(), "pending")
    task = {"id": task_id, "title": title or task_id, "status": status}
    for extra in ("progress", "review", "checks"):
        if extra in item:
            try:
                validate({"tasks": [dict(task, **{extra: item[extra]})]})
                task[extra] = item[extra]
            except TaskStateError:
                pass
    return task


def _node_task(task: dict, used: set[str]) -> dict:
    node = task.get("node") or task.get("task_id") or "task"
    task_id = f"{NODE_TASK_PREFIX}{node}"
    while task_id in used:
        task_id += "'"
    used.add(task_id)
    status = task.get("status", "pending")
    review: dict[str, Any] = {"status": "none"}
    if status == "interrupted":
        question = task.get("question")
        review = {"status": "requested", "note": question if isinstance(question, str) else None}
    passed = True if status == "finished" else False if status == "errored" else None
    error = task.get("error")
    return {"id": task_id, "title": f"{node} (node)", "status": NODE_STATUS.get(status, "pending"),
            "review": review,
            "checks": [{"name": "failed" if status == "errored" else "finished", "passed": passed,
                        "detail": error if isinstance(error, str) else None}]}


def build_task_state(values: dict, node_tasks: list[dict], channel: str = DEFAULT_TASK_CHANNEL) -> dict:
    """The validated task state from decoded channel values and the pending step's node tasks."""
    raw = values.get(channel)
    if isinstance(raw, dict) and isinstance(raw.get("tasks"), list):
        try:
            state = validate(raw)
        except TaskStateError:
            state = {"goal": "", "tasks": []}
        used = {t["id"] for t in state["tasks"]}
        tasks = state["tasks"]
        goal = state["goal"] or goal_of(values)
    else:
        used = set()
        items = raw if isinstance(raw, list) else []
        tasks = [_todo_task(item, i, used) for i, item in enumerate(items)]
        goal = goal_of(values)
    tasks += [_node_task(t, used) for t in node_tasks
              if not str(t.get("node") or "").startswith("__")]
    return validate({"goal": goal, "tasks": tasks})
