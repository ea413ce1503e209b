"""Reading parts of a content-addressed state without building it: items of a chunked list
at given positions, the positions of given keys in a chunked map, the first few entries.

``inspector.diff.window`` uses a ``PieceView`` to cut windows of a big native state around
the changes of a diff: only the chunks holding the shown items are decoded (a map is
scanned key by key from its raw chunks, the values left encoded), so the side that is not
loaded never exists as a whole in memory.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator
from typing import Any

from inspector.codec import ChunkedList, ChunkedMap, Ref, check_part, split_map, unpack
from inspector.codec.markers import Chunk
from inspector.diff.resolve import FetchMany, FetchRaw
from inspector.errors import CorruptDataError

MAX_HOPS = 100          # a Ref to a Ref … this many times is damage (or a loop)
SCAN_BATCH = 256        # map chunks read raw at a time while looking for keys


class PieceView:
    """Decoded pieces (``fetch``) and raw ones (``fetch_raw``) of one store, read on demand."""

    def __init__(self, fetch: FetchMany, fetch_raw: FetchRaw | None = None) -> None:
        self.fetch = fetch
        self.fetch_raw = fetch_raw

    def deref(self, value: Any) -> Any:
        """``value`` with a leading chain of Refs followed (markers inside are left)."""
        hops = 0
        while type(value) is Ref:
            value = self.fetch([value.digest])[value.digest]
            hops += 1
            if hops > MAX_HOPS:
                raise CorruptDataError("A stored value refers to itself.")
        return value

    def _leaves(self, table: ChunkedList | ChunkedMap, wanted: Iterable[int] | None) -> Iterator[tuple[Chunk, int]]:
        """The leaf chunks of ``table`` (with their first position) that hold a ``wanted``
        position (all, in order, when None); sub-tables are read a level at a time."""
        positions = None if wanted is None else sorted(set(wanted))
        level: list[tuple[Chunk, int, ChunkedList | ChunkedMap]] = []
        offset = 0
        for chunk in table.chunks:
            level.append((chunk, offset, table))
            offset += chunk.count
        height = table.height
        while height:
            keep = [x for x in level if _holds(positions, x[1], x[0].count)]
            got = self.fetch(list(dict.fromkeys(c.digest for c, _, _ in keep)))
            level = []
            for chunk, start, parent in keep:
                sub = got[chunk.digest]
                check_part(chunk, sub, parent)
                for inner in sub.chunks:
                    level.append((inner, start, sub))
                    start += inner.count
            height -= 1
        for chunk, start, _ in level:
            if _holds(positions, start, chunk.count):
                yield chunk, start

    def list_items(self, table: ChunkedList, wanted: Iterable[int]) -> dict[int, Any]:
        """The items (decoded, markers left) at the ``wanted`` positions of a chunked list."""
        positions = sorted(set(wanted))
        leaves = list(self._leaves(table, positions))
        got = self.fetch(list(dict.fromkeys(c.digest for c, _ in leaves)))
        out: dict[int, Any] = {}
        for chunk, start in leaves:
            part = got[chunk.digest]
            check_part(chunk, part, ChunkedList((), 0))
            lo = bisect.bisect_left(positions, start)
            hi = bisect.bisect_left(positions, start + chunk.count)
            for i in positions[lo:hi]:
                out[i] = part[i - start]
        return out

    def list_head(self, table: ChunkedList, count: int) -> list:
        """The first ``count`` items of a chunked list."""
        found = self.list_items(table, range(min(count, table.length)))
        return [found[i] for i in sorted(found)]

    def map_positions(self, table: ChunkedMap, keys: Iterable[Any]) -> dict[int, Any]:
        """Position → key for those of ``keys`` (or their ``str``) the chunked map holds, found
        by splitting its chunks raw (values stay encoded, a batch of chunks at a time)."""
        wanted = set(keys)
        found: dict[int, Any] = {}
        leaves = list(self._leaves(table, None))
        for start in range(0, len(leaves), SCAN_BATCH):
            batch = leaves[start:start + SCAN_BATCH]
            for (_, first), part in zip(batch, self._map_chunks(batch), strict=True):
                for i, key in enumerate(part):
                    if key in wanted or (not isinstance(key, str) and str(key) in wanted):
                        found[first + i] = key
        return found

    def map_entries(self, table: ChunkedMap, wanted: Iterable[int]) -> dict[int, tuple[Any, Any]]:
        """Position → (key, value decoded with markers left) at the ``wanted`` positions."""
        positions = sorted(set(wanted))
        leaves = list(self._leaves(table, positions))
        out: dict[int, tuple[Any, Any]] = {}
        for (chunk, first), part in zip(leaves, self._map_chunks(leaves), strict=True):
            items = list(part.items())
            lo = bisect.bisect_left(positions, first)
            hi = bisect.bisect_left(positions, first + chunk.count)
            for i in positions[lo:hi]:
                key, value = items[i - first]
                out[i] = (key, unpack(value) if isinstance(value, bytes) and self.fetch_raw else value)
        return out

    def map_head(self, table: ChunkedMap, count: int) -> list[tuple[Any, Any]]:
        """The first ``count`` entries of a chunked map."""
        found = self.map_entries(table, range(min(count, table.length)))
        return [found[i] for i in sorted(found)]

    def _map_chunks(self, leaves: list[tuple[Chunk, int]]) -> list[dict]:
        """Each leaf map chunk as key → value (encoded with a raw reader, else decoded)."""
        digests = list(dict.fromkeys(c.digest for c, _ in leaves))
        out = []
        if self.fetch_raw is not None:
            raw = self.fetch_raw(digests)
            split = {d: split_map(raw[d]) for d in digests}
        else:
            split = self.fetch(digests)
        for chunk, _ in leaves:
            part = split[chunk.digest]
            check_part(chunk, part, ChunkedMap((), 0))
            out.append(part)
        return out


def _holds(positions: list[int] | None, start: int, count: int) -> bool:
    if positions is None:
        return True
    i = bisect.bisect_left(positions, start)
    return i < len(positions) and positions[i] < start + count


def size_hint(form: Any, nodes: int, chars: int) -> bool:
    """True when a decoded piece (markers as leaves) surely holds more than ``nodes`` values
    or ``chars`` bytes of text: its chunked tables' lengths and its Refs' sizes are summed
    without reading anything more."""
    stack = [form]
    seen = size = 0
    while stack:
        item = stack.pop()
        seen += 1
        kind = type(item)
        if kind is ChunkedList or kind is ChunkedMap:
            seen += item.length
            size += item.size
        elif kind is Ref:
            size += item.size
        elif kind is dict:
            seen += len(item)
            stack.extend(item.values())
        elif kind is list:
            stack.extend(item)
        elif kind is str:
            size += len(item)
        if seen > nodes or size > chars:
            return True
    return False


__all__ = ["PieceView", "size_hint"]
