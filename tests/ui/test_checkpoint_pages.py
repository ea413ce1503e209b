"""PageCache: rows by seq, predecessor for gaps, LRU eviction, live appends."""

from __future__ import annotations

from inspector.model import CheckpointInfo
from inspector.ui.models.checkpoint_pages import PageCache


def _cp(seq: int) -> CheckpointInfo:
    return CheckpointInfo(id=seq + 1, run_id="r", seq=seq, kind="step", name=f"s{seq}", created=float(seq))


def test_rows_previous_and_eviction() -> None:
    cache = PageCache(page_size=10, max_pages=2)
    assert cache.put(0, None, [_cp(i) for i in range(10)]) == []
    assert cache.put(3, _cp(29), [_cp(i) for i in range(30, 40)]) == []
    assert cache.get(35).seq == 35 and cache.has_row(0) and not cache.has_row(15)
    assert cache.previous(30).seq == 29  # carried with page 3
    assert cache.previous(5).seq == 4
    cache.get(0)  # page 0 used last: page 3 is the oldest now
    assert cache.put(5, _cp(49), [_cp(i) for i in range(50, 60)]) == [3]
    assert cache.get(35) is None and cache.get(55).seq == 55


def test_live_append_extends_the_tail_page_only_when_contiguous() -> None:
    cache = PageCache(page_size=10)
    cache.put(0, None, [_cp(i) for i in range(8)])
    assert cache.append(_cp(8)) and cache.get(8).seq == 8
    assert not cache.append(_cp(12))  # a hole: row 10-11 unknown, left for a page load
    assert cache.append(_cp(9))
    assert cache.append(_cp(10))  # starts page 1 right after a loaded row
    assert cache.previous(10).seq == 9


def test_a_page_read_again_keeps_the_rows_appended_while_it_was_read() -> None:
    cache = PageCache(page_size=10)
    cache.put(0, None, [_cp(i) for i in range(4)])
    assert cache.append(_cp(4)) and cache.append(_cp(5))
    renamed = CheckpointInfo(id=4, run_id="r", seq=3, kind="step", name="renamed", created=3.0)
    again = [*(_cp(i) for i in range(3)), renamed]
    cache.put(0, None, again)                  # read before 4 and 5 were appended
    assert [cache.get(i).name for i in range(6)] == ["s0", "s1", "s2", "renamed", "s4", "s5"]
