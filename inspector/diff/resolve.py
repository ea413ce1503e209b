"""Piece access for the diff: batched fetching and iterative resolution of Ref/ChunkedList/ChunkedMap markers."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence
from typing import Any
from collections.abc import Callable

from inspector import limits
from inspector.codec import ChunkedList, ChunkedMap, Ref, check_part
from inspector.errors import CorruptDataError, StoreError

FetchMany = Callable[[Collection[bytes]], dict[bytes, Any]]
FetchRaw = Callable[[Collection[bytes]], dict[bytes, bytes]]
StreamRaw = Callable[[Sequence[bytes]], Iterable[dict[bytes, bytes]]]
StreamPiece = Callable[[bytes], Iterator[bytes]]   # one piece's raw bytes, in parts


def store_fetcher(store: Any) -> FetchMany:
    """A batched piece reader over a store: its ``read_pieces`` when it has one, else
    ``read_piece`` one digest at a time."""
    many = getattr(store, "read_pieces", None)
    if callable(many):
        return many
    return lambda digests: {d: store.read_piece(d) for d in digests}


def raw_fetcher(store: Any) -> FetchRaw | None:
    """The store's reader of raw (undecoded) piece bytes, if it has one."""
    raw = getattr(store, "read_raw_pieces", None)
    return raw if callable(raw) else None


def piece_streamer(store: Any) -> StreamPiece | None:
    """The store's reader of one piece's raw bytes in parts (never whole), if it has one."""
    stream = getattr(store, "stream_piece", None)
    return stream if callable(stream) else None


def raw_streamer(store: Any) -> StreamRaw | None:
    """The store's reader of raw piece bytes in parts (decompressed beside the caller), if any."""
    stream = getattr(store, "stream_raw_pieces", None)
    return stream if callable(stream) else None


def dict_fetcher(pieces: dict[bytes, Any]) -> FetchMany:
    """A reader over decoded pieces held in memory (tests, benchmarks, encoders)."""
    def fetch(digests: Collection[bytes]) -> dict[bytes, Any]:
        try:
            return {d: pieces[d] for d in digests}
        except KeyError as err:
            raise CorruptDataError("A stored piece is missing (the store is damaged).") from err
    return fetch


def has_markers(value: Any) -> bool:
    """True when ``value`` holds a Ref or ChunkedList anywhere (iterative scan)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, (Ref, ChunkedList, ChunkedMap)):
            return True
        if isinstance(item, dict):
            stack.extend(v for v in item.values() if isinstance(v, (dict, list, Ref, ChunkedList, ChunkedMap)))
        elif isinstance(item, list):
            stack.extend(v for v in item if isinstance(v, (dict, list, Ref, ChunkedList, ChunkedMap)))
    return False


def prefetch(values: list[Any], table: dict[bytes, Any], fetch_many: FetchMany) -> int:
    """Load every piece the values reach into ``table``, one batch per level; returns how many.
    A piece already in ``table`` is looked through, not taken as complete: its children may not
    be there (a state holding an earlier state: the diff read that one's root as a root, and
    its list chunks as items of its own, elsewhere)."""
    loaded = 0
    seen: set[bytes] = set()
    frontier = _missing(values, table, seen)
    while frontier:
        got = fetch_many(frontier)
        table.update(got)
        loaded += len(got)
        frontier = _missing(list(got.values()), table, seen)
    return loaded


def _missing(values: list[Any], table: dict[bytes, Any], seen: set[bytes]) -> set[bytes]:
    """The digests the values reach, through the pieces ``table`` holds, that it does not hold
    (each piece looked through once: ``seen``)."""
    found: set[bytes] = set()
    stack = [_digests(values)]
    while stack:
        for digest in stack.pop() - seen:
            seen.add(digest)
            if digest in table:
                stack.append(_digests([table[digest]]))
            else:
                found.add(digest)
    return found


def _digests(values: list[Any]) -> set[bytes]:
    found: set[bytes] = set()
    stack = list(values)
    while stack:
        item = stack.pop()
        if isinstance(item, Ref):
            found.add(item.digest)
        elif isinstance(item, (ChunkedList, ChunkedMap)):
            found.update(c.digest for c in item.chunks)
        elif isinstance(item, dict):
            stack.extend(v for v in item.values() if isinstance(v, (dict, list, Ref, ChunkedList, ChunkedMap)))
        elif isinstance(item, list):
            stack.extend(v for v in item if isinstance(v, (dict, list, Ref, ChunkedList, ChunkedMap)))
    return found


def expand(chunked: ChunkedList | ChunkedMap, table: dict[bytes, Any]) -> Any:
    """The items (still as forms) of a chunked list, or the entries of a chunked map, whose
    chunks and sub-tables are all in ``table``."""
    out: Any = [] if type(chunked) is ChunkedList else {}
    add = out.extend if type(chunked) is ChunkedList else out.update
    for chunk in chunked.chunks:
        part = table[chunk.digest]
        check_part(chunk, part, chunked)
        add(expand(part, table) if chunked.height else part)
    return out


def materialize(value: Any, table: dict[bytes, Any], max_depth: int = 100_000) -> Any:
    """A plain copy of ``value`` with every marker replaced from ``table`` (no recursion)."""
    holder = [None]
    stack: list[tuple[Any, Any, Any, int]] = [(holder, 0, value, 0)]
    budget = limits.current().nodes
    count = 0
    while stack:
        parent, slot, item, depth = stack.pop()
        count += 1
        if count > budget:
            raise limits.BudgetExceeded("nodes", f"A changed value expands to over {budget:,} values")
        if depth > max_depth:
            raise StoreError(f"A stored value nests deeper than {max_depth} levels.")
        hops = 0
        while isinstance(item, Ref):
            item = table[item.digest]
            hops += 1
            if hops > max_depth:
                raise CorruptDataError("A stored value refers to itself.")
        if isinstance(item, (ChunkedList, ChunkedMap)):
            item = expand(item, table)
        if isinstance(item, dict):
            out: Any = dict(item)
            for k, v in item.items():
                if isinstance(v, (dict, list, Ref, ChunkedList, ChunkedMap)):
                    stack.append((out, k, v, depth + 1))
        elif isinstance(item, list):
            out = list(item)
            for i, v in enumerate(item):
                if isinstance(v, (dict, list, Ref, ChunkedList, ChunkedMap)):
                    stack.append((out, i, v, depth + 1))
        else:
            out = item
        parent[slot] = out
    return holder[0]
