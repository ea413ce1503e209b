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


def test_before_threading_is_imported_the_only_thread_pauses_and_a_later_worker_does_not() -> None:
    import subprocess
    import sys
    from pathlib import Path

    code = """
import gc, sys
from inspector.codec.gcpause import gc_paused
assert "threading" not in sys.modules
with gc_paused():
    paused = not gc.isenabled()
import threading
seen = []
def work():
    with gc_paused():
        seen.append(gc.isenabled())
worker = threading.Thread(target=work)
worker.start(); worker.join()
with gc_paused():
    main_again = not gc.isenabled()
print(paused, seen, main_again, gc.isenabled())
"""
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, timeout=60,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "[True]", "True", "True"]
