"""Items and map values holding long strings (a document in a list of notes, a file in a map by
path) are compared without packing those strings again (``heavy_print``): every save still
decodes to the state exactly, whatever changes between saves, and a save that does not change
them makes no copy of them."""

from __future__ import annotations

import random
import string
import tracemalloc
from collections.abc import Callable

import pytest

from inspector.codec import PieceEncoder, resolve, unpack
from inspector.codec.encoded import HEAVY, fingerprint, heavy_print

_RND = random.Random(5)
_WORDS = ["".join(_RND.choices(string.ascii_lowercase, k=_RND.randint(2, 9))) for _ in range(500)]


def _text(chars: int, rnd: random.Random) -> str:
    lines = []
    total = 0
    while total < chars:
        line = " ".join(rnd.choices(_WORDS, k=rnd.randint(3, 14))) + "\n"
        lines.append(line)
        total += len(line)
    return "".join(lines)


def _decode(pieces: dict, root: bytes) -> object:
    return resolve(unpack(pieces[root]), lambda d: unpack(pieces[d]))


def _plain(value: object) -> object:
    """What a store gives back for ``value``: tuples as lists, a str subclass as its text."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, str):
        return str(value)
    return value


class _Label(str):
    pass


def _edit(text: str, rnd: random.Random) -> str:
    at = text.index("\n", rnd.randint(0, len(text) // 2)) + 1
    return text[:at] + _text(800, rnd) + text[at:]


# each shape: the state, and where its long texts are (get, set) for the random changes
def _notes_list(rnd: random.Random) -> tuple[dict, list]:
    notes = [{"path": f"n{i}", "body": f"# {i}\n", "n": i} for i in range(120)]
    state = {"notes": notes, "step": 0}
    return state, [lambda s: s["notes"], "list"]


def _files_map(rnd: random.Random) -> tuple[dict, list]:
    state = {"files": {f"src/f{i}.py": f"# file {i}\n" for i in range(150)}, "step": 0}
    return state, [lambda s: s["files"], "map"]


def _docs_map(rnd: random.Random) -> tuple[dict, list]:
    state = {"docs": {f"d{i}": {"title": f"t{i}", "meta": {"body": f"# {i}\n"}} for i in range(100)}, "step": 0}
    return state, [lambda s: s["docs"], "map"]


def _texts_list(rnd: random.Random) -> tuple[dict, list]:
    state = {"texts": [f"short {i}" for i in range(40)], "step": 0}
    return state, [lambda s: s["texts"], "list"]


def _heavy_slot(container: object, key: object) -> tuple[Callable[[], object], Callable[[object], None]]:
    """Get and set the long text of one item or value (its ``body``, ``meta.body`` or itself)."""
    def owner() -> tuple[object, object]:
        item = container[key]       # type: ignore[index]
        if isinstance(item, dict):
            return (item["meta"], "body") if "meta" in item else (item, "body")
        return container, key

    def get() -> object:
        o, k = owner()
        return o[k]      # type: ignore[index]

    def put(v: object) -> None:
        o, k = owner()
        o[k] = v         # type: ignore[index]
    return get, put


@pytest.mark.parametrize("shape", [_notes_list, _files_map, _docs_map, _texts_list])
def test_long_texts_in_items_and_values_decode_exactly_through_random_changes(shape: Callable) -> None:
    rnd = random.Random(shape.__name__)
    state, (where, kind) = shape(rnd)
    container = where(state)
    keys = list(container) if kind == "map" else list(range(len(container)))
    heavy_keys = [keys[3], keys[len(keys) // 2], keys[-2]]
    for key in heavy_keys:
        _heavy_slot(container, key)[1](_text(HEAVY + 20_000, rnd))
    enc, pieces = PieceEncoder(), {}
    changes = [
        "edit", "edit", "same content, new object", "small field", "replace item", "swap",
        "insert before", "remove before", "shrink", "regrow", "bytes", "flip type", "tuple",
        "subclass", "edit", "deep field", "move to end",
    ]
    printed = 0        # saves that compared a value by its heavy print (the path under test)
    for step in range(60):
        change = changes[step % len(changes)] if step < len(changes) else rnd.choice(changes)
        key = rnd.choice(heavy_keys) if kind == "map" else rnd.choice([k for k in range(len(container))
                                                                        if _is_heavy(container[k])] or [0])
        get, put = _heavy_slot(container, key)
        value = get()
        if change == "edit" and isinstance(value, str) and len(value) > 5000:
            put(_edit(value, rnd))
        elif change == "same content, new object" and isinstance(value, str) and value:
            put(value[:1] + value[1:])
        elif change == "small field" and isinstance(container[key], dict):
            container[key]["title" if "title" in container[key] else "path"] = f"renamed {step}"
        elif change == "replace item":
            item = container[key]
            container[key] = {**item, "meta": dict(item["meta"])} if isinstance(item, dict) and "meta" in item \
                else dict(item) if isinstance(item, dict) else item[:1] + item[1:]
        elif change == "swap" and kind == "list":
            j = rnd.randrange(len(container))
            container[key], container[j] = container[j], container[key]
        elif change == "insert before" and kind == "list":
            container.insert(max(0, key - 1), container[0] if not _is_heavy(container[0]) else "inserted")
        elif change == "remove before" and kind == "list" and key > 0 and not _is_heavy(container[key - 1]):
            del container[key - 1]
        elif change == "shrink":
            put("now short")
        elif change == "regrow":
            put(_text(HEAVY + 5000, rnd))
        elif change == "bytes" and isinstance(value, str):
            put(value.encode())
        elif change == "flip type" and isinstance(container[key], dict):
            item = container[key]
            # 1 → True → 1.0 → -0.0 → 1 (equal to ``==`` but stored apart)
            was = item.get("n")
            item["n"] = (True if type(was) is int else 1.0 if type(was) is bool
                         else -0.0 if was == 1.0 else 1)
        elif change == "tuple" and isinstance(container[key], dict):
            container[key]["extra"] = ("a", 1, (2.5, None))
        elif change == "subclass" and isinstance(value, str):
            put(_Label(value))
        elif change == "deep field" and isinstance(container[key], dict):
            container[key].setdefault("tags", []).append({"at": step})
        elif change == "move to end" and kind == "list":
            container.append(container.pop(key))
        elif change == "move to end":
            container[key] = container.pop(key)
        state["step"] = step
        root, _, new = enc.encode(state)
        pieces.update(new)
        printed += enc._prints > 0
        decoded = _decode(pieces, root)
        assert fingerprint(decoded) == fingerprint(_plain(state)), (step, change)
    assert printed >= 5, printed


def _is_heavy(item: object) -> bool:
    if isinstance(item, dict):
        body = item["meta"]["body"] if "meta" in item else item.get("body")
    else:
        body = item
    return isinstance(body, (str, bytes)) and len(body) > 5000


def test_equal_heavy_prints_mean_the_same_value_exactly() -> None:
    text = "x" * HEAVY
    assert heavy_print({"a": text}) == heavy_print({"a": "x" * HEAVY})     # another object, the same text
    assert heavy_print({"a": text, "n": 1}) != heavy_print({"a": text, "n": True})
    assert heavy_print({"a": text, "n": 0.0}) != heavy_print({"a": text, "n": -0.0})
    assert heavy_print({"a": text, "b": 1}) != heavy_print({"b": 1, "a": text})      # key order
    assert heavy_print([text, "y" * 5000]) != heavy_print(["y" * 5000, text])
    assert heavy_print({"a": text}) != heavy_print({"a": text.encode()})
    assert heavy_print({"a": text[:-1] + "y"}) != heavy_print({"a": text})
    # what it does not print: fingerprint says
    assert heavy_print({"a": "short"}) is None
    assert heavy_print({"a": (text,)}) is None and heavy_print({"a": _Label(text)}) is None
    assert heavy_print({(1, 2): text}) is None
    assert heavy_print([{"n": i} for i in range(300)] + [text]) is None        # too many values to walk


@pytest.mark.parametrize("edited", [False, True], ids=["beside it", "the text edited"])
@pytest.mark.parametrize("shape", ["list item", "nested in a list item", "map value", "dict in a map",
                                   "dict in a small map"])
def test_a_save_makes_no_copy_of_the_long_texts_it_compares(shape: str, edited: bool) -> None:
    """A 4 MB text in an item or a map value: a save that changes the state beside it (in
    the same chunk) allocates far less than the text, and one that edits it less than the
    text too (the edit is found by comparing the halves it shares with the last version);
    each packed it again to compare it before (4 MB and more at once)."""
    rnd = random.Random(3)
    text = _text(4_000_000, rnd)
    if shape == "list item":
        state = {"items": [{"id": i, "body": f"b{i}"} for i in range(200)], "step": 0}
        state["items"][100]["body"] = text
    elif shape == "nested in a list item":
        state = {"items": [{"id": i, "meta": {"body": f"b{i}"}} for i in range(200)], "step": 0}
        state["items"][100]["meta"]["body"] = text
    elif shape == "map value":
        state = {"files": {f"f{i}": f"b{i}" for i in range(200)}, "step": 0}
        state["files"]["f100"] = text
    else:     # a dict in a big map (chunked) or a small one (each value has its path)
        keys = range(200) if shape == "dict in a map" else range(100, 110)
        state = {"files": {f"f{i}": {"title": f"t{i}", "body": f"b{i}"} for i in keys}, "step": 0}
        state["files"]["f100"]["body"] = text
    container = state["items"] if "items" in state else state["files"]
    key = 100 if isinstance(container, list) else "f100"
    get, put = _heavy_slot(container, key)
    neighbour = container[101] if isinstance(container, list) else "f101"
    enc, pieces = PieceEncoder(), {}
    for step in range(4):        # the first saves store the text and learn it is long
        state["step"] = step
        if step:
            put(_edit(get(), rnd))
        pieces.update(enc.encode(state)[2])
    peaks = []
    for step in range(4, 8):
        state["step"] = step
        if edited:
            put(_edit(get(), rnd))
        elif isinstance(neighbour, dict):      # a change in the same chunk as the text
            neighbour["id"] = f"changed {step}"
        else:
            container[neighbour] = f"changed {step}"
        tracemalloc.start()
        root, _, new = enc.encode(state)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        pieces.update(new)
        assert _decode(pieces, root) == state
    assert max(peaks) < (3_000_000 if edited else 1_000_000), peaks


def _count_packed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """From now on, the bytes the strict encoder makes are added to the last number of the
    list returned (append a 0 before each save)."""
    import inspector.codec.encoded as encoded
    packed: list[int] = []
    real = encoded._packb

    def counting(*args: object) -> bytes:
        out = real(*args)
        packed[-1] += len(out)
        return out

    monkeypatch.setattr(encoded, "_packb", counting)
    return packed


def test_items_of_a_few_hundred_kilobytes_are_not_packed_again_at_each_save(monkeypatch: pytest.MonkeyPatch) -> None:
    """300 notes of 200 KB (60 MB): a save that edits one packs a few of them to compare
    them, not all 300 (each save packed all of them, 33 ms, their buffers' pages faulted in
    afresh each time)."""
    rnd = random.Random(6)
    notes = [{"id": i, "body": _text(200_000, rnd)} for i in range(300)]
    state = {"notes": notes, "step": 0}
    enc, pieces = PieceEncoder(), {}
    for step in range(3):
        state["step"] = step
        pieces.update(enc.encode(state)[2])
    packed = _count_packed(monkeypatch)
    for step in range(3, 9):
        note = notes[rnd.randrange(300)]
        if step % 2:
            note["body"] = _edit(note["body"], rnd)
        else:
            note["id"] = -step
        state["step"] = step
        packed.append(0)
        root, _, new = enc.encode(state)
        pieces.update(new)
        assert _decode(pieces, root) == state
    assert max(packed) < 2_000_000, packed


@pytest.mark.parametrize("changing", ["all", "one"])
def test_a_long_list_rewritten_densely_walks_its_heavy_item(monkeypatch: pytest.MonkeyPatch, changing: str) -> None:
    """10,000 records and one 4 MB note: saves that change every record (coarse chunks, the
    whole list fingerprinted at once) and sparse saves after them fingerprint the records in
    one C call and walk the note, instead of packing it two or three times a save."""
    rnd = random.Random(7)
    records = [{"id": i, "status": "todo", "n": 0} for i in range(10_000)]
    records[5_000] = {"id": 5_000, "body": _text(4_000_000, rnd)}
    state = {"records": records}
    enc, pieces = PieceEncoder(), {}
    for _ in range(3):
        for r in records:
            if "n" in r:
                r["n"] += 1
        pieces.update(enc.encode(state)[2])
    packed = _count_packed(monkeypatch)
    for step in range(4):
        if changing == "all":
            for r in records:
                if "n" in r:
                    r["n"] += 1
        else:
            records[rnd.randrange(10_000)]["status"] = f"done {step}"
        packed.append(0)
        root, _, new = enc.encode(state)
        pieces.update(new)
        assert _decode(pieces, root) == state
    assert max(packed) < 2_000_000, packed


def test_a_writer_lets_go_of_the_items_it_found_heavy() -> None:
    rnd = random.Random(4)
    state = {"items": [{"id": i, "body": f"b{i}"} for i in range(100)]}
    state["items"][50]["body"] = _text(HEAVY + 1000, rnd)
    enc = PieceEncoder()
    for _ in range(3):
        enc.encode(state)
    assert enc._heavy       # the item is compared by its heavy print
    del state["items"][50]
    for _ in range(3):
        enc.encode(state)
    assert not enc._heavy
