"""The GUI thread collects garbage on a timer while automatic collection is off."""

from __future__ import annotations

import gc
import weakref

from inspector.ui.collector import MainThreadCollector


class _Node:
    pass


def test_cycles_are_collected_on_the_gui_thread(qtbot) -> None:
    collector = MainThreadCollector(interval_ms=20)
    try:
        assert not gc.isenabled()
        collected: list[bool] = []
        for _ in range(3):
            a, b = _Node(), _Node()
            a.other, b.other = b, a             # a cycle: only the collector frees it
            weakref.finalize(a, collected.append, True)
            del a, b
        gc.collect()                            # what was pending before, so counts start low
        a, b = _Node(), _Node()
        a.other, b.other = b, a
        weakref.finalize(a, collected.append, True)
        del a, b
        before = collector.collections
        junk = [[] for _ in range(gc.get_threshold()[0] + 10)]   # alive: over the young threshold
        qtbot.waitUntil(lambda: collector.collections > before and len(collected) == 4, timeout=5000)
        del junk
    finally:
        collector.stop()
        collector.deleteLater()
    assert gc.isenabled()
