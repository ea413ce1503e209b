"""Content-addressed encoding: exact round trips, dedup, determinism, in-place mutation."""

from __future__ import annotations

import copy

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.errors import CorruptDataError
from inspector.codec import PieceEncoder, frame_chunk, pack, resolve, split_items, unpack

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**63, 2**63 - 1) | st.floats(allow_nan=False)
    | st.text(max_size=700),
    lambda children: st.lists(children, max_size=40) | st.dictionaries(st.text(max_size=12), children, max_size=8),
    max_leaves=200)


def _decode(table: dict, digest: bytes):
    return resolve(unpack(table[digest]), lambda d: unpack(table[d]))


@settings(max_examples=60, deadline=None)
@given(json_values, json_values, st.sampled_from([1, 2]))
def test_round_trip_and_determinism(a, b, chunk_format) -> None:
    table: dict = {}
    enc = PieceEncoder()
    enc.chunk_format = chunk_format     # format 1 chunks (older stores) decode the same
    da, _, pieces = enc.encode({"a": a})
    table.update(pieces)
    db, _, pieces = enc.encode({"a": a, "b": b})
    table.update(pieces)
    assert _decode(table, da) == {"a": a}
    assert _decode(table, db) == {"a": a, "b": b}
    fresh_encoder = PieceEncoder()
    fresh_encoder.chunk_format = chunk_format
    fresh, _, _ = fresh_encoder.encode({"a": a, "b": b})
    assert fresh == db, "the digest depends only on content, not on the encoder's history"


def _history(n: int) -> list[dict]:
    return [{"role": "user", "content": f"message {i} " + "x" * 1000, "id": i} for i in range(n)]


def test_append_writes_only_the_change() -> None:
    enc = PieceEncoder()
    stored: dict = {}
    state = {"messages": _history(500)}
    _, _, pieces = enc.encode(state)
    stored.update(pieces)
    state["messages"].append({"role": "assistant", "content": "y" * 1000, "id": 500})
    digest, _, pieces = enc.encode(state)
    new_bytes = sum(len(raw) for d, raw in pieces.items() if d not in stored)
    stored.update(pieces)
    assert new_bytes < 5_000, f"appending 1 KB to a 500 KB history wrote {new_bytes} bytes"
    assert _decode(stored, digest) == state


def test_in_place_mutation_is_seen() -> None:
    enc = PieceEncoder()
    stored: dict = {}
    state = {"messages": _history(100), "nested": {"deep": {"value": [1, 2, 3] * 100}}}
    _, _, pieces = enc.encode(state)
    stored.update(pieces)
    state["messages"][37]["content"] = "edited in place"
    state["nested"]["deep"]["value"][5] = 99
    digest, _, pieces = enc.encode(state)
    stored.update(pieces)
    assert _decode(stored, digest) == state


def test_insert_in_the_middle_rewrites_little() -> None:
    enc = PieceEncoder()
    stored: dict = {}
    state = {"messages": _history(400)}
    _, _, pieces = enc.encode(state)
    stored.update(pieces)
    state["messages"].insert(200, {"role": "tool", "content": "inserted", "id": -1})
    digest, _, pieces = enc.encode(state)
    new_bytes = sum(len(raw) for d, raw in pieces.items() if d not in stored)
    stored.update(pieces)
    assert new_bytes < 8_000
    assert _decode(stored, digest) == state


@pytest.mark.parametrize("move", ["window", "window of 40", "newest first, oldest dropped", "frozen window"])
def test_a_window_moving_over_a_history_rewrites_little(move: str) -> None:
    """The last N messages kept (``trim_messages``, a rolling log, a bounded queue): the first
    items dropped while new ones are appended moves every old item. It rewrote the whole list
    at every save (1.3 MB for 2,000 messages of 600 bytes); the old chunks are now found where
    the list's first (or last) item went."""
    enc = PieceEncoder()
    if move == "frozen window":
        enc.frozen = True      # InspectorSaver's lanes: items are never changed once encoded
    stored: dict = {}
    history = _history(2000)
    digest, _, pieces = enc.encode({"messages": history})
    stored.update(pieces)
    next_id = 2000
    for step in range(12):
        if move == "newest first, oldest dropped":
            history = [{"role": "user", "content": "new " * 200, "id": next_id}] + history[:-1]
        elif move == "window of 40":
            history = history[40:] + _history(next_id + 40)[next_id:]
        else:
            history = history[1:] + [{"role": "user", "content": "new " * 200, "id": next_id}]
        next_id += 40
        state = {"messages": history}
        digest, _, pieces = enc.encode(state)
        new_bytes = sum(len(raw) for d, raw in pieces.items() if d not in stored)
        made = sum(map(len, pieces.values()))         # what the writer made again, stored before or not
        stored.update(pieces)
        # a message is ~1 KB: about what was added and the chunk the front was cut from
        assert new_bytes < (70_000 if move == "window of 40" else 12_000), (step, new_bytes)
        assert made < 2 * new_bytes + 10_000, (step, made, new_bytes)
        assert _decode(stored, digest) == state


_TWO_EDITS = {
    "a task removed, another appended": lambda items, new: (items.pop(len(items) // 2), items.append(new)),
    "an item moved to the end": lambda items, new: items.append(items.pop(len(items) // 3)),
    "inserted in the middle and appended": lambda items, new: (items.insert(len(items) // 2, new), items.append(new)),
    "inserted at the front, removed in the middle": lambda items, new: (items.insert(0, new), items.pop(len(items) // 2)),
    "two removed": lambda items, new: (items.pop(len(items) // 3), items.pop(2 * len(items) // 3)),
}


@pytest.mark.parametrize("edit", list(_TWO_EDITS))
def test_two_edits_that_move_items_rewrite_little(edit: str) -> None:
    """Two edits in one save (a task done and removed while a new one is appended, an item
    moved): the items between them move by an offset no single edit explains. The writer
    encoded everything after the first edit again (1.1 MB of pieces for 2 MB of tasks); it now
    looks for the old chunks wherever their first item went."""
    enc = PieceEncoder()
    stored: dict = {}
    tasks = [{"id": i, "status": "todo", "content": f"task {i} " + "x" * 400} for i in range(5000)]
    stored.update(enc.encode({"tasks": tasks})[2])
    for step in range(6):
        _TWO_EDITS[edit](tasks, {"id": -step, "status": "new", "content": "y" * 400})
        digest, _, pieces = enc.encode({"tasks": tasks})
        written = sum(len(raw) for raw in pieces.values())        # every piece the save made, kept or not
        stored.update(pieces)
        assert written < 120_000, (step, written)
        assert _decode(stored, digest) == {"tasks": tasks}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_moves_store_what_a_fresh_writer_would(seed: int) -> None:
    """Random deletions, insertions, moves, appends, a window dropped at the front and edits,
    one to three a save, among repeated items: every state decodes exactly and its digest is
    the one a writer that saw no earlier state gives (the chunks kept are found where they
    now are, not cut anew by where the writer looked)."""
    import random
    rnd = random.Random(seed)
    pool = [{"k": i, "t": "x" * rnd.randint(0, 300)} for i in range(50)] + ["ok", "ok", 1, None]

    def item() -> object:
        return rnd.choice(pool) if rnd.random() < 0.3 else {"id": rnd.random(), "t": "y" * rnd.randint(0, 900)}
    items = [item() for _ in range(800)]
    enc, stored = PieceEncoder(), {}
    for step in range(150):
        for _ in range(rnd.randint(1, 3)):
            op = rnd.choice(["del", "ins", "move", "app", "pop0", "edit"])
            if op == "del" and items:
                del items[rnd.randrange(len(items))]
            elif op == "ins":
                items.insert(rnd.randrange(len(items) + 1), item())
            elif op == "move" and items:
                items.insert(rnd.randrange(len(items)), items.pop(rnd.randrange(len(items))))
            elif op == "app":
                items.extend(item() for _ in range(rnd.randint(1, 5)))
            elif op == "pop0":
                del items[:rnd.randint(1, 40)]
            elif op == "edit" and items:
                items[rnd.randrange(len(items))] = item()
        digest, _, pieces = enc.encode({"items": items})
        stored.update(pieces)
        assert _decode(stored, digest) == {"items": items}, step
        assert PieceEncoder().encode({"items": items})[0] == digest, step


def test_equal_subtrees_share_digests() -> None:
    big = {"blob": "z" * 5000}
    d1, _, p1 = PieceEncoder().encode({"x": copy.deepcopy(big), "n": 1})
    d2, _, p2 = PieceEncoder().encode({"x": copy.deepcopy(big), "n": 2})
    assert d1 != d2
    assert set(p1) & set(p2), "the unchanged 5 KB subtree is one shared piece"


def test_decoded_markers_are_ordinary_immutable_markers() -> None:
    from inspector.codec import Chunk, ChunkedList, ChunkedMap, Ref, pack

    ref = Ref(b"r" * 16, 700)
    chunked = ChunkedList((Chunk(3, 90, b"a" * 16), Chunk(2**31, 2**40, b"b" * 16)))
    deep = ChunkedList((Chunk(5, 70, b"d" * 16),), height=2)
    mapped = ChunkedMap((Chunk(64, 900, b"m" * 16),), height=1)
    got = unpack(pack([ref, chunked, deep, mapped]))
    assert got == [ref, chunked, deep, mapped]
    assert [type(x) for x in got] == [Ref, ChunkedList, ChunkedList, ChunkedMap]
    assert [hash(x) for x in got] == [hash(x) for x in (ref, chunked, deep, mapped)]
    assert [repr(x) for x in got] == [repr(x) for x in (ref, chunked, deep, mapped)]
    assert got[1].length == 2**31 + 3 and got[2].height == 2 and got[3].length == 64
    with pytest.raises(AttributeError):
        got[0].size = 1
    with pytest.raises(AttributeError):
        got[1].chunks[0].count = 1


def test_bytes_without_extension_headers_hold_no_markers() -> None:
    from inspector.codec import Chunk, ChunkedList, ChunkedMap, Ref, encode_flat, may_hold_markers, pack

    for value in (Ref(b"r" * 16, 1), ChunkedList(()), ChunkedList(tuple(Chunk(1, 2, b"c" * 16) for _ in range(3000))),
                  ChunkedMap(()), ChunkedMap((Chunk(1, 2, b"c" * 16),), 3)):
        assert may_hold_markers(pack({"x": [value]}))
    digest, _, pieces = encode_flat({"goal": "g", "tasks": [{"id": "a", "progress": 0.5, "checks": []}]})
    assert not may_hold_markers(pieces[digest])


@pytest.mark.parametrize("items", [[0], [1, 2], [None] * 3, ["x" * 40] * 17, list(range(200)),
                                   [{"k": [1, 2], "t": "y" * 300}] * 250, ["z" * 70_000]],
                         ids=["fixext4", "ext8", "three", "ext8 long", "ints", "ext16", "ext32"])
def test_chunks_split_into_their_items_encodings_in_both_formats(items) -> None:
    encoded = [pack(item) for item in items]
    framed, plain = frame_chunk(encoded), pack(items)
    assert split_items(framed) == split_items(plain) == encoded
    assert unpack(framed) == unpack(plain) == items


def test_real_chunks_are_framed_and_split_without_decoding() -> None:
    state = {"facts": [{"id": i, "text": f"fact {i} " * 9} for i in range(400)]}
    _, _, table = PieceEncoder().encode(state)
    chunks = [raw for raw in table.values() if raw[0] in (0xc7, 0xc8, 0xc9)]
    assert len(chunks) >= 5
    items = [item for raw in chunks for item in split_items(raw)]
    assert sorted(unpack(item)["id"] for item in items) == list(range(400))


def _ext(code: int, payload: bytes) -> bytes:
    return msgpack.packb(msgpack.ExtType(code, payload))


@pytest.mark.parametrize("raw", [
    frame_chunk([pack(1), pack("two")])[:-1],                    # truncated
    frame_chunk([pack(1), pack("two")]) + b"\x00",               # trailing byte
    _ext(5, msgpack.packb([pack(1)] * 20)),                      # another extension type
    _ext(3, msgpack.packb(["not bytes"] * 20)),                  # frames that are not bins
    _ext(3, msgpack.packb({"a": 1})),                            # not an array
    _ext(3, b"\xdd\xff\xff\xff\xff"),                          # an array claiming 4 billion frames
    _ext(3, b"\x91\xc4\x02\x01"),                               # a frame cut short
    b"\xd6\x03\x91\xc4\x02\x01",                                # fixext 4 with a frame cut short
], ids=["truncated", "trailing", "ext type", "str frames", "map", "huge count", "short frame", "fixext cut"])
def test_malformed_chunks_are_corrupt_data(raw) -> None:
    with pytest.raises(CorruptDataError):
        split_items(raw)
    with pytest.raises(CorruptDataError):
        unpack(raw)


def test_a_chunk_inside_an_item_is_corrupt_data() -> None:
    inner = frame_chunk([pack(1)])
    nested = frame_chunk([msgpack.packb(msgpack.ExtType(3, msgpack.packb([pack(1)])))])
    assert unpack(inner) == [1]
    with pytest.raises(CorruptDataError, match="holds a list chunk"):
        unpack(nested)


def test_what_a_writer_keeps_per_path_is_bounded_when_paths_come_and_go(monkeypatch: pytest.MonkeyPatch) -> None:
    """A state with a new key a step (tool results by call id, one replacing the last) left one
    cache entry per path ever seen: 40,001 after 20,000 steps, growing with the run rather than
    its state. Past a bound of paths (or bytes) the cache is dropped before a save; the saves
    after it decode exactly and cost what they did."""
    from inspector.codec import encoder
    monkeypatch.setattr(encoder, "CACHE_PATHS", 500)
    enc, stored = PieceEncoder(), {}
    sizes = []
    for step in range(3_000):
        state = {"scratch": {f"call_{step}": {"args": {"q": "x" * 600}, "result": f"{step} " + "y" * 600}},
                 "history": _history(20), "step": step}
        digest, _, pieces = enc.encode(state)
        sizes.append(sum(len(raw) for d, raw in pieces.items() if d not in stored))
        stored.update(pieces)
        assert len(enc._cache) <= 500 + 10
        if step % 500 == 499:
            assert _decode(stored, digest) == state
    assert max(sizes[10:]) < 5_000       # a new call's result and the root: the history is never written again
