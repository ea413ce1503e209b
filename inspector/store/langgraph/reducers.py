"""Reducer channels that have no value yet, shown as LangGraph shows them (``[]``, ``{}``…).

LangGraph stores only channels that hold a value, but its ``StateSnapshot.values`` shows a
reducer channel (``Annotated[list, operator.add]``, ``add_messages``…) that was never
written as its empty value (``typ()``). Without the graph, a channel is known to be a reducer
from the thread's own data, by one of two proofs LangGraph's ``LastValue`` channels cannot
give:

* several tasks wrote it in the same step (a ``LastValue`` channel refuses that), or
* after a single task's write, the next checkpoint (the ``loop`` child that applied it, not
  a fork or ``update_state`` sibling) holds a value other than that write,

or, by LangChain's convention (``MessagesState``, ``add_messages``), it was written a list of
LangChain messages.

Candidates are the channels the thread's tasks wrote in the checkpoint's namespace that the
checkpoint lacks; proofs may come from any namespace of the thread (a subgraph sharing the
state schema). The empty value is the type's empty value of what was written (list → ``[]``,
map → ``{}``, text → ``""``, number → ``0``). Checks read a bounded number of rows.
"""

from __future__ import annotations

from typing import Any, Protocol
from collections.abc import Callable

from inspector.store.langgraph.channels import INFERRED_LAST, INFERRED_REDUCER, ChannelKind
from inspector.store.langgraph.decode import decode_plain, plain_or_error
from inspector.codec.exact import canonical
from inspector.store.langgraph.pregel import NULL_TASK_ID, is_control_channel
from inspector.store.langgraph.rows import WriteRow


class ReducerReads(Protocol):
    """The reads the proofs make (a LangGraph database's ``Reader``, or a native store's lanes)."""

    def written_channels(self, thread_id: str, ns: str) -> list[str]: ...
    def channel_steps(self, thread_id: str, channel: str, limit: int) -> list[tuple[str, str, int]]: ...
    def channel_writes(self, thread_id: str, ns: str, channel: str, checkpoint_ids: list[str]) -> list[WriteRow]: ...
    def child_ids(self, thread_id: str, ns: str, checkpoint_id: str) -> list[str]: ...

SAMPLE_STEPS = 8
SETS = ("builtins.set", "builtins.frozenset")
NO_VALUE = object()


def empty_of(value: Any) -> Any:
    """The empty value of a written value's type (``NO_VALUE`` when there is none)."""
    if isinstance(value, list):
        return []
    if isinstance(value, dict) and value.get("__type__") in SETS and isinstance(value.get("value"), list):
        return {"__type__": value["__type__"], "value": []}      # a set united by ``operator.or_``
    if isinstance(value, dict) and "__type__" not in value and "__bytes__" not in value:
        return {}
    if isinstance(value, str):
        return ""
    if isinstance(value, bool):
        return NO_VALUE
    if isinstance(value, int):
        return 0
    if isinstance(value, float):
        return 0.0
    return NO_VALUE


def _messages(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(
        isinstance(v, dict) and str(v.get("__type__", "")).startswith("langchain_core.messages.")
        for v in value)


def _same(a: Any, b: Any) -> bool:
    return canonical(a) == canonical(b)


def prove(reader: ReducerReads, thread: str, channel: str,
          child_value: Callable[[str, str, str], Any]) -> Any:
    """The empty value when the thread proves ``channel`` a reducer, else ``NO_VALUE``.

    ``child_value(ns, checkpoint_id, channel)`` reads a channel's plain value from a checkpoint
    (``NO_VALUE`` when absent).
    """
    for ns, cid, writers in reader.channel_steps(thread, channel, SAMPLE_STEPS):
        rows = [w for w in reader.channel_writes(thread, ns, channel, [cid]) if w.task_id != NULL_TASK_ID]
        if not rows:
            continue
        written = [decode_plain(w.type, w.value) for w in rows]
        empty = empty_of(written[0])
        if empty is NO_VALUE:
            return NO_VALUE
        if writers > 1 or _messages(written[0]):
            return empty
        for child in reader.child_ids(thread, ns, cid):
            value = child_value(ns, child, channel)
            if value is not NO_VALUE and not _same(value, written[-1]):
                return empty
    return NO_VALUE


def inferred_kind(reader: ReducerReads, thread: str, channel: str, child_value: Callable[[str, str, str], Any],
                  cache: dict[tuple[str, str], Any]) -> ChannelKind:
    """A channel's kind without the graph: a reducer when the thread proves it one (``prove``,
    its answer kept in ``cache``), else a last value."""
    key = (thread, channel)
    if key not in cache:
        cache[key] = prove(reader, thread, channel, child_value)
    return INFERRED_LAST if cache[key] is NO_VALUE else INFERRED_REDUCER


def inferred_note(channels: list[str], why: str | None = None) -> str:
    """What a snapshot says of the reducer channels it shows empty without the graph (the
    State tab marks them by it); ``why`` the graph's kinds are not known."""
    because = f" ({why})" if why else " (set the graph in the LangGraph settings for the graph's own channel kinds)"
    return f"{', '.join(channels)}: shown empty as inferred reducers — the thread's writes prove them reducers{because}"


def missing_reducers(reader: ReducerReads, thread: str, ns: str, present: set[str],
                     child_value: Callable[[str, str, str], Any],
                     cache: dict[tuple[str, str], Any], written: list[str] | None = None) -> dict[str, Any]:
    """``{channel: empty value}`` for the reducer channels this checkpoint lacks (``written``:
    the channels the namespace's tasks wrote, when the caller has them)."""
    out: dict[str, Any] = {}
    for channel in reader.written_channels(thread, ns) if written is None else written:
        if channel in present or is_control_channel(channel):
            continue
        key = (thread, channel)
        if key not in cache:
            cache[key] = prove(reader, thread, channel, child_value)
        if cache[key] is not NO_VALUE:
            out[channel] = plain_or_error(cache[key])
    return out
