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
