"""Chunked maps: a big dict cut into map chunks at boundaries its keys decide.

A key's mark is the xxh3-64 of its encoding; a chunk ends after a key whose mark has the
``MAP_MASK`` bits zero, or at ``MAP_MAX_ITEMS`` keys, so boundaries depend on the keys alone:
replacing a value never moves one, and the chunk holding it is the only one rewritten.
The layout keeps private copies of the values in key order: when the keys are those of the
last save, one C call lists the new values and C comparisons of slices (identical objects
are skipped by address) find the chunks that changed — 50,000 keys in about 2 ms. Each chunk
also keeps an ``itemgetter`` over its keys, used when keys were added, removed or reordered.
"""

from __future__ import annotations

from itertools import accumulate, chain
from operator import itemgetter
from typing import TYPE_CHECKING, NamedTuple
from collections.abc import Callable

import xxhash

from inspector.codec.encoded import UNSEEN, Encoded
from inspector.codec.markers import Chunk, ChunkedMap, frame_map_chunk

if TYPE_CHECKING:
    from inspector.codec.encoder import PieceEncoder

MAP_MIN_KEYS = 64         # dicts with at least this many keys are chunked (format 3)
MAP_MASK = 0x1F           # about 32 keys per chunk
MAP_MAX_ITEMS = 128
_hash64 = xxhash.xxh3_64_intdigest


class _MapChunk(NamedTuple):
    keys: list
    getter: Callable[[dict], tuple]      # the chunk's values of a dict, in one C call
    copies: tuple                        # private copies of the values
    sizes: list
    encoded: list                        # the values' encodings as the chunk piece frames them
    chunk: Chunk
    closed: bool                         # ended at a boundary of the rule (not the map's end)


class _MapLayout(NamedTuple):
    keys: list
    chunks: list[_MapChunk]
    values: list         # every chunk's copies, in key order
    starts: list[int]    # where each chunk's keys start in ``keys``


GROUP_CHUNKS = 32        # chunks compared at once before looking at each one


def _layout_of(keys: list, chunks: list[_MapChunk]) -> _MapLayout:
    starts = list(accumulate((len(c.keys) for c in chunks), initial=0))
    return _MapLayout(keys, chunks, list(chain.from_iterable(c.copies for c in chunks)), starts)


def _getter(keys: list) -> Callable[[dict], tuple]:
    if len(keys) == 1:
        key = keys[0]
        return lambda d: (d[key],)
    return itemgetter(*keys)


class MapChunker:
    """The map half of a ``PieceEncoder``: one layout kept per path."""

    def __init__(self, enc: PieceEncoder) -> None:
        self.enc = enc
        self._layouts: dict[tuple, _MapLayout] = {}

    def forget(self) -> None:
        """Drop every kept layout."""
        self._layouts.clear()

    def encode(self, value: dict, path: tuple | None) -> Encoded:
        """Encode a big dict as a ``ChunkedMap``, rewriting only the chunks that changed."""
        old = self._layouts.get(path) if path is not None else None
        keys = list(value)
        if old is not None and keys == old.keys:
            layout = self._same_keys(value, old, path)
        else:
            layout = _layout_of(keys, self._layout(value, keys, old.chunks if old else [], path))
        chunks = layout.chunks
        if path is not None:
            self._layouts[path] = layout
        marker = self.enc.table(ChunkedMap, [c.chunk for c in chunks])
        copy = UNSEEN if path is not None else {k: v for c in chunks for k, v in zip(c.keys, c.copies)}
        return Encoded(marker, marker.size, copy)

    def _same_keys(self, value: dict, old: _MapLayout, path: tuple | None) -> _MapLayout:
        """The keys are those of the last save, in the same order: the values are compared
        with the kept copies as one list, slice by slice (C comparisons, identical objects
        skipped by address); only chunks holding a changed value are rewritten."""
        values = list(value.values())
        if values == old.values:
            return old
        chunks, copies, starts = list(old.chunks), list(old.values), old.starts
        for g in range(0, len(chunks), GROUP_CHUNKS):
            lo, hi = starts[g], starts[min(g + GROUP_CHUNKS, len(chunks))]
            if values[lo:hi] == copies[lo:hi]:
                continue
            for i in range(g, min(g + GROUP_CHUNKS, len(chunks))):
                a, b = starts[i], starts[i + 1]
                if values[a:b] != copies[a:b]:
                    chunks[i] = self._redo(chunks[i], values[a:b], path)
                    copies[a:b] = chunks[i].copies
        return _MapLayout(old.keys, chunks, copies, starts)

    def _redo(self, old: _MapChunk, values: list, path: tuple | None) -> _MapChunk:
        """A chunk whose keys are unchanged and some of whose ``values`` are not."""
        changed = [i for i, (v, o) in enumerate(zip(values, old.copies)) if not (v is o or v == o)]
        copies, sizes, encoded = list(old.copies), list(old.sizes), list(old.encoded)
        self._fill(changed, [values[i] for i in changed], [old.keys[i] for i in changed], path,
                   copies, sizes, encoded)
        return self._close(old.keys, copies, sizes, encoded, old.closed)

    def _fill(self, slots: list[int], values: list, keys: list, path: tuple | None,
              copies: list, sizes: list, encoded: list) -> None:
        if not slots:
            return
        bulk = self.enc.bulk(values, None if path is None else [path + (k,) for k in keys])
        for j, i in enumerate(slots):
            copies[i], sizes[i], encoded[i] = bulk.copies[j], bulk.sizes[j], bulk.encoded[j]

    def _close(self, keys: list, copies: list, sizes: list, encoded: list, closed: bool) -> _MapChunk:
        raw = frame_map_chunk(keys, encoded)
        chunk = Chunk(len(keys), max(sum(sizes), len(raw)), self.enc.store(raw))
        return _MapChunk(keys, _getter(keys), tuple(copies), sizes, encoded, chunk, closed)

    def _layout(self, value: dict, keys: list, old: list[_MapChunk], path: tuple | None) -> list[_MapChunk]:
        """Keys added, removed or reordered: keep the old chunks found unchanged in the new
        key order, cut the keys between them by the rule (a run grows into the next kept
        chunk until one of its cuts meets it)."""
        kept = _unchanged(value, keys, old)
        hints = {k: (c.copies[i], c.sizes[i], c.encoded[i]) for c in old for i, k in enumerate(c.keys)} if (
            len(kept) < len(old)) else {}
        out: list[_MapChunk] = []
        pos = k = 0
        n = len(keys)
        while pos < n:
            while k < len(kept) and kept[k][0] < pos:
                k += 1
            if k < len(kept) and kept[k][0] == pos:
                out.append(kept[k][1])
                pos += len(kept[k][1].keys)
                k += 1
                continue
            if out and not out[-1].closed:      # ended by the old map's end: re-open it
                pos -= len(out.pop().keys)
            end = kept[k][0] if k < len(kept) else n
            while True:
                made, pos = self._run(value, keys, pos, end, hints, path)
                out.extend(made)
                if pos == end:
                    break
                if k < len(kept):
                    end = kept[k][0] + len(kept[k][1].keys)
                    k += 1
                else:
                    end = n
        return out

    def _run(self, value: dict, keys: list, start: int, end: int, hints: dict,
             path: tuple | None) -> tuple[list[_MapChunk], int]:
        """Chunks of the keys ``start:end`` closed by the rule (and the rest at the map's end)."""
        part = keys[start:end]
        values = [value[k] for k in part]
        copies: list = [None] * len(part)
        sizes: list = [0] * len(part)
        encoded: list = [None] * len(part)
        fresh = []
        for i, (k, v) in enumerate(zip(part, values)):
            hint = hints.get(k)
            if hint is not None and (hint[0] is v or (type(hint[0]) is type(v) and hint[0] == v)):
                copies[i], sizes[i], encoded[i] = hint
            else:
                fresh.append(i)
        self._fill(fresh, [values[i] for i in fresh], [part[i] for i in fresh], path, copies, sizes, encoded)
        pack = self.enc._pack
        ends = _cuts(list(map(_hash64, map(pack, part))))
        made = []
        a = 0
        for b in ends:
            made.append(self._close(part[a:b], copies[a:b], sizes[a:b], encoded[a:b], True))
            a = b
        if end == len(keys) and a < len(part):
            made.append(self._close(part[a:], copies[a:], sizes[a:], encoded[a:], False))
            a = len(part)
        return made, start + a


def _unchanged(value: dict, keys: list, old: list[_MapChunk]) -> list[tuple[int, _MapChunk]]:
    """Old chunks whose keys follow each other in ``keys`` with unchanged values: (start, chunk)."""
    where = {k: i for i, k in enumerate(keys)}
    found = []
    pos = 0
    for c in old:
        start = where.get(c.keys[0])
        if start is None or start < pos or keys[start:start + len(c.keys)] != c.keys:
            continue
        if c.getter(value) != c.copies:
            continue
        found.append((start, c))
        pos = start + len(c.keys)
    return found


def _cuts(marks: list[int]) -> list[int]:
    """End indices of the chunks the rule closes in a run of keys with these marks."""
    ends = []
    start = 0
    for n, mark in enumerate(marks):
        if not mark & MAP_MASK or n + 1 - start >= MAP_MAX_ITEMS:
            ends.append(n + 1)
            start = n + 1
    return ends
