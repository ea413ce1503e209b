"""Fixtures for the panel tests: Qt warnings fail, jobs drain, real demo snapshots.

Snapshots come from the demo store built by the real demo agent (``demo_store_master``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QtMsgType, QThreadPool
from PySide6.QtWidgets import QApplication

from inspector.model import RunInfo, Snapshot
from inspector.store import open_store
from inspector.store.base import Store

# Messages the offscreen platform prints for every shown window; not a defect of ours.
IGNORED_QT_MESSAGES = ("This plugin does not support propagateSizeHints()",)


@pytest.fixture(autouse=True)
def fail_on_qt_warnings(qtlog) -> Iterator[None]:  # noqa: ANN001 - pytest-qt fixture
    """A Qt warning (or worse) logged during the test fails it."""
    yield
    bad = [r for r in qtlog.records
           if r.type in (QtMsgType.QtWarningMsg, QtMsgType.QtCriticalMsg, QtMsgType.QtFatalMsg)
           and not any(r.message.startswith(m) for m in IGNORED_QT_MESSAGES)]
    assert not bad, "Qt warnings: " + "; ".join(r.message for r in bad)


@pytest.fixture(autouse=True)
def drain_jobs(qapp: QApplication) -> Iterator[None]:
    """Let background jobs finish before widgets are torn down."""
    yield
    QThreadPool.globalInstance().waitForDone()
    qapp.processEvents()


@pytest.fixture(scope="session")
def panels_store(demo_store_master: Path) -> Iterator[Store]:
    """The session's demo store opened read-only (panel tests never write)."""
    store = open_store(demo_store_master)
    yield store
    store.close()


def run_named(store: Store, name: str) -> RunInfo:
    """The demo run with this exact name."""
    return next(r for r in store.list_runs() if r.name == name)


@pytest.fixture(scope="session")
def beekeeping(panels_store: Store) -> RunInfo:
    """The demo run that went through a rejected review, a revision and publication."""
    return run_named(panels_store, "report: urban beekeeping")


@pytest.fixture
def snap_at(panels_store: Store, beekeeping: RunInfo):  # noqa: ANN201
    """Load ``seq`` of the beekeeping run: ``snap_at(14)``."""
    def load(seq: int) -> Snapshot:
        return panels_store.load(f"{beekeeping.id}:{seq}")
    return load
