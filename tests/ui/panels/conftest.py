"""Fixtures for the panel tests: jobs drain, real demo snapshots (Qt warnings fail: ../conftest.py).

Snapshots come from the demo store built by the real demo agent (``demo_store_master``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QThreadPool
from PySide6.QtWidgets import QApplication

from inspector.model import RunInfo, Snapshot
from inspector.store import open_store
from inspector.store.base import Store

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
def snap_at(panels_store: Store, beekeeping: RunInfo):
    """Load ``seq`` of the beekeeping run: ``snap_at(14)``."""
    def load(seq: int) -> Snapshot:
        return panels_store.load(f"{beekeeping.id}:{seq}")
    return load
