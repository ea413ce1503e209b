"""``PieceEncoder.frozen``: a list that starts with the very items last encoded keeps its chunks
unlooked-at, and stores exactly what an encoder looking at every chunk stores."""

from __future__ import annotations

import random

from inspector.codec.encoder import PieceEncoder


def _leaf(n: int, rnd: random.Random) -> dict:
    return {"__lg__": "msgpack", "b": bytes(rnd.getrandbits(8) for _ in range(rnd.randrange(20, 900))) + bytes([n % 256])}


def test_a_frozen_encoder_stores_what_a_looking_one_stores() -> None:
    """Appends, a list cut short, an item replaced (by an equal but other object, and by
    another value) and a shifted list: digests, sizes and new pieces are the same as a plain
    encoder's; a list starting with the very items last encoded (appends) keeps its old
    chunks without matching them one by one, any other goes chunk by chunk."""
    rnd = random.Random(5)
    frozen, plain = PieceEncoder(), PieceEncoder()
    frozen.frozen = True
    items: list = []
    for step in range(120):
        items = list(items)          # a new list each save, holding the same items (as the saver's lowering)
        if step == 60:
            items = items[:40]                                  # cut short
        elif step == 70:
            items[5] = dict(items[5])                           # an equal copy in place of an item
        elif step == 80:
            items[6] = _leaf(9999, rnd)                         # another value
        elif step == 90:
            items = [_leaf(-1, rnd)] + items                    # shifted
        else:
            items.append(_leaf(step, rnd))
        assert frozen.encode({"messages": items, "n": len(items)}) == plain.encode({"messages": items, "n": len(items)})
    calls: list[int] = []

    def matching(value: object, fp: bytes) -> bool:
        calls.append(1)
        return True
    frozen.matches = matching
    frozen.encode({"messages": items, "n": 0})
    calls.clear()
    frozen.encode({"messages": [*items, _leaf(7, rnd)], "n": 0})
    assert calls == []                                          # appends: no chunk matched one by one
    frozen.encode({"messages": [_leaf(8, rnd), *items], "n": 0})    # not a prefix: chunk by chunk
    assert calls



def test_the_very_list_encoded_again_is_its_last_result(monkeypatch) -> None:
    """A channel a put stores again as it was (the same lowered list object): its chunks and
    table are the last encoding's, without laying the list out again, and the save's digest,
    size and new pieces are a looking encoder's; another list at that path in between goes
    through its chunks again, and after ``forget`` everything is stored afresh."""
    from inspector.codec import encoder
    rnd = random.Random(11)
    frozen, plain = PieceEncoder(), PieceEncoder()
    frozen.frozen = True
    items = [_leaf(n, rnd) for n in range(300)]
    other = [*items, _leaf(300, rnd)]
    layouts: list[int] = []
    real = encoder._ListLayout

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        layouts.append(1)
        return real(*args, **kwargs)
    monkeypatch.setattr(encoder, "_ListLayout", counted)
    expected_layouts = [1, 0, 1, 1, 0]      # first, the same list, another, back, the same again
    for value, n, laid in zip((items, items, other, items, items), range(5), expected_layouts, strict=True):
        expected = plain.encode({"messages": value, "n": n})
        layouts.clear()
        assert frozen.encode({"messages": value, "n": n}) == expected
        assert len(layouts) == laid
    frozen.forget()
    expected = plain.encode({"messages": items, "n": 6})
    layouts.clear()
    digest, size, pieces = frozen.encode({"messages": items, "n": 6})
    assert (digest, size) == expected[:2]
    assert len(layouts) == 1 and len(pieces) > 2      # laid out and stored again, every chunk
