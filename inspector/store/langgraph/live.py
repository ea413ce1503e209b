"""The latest checkpoint of a namespace as LangGraph's ``get_state()`` shows it (pending writes applied).

``get_state(config)`` without a checkpoint id reads the namespace's latest checkpoint *live*
(``Pregel._prepare_state_snapshot(live=True)``): the output writes of the tasks that already
finished in the open step (a task is finished iff it has an output write, i.e. one outside
``__error__``/``__error_source_node__``/``__interrupt__``/``__resume__``) are applied to the
channels in task-path order; ``next`` lists only the tasks still to run; interrupts list only
questions still waiting. ``get_state_history`` and a config with a checkpoint id show the
stored step instead. How a write combines with a channel's value depends on the channel's
kind, ``kinds(channel)`` (a ``channels.ChannelKind``: from the user's graph when it is set,
else inferred): a reducer with a known operator (``add``, ``or``, ``messages``, or an
inferred one) combines by the value's type (LangChain messages merge by id like
``add_messages``, lists/text concatenate, maps merge, sets unite, numbers add); a ``custom``
reducer is the graph's own code, which is never run in this process: ``combine_custom`` (given
only with the user's graph set) runs it in the graph's runner, else — or when that fails — the
channel stays as stored and a note says so; a ``Topic`` collects the writes (emptied first unless it accumulates); any other
channel takes the last write. A channel written by several finished tasks is a reducer (a
``LastValue`` refuses that). As ``apply_writes`` does at a new step, the ``clears`` channels
(ephemeral values, non-accumulating topics) that no finished task wrote are emptied. Pure:
works on a snapshot's plain state and ``meta`` writes.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from typing import Any

from inspector.errors import StoreError
from inspector.store.langgraph.channels import INFERRED_REDUCER, ChannelKind, CustomWrites
from inspector.store.langgraph.ext import set_order
from inspector.store.langgraph.pregel import CONTROL_WRITES, NULL_TASK_ID, is_control_channel

NOT_CHANNELS = frozenset({"__no_writes__", "__pregel_push", "__return__", *CONTROL_WRITES})


def finished_tasks(writes: list[dict], planned: set[str]) -> set[str]:
    """Ids of the step's tasks (``planned``) that recorded an output write."""
    return {w["task_id"] for w in writes
            if w["task_id"] != NULL_TASK_ID and w["task_id"] in planned and w["channel"] not in CONTROL_WRITES}


def _is_message(value: Any) -> bool:
    return isinstance(value, dict) and str(value.get("__type__", "")).startswith("langchain_core.messages.")


def _is_set(value: Any) -> bool:
    return isinstance(value, dict) and value.get("__type__") in ("builtins.set", "builtins.frozenset") \
        and isinstance(value.get("value"), list)


def _merge_messages(current: list, new: list) -> list:
    out = list(current)
    at = {m.get("id"): i for i, m in enumerate(out) if isinstance(m, dict) and m.get("id") is not None}
    for message in new:
        mid = message.get("id") if isinstance(message, dict) else None
        if mid is not None and mid in at:
            out[at[mid]] = message
        else:
            at[mid] = len(out)
            out.append(message)
    return out


def combine(current: Any, write: Any) -> Any:
    """A reducer channel's value after one write (the operator LangGraph graphs use for its type)."""
    if isinstance(write, dict) and _is_message(write):
        write = [write]
    if isinstance(write, list) and (current is None or isinstance(current, list)):
        if any(_is_message(m) for m in write) or any(_is_message(m) for m in current or ()):
            return _merge_messages(current or [], write)
        return [*(current or []), *write]
    if isinstance(write, str) and isinstance(current, str):
        return current + write
    if _is_set(write) and _is_set(current):             # operator.or_ on sets
        known = {json.dumps(v, sort_keys=True, default=str) for v in current["value"]}
        extra = [v for v in write["value"] if json.dumps(v, sort_keys=True, default=str) not in known]
        return dict(current, value=set_order([*current["value"], *extra]))
    if isinstance(write, dict) and isinstance(current, dict):
        return {**current, **write}
    if isinstance(write, (int, float)) and isinstance(current, (int, float)) \
            and not isinstance(write, bool) and not isinstance(current, bool):
        return current + write
    return write


def _flat(values: list[Any]) -> list[Any]:
    return [item for v in values for item in (v if isinstance(v, list) else [v])]


def _apply(kind: ChannelKind, current: Any, values: list[Any]) -> Any:
    """A channel's value after the step's writes ``values`` (in order)."""
    if kind.kind == "topic":
        return [*(current or [] if kind.accumulate else []), *_flat(values)]
    if kind.kind != "reducer":
        return values[-1]
    value = current
    for write in values:
        value = combine(value, write)
    return value


def _combine_custom(state: dict, custom: dict[str, tuple[ChannelKind, list[Any]]],
                    combine_custom: Callable[[CustomWrites], Any] | None) -> tuple[dict, dict]:
    """(combined values, why not) of the custom-reducer channels."""
    if not custom or combine_custom is None:
        return {}, {}
    try:
        results = combine_custom({c: (c in state, state.get(c), values) for c, (_, values) in custom.items()})
    except StoreError as err:
        return {}, {c: str(err).rstrip(".") for c in custom}
    done, failed = {}, {}
    for channel in custom:
        ok, value = results.get(channel, (False, "the graph did not answer for it"))
        if ok:
            done[channel] = value
        else:
            failed[channel] = str(value)
    return done, failed


def apply_live(state: dict, meta: dict, planned: list[dict],
               kinds: Callable[[str], ChannelKind], clears: frozenset[str] = frozenset(),
               combine_custom: Callable[[CustomWrites], Any] | None = None) -> tuple[dict, dict] | None:
    """(state, meta) as ``get_state()`` shows the latest checkpoint, or None when no task of
    its step has finished (then the stored step is what LangGraph shows). ``combine_custom``
    combines the channels with a custom reducer (``channels.Combiner`` bound to the checkpoint)."""
    ids = {p["task_id"] for p in planned if p.get("task_id")}
    done = finished_tasks(meta.get("writes") or [], ids)
    if not done:
        return None
    by_channel: dict[str, list[Any]] = {}
    ordered = sorted((w for w in meta["writes"] if w["task_id"] in done),
                     key=lambda w: (str(w.get("task_path") or ""), w["task_id"], w.get("idx") or 0))
    for w in ordered:
        channel = w["channel"]
        if channel not in NOT_CHANNELS and not is_control_channel(channel):
            by_channel.setdefault(channel, []).append(w["value"])
    new_state = dict(state)
    custom: dict[str, tuple[ChannelKind, list[Any]]] = {}
    for channel, values in by_channel.items():
        kind = kinds(channel)
        if kind.kind == "reducer" and kind.operator == "custom":
            custom[channel] = (kind, values)
            continue
        if len(values) > 1 and kind.kind == "last":   # a LastValue refuses several writes
            kind = INFERRED_REDUCER
        new_state[channel] = _apply(kind, new_state.get(channel), values)
    combined, failed = _combine_custom(state, custom, combine_custom)
    new_state.update(combined)
    named = {c: f"{c} ({k.operator_name or 'a custom reducer'})" for c, (k, _) in custom.items()}
    kept = [named[c] for c in custom if c not in combined]
    cleared = sorted(c for c in clears if c in new_state and c not in by_channel)
    for channel in cleared:
        del new_state[channel]
    nodes = Counter(p["node"] for p in planned if p.get("task_id") in done)
    remaining = list(meta.get("next") or [])
    for node, count in nodes.items():
        for _ in range(count):
            if node in remaining:
                remaining.remove(node)
    applied = sorted(by_channel)
    note = (f"pending writes applied: {len(done)} finished task{'s' if len(done) != 1 else ''} of this step "
            f"wrote {', '.join(applied) if applied else 'no state channel'} (what LangGraph's get_state shows; "
            "the stored checkpoint is the step before)")
    if cleared:
        note += f"; {', '.join(cleared)} cleared (ephemeral: a new step empties {'them' if len(cleared) > 1 else 'it'})"
    notes = [*meta.get("notes", []), note]
    if combined:
        notes.append(f"combined by your graph's own reducer, run in its runner: "
                     f"{', '.join(sorted(named[c] for c in combined))}")
    if failed:
        notes.append("not combined, shown as stored: " + "; ".join(
            f"{named[c]} — your graph's reducer could not combine the finished tasks' writes: {why}"
            for c, why in sorted(failed.items())))
    elif kept:
        notes.append(f"not combined, shown as stored: {', '.join(sorted(kept))} — the finished tasks' writes "
                     "go through your graph's own reducer, which the inspector never runs")
    live_meta = dict(meta, next=remaining,
                     interrupts=[i for i in meta.get("interrupts") or [] if i.get("pending")],
                     live={"applied_tasks": sorted(done), "channels": applied, "cleared": cleared,
                           "not_combined": sorted(c for c in custom if c not in combined),
                           "combined_by_graph": sorted(combined),
                           "recorded_next": list(meta.get("next") or [])},
                     notes=notes)
    return new_state, live_meta
