"""Fixture stores written by the real framework packages (``write_stores.py``), copied per test."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

STORES = Path(__file__).parent / "stores"


def digest(path: Path) -> str:
    """A digest of a file or of every file under a folder (names and bytes)."""
    h = hashlib.sha256()
    for item in sorted([path] if path.is_file() else path.rglob("*")):
        if item.is_file():
            h.update(str(item.relative_to(path.parent)).encode())
            h.update(item.read_bytes())
    return h.hexdigest()


@pytest.fixture
def store_copy(tmp_path: Path):
    """Copy a committed fixture store into tmp_path; after the test, check it was not changed
    (opening a store never writes to it)."""
    made: list[tuple[Path, str]] = []

    def copy(name: str) -> Path:
        source = STORES / name
        target = tmp_path / name
        (shutil.copytree if source.is_dir() else shutil.copy2)(source, target)
        made.append((target, digest(target)))
        return target

    yield copy
    for path, before in made:
        if path.exists() and not getattr(copy, "modified", False):
            assert digest(path) == before, f"{path.name} was changed by reading it"
