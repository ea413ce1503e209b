"""A pause of the cyclic garbage collector around big decodes, taken only by the main thread.

The collector is process-wide: switching it off from a worker thread would switch it off
under the GUI thread and every other thread too, for as long as the slowest job runs. So
only the thread that owns the process (the main thread: the CLI, the benchmarks, a script)
pauses it here. In the desktop app the GUI thread owns the collector instead
(``inspector.ui.collector``): automatic collection is off and the GUI thread collects on a
timer, so a diff in the thread pool is not rescanned thousands of times either, and no
worker ever changes the process's collector.
"""

from __future__ import annotations

import _thread
import contextlib
import gc
import sys

_gc_lock = _thread.allocate_lock()   # threading.Lock() itself (a command line need not import threading)
_gc_pauses = 0
_gc_was_enabled = False


class _Pause:
    """The context manager ``gc_paused`` returns (a class, not a generator: a save enters
    it every time, and a generator-based one cost more than a small save's encoding)."""

    __slots__ = ("_main",)

    def __enter__(self) -> None:
        global _gc_pauses, _gc_was_enabled
        self._main = _on_main_thread()
        if not self._main:
            return      # a worker leaves the process-wide collector alone (see the module docstring)
        with _gc_lock:
            if _gc_pauses == 0:
                _gc_was_enabled = gc.isenabled()
                gc.disable()
            _gc_pauses += 1

    def __exit__(self, *exc: object) -> None:
        global _gc_pauses
        if not self._main:
            return
        with _gc_lock:
            _gc_pauses -= 1
            if _gc_pauses == 0 and _gc_was_enabled:
                gc.enable()


def _on_main_thread() -> bool:
    """True on the main thread. Threads are started through ``threading``: while it is not
    imported, the only thread is the main one (as ``threading`` itself takes the thread that
    imports it to be the main thread)."""
    threading = sys.modules.get("threading")
    return threading is None or threading.current_thread() is threading.main_thread()


def gc_paused() -> contextlib.AbstractContextManager[None]:
    """Suspend the cyclic garbage collector while a diff or a save decodes, copies and walks
    big trees.

    Decoding allocates hundreds of thousands of containers; with big states alive each
    automatic collection rescans them all (measured: 3-4x slower decoding, and an encoder
    copying 10,000 changed records spent most of its time in the collector). The trees
    built here have no cycles, so nothing waits for the collector. Nested pauses share
    one; the last one out restores the previous setting. On any other thread it does nothing.
    """
    return _Pause()
