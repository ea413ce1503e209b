"""Keep None, True and False alive under PySide6 wrappers that return them without a reference.

PySide6 6.12.0 (the abi3 wheel) returns ``None`` from every void method and ``True`` from
``Signal.emit()`` as if they were immortal, which they are only from Python 3.12 on. On
Python 3.11 each such call takes one reference away, and after a few thousand calls the
interpreter aborts with "Fatal Python error: none_dealloc" (or "bool_dealloc"). Adding a
large number to their reference counts now, and again from a timer whenever they run low,
keeps them positive. These three objects are never freed anyway, so the extra count costs
nothing. Nothing is done on Python 3.12 and later, or on other interpreters.
"""

from __future__ import annotations

import ctypes
import sys

NEEDED = sys.version_info < (3, 12) and sys.implementation.name == "cpython"
_checked = False


def binding_leaks() -> bool:
    """Whether this PySide6 build loses a reference to None on void calls (6.12.0 does)."""
    from PySide6.QtCore import QObject

    probe = QObject()
    before = sys.getrefcount(None)
    for _ in range(64):
        probe.setObjectName("probe")
    return sys.getrefcount(None) < before - 32
BOOST = 1 << 30          # references added at once
LOW_WATER = 1 << 29      # add again when a count falls below this
TOP_UP_MS = 1000

_timer = None


def top_up() -> int:
    """Raise the counts of None/True/False that ran low; returns how many objects were raised."""
    if not NEEDED:
        return 0
    raised = 0
    for obj in (None, True, False):
        if sys.getrefcount(obj) < LOW_WATER:
            # ob_refcnt is the first field of every CPython object.
            ctypes.c_ssize_t.from_address(id(obj)).value += BOOST
            raised += 1
    return raised


def install() -> None:
    """Top up now and every ``TOP_UP_MS`` on the GUI thread (idempotent; call with a QApplication)."""
    global _timer, NEEDED, _checked
    if not NEEDED:
        return
    if not _checked:
        _checked = True
        NEEDED = binding_leaks()   # pyproject excludes 6.12, but a user may force it
        if not NEEDED:
            return
    top_up()
    if _timer is not None:
        return
    from PySide6.QtCore import QCoreApplication, QTimer

    app = QCoreApplication.instance()
    if app is None:
        return
    _timer = QTimer(app)
    _timer.setInterval(TOP_UP_MS)
    _timer.timeout.connect(top_up)
    _timer.start()
