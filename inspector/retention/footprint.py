"""What deleting pieces gives back to the disk once VACUUMed (what their rows occupy).

On SQLite that is the pages their rows fill, not only their bytes: about a quarter more for
small pieces (cell headers, the index on ``hash``, the end of a page the next row does not
fit in), less for pieces that spill to overflow pages, whole pages each. VACUUM (and
appending, as writers do) fills each leaf page with rows in rowid order until the next row
does not fit, so the pages left after a delete are counted by packing the kept rows as
VACUUM will, by SQLite's documented record and cell layout (https://sqlite.org/fileformat.html).
PostgreSQL has no pages to count: stored bytes are scaled by what the table occupies per byte.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

from inspector.store.columns import BINARY

LEAF_HEADER = 8
INTERIOR_HEADER = 12
DIVIDER = 11          # an interior page's cell: child page number, rowid varint, its pointer


def varint_len(value: int) -> int:
    """Bytes of SQLite's varint of ``value`` (>= 0)."""
    if value < 0x4000:      # (every row's lengths but a big piece's: a comparison, not a call)
        return 1 if value < 0x80 else 2
    return min(9, (value.bit_length() + 6) // 7)


def int_len(value: int) -> int:
    """Bytes of a non-negative integer in a record (0 and 1 take none: schema format 4)."""
    if value < 0x80:
        return 0 if value < 2 else 1
    size = (value.bit_length() + 8) // 8        # with its sign bit
    return size if size <= 4 else 6 if size <= 6 else 8


def piece_cell(rowid: int, raw_size: int, stored: int, usable: int) -> tuple[int, int, int]:
    """How a ``ci_blobs`` row (hash, codec 0/1, size, data of ``stored`` bytes) is laid out in
    pages of ``usable`` bytes: (bytes on its leaf page with its cell pointer, overflow pages,
    bytes of its entry in the index on ``hash`` with its cell pointer)."""
    payload = 1 + 3 + varint_len(12 + 2 * stored) + 16 + int_len(raw_size) + stored   # header, then columns
    local, overflow = payload, 0
    if payload > usable - 35:                                 # spills: the rest goes to whole pages
        least = (usable - 12) * 32 // 255 - 23
        local = least + (payload - least) % (usable - 4)
        if local > usable - 35:
            local = least
        overflow = -(-(payload - local) // (usable - 4))
        local += 4
    entry = 1 + 3 + 16 + int_len(rowid) + 2                   # (hash, rowid)
    return varint_len(payload) + varint_len(rowid) + local + 2, overflow, entry


def _pages(sizes: Iterable[int], capacity: int) -> int:
    """Leaf pages that cells of ``sizes`` fill, in order, each page until the next does not fit."""
    pages, used = 0, capacity
    for size in sizes:
        if used + size > capacity:
            pages += 1
            used = 0
        used += size
    return pages


def _tree(leaves: int, usable: int) -> int:
    """Pages of a b-tree with ``leaves`` leaf pages (its interior pages added)."""
    total, level = leaves, leaves
    per = (usable - INTERIOR_HEADER) // DIVIDER
    while level > 1:
        level = -(-level // per)
        total += level
    return total


class Layout:
    """Every piece of a store with its stored bytes and, on SQLite, its row as VACUUM lays it
    out: what deleting some of them frees."""

    def __init__(self, rows: Iterable[tuple[Any, Any, Any, Any]], page_size: int | None) -> None:
        """``rows``: (digest, rowid, raw size, stored bytes) of every piece, in rowid order;
        ``page_size``: the SQLite file's, or None (PostgreSQL: no pages to count)."""
        self.page_size = page_size
        self.sizes: dict[bytes, int] = {}       # stored bytes (and the digest and size columns)
        self._cells: list[tuple[bytes, int, int, int]] = []    # (digest, leaf bytes, overflow pages, index bytes)
        sizes, cells = self.sizes, self._cells
        for digest, rowid, raw_size, stored in rows:
            if not (isinstance(digest, BINARY) and type(rowid) is int and type(raw_size) is int
                    and type(stored) is int and raw_size >= 0 and stored >= 0):
                continue        # a damaged row (a number for a digest, text for a size) names no piece
            key = bytes(digest)
            sizes[key] = stored + 24
            if page_size:
                cells.append((key, *piece_cell(rowid, raw_size, stored, page_size)))

    def freed(self, gone: Collection[bytes], relation_bytes: int = 0) -> int:
        """Bytes that deleting the pieces ``gone`` frees: on SQLite the pages VACUUM gives
        back, else their stored bytes scaled as ``relation_bytes`` (the table with its index
        and TOAST on disk) is to the stored bytes of all pieces."""
        if not self.page_size:
            stored = sum(self.sizes.get(d, 0) for d in gone)
            total = sum(self.sizes.values())
            return int(stored * max(1.0, relation_bytes / total)) if total else stored
        if not gone:
            return 0
        doomed = set(gone)
        size, capacity = self.page_size, self.page_size - LEAF_HEADER
        kept = [c for c in self._cells if c[0] not in doomed]
        table = _tree(_pages((c[1] for c in self._cells), capacity), size) - \
            _tree(_pages((c[1] for c in kept), capacity), size)
        index = _tree(_pages((c[3] for c in self._cells), capacity), size) - \
            _tree(_pages((c[3] for c in kept), capacity), size)
        overflow = sum(c[2] for c in self._cells if c[0] in doomed)
        return (table + index + overflow) * size
