"""Opening stores (any adapter's, detected by schema or layout); imported through ``inspector.store``."""

from __future__ import annotations

import dataclasses
import os

import sqlalchemy as sa

from inspector.errors import NotAStoreError, StoreError
from inspector.store import sqlite_ro
from inspector.model import NATIVE_CAPABILITIES
from inspector.store.adapters import StoreAdapter, detect_path, detect_tables, known_kinds
from inspector.store.base import Store
from inspector.store.engine import (Target, check_sqlite_file, guard, make_engine, parse_target,
                                    table_columns)
from inspector.store.native.schema import FORMAT_VERSION, REQUIRED_TABLES, meta, metadata
from inspector.store.native.reads import check_version
from inspector.store.native.store import NativeStore

def _native_version(engine: sa.Engine, display: str) -> int:
    with guard(display), engine.connect() as conn:
        row = conn.execute(sa.select(meta.c.value).where(meta.c.key == "format_version")).first()
    return check_version(row[0] if row is not None else None, display)


def _raise_version(engine: sa.Engine, display: str, version: int) -> int:
    """Mark an older store opened for writing with this version's format (its pieces stay
    readable as they are; what this program writes next needs this version to read): older
    programs then refuse it instead of misreading it. Returns the store's version now."""
    if version < FORMAT_VERSION:
        with guard(display), engine.begin() as conn:
            conn.execute(meta.update().where(meta.c.key == "format_version").values(value=str(FORMAT_VERSION)))
    return max(version, FORMAT_VERSION)


class NativeAdapter(StoreAdapter):
    """Checkpoint Inspector's own stores (``inspector.store.native``): every capability."""

    kind = "native"
    label = "Checkpoint Inspector"
    capabilities = NATIVE_CAPABILITIES
    order = 0

    def detect_tables(self, columns: dict[str, set[str]]) -> bool:
        """The native tables are all there."""
        return columns.keys() >= REQUIRED_TABLES

    def open_database(self, engine: sa.Engine, target: Target, *, readonly: bool = True,
                      **options: object) -> Store:
        """Check the format version (raise it when opened for writing) and open the store."""
        version = _native_version(engine, target.display)
        if not readonly:
            engine.dispose()
            engine = make_engine(target, readonly=False)
            version = _raise_version(engine, target.display, version)
        return NativeStore(engine, target, read_only=readonly, format_version=version)


def describe_kind(columns: dict[str, set[str]]) -> str | None:
    """The kind ('native', 'langgraph', 'crewai', …) of a database from its tables and columns."""
    adapter = detect_tables(columns)
    return adapter.kind if adapter is not None else None


def _not_a_store(display: str) -> NotAStoreError:
    return NotAStoreError(f"{display} is a database but not a checkpoint store any installed adapter "
                          f"reads ({known_kinds()}).")


def _open_path(tgt: Target, readonly: bool, options: dict) -> Store | None:
    """A folder or non-SQLite file some adapter recognises by its layout, opened; else None."""
    assert tgt.path is not None
    adapter = detect_path(tgt.path)
    return adapter.open_path(tgt.path, readonly=readonly, **options) if adapter is not None else None


def open_store(target: str | os.PathLike, readonly: bool = True, **options) -> Store:
    """Open any store an adapter recognises, at a path or SQLAlchemy URL.

    Databases are recognised by their schema, folders and other files by their layout
    (``inspector.store.adapters``). Read-only opening never writes to the store. Raises
    StoreError (one sentence) for a missing, foreign, corrupt, locked or newer-format store.
    """
    store = _open(parse_target(target), readonly, **options)
    if readonly and store.info.backend == "sqlite" and store.target_path is not None:
        notice = sqlite_ro.notice_for(sqlite_ro.mode_of(store.target_path), store.target_path)
        if notice:
            store.info = dataclasses.replace(store.info, notice=notice)
    return store


def _open(tgt: Target, readonly: bool, **options) -> Store:
    if tgt.backend == "sqlite":
        try:
            check_sqlite_file(tgt)
        except NotAStoreError:   # a folder or a file that is not SQLite: maybe an adapter's layout
            found = _open_path(tgt, readonly, options)
            if found is None:
                raise
            return found
    engine = make_engine(tgt, readonly=True)
    try:
        adapter = detect_tables(table_columns(engine, tgt.display))
        if adapter is None:
            raise _not_a_store(tgt.display)
        return adapter.open_database(engine, tgt, readonly=readonly, **options)
    except BaseException:
        engine.dispose()
        raise


def create_store(target: str | os.PathLike) -> NativeStore:
    """Open a native store for writing, creating the file and schema if needed (idempotent)."""
    tgt = parse_target(target)
    if tgt.backend == "sqlite" and tgt.path is not None and tgt.path.exists() and tgt.path.stat().st_size:
        check_sqlite_file(tgt)
    engine = make_engine(tgt, readonly=False)
    try:
        columns = table_columns(engine, tgt.display)
        kind = describe_kind(columns)
        if kind == "native":
            version = _native_version(engine, tgt.display)
            _raise_version(engine, tgt.display, version)
        elif kind is None and not (columns.keys() & REQUIRED_TABLES) and (tgt.backend != "sqlite" or not columns):
            try:
                init_schema(engine, tgt.display)
            except StoreError:
                # another process may have created the schema at the same moment
                if describe_kind(table_columns(engine, tgt.display)) != "native":
                    raise
        else:
            raise NotAStoreError(f"{tgt.display} already holds another kind of database; "
                                 "choose a new file for a checkpoint store.")
        return NativeStore(engine, tgt, read_only=False)
    except BaseException:
        engine.dispose()
        raise


def init_schema(engine: sa.Engine, display: str) -> None:
    """Create the native tables and the format version row (safe to repeat)."""
    with guard(display), engine.begin() as conn:
        metadata.create_all(conn, checkfirst=True)
        found = conn.execute(sa.select(meta.c.value).where(meta.c.key == "format_version")).first()
        if found is None:
            conn.execute(meta.insert(), [{"key": "format_version", "value": str(FORMAT_VERSION)},
                                         {"key": "application", "value": "checkpoint-inspector"}])
