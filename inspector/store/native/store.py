"""The native checkpoint store: reads (the Store interface, ``reads.NativeReads``) on a
SQLAlchemy engine's connections, for stores opened to write and PostgreSQL stores."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import sqlalchemy as sa

from inspector.store.engine import Target, guard, translate
from inspector.store.native.reads import (CHECKPOINT_COLUMNS, FETCH_BATCH, PIECE_CACHE_ITEMS,  # noqa: F401
                                          RAW_CACHE_BYTES, STREAM_PART, NativeReads)
from inspector.store.native.rows import checkpoint_from_row, json_field, row_type, run_from_row  # noqa: F401  (re-exported)
from inspector.store.native.schema import FORMAT_VERSION


class NativeStore(NativeReads):
    """A store written by the recording library (format version up to ``FORMAT_VERSION``)."""

    def __init__(self, engine: sa.Engine, target: Target, *, read_only: bool,
                 format_version: int = FORMAT_VERSION) -> None:
        super().__init__(target, read_only=read_only, format_version=format_version)
        self.engine = engine
        self.dialect = engine.dialect.name

    @contextlib.contextmanager
    def _connection(self) -> Iterator[Any]:
        """A raw cursor of one of the engine's connections (plain tuples, no Row objects), in
        a read transaction (SQLite: BEGIN, the engine's connections are in autocommit mode;
        psycopg begins one itself); rolled back when the connection goes back to the pool."""
        with guard(self.info.display), self.engine.connect() as conn:
            raw = conn.connection.dbapi_connection
            assert raw is not None
            cur = raw.cursor()
            try:
                if self.dialect == "sqlite":
                    cur.execute("BEGIN")
                yield cur
            except conn.dialect.loaded_dbapi.Error as err:
                raise translate(err, self.info.display) from err
            finally:
                with contextlib.suppress(conn.dialect.loaded_dbapi.Error):
                    cur.close()
                    raw.rollback()

    def _sql(self, sql: str) -> str:
        return sql if self.dialect == "sqlite" else sql.replace("?", "%s")

    def identity(self) -> tuple | None:
        if self.dialect != "postgresql":
            return super().identity()
        from inspector.store.base import engine_identity
        return engine_identity(self.engine, "ci_runs", self.info.display)

    def _sa_engine(self) -> sa.Engine:
        return self.engine

    def close(self) -> None:
        self.engine.dispose()
