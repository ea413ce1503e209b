"""Chunked maps: a big dict cut into map chunks at boundaries its keys decide.

A key's mark is the xxh3-64 of its encoding; a chunk ends after a key whose mark has the
``MAP_MASK`` bits zero, or at ``MAP_MAX_ITEMS`` keys, so boundaries depend on the keys alone:
replacing a value never moves one, and the chunk holding it is the only one rewritten.
A chunk keeps its values' fingerprints (their msgpack encodings; see ``encoded.py``) and,
when every value is a string, bytes or None — immutable, and ``==`` to such a value with
the same exact type means the same stored value — the values themselves. When the keys are
those of the last save, one C call lists the new values and C comparisons of slices with
those kept, and of the new values' types with the kept ones' (a (str, Enum) member, a str
subclass or an object equal to everything is ``==`` to the string it replaced, and is stored
or refused as a fresh save would), find the chunks that changed (50,000 string values in
about 1 ms); other chunks compare the fingerprint of their slice. Each chunk also keeps an ``itemgetter`` over its keys, used
when keys were added, removed or reordered.
"""

from __future__ import annotations

from itertools import accumulate, chain
from operator import itemgetter
from typing import TYPE_CHECKING, NamedTuple
from collections.abc import Callable

import xxhash

import msgpack

from inspector.codec.encoded import Encoded, fingerprint, joined
from inspector.codec.markers import Chunk, ChunkedMap, frame_map_chunk

if TYPE_CHECKING:
    from inspector.codec.encoder import PieceEncoder

MAP_MIN_KEYS = 64         # dicts with at least this many keys are chunked (format 3)
MAP_MASK = 0x1F           # about 32 keys per chunk
MAP_MAX_ITEMS = 128
MAP_COARSE_MASK = 0x3FF   # dense rewrites: about 1,024 keys per chunk (every coarse boundary is a fine one)
MAP_COARSE_MAX_ITEMS = 4096
MAP_COARSE_MIN_KEYS = 256  # a map this big with ...
MAP_DENSE_CHUNKS = 2       # ... at least 1 in this many chunks changed is rewritten in coarse chunks
_hash64 = xxhash.xxh3_64_intdigest


_SAFE = frozenset({str, bytes, type(None)})    # values ``==`` compares exactly, given the same exact type
_NEVER = object()                               # equal to no value
_array_header = msgpack.Packer().pack_array_header


class _MapChunk(NamedTuple):
    keys: list
    getter: Callable[[dict], tuple]      # the chunk's values of a dict, in one C call
    copies: tuple | None                 # the values, when all are strings, bytes or None
    fps: list                            # the values' fingerprints (``PieceEncoder.fp``)
    sizes: list
    encoded: list                        # the values' encodings as the chunk piece frames them
    fp: bytes | None                     # the fingerprint of the chunk's values as one list (None
                                         # when one is a heavy print or past ``JOIN_MAX`` bytes)
    chunk: Chunk
    closed: bool                         # ended at a boundary of the rule (not the map's end)
    coarse: bool                         # cut by the dense rule (split again when next rewritten)


class _KeyCuts:
    """Where the coarse rule cuts a map's keys, found once per set of keys (dense saves of
    a map whose keys stay put then cost no Python step per key for it)."""

    __slots__ = ("ends",)

    def __init__(self) -> None:
        self.ends: list[int] | None = None

    def coarse(self, keys: list, pack: Callable[[object], bytes]) -> list[int]:
        if self.ends is None:
            self.ends = _cuts(list(map(_hash64, map(pack, keys))), MAP_COARSE_MASK, MAP_COARSE_MAX_ITEMS)
        return self.ends


class _MapLayout(NamedTuple):
    keys: list
    key_check: list | bytes | None   # all keys strings: their types (``==`` with the same types is
                                     # exact); else the keys' fingerprint (None: they have none)
    chunks: list[_MapChunk]
    values: list         # every chunk's copies in key order (``_NEVER`` for a chunk without)
    types: list          # the exact type of each of ``values``
    groups: list[list]   # ``values`` cut in groups of ``GROUP_CHUNKS`` chunks
    starts: list[int]    # where each chunk's keys start in ``keys``
    cuts: _KeyCuts


GROUP_CHUNKS = 32        # chunks compared at once before looking at each one


def _layout_of(keys: list, chunks: list[_MapChunk], old: _MapLayout | None = None,
               key_types: list | None = None) -> _MapLayout:
    """A layout over ``chunks`` (``old``: the last one, when the keys are the same;
    ``key_types``: the keys' exact types, when the caller has them)."""
    starts = list(accumulate((len(c.keys) for c in chunks), initial=0))
    values = list(chain.from_iterable(c.copies or (_NEVER,) * len(c.keys) for c in chunks))
    types = list(map(type, values))
    groups = [values[starts[g]:starts[min(g + GROUP_CHUNKS, len(chunks))]] for g in range(0, len(chunks), GROUP_CHUNKS)]
    if old is not None:
        return _MapLayout(keys, old.key_check, chunks, values, types, groups, starts, old.cuts)
    if key_types is None:
        key_types = list(map(type, keys))
    check = key_types if set(key_types) <= {str} else fingerprint(keys)
    return _MapLayout(keys, check, chunks, values, types, groups, starts, _KeyCuts())


def _same_keys_exactly(keys: list, old: _MapLayout) -> bool:
    """Whether ``keys`` are the old layout's, in order, with the same exact types (1 is not
    True, a str subclass is not its text)."""
    if keys != old.keys:
        return False
    if type(old.key_check) is list:
        return list(map(type, keys)) == old.key_check
    return old.key_check is not None and fingerprint(keys) == old.key_check


def _chunk_same(c: _MapChunk, values: list, enc: PieceEncoder) -> bool:
    """Whether ``values`` are the chunk's, exactly."""
    if c.copies is not None:
        return values == list(c.copies) and _SAFE.issuperset(map(type, values))
    if c.fp is None:
        return enc.fps(values) == c.fps
    return enc.matches(values, c.fp)


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

    def __len__(self) -> int:
        """Layouts kept (one per path of a big map)."""
        return len(self._layouts)

    def encode(self, value: dict, path: tuple | None) -> Encoded:
        """Encode a big dict as a ``ChunkedMap``, rewriting only the chunks that changed."""
        old = self._layouts.get(path) if path is not None else None
        keys = list(value)
        if old is not None and _same_keys_exactly(keys, old):
            layout = self._same_keys(value, old, path)
        else:
            key_types = list(map(type, keys))
            str_keys = set(key_types) <= {str}
            if not str_keys:
                self.enc.check_keys(keys)
            layout = _layout_of(keys, self._layout(value, keys, old.chunks if old else [], path, str_keys),
                                key_types=key_types)
        chunks = layout.chunks
        if path is not None:
            self._layouts[path] = layout
        marker = self.enc.table(ChunkedMap, [c.chunk for c in chunks])
        return Encoded(marker, marker.size, None)

    def _same_keys(self, value: dict, old: _MapLayout, path: tuple | None) -> _MapLayout:
        """The keys are those of the last save, in the same order: the values are compared
        with the kept ones as one list, group by group of chunks (C comparisons), and chunks
        that keep no values by fingerprint; only chunks holding a changed value are rewritten.
        ``==`` is exact here for values of the kept values' exact types: the types are
        compared as one list too (where that fails, group by group)."""
        values = list(value.values())
        types = list(map(type, values))
        same_types = types == old.types
        if same_types and values == old.values:
            return old
        chunks, kept, kept_types, starts = old.chunks, old.values, old.types, old.starts
        changed: list[int] = []
        for g, group in zip(range(0, len(chunks), GROUP_CHUNKS), old.groups, strict=True):
            lo, hi = starts[g], starts[min(g + GROUP_CHUNKS, len(chunks))]
            if values[lo:hi] == group and (same_types or types[lo:hi] == kept_types[lo:hi]):
                continue
            changed.extend(i for i in range(g, min(g + GROUP_CHUNKS, len(chunks)))
                           if not _chunk_same(chunks[i], values[starts[i]:starts[i + 1]], self.enc))
        if not changed:
            return old
        if len(old.keys) >= MAP_COARSE_MIN_KEYS and len(changed) * MAP_DENSE_CHUNKS >= len(chunks):
            # dense: every value in bulk, in coarse chunks (they compress like one blob)
            return _layout_of(old.keys, self._dense(values, old, path), old)
        redone = {i: self._redo(chunks[i], values[starts[i]:starts[i + 1]], path) for i in changed}
        if any(len(r) != 1 for r in redone.values()):
            return _layout_of(old.keys, [c for i, old_c in enumerate(chunks) for c in redone.get(i, (old_c,))], old)
        # the old layout is replaced by this one: its value lists are updated in place (nothing
        # can fail from here on; a failed transaction drops every layout, see ``forget``)
        new_chunks, groups = list(chunks), old.groups
        for i, (chunk,) in redone.items():
            new_chunks[i] = chunk
            copies = chunk.copies or (_NEVER,) * len(chunk.keys)
            kept[starts[i]:starts[i + 1]] = copies
            kept_types[starts[i]:starts[i + 1]] = map(type, copies)
        for g in {i - i % GROUP_CHUNKS for i in redone}:
            groups[g // GROUP_CHUNKS] = kept[starts[g]:starts[min(g + GROUP_CHUNKS, len(chunks))]]
        return _MapLayout(old.keys, old.key_check, new_chunks, kept, kept_types, groups, starts, old.cuts)

    def _dense(self, values: list, old: _MapLayout, path: tuple | None) -> list[_MapChunk]:
        """Every value encoded in bulk, cut in coarse chunks."""
        keys = old.keys
        bulk = self.enc.bulk(values, path, keys)
        made = []
        a = 0
        ends = old.cuts.coarse(keys, self.enc._pack)
        last_cut = ends[-1] if ends else 0
        for b in ends if last_cut == len(keys) else ends + [len(keys)]:
            made.append(self._close(keys[a:b], values[a:b], bulk.fps[a:b], bulk.sizes[a:b], bulk.encoded[a:b],
                                    b <= last_cut, True))
            a = b
        return made

    def _redo(self, old: _MapChunk, values: list, path: tuple | None) -> list[_MapChunk]:
        """A chunk whose keys are unchanged and some of whose ``values`` are not (a coarse
        chunk is cut again by the fine rule)."""
        known = None
        if old.copies is not None:
            changed = [i for i, (v, o) in enumerate(zip(values, old.copies))
                       if not (v is o or (type(v) is type(o) and v == o))]
        else:
            new_fps = self.enc.fps(values)
            changed = [i for i, (n, o) in enumerate(zip(new_fps, old.fps)) if n != o]
            known = [new_fps[i] for i in changed]
        fps, sizes, encoded = list(old.fps), list(old.sizes), list(old.encoded)
        self._fill(changed, [values[i] for i in changed], [old.keys[i] for i in changed], path,
                   fps, sizes, encoded, known)
        if not old.coarse:
            return [self._close(old.keys, values, fps, sizes, encoded, old.closed)]
        made = []
        a = 0
        for b in _cuts(list(map(_hash64, map(self.enc._pack, old.keys)))) + [len(old.keys)]:
            if b > a:
                made.append(self._close(old.keys[a:b], values[a:b], fps[a:b], sizes[a:b], encoded[a:b],
                                        True if b < len(old.keys) else old.closed))
            a = b
        return made

    def _fill(self, slots: list[int], values: list, keys: list, path: tuple | None,
              fps: list, sizes: list, encoded: list, known: list | None = None) -> None:
        if not slots:
            return
        bulk = self.enc.bulk(values, path, keys, known)
        for j, i in enumerate(slots):
            fps[i], sizes[i], encoded[i] = bulk.fps[j], bulk.sizes[j], bulk.encoded[j]

    def _close(self, keys: list, values: list, fps: list, sizes: list, encoded: list,
               closed: bool, coarse: bool = False) -> _MapChunk:
        raw = frame_map_chunk(keys, encoded)
        chunk = Chunk(len(keys), max(sum(sizes), len(raw)), self.enc.store(raw))
        copies = tuple(values) if set(map(type, values)) <= _SAFE else None
        fp = joined(_array_header(len(fps)), fps, chunk.size)
        return _MapChunk(keys, _getter(keys), copies, fps, sizes, encoded, fp, chunk, closed, coarse)

    def _layout(self, value: dict, keys: list, old: list[_MapChunk], path: tuple | None,
                str_keys: bool) -> list[_MapChunk]:
        """Keys added, removed or reordered: keep the old chunks found unchanged in the new
        key order, cut the keys between them by the rule (a run grows into the next kept
        chunk until one of its cuts meets it)."""
        kept = _unchanged(value, keys, old, self.enc, str_keys)
        # what the old chunks not kept knew of their keys (and a kept one's, once a run takes it in)
        taken = {id(c) for _, c in kept}
        hints: dict = {}
        for c in old:
            if id(c) not in taken:
                _hint(hints, c)
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
                reopened = out.pop()
                pos -= len(reopened.keys)
                _hint(hints, reopened)
            end = kept[k][0] if k < len(kept) else n
            while True:
                made, pos = self._run(value, keys, pos, end, hints, path)
                out.extend(made)
                if pos == end:
                    break
                if k < len(kept):
                    end = kept[k][0] + len(kept[k][1].keys)
                    _hint(hints, kept[k][1])
                    k += 1
                else:
                    end = n
        return out

    def _run(self, value: dict, keys: list, start: int, end: int, hints: dict,
             path: tuple | None, coarse: bool = False) -> tuple[list[_MapChunk], int]:
        """Chunks of the keys ``start:end`` closed by the rule (the coarse one with ``coarse``;
        and the rest at the map's end)."""
        part = keys[start:end]
        values = [value[k] for k in part]
        fps: list = [None] * len(part)
        sizes: list = [0] * len(part)
        encoded: list = [None] * len(part)
        fresh = []
        new_fps = self.enc.fps(values) if hints else None
        for i, k in enumerate(part):
            hint = hints.get(k)
            if hint is not None and new_fps is not None and hint[0] == new_fps[i]:
                fps[i], sizes[i], encoded[i] = hint
            else:
                fresh.append(i)
        self._fill(fresh, [values[i] for i in fresh], [part[i] for i in fresh], path, fps, sizes, encoded,
                   None if new_fps is None else [new_fps[i] for i in fresh])
        pack = self.enc._pack
        marks = list(map(_hash64, map(pack, part)))
        ends = _cuts(marks, MAP_COARSE_MASK, MAP_COARSE_MAX_ITEMS) if coarse else _cuts(marks)
        made = []
        a = 0
        for b in ends:
            made.append(self._close(part[a:b], values[a:b], fps[a:b], sizes[a:b], encoded[a:b], True, coarse))
            a = b
        if end == len(keys) and a < len(part):
            made.append(self._close(part[a:], values[a:], fps[a:], sizes[a:], encoded[a:], False, coarse))
            a = len(part)
        return made, start + a


def _hint(hints: dict, c: _MapChunk) -> None:
    """Add what an old chunk knew of its keys' values to ``hints``: key → (fingerprint, size, encoding)."""
    hints.update(zip(c.keys, zip(c.fps, c.sizes, c.encoded)))


def _unchanged(value: dict, keys: list, old: list[_MapChunk], enc: PieceEncoder,
               str_keys: bool) -> list[tuple[int, _MapChunk]]:
    """Old chunks whose keys follow each other in ``keys`` with unchanged values: (start, chunk).
    A chunk's first key is looked for near where the keys before it put it (a dict keeps its
    order: keys removed move the later ones down, keys added go to the end), else anywhere."""
    n = len(keys)
    where: dict | None = None
    found = []
    pos = 0
    moved = 0         # where the old keys are now, less where they were, as the last chunk found says
    offset = 0        # where the chunk's keys started in the old order
    for c in old:
        count = len(c.keys)
        first = c.keys[0]
        expect = offset + moved
        offset += count
        if 0 <= expect < n and keys[expect] == first:
            start: int | None = expect
        else:
            try:
                start = keys.index(first, max(0, expect - _NEAR), max(0, min(n, expect + _NEAR)))
            except ValueError:
                if where is None:
                    where = dict(zip(keys, range(n)))
                start = where.get(first)
        if start is None or start < pos or keys[start:start + count] != c.keys:
            continue
        moved = start - (offset - count)
        if not str_keys:      # (str keys compare exactly; others by their encodings)
            fp = fingerprint(keys[start:start + count])
            if fp is None or fp != fingerprint(c.keys):
                continue
        if not _chunk_same(c, list(c.getter(value)), enc):
            continue
        found.append((start, c))
        pos = start + count
    return found


_NEAR = 64     # keys either side of where a chunk's first key is expected, searched before all of them


def _cuts(marks: list[int], mask: int = MAP_MASK, max_items: int = MAP_MAX_ITEMS) -> list[int]:
    """End indices of the chunks the rule closes in a run of keys with these marks."""
    ends = []
    start = 0
    for n, mark in enumerate(marks):
        if not mark & mask or n + 1 - start >= max_items:
            ends.append(n + 1)
            start = n + 1
    return ends
