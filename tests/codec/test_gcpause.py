"""gc_paused: the main thread pauses the collector around big decodes; a worker never touches it."""

from __future__ import annotations

import gc
import threading

from inspector.codec.gcpause import gc_paused


def test_the_main_thread_pauses_and_restores() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()       # the outer pause still holds
    assert gc.isenabled()


def test_a_worker_leaves_the_process_collector_alone() -> None:
    inside, release = threading.Event(), threading.Event()
    seen: list[bool] = []

    def work() -> None:
        with gc_paused():
            seen.append(gc.isenabled())
            inside.set()
            release.wait(10)

    worker = threading.Thread(target=work)
    worker.start()
    assert inside.wait(10)
    try:
        assert gc.isenabled()           # the main thread (and every other one) still collects
    finally:
        release.set()
        worker.join(10)
    assert seen == [True] and gc.isenabled()
