"""Opening stores (native or LangGraph, detected by schema); imported through ``inspector.store``."""

from __future__ import annotations

import dataclasses
import os

import sqlalchemy as sa

from inspector.errors import NewerFormatError, NotAStoreError, StoreError
from inspector.store import sqlite_ro
from inspector.store.base import Store, parse_ref
from inspector.store.engine import (Target, check_sqlite_file, guard, make_engine, parse_target,
                                    table_columns)
from inspector.store.native.schema import FORMAT_VERSION, REQUIRED_TABLES, meta, metadata
from inspector.store.native.store import NativeStore

def _native_version(engine: sa.Engine, display: str) -> int:
    with guard(display), engine.connect() as conn:
        row = conn.execute(sa.select(meta.c.value).where(meta.c.key == "format_version")).first()
    if row is None:
        raise NotAStoreError(f"{display} looks like a checkpoint store but has no format version.")
    try:
        return int(row[0])
    except ValueError as err:
        raise NotAStoreError(f"{display} has an unreadable format version {row[0]!r}.") from err


def _check_version(version: int, display: str) -> None:
    if version > FORMAT_VERSION:
        raise NewerFormatError(
            f"{display} was written by a newer Checkpoint Inspector (format {version}; "
            f"this version reads up to {FORMAT_VERSION}); upgrade to open it.")


def _raise_version(engine: sa.Engine, display: str, version: int) -> int:
    """Mark an older store opened for writing with this version's format (its pieces stay
    readable as they are; what this program writes next needs this version to read): older
    programs then refuse it instead of misreading it. Returns the store's version now."""
    if version < FORMAT_VERSION:
        with guard(display), engine.begin() as conn:
            conn.execute(meta.update().where(meta.c.key == "format_version").values(value=str(FORMAT_VERSION)))
    return max(version, FORMAT_VERSION)


def describe_kind(columns: dict[str, set[str]]) -> str | None:
    """'native', 'langgraph' or None from a database's tables and columns."""
    if REQUIRED_TABLES <= columns.keys():
        return "native"
    try:
        from inspector.store.langgraph import is_langgraph_schema
    except ImportError:  # pragma: no cover - adapter always shipped
        return None
    return "langgraph" if is_langgraph_schema(columns) else None


def open_store(target: str | os.PathLike, readonly: bool = True, **options) -> Store:
    """Open a native or LangGraph store at a path or SQLAlchemy URL.

    Read-only opening never writes to the store. Raises StoreError (one sentence) for a
    missing, foreign, corrupt, locked or newer-format store.
    """
    store = _open(parse_target(target), readonly, **options)
    if readonly and store.info.backend == "sqlite" and store.target_path is not None:
        notice = sqlite_ro.notice_for(sqlite_ro.mode_of(store.target_path))
        if notice:
            store.info = dataclasses.replace(store.info, notice=notice)
    return store


def _open(tgt: Target, readonly: bool, **options) -> Store:
    if tgt.backend == "sqlite":
        check_sqlite_file(tgt)
    engine = make_engine(tgt, readonly=True)
    try:
        kind = describe_kind(table_columns(engine, tgt.display))
        if kind == "native":
            version = _native_version(engine, tgt.display)
            _check_version(version, tgt.display)
            if not readonly:
                engine.dispose()
                engine = make_engine(tgt, readonly=False)
                version = _raise_version(engine, tgt.display, version)
            return NativeStore(engine, tgt, read_only=readonly, format_version=version)
        if kind == "langgraph":
            from inspector.store.langgraph import open_langgraph
            return open_langgraph(engine, tgt, readonly=readonly, **options)
        raise NotAStoreError(f"{tgt.display} is a database but not a checkpoint store "
                             "(neither a Checkpoint Inspector store nor a LangGraph checkpoint database).")
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
            _check_version(version, tgt.display)
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
