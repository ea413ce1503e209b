"""Page cache of a run's timeline: rows are seqs, pages of 500 load on demand, LRU-bounded; no Qt.

Both adapters number a run's checkpoints 0, 1, 2… (``seq``), so row ``r`` is seq ``r`` and
any page can be read directly with ``list_checkpoints(after_seq=start - 1, limit=…)`` — the
scrollbar, End key and scrubber reach the last of 100,000 checkpoints without reading the
ones before. Each page also carries the checkpoint before it, for the time gap. A seq a
damaged store lacks is a hole (None) in its page: the checkpoints after it keep their rows.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Collection, Sequence

from inspector.model import CheckpointInfo, replace
from inspector.store.base import Store

PAGE_SIZE = 500
MAX_PAGES = 40  # ~20,000 rows kept; a page left unseen longest is dropped first


Page = list[CheckpointInfo | None]     # row ``start + i`` at ``i``; None: a seq the store lacks


def fetch_page(store: Store, run_id: str, page: int,
               page_size: int = PAGE_SIZE) -> tuple[CheckpointInfo | None, Page]:
    """Page ``page`` of a run's checkpoints and the checkpoint just before it (worker thread)."""
    start = page * page_size
    if start == 0:
        return None, _by_seq(store.list_checkpoints(run_id, after_seq=-1, limit=page_size), range(page_size))
    rows = store.list_checkpoints(run_id, after_seq=start - 2, limit=page_size + 1)
    before = rows.pop(0) if rows and rows[0].seq == start - 1 else None
    return before, _by_seq(rows, range(start, start + page_size))


def _by_seq(rows: list[CheckpointInfo], seqs: Sequence[int]) -> Page:
    """``rows`` placed at their seqs' rows among ``seqs``: a seq without a row is a hole; the
    page ends with its last row found (rows missing at its end are the model's to tell)."""
    if all(r.seq == s for r, s in zip(rows, seqs, strict=False)):
        return list(rows[:len(seqs)])
    found = {r.seq: r for r in rows}
    page: Page = [found.get(s) for s in seqs]
    while page and page[-1] is None:
        page.pop()
    return page


SPAN_GAP = 64   # seqs of a branch page closer than this are read in one listing


def fetch_branch_page(store: Store, run_id: str, seqs: Sequence[int], page: int,
                      page_size: int = PAGE_SIZE) -> tuple[CheckpointInfo | None, Page]:
    """Page ``page`` of one branch (rows are ``seqs``, ascending) and the row just before it:
    contiguous runs of seqs are read as listings, so other branches in between cost little."""
    start = page * page_size
    wanted = list(seqs[max(0, start - 1):start + page_size])
    found: dict[int, CheckpointInfo] = {}
    i = 0
    while i < len(wanted):
        j = i
        while j + 1 < len(wanted) and wanted[j + 1] - wanted[j] <= SPAN_GAP:
            j += 1
        lo, hi = wanted[i], wanted[j]
        found.update((c.seq, c) for c in store.list_checkpoints(run_id, after_seq=lo - 1, limit=hi - lo + 1))
        i = j + 1
    before = found.get(wanted[0]) if start and wanted else None
    return before, _by_seq(list(found.values()), wanted[1:] if start else wanted)


class PageCache:
    """Loaded pages of one run's timeline, by page number, least recently used first."""

    def __init__(self, page_size: int = PAGE_SIZE, max_pages: int = MAX_PAGES) -> None:
        self.page_size = page_size
        self.max_pages = max_pages
        self._pages: OrderedDict[int, Page] = OrderedDict()
        self._before: dict[int, CheckpointInfo | None] = {}

    def clear(self) -> None:
        """Drop every page."""
        self._pages.clear()
        self._before.clear()

    def page_of(self, row: int) -> int:
        """The page holding ``row``."""
        return row // self.page_size

    def has_row(self, row: int) -> bool:
        """Whether ``row`` is loaded (a hole too: its page was read)."""
        rows = self._pages.get(row // self.page_size)
        return rows is not None and row % self.page_size < len(rows)

    def is_hole(self, row: int) -> bool:
        """Whether ``row``'s page was read without its seq, with checkpoints after it."""
        rows = self._pages.get(row // self.page_size)
        offset = row % self.page_size
        return rows is not None and offset < len(rows) and rows[offset] is None

    def get(self, row: int) -> CheckpointInfo | None:
        """The checkpoint at ``row`` if loaded (marks its page as recently used)."""
        page, offset = divmod(row, self.page_size)
        rows = self._pages.get(page)
        if rows is None or offset >= len(rows):
            return None
        self._pages.move_to_end(page)
        return rows[offset]

    def peek(self, row: int) -> CheckpointInfo | None:
        """Like ``get`` without touching the LRU order."""
        page, offset = divmod(row, self.page_size)
        rows = self._pages.get(page)
        return rows[offset] if rows is not None and offset < len(rows) else None

    def previous(self, row: int) -> CheckpointInfo | None:
        """The checkpoint before ``row`` if known."""
        if row <= 0:
            return None
        page, offset = divmod(row, self.page_size)
        if offset == 0:
            return self._before.get(page) or self.peek(row - 1)
        return self.peek(row - 1)

    def put(self, page: int, before: CheckpointInfo | None, rows: Page) -> list[int]:
        """Store a loaded page; returns the pages evicted to stay within ``max_pages``. Rows
        the page already held beyond the loaded ones (appended live while it was read) stay."""
        held = self._pages.get(page)
        if held is not None and len(held) > len(rows):
            rows = [*rows, *held[len(rows):]]
        self._pages[page] = list(rows)
        self._pages.move_to_end(page)
        self._before[page] = before
        evicted = []
        while len(self._pages) > self.max_pages:
            old, _ = self._pages.popitem(last=False)
            self._before.pop(old, None)
            evicted.append(old)
        return evicted

    def append(self, info: CheckpointInfo, row: int | None = None) -> bool:
        """Add a new checkpoint at ``row`` (default: its seq) when its page is loaded up to the
        row before."""
        row = info.seq if row is None else row
        page, offset = divmod(row, self.page_size)
        rows = self._pages.get(page)
        if rows is None:
            if offset != 0 or not self.has_row(row - 1):
                return False
            self._pages[page] = rows = []
            self._before[page] = self.peek(row - 1)
        if offset == len(rows):
            rows.append(info)
            return True
        if offset < len(rows):
            rows[offset] = info
            return True
        return False

    def mark_pins(self, pinned: Collection[int | str]) -> list[int]:
        """Give the loaded rows the pin marks of ``pinned`` (checkpoint ids, read again after
        the store was written); the rows whose mark changed (the LRU order is kept)."""
        changed = []
        for page, rows in self._pages.items():
            for offset, info in enumerate(rows):
                if info is not None and info.pinned != (info.id in pinned):
                    rows[offset] = replace(info, pinned=not info.pinned)
                    changed.append(page * self.page_size + offset)
        return sorted(changed)

    def loaded_pages(self) -> list[int]:
        """Page numbers currently held."""
        return list(self._pages)
