"""Reuse is exact: a value replaced by an equal one of another type (1 → True → 1.0, 0.0 →
-0.0) or a dict rebuilt with its keys in another order is stored as the new value, at any
depth, in plain values, chunked lists and chunked maps, by one encoder over many saves."""

from __future__ import annotations

import copy
import datetime
import decimal
import enum
import math
import random
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.codec import PieceEncoder, resolve, unpack

# values that are == to each other but are stored differently
_TWINS = [[1, True, 1.0], [0, False, 0.0, -0.0], [2, 2.0], [-1, -1.0]]


def exactly(a: Any, b: Any) -> bool:
    """Equal with the same types everywhere, the same dict key order and the same float sign."""
    if type(a) is not type(b):
        return False
    if type(a) is dict:
        return list(a) == list(b) and all(exactly(a[k], b[k]) and type(k) is type(j) for k, j in zip(a, b))
    if type(a) is list:
        return len(a) == len(b) and all(map(exactly, a, b))
    if type(a) is float:
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return a == b


def _scalar(rnd: random.Random) -> Any:
    return rnd.choice([None, "s", "x" * rnd.randrange(700), rnd.choice(rnd.choice(_TWINS)), rnd.random()])


def _build(rnd: random.Random, depth: int, budget: list[int]) -> Any:
    """A random state: small and big (chunked, >= 16 items) lists, small and big (>= 64 keys)
    maps, nested, with the twin scalars everywhere (at most about ``budget[0]`` nodes)."""
    if depth <= 0 or budget[0] <= 0 or rnd.random() < 0.3:
        return _scalar(rnd)
    size = min(budget[0], rnd.choice([0, 2, 5, 20, 70, 300]))
    budget[0] -= size
    if rnd.random() < 0.5:
        return [_build(rnd, depth - 1, budget) for _ in range(size)]
    keys = rnd.choice([lambda i: f"k{i}", lambda i: i, lambda i: (i, f"k{i}")[i % 2]])
    return {keys(i): _build(rnd, depth - 1, budget) for i in range(size)}


def _twin(value: Any, rnd: random.Random) -> Any:
    for group in _TWINS:
        if type(value) in (int, bool, float) and any(value == t and type(value) is type(t) for t in group):
            return rnd.choice([t for t in group if not (type(t) is type(value) and exactly(t, value))])
    return value


def _edit(state: Any, rnd: random.Random) -> Any:
    """In place where possible: swap scalars for their twins, rebuild dicts in another key order,
    now and then a real change; returns the (maybe new) root."""
    containers = []
    stack = [state]
    while stack:
        item = stack.pop()
        if type(item) in (dict, list):
            containers.append(item)
            stack.extend(item.values() if type(item) is dict else item)
    if not containers:
        return _twin(state, rnd)
    for node in rnd.sample(containers, min(len(containers), rnd.choice([1, 2, 8]))):
        slots = list(node) if type(node) is dict else list(range(len(node)))
        if not slots:
            continue
        action = rnd.random()
        if action < 0.5:
            for slot in rnd.sample(slots, min(len(slots), rnd.choice([1, 3]))):
                node[slot] = _twin(node[slot], rnd)
        elif action < 0.8 and type(node) is dict:
            order = list(node.items())
            if len(order) > 30 and rnd.random() < 0.7:     # move one key to the end
                k = rnd.choice(slots)
                node[k] = node.pop(k)
            else:
                rnd.shuffle(order)
                node.clear()
                node.update(order)
        elif action < 0.9:
            slot = rnd.choice(slots)
            node[slot] = _scalar(rnd)
        elif type(node) is dict:
            dict_key = rnd.choice(slots)
            node[dict_key] = copy.deepcopy(node[dict_key])   # an equal value, new objects
    return state


class Reader:
    def __init__(self) -> None:
        self.raw: dict[bytes, bytes] = {}

    def value(self, root: bytes) -> Any:
        return resolve(unpack(self.raw[root]), lambda d: unpack(self.raw[d]))


def _check_run(seed: int, saves: int, chunk_format: int) -> None:
    rnd = random.Random(seed)
    state = {"root": _build(rnd, 4, [1500]), "n": 1}
    encoder = PieceEncoder()
    encoder.chunk_format = chunk_format
    reader = Reader()
    for _ in range(saves):
        root, _, pieces = encoder.encode(state)
        reader.raw.update(pieces)
        back = reader.value(root)
        assert exactly(back, state), (seed, chunk_format)
        state = _edit(state, rnd)
        if rnd.random() < 0.2:      # the agent hands over a fresh copy now and then
            state = copy.deepcopy(state)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32), st.sampled_from([3, 3, 2]))
def test_decode_of_encode_is_the_state_exactly_over_many_saves(seed: int, chunk_format: int) -> None:
    _check_run(seed, 12, chunk_format)


def test_each_kind_of_twin_is_stored_as_the_new_value() -> None:
    """The cases by name: in a plain dict, a chunked list's kept chunk, a chunked map's chunk,
    map keys, and a dict item re-ordered inside a kept chunk."""
    cases = [
        ({"a": {"x": 1}}, lambda s: s["a"].__setitem__("x", True)),
        ({"a": {"x": 0.0}}, lambda s: s["a"].__setitem__("x", -0.0)),
        ({"l": list(range(40))}, lambda s: s["l"].__setitem__(7, 7.0)),
        ({"l": [{"a": 1, "b": "t"} for _ in range(40)]},
         lambda s: s["l"].__setitem__(3, {"b": "t", "a": 1})),
        ({"l": [[{"a": 1, "b": 2}] for _ in range(40)]}, lambda s: s["l"][5][0].__setitem__("a", True)),
        ({"m": {f"k{i}": i for i in range(200)}}, lambda s: s["m"].__setitem__("k9", 9.0)),
        ({"m": {f"k{i}": {"p": i, "q": 0} for i in range(200)}},
         lambda s: s["m"].__setitem__("k9", {"q": 0, "p": 9})),
        ({"m": {i: "v" for i in range(1, 200)}}, lambda s: s.__setitem__("m", {(True if i == 1 else i): "v"
                                                                                for i in range(1, 200)})),
        ({"m": {f"k{i}": "v" for i in range(200)}}, lambda s: s["m"].__setitem__("k4", s["m"].pop("k4"))),
    ]
    for state, change in cases:
        encoder, reader = PieceEncoder(), Reader()
        root, _, pieces = encoder.encode(state)
        reader.raw.update(pieces)
        change(state)
        root, _, pieces = encoder.encode(state)
        reader.raw.update(pieces)
        assert exactly(reader.value(root), state), state


class _Colour(enum.Enum):
    RED = "red"
    THREE = 3


_ID = uuid.UUID("12345678-1234-5678-1234-567812345678")
_WHEN = datetime.datetime(2026, 12, 1, 16, 0, 0)

# (state, an in-place change that puts in a foreign object whose msgpack form, as a lenient
# encoder writes it, equals the plain value it replaces)
_FOREIGN = [
    ({"a": {"id": str(_ID), "n": 1}}, lambda s: s["a"].__setitem__("id", _ID)),
    ({"a": {"t": _WHEN.isoformat()}}, lambda s: s["a"].__setitem__("t", _WHEN)),
    ({"a": {"day": "2026-12-01"}}, lambda s: s["a"].__setitem__("day", _WHEN.date())),
    ({"a": [{"tags": [1, 2]}]}, lambda s: s["a"][0].__setitem__("tags", {1, 2})),
    ({"a": {"c": "red"}}, lambda s: s["a"].__setitem__("c", _Colour.RED)),
    ({"a": {"n": "1.5"}}, lambda s: s["a"].__setitem__("n", decimal.Decimal("1.5"))),
    ({"l": ["red" if i == 8 else f"item {i}" for i in range(40)]}, lambda s: s["l"].__setitem__(8, _Colour.RED)),
    ({"l": [3] * 40}, lambda s: s["l"].__setitem__(5, _Colour.THREE)),
    ({"l": [{"id": str(_ID)} for _ in range(40)]}, lambda s: s["l"][20].__setitem__("id", _ID)),
    ({"l": [[[1, 2]] for _ in range(40)]}, lambda s: s["l"][30].__setitem__(0, frozenset({1, 2}))),
    ({"m": {f"k{i}": [i] for i in range(200)}}, lambda s: s["m"].__setitem__("k9", {9})),
    ({"m": {f"k{i}": str(i) for i in range(200)}}, lambda s: s["m"].__setitem__("k9", decimal.Decimal("9"))),
    ({"m": {f"k{i}": i for i in range(200)}}, lambda s: s["m"].__setitem__("k3", _Colour.THREE)),
    ({"m": {f"k{i}": {"t": _WHEN.isoformat()} for i in range(200)}},
     lambda s: s["m"]["k150"].__setitem__("t", _WHEN)),
    ({"m": {"red" if i == 5 else f"k{i}": i for i in range(200)}},
     lambda s: s.__setitem__("m", {_Colour.RED if k == "red" else k: v for k, v in s["m"].items()})),
]


@pytest.mark.parametrize("case", range(len(_FOREIGN)))
def test_a_foreign_value_equal_in_encoding_to_the_one_it_replaced_is_refused(case: int) -> None:
    """A UUID, date, set, Enum or Decimal put where an equally encoded plain value was is
    refused with TypeError by an encoder that saw the plain state, as a fresh one refuses it,
    in a plain dict, a chunked list's kept chunk and its items, and a chunked map's chunk."""
    state, change = _FOREIGN[case]
    encoder = PieceEncoder()
    encoder.encode(state)
    change(state)
    with pytest.raises(TypeError):
        PieceEncoder().encode(state)
    with pytest.raises(TypeError):
        encoder.encode(state)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32))
def test_a_list_edited_over_many_saves_is_stored_as_a_fresh_writer_stores_it(seed: int) -> None:
    """Appends (the common case: the open tail chunk is re-cut, its marks remembered),
    insertions, deletions, replacements and in-place edits of a chunked list of messages with
    long (Ref) and short texts: after every save the state reads back exactly and its root is
    the one a fresh encoder writes (sparse edits never take the dense path)."""
    rnd = random.Random(seed)

    def message(i: int) -> dict:
        return {"role": rnd.choice(["user", "tool"]), "id": f"m{i}",
                "text": "".join(rnd.choices("abcde ", k=rnd.choice([5, 40, 700])))}

    state: dict = {"messages": [message(i) for i in range(rnd.randrange(0, 40))], "step": 0}
    encoder, reader = PieceEncoder(), Reader()
    for step in range(30):
        messages = state["messages"]
        for _ in range(rnd.choice([1, 1, 2, 3])):
            action = rnd.random()
            if action < 0.6 or not messages:
                messages.append(message(len(messages)))
            elif action < 0.7:
                messages.insert(rnd.randrange(len(messages)), message(step))
            elif action < 0.8:
                del messages[rnd.randrange(len(messages))]
            elif action < 0.9:
                messages[rnd.randrange(len(messages))] = message(step)
            else:
                messages[rnd.randrange(len(messages))]["role"] = "assistant"
        state["step"] = step
        root, _, pieces = encoder.encode(state)
        reader.raw.update(pieces)
        assert exactly(reader.value(root), state)
        assert root == PieceEncoder().encode(state)[0]


class _Tone(str, enum.Enum):  # noqa: UP042  # on purpose: == "red", str(member) is "_Tone.RED"; stored as "red"
    RED = "red"


class _Tagged(str):                # == its text, str(obj) is "tagged"; stored as its text
    def __str__(self) -> str:
        return "tagged"


class _Raw(bytes):                 # == its bytes, bytes(obj) is b"other"; stored as its bytes
    def __bytes__(self) -> bytes:
        return b"other"


class _Anything:                   # == every value; a fresh save refuses it
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = object.__hash__


def _texts(n: int, big: int = -1) -> dict:
    """A big map whose values are all strings (the map path that keeps the values themselves)."""
    return {f"k{i}": "red" if i in (3, big) else f"v{i}" for i in range(n)}


def _same_chunk_neighbour(encoder: PieceEncoder, key: str) -> str:
    """Another key of the map chunk holding ``key`` (the encoder's layout of ``$.m``)."""
    for chunk in encoder._maps._layouts[("$", "m")].chunks:
        if key in chunk.keys:
            return next(k for k in chunk.keys if k != key)
    raise AssertionError(key)


def _subclass_cases() -> list:
    def swap(key: str, new: Any) -> Any:
        return lambda s, enc: s["m"].__setitem__(key, new)

    def swap_and_edit_neighbour(new: Any) -> Any:       # the chunk is rewritten: its other values compared one by one
        def change(s: dict, enc: PieceEncoder) -> None:
            s["m"][_same_chunk_neighbour(enc, "k3")] = "edited"
            s["m"]["k3"] = new
        return change

    def swap_and_edit_far(new: Any) -> Any:             # another group of chunks changed (3,000 keys: many groups)
        def change(s: dict, enc: PieceEncoder) -> None:
            s["m"]["k2990"] = "edited"
            s["m"]["k3"] = new
        return change

    def swap_and_add_key(new: Any) -> Any:              # the keys changed: kept chunks found one by one
        def change(s: dict, enc: PieceEncoder) -> None:
            s["m"]["added"] = "x"
            s["m"]["k3"] = new
        return change

    def rebuilt_with_key(new_key: Any) -> Any:          # the same keys, one an equal subclass
        return lambda s, enc: s.__setitem__("m", {(new_key if k == "k3" else k): v for k, v in s["m"].items()})

    return [
        (200, swap("k3", _Tone.RED)),
        (200, swap("k3", _Tagged("red"))),
        (200, swap("k3", _Anything())),
        (200, swap_and_edit_neighbour(_Tone.RED)),
        (200, swap_and_edit_neighbour(_Anything())),
        (3000, swap_and_edit_far(_Tone.RED)),
        (3000, swap_and_edit_far(_Tagged("red"))),
        (200, swap_and_add_key(_Tone.RED)),
        (200, rebuilt_with_key(_Tagged("k3"))),
        (3000, rebuilt_with_key(_Tagged("k3"))),
    ]


def _outcome(encoder: PieceEncoder, state: Any) -> Any:
    try:
        return encoder.encode(state)[0]
    except TypeError:
        return TypeError


@pytest.mark.parametrize("case", range(len(_subclass_cases())))
def test_a_subclass_equal_to_a_kept_string_of_a_big_map_is_stored_as_a_fresh_save_stores_it(case: int) -> None:
    """A big map of strings keeps its values and compares the next ones with ``==``, which
    takes a (str, Enum) member, a str subclass or an object equal to everything for the
    string it replaced; reuse must store (or refuse) it as a fresh save does — in the map's
    one-comparison path, a rewritten chunk's values, a group of kept chunks, a map whose keys
    changed, and its keys."""
    size, change = _subclass_cases()[case]
    state = {"m": _texts(size)}
    encoder = PieceEncoder()
    encoder.encode(state)
    change(state, encoder)
    fresh = _outcome(PieceEncoder(), state)
    assert _outcome(encoder, state) == fresh
    if fresh is not TypeError:        # stored as the plain strings they hold, never as their str()
        assert fresh == PieceEncoder().encode({"m": {str.__str__(k): str.__str__(v) for k, v in state["m"].items()}})[0]


@pytest.mark.parametrize("new", [_Raw(b"red"), bytearray(b"red"), memoryview(b"red")])
def test_a_bytes_look_alike_equal_to_kept_bytes_of_a_big_map_is_stored_as_a_fresh_save_stores_it(new: Any) -> None:
    """The same for bytes: a subclass whose bytes() differ, a bytearray, a memoryview."""
    state = {"m": {f"k{i}": b"red" if i == 3 else f"v{i}".encode() for i in range(200)}}
    encoder = PieceEncoder()
    encoder.encode(state)
    state["m"]["k3"] = new
    assert _outcome(encoder, state) == _outcome(PieceEncoder(), state)
    state["m"]["k3"] = b"red"         # stored as the bytes it holds, never as its bytes()
    assert _outcome(PieceEncoder(), {"m": dict(state["m"], k3=new)}) == _outcome(PieceEncoder(), state)


@pytest.mark.parametrize("edit", ["twin", "foreign", "real"])
def test_an_item_edited_after_a_dense_save_is_stored_exactly(edit: str) -> None:
    """After a dense save (coarse chunks, checked item by item on the next save) an item
    edited in place deep inside a coarse chunk — to a twin (1 → True), to a foreign object
    of the same encoding, or to a new value — is stored as it now is (or refused)."""
    state: dict = {"l": [{"i": i, "v": 1, "s": "red"} for i in range(3000)]}
    encoder, reader = PieceEncoder(), Reader()
    reader.raw.update(encoder.encode(state)[2])
    for item in state["l"]:
        item["v"] = 2                      # every item changed: a dense save
    reader.raw.update(encoder.encode(state)[2])
    old = encoder._lists[("$", "l")]
    assert sum(c.chunk.count for c in old) > 128 * len(old)     # coarse chunks (the path under test)
    target = state["l"][1777]
    if edit == "twin":
        target["v"] = 2.0
    elif edit == "foreign":
        target["s"] = _Colour.RED
        with pytest.raises(TypeError):
            encoder.encode(state)
        return
    else:
        target["v"] = 3
    root, _, pieces = encoder.encode(state)
    reader.raw.update(pieces)
    assert exactly(reader.value(root), state)


@pytest.mark.parametrize("size", [200, 3000])
def test_a_big_map_value_changed_and_changed_back_is_stored_as_it_now_is(size: int) -> None:
    """The kept values of a big map follow every save: a value changed, then put back to what
    it was two saves ago, is stored as it is now (not as the save before left it)."""
    state = {"m": _texts(size)}
    encoder, reader = PieceEncoder(), Reader()
    reader.raw.update(encoder.encode(state)[2])
    for text in ("changed", "red", "again", "red"):
        state["m"]["k3"] = text
        root, _, pieces = encoder.encode(state)
        reader.raw.update(pieces)
        assert exactly(reader.value(root), state)
        assert root == PieceEncoder().encode(state)[0]


def test_a_map_keyed_by_tuples_reads_back_as_it_was_saved(tmp_path) -> None:
    """A tuple key is stored as a msgpack array (msgpack has no tuples); reading it back raised
    "unhashable type: 'list'" — a checkpoint saved and never readable again. Small maps, a key
    nesting tuples, and a map big enough to be chunked, edited over several saves."""
    import copy
    import random

    from inspector.record import Checkpointer
    from inspector.store import open_store
    rnd = random.Random(7)
    state = {"pos": {(1, 2): "x"}, "nested": {((1, 2), "a", (3, (4,))): "deep"},
             "grid": {(i, j): f"cell {i},{j}" for i in range(90) for j in range(90)},
             "mixed": {1: "int", "1": "str", (1,): "tuple", 2.5: "float", None: "none"}}
    saved = []
    with Checkpointer(tmp_path / "keys.db", name="keys") as cp:
        for step in range(8):
            state["grid"][(rnd.randrange(90), rnd.randrange(90))] = f"edited {step}"
            if step % 3 == 0:
                state["grid"][("added", step)] = step
            saved.append((cp.save(state).id, copy.deepcopy(state)))
    with open_store(tmp_path / "keys.db") as store:
        for ident, expected in saved:
            got = store.load(ident).state
            assert got == expected
            assert list(got["grid"]) == list(expected["grid"])        # the keys, in order, as tuples
            assert all(type(k) is tuple for k in got["grid"])


def test_an_integer_beyond_64_bits_is_refused_saying_what_to_save(tmp_path) -> None:
    import pytest

    from inspector.errors import UnstorableStateError
    from inspector.record import Checkpointer
    with Checkpointer(tmp_path / "big.db", name="big") as cp:
        for state in ({"n": 2 ** 64}, {"m": {10 ** 20: "key"}}):
            with pytest.raises(UnstorableStateError, match=r"beyond 64 bits.*str\(n\)"):
                cp.save(state)
        assert cp.save({"n": 2 ** 63}) is not None      # (the biggest unsigned 64-bit ones are stored)
