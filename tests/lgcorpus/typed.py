"""A pydantic state holding typed values LangGraph stores as msgpack extension types.

Enum, dataclass, ``datetime``, ``date``, ``timedelta``, ``UUID``, ``Decimal``, ``bytes``, ``set``,
``frozenset``, numpy arrays, and LangChain messages with image content blocks. ``review`` interrupts when the
priority is high; a fork that sets ``priority`` to ``Priority.LOW`` as ``fill`` routes to
``finish`` instead.
"""

from __future__ import annotations

import datetime as dt
import enum
import uuid
from dataclasses import dataclass
from decimal import Decimal
from typing import Annotated, Any

import numpy as np
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command, interrupt
from pydantic import BaseModel, ConfigDict, Field

from ._util import cfg

QUESTION = "Approve the amount?"
# a 1x1 PNG
PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")


class Priority(enum.Enum):
    """An Enum field."""

    LOW = "low"
    HIGH = "high"


@dataclass
class Note:
    """A dataclass field."""

    text: str
    weight: int = 1


class TypedState(BaseModel):
    """The graph's state: one channel per field."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    messages: Annotated[list[AnyMessage], add_messages] = Field(default_factory=list)
    priority: Priority = Priority.HIGH
    note: Note | None = None
    due: dt.datetime | None = None
    day: dt.date | None = None
    wait: dt.timedelta | None = None
    uid: uuid.UUID | None = None
    amount: Decimal | None = None
    blob: bytes | None = None
    matrix: np.ndarray | None = None
    approved: Any = None
    tags: set[str] | None = None
    codes: frozenset[int] | None = None
    count: int = 0


def _fill(state: TypedState) -> dict:
    return {"note": Note("check the invoice", 2),
            "due": dt.datetime(2026, 3, 4, 5, 6, 7, 890000, tzinfo=dt.UTC),
            "day": dt.date(2026, 3, 4), "wait": dt.timedelta(days=1, seconds=30, microseconds=5),
            "uid": uuid.UUID("12345678-1234-5678-1234-567812345678"), "amount": Decimal("12.50"),
            "blob": b"\x00\x01binary\xff", "tags": {"urgent", "invoice", "q1"}, "codes": frozenset({30, 4, 12}),
            "matrix": np.arange(12, dtype=np.float64).reshape(3, 4),
            "count": state.count + 1}


def _route(state: TypedState) -> str:
    return "review" if state.priority is Priority.HIGH else "finish"


def _review(state: TypedState) -> dict:
    answer = interrupt({"question": QUESTION, "amount": str(state.amount)})
    return {"approved": answer, "count": state.count + 1}


def _finish(state: TypedState) -> dict:
    return {"amount": (state.amount or Decimal(0)) * 2, "count": state.count + 1,
            "matrix": (state.matrix if state.matrix is not None else np.zeros(1)) * 2,
            "messages": [AIMessage(content=f"Total {state.amount}", id="ai-finish")]}


def build(checkpointer: Any = None) -> Any:
    """fill → review (interrupt) | finish."""
    graph = StateGraph(TypedState)
    graph.add_node("fill", _fill)
    graph.add_node("review", _review)
    graph.add_node("finish", _finish)
    graph.add_edge(START, "fill")
    graph.add_conditional_edges("fill", _route, ["review", "finish"])
    graph.add_edge("review", "finish")
    graph.add_edge("finish", END)
    return graph.compile(checkpointer=checkpointer)


def start_input() -> dict:
    """The first message: text and two image content blocks (base64 and URL)."""
    content = [{"type": "text", "text": "What does this invoice say?"},
               {"type": "image", "base64": PNG, "mime_type": "image/png"},
               {"type": "image_url", "image_url": {"url": "https://example.com/invoice.png"}}]
    return {"messages": [HumanMessage(content=content, id="h-1")]}


def run(checkpointer: Any) -> list[dict]:
    """typed-1: interrupted, answered, finished; typed-2: left waiting at review."""
    graph = build(checkpointer)
    graph.invoke(start_input(), cfg("typed-1"))
    graph.invoke(Command(resume={"ok": True, "by": "finance"}), cfg("typed-1"))
    graph.invoke(start_input(), cfg("typed-2"))
    return [cfg("typed-1"), cfg("typed-2")]
