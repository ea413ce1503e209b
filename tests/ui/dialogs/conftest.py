"""Fixtures for the dialog tests: real stores made by real demo-agent processes."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.store import open_store
from tests.resume.helpers import copy_store, run_agent


@pytest.fixture(scope="session")
def crashed_master(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with a completed reference run and a run SIGKILLed before step 7 (seed 3)."""
    store = tmp_path_factory.mktemp("gui-crash") / "s.db"
    assert run_agent(store, "--seed", "3", "--name", "reference") == 0
    assert run_agent(store, "--seed", "3", "--name", "crashy", "--crash-at", "7") != 0
    return store


@pytest.fixture
def crashed_store(crashed_master: Path, tmp_path: Path) -> Path:
    """A private copy of ``crashed_master`` (workspaces are per run, created on demand)."""
    return copy_store(crashed_master, tmp_path / "s.db")


def run_named(store: Path, name: str):
    """The run with this name."""
    with open_store(store) as st:
        return next(r for r in st.list_runs() if r.name == name)


def store_url(store: Path) -> str:
    """The URL the GUI session would hold for this store."""
    with open_store(store) as st:
        return st.info.url
