"""The saver's lowering of a message history: groups grown by appends keep exact fingerprints."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from inspector.record import lglower
from inspector.record.lglower import Lowering


def _exact(lowering: Lowering, leaves: list, history: list, serde: Any) -> int:
    """Every group of the lowered history holds its objects in order, its fingerprint is the
    strict encoding of their states as they are now, and each leaf is their serialization;
    a snapshot a group carries is what one made afresh would be. How many groups had one."""
    grouped = lowering._put_lists[id(leaves)]
    snapped = 0
    objs = [obj for group in grouped[1] for obj in group.objs]
    assert objs == history and all(a is b for a, b in zip(objs, history))
    for group in grouped[1]:
        states = [list(map(vars, group.objs)), [o.__pydantic_extra__ for o in group.objs]]
        assert group.fp == lglower._strict(states)
        assert group.types == tuple(map(type, group.objs))
        assert group.fsets == tuple(frozenset(o.__pydantic_fields_set__) for o in group.objs)
        assert group.refs is not None and group.refs == lglower._layout(group.objs, group.types, group.fsets, *states)
        if group.snap is not None:      # a snapshot carried over and extended: as if made afresh
            snapped += 1
            fresh = lglower._snapshot(group._replace(snap=None))
            for name in ("snap", "keys", "at", "at_keys", "reusable", "places", "values"):
                assert getattr(group, name) == getattr(fresh, name), name
            # the containers and extras copies are made of: encoded run by run as the group
            # grew, the same values exactly as encoding them at once
            assert (lglower._strict(list(lglower._mutable_parts(group.mutable)))
                    == lglower._strict(list(lglower._mutable_parts(fresh.mutable))))
            assert group.snap is not fresh.snap and all(a is not b for a, b in zip(group.snap, group.objs))
    assert [leaf["b"] for leaf in leaves] == [serde.dumps_typed(m)[1] for m in history]
    return snapped


def _snapshot_last_put(lowering: Lowering) -> None:
    """As ``get_tuple`` does: snapshots made of the last put's groups."""
    for grouped in lowering._list_data.values():
        for n, group in enumerate(grouped[1]):
            if group.objs and group.snap is None:
                grouped[1][n] = made = lglower._snapshot(group)
                lowering._old_groups[id(group.objs[0])] = made


def test_a_history_growing_at_its_tail_is_grouped_exactly_without_encoding_it_again(monkeypatch) -> None:
    """Appends to the last group of a history take ``_grown``: the old items, found unchanged,
    keep their part of the group's fingerprint and only the new ones are looked at. The
    result is what encoding the whole group gives, with an item that has pydantic extras,
    an old item changed in place, and an appended item with a private attribute (which
    ``_grown`` leaves to the general path) among them."""
    serde = JsonPlusSerializer()
    grown: list[bool] = []
    original = Lowering._grown

    def counting(self: Lowering, value: list, group: Any, s: Any) -> Any:
        made = original(self, value, group, s)
        grown.append(made is not None)
        return made
    monkeypatch.setattr(Lowering, "_grown", counting)
    lowering = Lowering()
    history: list = [HumanMessage(content=f"q{i}", id=f"q-{i}") for i in range(20)]
    snapped = 0
    for step in range(150):
        if step == 70:
            history.append(AIMessage(content="with an extra", id="extra", mood="odd"))   # pydantic extra
        elif step == 90:
            history[-3].content = "changed in place"          # an old item of the tail group
        elif step == 110:
            odd = AIMessage(content="private", id="private")
            object.__setattr__(odd, "__pydantic_private__", {"_secret": 1})
            history.append(odd)
        else:
            history.append((AIMessage if step % 2 else HumanMessage)(content=f"m{step} " * 30, id=f"m-{step}"))
        if step % 3 == 0:
            _snapshot_last_put(lowering)
        leaves = lowering.lower(history, serde)
        if any(m.__pydantic_private__ for m in history):      # not grouped: every item on its own
            assert [leaf["b"] for leaf in leaves] == [serde.dumps_typed(m)[1] for m in history]
        else:
            snapped += _exact(lowering, leaves, history, serde)
        lowering.rotate()
    assert grown.count(True) >= 100            # the appends took the short path ...
    assert False in grown                      # ... and the private attribute the long way
    assert snapped >= 50                       # grown groups carried their snapshots on


def _image(seed: int, size: int = 400_000) -> str:
    import base64
    import random
    return "data:image/png;base64," + base64.b64encode(random.Random(seed).randbytes(size * 3 // 4)).decode()


def test_a_history_of_big_messages_is_compared_by_heavy_prints_and_misses_no_change() -> None:
    """Messages carrying images (content parts of 400 KB): a group holding a megabyte or more
    keeps a heavy print of its states and compares them by it at each put, instead of packing
    them again; every change made in place — an image replaced, a text part, a field of an old
    message, a content made short, the last message's image — is seen, with snapshots made
    of the groups as ``get_tuple`` makes them."""
    serde = JsonPlusSerializer()
    lowering = Lowering()

    def look(i: int) -> HumanMessage:
        return HumanMessage(content=[{"type": "text", "text": f"look {i}"},
                                     {"type": "image_url", "image_url": {"url": _image(i)}}], id=f"q-{i}")
    history: list = [look(i) for i in range(16)]      # (shorter lists are not grouped)
    printed = snapped = 0
    changes = {10: lambda: history[1].content[1]["image_url"].update(url=_image(99)),
               14: lambda: history[1].content[0].update(text="look again"),
               18: lambda: setattr(history[0], "name", "renamed"),
               22: lambda: setattr(history[2], "content", "now short"),
               26: lambda: history[-1].content[1]["image_url"].update(url=_image(98)),
               30: lambda: history[0].content.append({"type": "text", "text": "one more part"})}
    for step in range(40):
        if step in changes:
            changes[step]()
        else:
            history.append(look(100 + step) if step % 2 else AIMessage(content=f"I see {step}", id=f"a-{step}"))
        if step % 3 == 0:
            _snapshot_last_put(lowering)
        leaves = lowering.lower(history, serde)
        printed += any(group.hp is not None for group in lowering._put_lists[id(leaves)][1])
        snapped += _exact(lowering, leaves, history, serde)
        lowering.rotate()
    assert printed >= 35 and snapped >= 5, (printed, snapped)


@pytest.mark.parametrize("change", ["private", "extra"])
def test_an_appended_item_the_short_path_cannot_take_goes_the_general_way(change: str) -> None:
    """An appended message with extras (or a pydantic private attribute) is not joined in
    by ``_grown``: the general path stores it exactly."""
    serde = JsonPlusSerializer()
    lowering = Lowering()
    history: list = [HumanMessage(content=f"q{i}", id=f"q-{i}") for i in range(20)]
    lowering.lower(history, serde)
    lowering.rotate()
    odd = AIMessage(content="odd", id="odd", **({"mood": "odd"} if change == "extra" else {}))
    if change == "private":
        object.__setattr__(odd, "__pydantic_private__", {"_secret": 1})
    history.append(odd)
    leaves = lowering.lower(history, serde)
    assert leaves[-1]["b"] == serde.dumps_typed(odd)[1]


class _Sub(AIMessage):
    pass


def _replace_dict(m: Any, **changes: Any) -> None:
    object.__setattr__(m, "__dict__", dict(vars(m), **changes))


def _rename(m: Any) -> None:
    state = dict(vars(m))
    state["renamed"] = state.pop("usage_metadata")    # the last key: the values stay as they were
    object.__setattr__(m, "__dict__", state)


# each way a message of a lowered history can change after the put (or not change at all)
_CHANGES: dict[str, tuple[Any, bool]] = {
    "a field set": (lambda m: setattr(m, "name", "renamed"), True),
    "the fields set alone": (lambda m: m.__pydantic_fields_set__.add("name"), True),
    "the fields set replaced by an equal one": (
        lambda m: object.__setattr__(m, "__pydantic_fields_set__", set(m.__pydantic_fields_set__)), False),
    "__dict__ replaced by an equal one": (lambda m: _replace_dict(m), False),
    "__dict__ replaced by one equal but not the same": (lambda m: _replace_dict(m, additional_kwargs={"n": 1.0}), True),
    "a nested container": (lambda m: m.additional_kwargs.update(n=2), True),
    "an extra in place": (lambda m: m.__pydantic_extra__.update(mood="changed"), True),
    "a private attribute": (lambda m: object.__setattr__(m, "__pydantic_private__", {"_secret": 1}), True),
    "its class": (lambda m: object.__setattr__(m, "__class__", _Sub), True),
    "a key renamed": (_rename, True),
}


@pytest.mark.parametrize("change", list(_CHANGES))
def test_a_grouped_history_is_checked_by_its_parts_and_misses_no_change(change: str) -> None:
    """A group's objects are checked in one call over their parts (``gc.get_referents``: a
    model's extras, fields set, private attributes, ``__dict__`` and class), laid out as
    recorded; a part replaced by an equal one is compared by value and the states by their
    strict encoding. Every change in place is seen and stored; a replacement that changes
    nothing keeps the group."""
    serde = JsonPlusSerializer()
    lowering = Lowering()
    history = [AIMessage(content=f"m{i}", id=f"m-{i}", additional_kwargs={"n": 1}, mood="calm") for i in range(40)]
    lowering.lower(history, serde)
    groups = lowering._put_lists[next(iter(lowering._put_lists))][1]
    assert all(g.refs is not None for g in groups)      # the layout holds on this interpreter
    lowering.rotate()
    edit, changes = _CHANGES[change]
    edit(history[5])
    group = groups[0]
    assert (lglower._states_of(group.objs, group) is None) is changes
    if change == "a key renamed":     # (not a model pydantic can serialize any more)
        return
    leaves = lowering.lower(history, serde)
    assert [leaf["b"] for leaf in leaves] == [serde.dumps_typed(m)[1] for m in history]
    if not changes:
        assert lowering._put_lists[id(leaves)][1][0] is group
