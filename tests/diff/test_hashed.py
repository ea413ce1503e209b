"""The hashed diff over content-addressed pieces: equal subtrees and chunks are never read."""

from __future__ import annotations

import copy
import difflib
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.diff import ADDED, CHANGED, REMOVED, DiffError, apply, diff_pieces, diff_values
from inspector.diff.engine import chunk_opcodes
from inspector.errors import CorruptDataError
from inspector.codec import ChunkedList, PieceEncoder, Ref, unpack


class Pieces:
    """Encoded states and fetch functions that record what the diff asked for."""

    chunk_format = 2

    def __init__(self) -> None:
        self.encoder = PieceEncoder()
        self.encoder.chunk_format = self.chunk_format
        self.raw: dict[bytes, bytes] = {}
        self.requested: list[bytes] = []

    def add(self, state) -> bytes:
        root, _, pieces = self.encoder.encode(state)
        self.raw.update(pieces)
        return root

    def fetch(self, digests) -> dict:
        self.requested.extend(digests)
        return {d: unpack(self.raw[d]) for d in digests}

    def fetch_raw(self, digests) -> dict:
        self.requested.extend(digests)
        return {d: self.raw[d] for d in digests}

    def stream_raw(self, digests, part: int = 3):
        """Raw pieces in parts of ``part`` (as a store streams them), each part asked for
        only once the previous one has been used."""
        digests = list(digests)
        for start in range(0, len(digests), part):
            yield self.fetch_raw(digests[start:start + part])


@pytest.fixture(params=["decoded", "raw", "raw streamed", "raw format 1"])
def diff(request, monkeypatch):
    """diff_pieces reading list chunks decoded, or raw (split into encoded items) at once or
    streamed in parts; the chunks written as this version does, or as format 1 stores hold
    them (plain arrays)."""
    if request.param == "raw format 1":
        monkeypatch.setattr(Pieces, "chunk_format", 1)

    def run(p: Pieces, root_a: bytes, root_b: bytes, **kwargs):
        if request.param == "raw streamed":
            kwargs["stream_raw"] = p.stream_raw
        elif request.param != "decoded":
            kwargs["fetch_raw"] = p.fetch_raw
        return diff_pieces(p.fetch, root_a, root_b, **kwargs)
    return run


def history(n: int, seed: int = 0) -> list[dict]:
    rnd = random.Random(seed)
    return [{"role": rnd.choice(["user", "assistant"]), "content": f"{i} " + "".join(
        rnd.choices("abcdefgh ", k=80))} for i in range(n)]


def test_equal_roots_read_nothing(diff) -> None:
    p = Pieces()
    root = p.add({"messages": history(300)})
    assert diff(p, root, root) == ()
    assert p.requested == []


def test_append_reads_only_the_root_and_the_tail_chunks(diff) -> None:
    p = Pieces()
    old = {"messages": history(3000), "big": {"doc": "x" * 5000}}
    new = copy.deepcopy(old)
    new["messages"] += history(3, seed=9)
    root_a, root_b = p.add(old), p.add(new)
    stats: dict = {}
    changes = diff(p, root_a, root_b, stats=stats)
    assert [(c.op, c.display_path) for c in changes] == [
        (ADDED, "messages[3000]"), (ADDED, "messages[3001]"), (ADDED, "messages[3002]")]
    assert changes[0].new == new["messages"][3000]
    assert len(p.raw) > 60
    assert stats["pieces_read"] == len(set(p.requested)) <= 6
    unpacked_root = unpack(p.raw[root_a])
    assert unpacked_root["big"]["doc"].digest not in p.requested   # equal Refs are skipped unread


def test_edit_in_the_middle_reads_only_the_chunks_that_differ(diff) -> None:
    p = Pieces()
    old = {"messages": history(3000)}
    new = copy.deepcopy(old)
    new["messages"][1500]["content"] = "edited"
    new["messages"].insert(2200, {"role": "tool", "content": "inserted"})
    root_a, root_b = p.add(old), p.add(new)
    changes = diff(p, root_a, root_b)
    assert [(c.op, c.display_path) for c in changes] == [
        (CHANGED, "messages[1500].content"), (ADDED, "messages[2200]")]
    chunks = unpack(p.raw[root_a])["messages"]
    assert isinstance(chunks, ChunkedList) and len(chunks.chunks) > 50
    assert len(set(p.requested)) <= 2 + 2 * 3


def test_hashed_and_plain_diffs_agree(diff) -> None:
    p = Pieces()
    old = {"messages": history(400), "notes": "line\n" * 300, "cfg": {"a": 1, "b": [1, 2, 3]}}
    new = copy.deepcopy(old)
    del new["messages"][10]
    new["messages"].append({"role": "user", "content": "bye"})
    new["notes"] = new["notes"].replace("line\n", "LINE\n", 1)
    new["cfg"]["b"].append(4)
    del new["cfg"]["a"]
    changes = diff(p, p.add(old), p.add(new))
    assert changes == diff_values(old, new)
    assert apply(old, changes) == new
    assert {c.op for c in changes} == {ADDED, REMOVED, CHANGED}


def test_list_shrinking_below_the_chunking_threshold(diff) -> None:
    p = Pieces()
    old = {"items": history(40)}
    new = {"items": old["items"][:5]}
    changes = diff(p, p.add(old), p.add(new))
    assert len(changes) == 35 and all(c.op == REMOVED for c in changes)
    assert apply(old, changes) == new


def test_values_with_markers_need_a_fetch() -> None:
    with pytest.raises(DiffError, match="no store"):
        diff_values({"a": Ref(b"\0" * 16, 1)}, {"a": Ref(b"\1" * 16, 1)})


def test_missing_piece_is_a_store_error() -> None:
    from inspector.diff import dict_fetcher
    with pytest.raises(CorruptDataError):
        diff_pieces(dict_fetcher({}), b"\0" * 16, b"\1" * 16)


def test_raw_chunks_decode_only_the_items_that_differ() -> None:
    p = Pieces()
    old = {"facts": [{"id": i, "text": f"fact {i}", "tags": ["a", "b"]} for i in range(2000)]}
    new = copy.deepcopy(old)
    for i in (7, 700, 1400):
        new["facts"][i]["tags"][1] = "changed"
    stats: dict = {}
    changes = diff_pieces(p.fetch, p.add(old), p.add(new), fetch_raw=p.fetch_raw, stats=stats)
    assert [c.display_path for c in changes] == ["facts[7].tags[1]", "facts[700].tags[1]",
                                                  "facts[1400].tags[1]"]
    # each edited item and its two neighbours, on both sides (neighbours decoded once)
    assert stats["items_decoded"] <= 3 * 4


def test_raw_chunks_compare_equal_values_with_other_encodings_as_equal() -> None:
    p = Pieces()
    old = {"rows": [{"a": i, "b": 2} for i in range(100)] + [{"x": 1.0}]}
    new = {"rows": [{"a": i, "b": 2} for i in range(100)] + [{"x": 1}]}
    new["rows"][50] = {"b": 2, "a": 50}     # same dict, keys in another order: other bytes, no change
    changes = diff_pieces(p.fetch, p.add(old), p.add(new), fetch_raw=p.fetch_raw)
    assert [(c.path, c.old, c.new) for c in changes] == [(("rows", 100, "x"), 1.0, 1)]   # a float became an int
    assert type(changes[0].new) is int


def test_raw_chunks_report_moves_and_shifts_like_decoded_ones() -> None:
    p = Pieces()
    old = {"items": [{"n": i, "body": "x" * 20} for i in range(300)]}
    moved = copy.deepcopy(old)
    moved["items"][10], moved["items"][20] = moved["items"][20], moved["items"][10]
    shifted = copy.deepcopy(old)
    shifted["items"].insert(40, {"n": -1})
    del shifted["items"][45]
    for new in (moved, shifted):
        root_a, root_b = p.add(old), p.add(new)
        raw = diff_pieces(p.fetch, root_a, root_b, fetch_raw=p.fetch_raw)
        assert raw == diff_pieces(p.fetch, root_a, root_b) == diff_values(old, new)
        assert apply(old, raw) == new


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_chunk_opcodes_are_difflibs(data) -> None:
    alphabet = [bytes([n]) for n in range(data.draw(st.integers(1, 12)))]
    keys_a = data.draw(st.lists(st.sampled_from(alphabet), max_size=8))
    if data.draw(st.booleans()):    # chunks edited in place: same length, some kept where they were
        keys_b = [k if data.draw(st.booleans()) else bytes([100 + data.draw(st.integers(0, 40))]) for k in keys_a]
    else:
        keys_b = data.draw(st.lists(st.sampled_from(alphabet), max_size=8))
    expected = difflib.SequenceMatcher(None, keys_a, keys_b, autojunk=False).get_opcodes()
    if not set(keys_a) & set(keys_b):   # no chunk in common: one region (not difflib's split)
        expected = [("replace", 0, len(keys_a), 0, len(keys_b))]
    assert [tuple(op) for op in chunk_opcodes(keys_a, keys_b)] == [tuple(op) for op in expected]


@pytest.mark.parametrize("twin", [{"t": "item 9", "n": 9}, {"n": 9.0, "t": "item 9"}, {"n": 9, "t": "item 9 "}],
                         ids=["keys in another order", "float for int", "other text"])
def test_raw_chunks_agree_when_an_item_may_equal_its_old_neighbour_in_other_bytes(twin) -> None:
    # new item 10 is, or nearly is, unchanged item 9 encoded otherwise: whether that is a
    # shift is decided on values, as in the decoded and plain diffs
    p = Pieces()
    old = {"rows": [{"n": i, "t": f"item {i}"} for i in range(60)]}
    new = copy.deepcopy(old)
    new["rows"][10] = twin
    new["rows"][11] = {"n": 11, "t": "edited"}
    root_a, root_b = p.add(old), p.add(new)
    raw = diff_pieces(p.fetch, root_a, root_b, fetch_raw=p.fetch_raw)
    assert raw == diff_pieces(p.fetch, root_a, root_b) == diff_values(old, new)
    assert apply(old, raw) == new


def test_streamed_chunks_shared_by_two_lists_and_read_across_parts() -> None:
    p = Pieces()
    facts = [{"id": i, "text": f"fact {i} " * 5} for i in range(400)]
    old = {"a": facts, "b": copy.deepcopy(facts), "c": facts[:200]}
    new = copy.deepcopy(old)
    for key in ("a", "b"):          # the same edits: both lists want the same new chunks
        new[key][10]["text"] = "edited"
        new[key][390]["text"] = "edited too"
    new["c"].insert(50, {"id": -1})
    root_a, root_b = p.add(old), p.add(new)
    asked: list[list[bytes]] = []

    def stream(digests):
        asked.append(list(digests))
        yield from p.stream_raw(digests, part=1)
    streamed = diff_pieces(p.fetch, root_a, root_b, stream_raw=stream)
    assert streamed == diff_pieces(p.fetch, root_a, root_b) == diff_values(old, new)
    assert all(len(set(ds)) == len(ds) for ds in asked), "a chunk wanted twice is read once"


def test_a_cancel_between_streamed_parts_stops_the_diff() -> None:
    from inspector.diff import DiffCancelled

    p = Pieces()
    old = {"facts": [{"id": i, "text": f"fact {i} " * 5} for i in range(3000)]}
    new = copy.deepcopy(old)
    for i in range(0, 3000, 7):
        new["facts"][i]["text"] = "edited"
    parts: list[int] = []

    def stream(digests):
        for part in p.stream_raw(digests, part=4):
            parts.append(len(part))
            yield part
    with pytest.raises(DiffCancelled):
        diff_pieces(p.fetch, p.add(old), p.add(new), stream_raw=stream, cancel=lambda: len(parts) >= 3)
    assert len(parts) == 3, "the diff stopped at the part after the cancel"
