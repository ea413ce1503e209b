"""Recognising LangGraph checkpoint databases from their tables and columns (no data read).

Shapes recognised (see shared/reference/langgraph-format.md §1):

* ``sqlite`` — SqliteSaver: ``checkpoints`` (checkpoint BLOB inline) + ``writes``;
  ``writes.task_path`` exists only since langgraph-checkpoint-sqlite 3.1.2.
* ``postgres`` — PostgresSaver: ``checkpoints`` + ``checkpoint_blobs`` + ``checkpoint_writes``.
* ``legacy`` — before langgraph 0.2: ``thread_ts``/``parent_ts`` columns, no namespaces.
"""

from __future__ import annotations

from dataclasses import dataclass

CHECKPOINT_COLUMNS = frozenset({"thread_id", "checkpoint_ns", "checkpoint_id",
                                "parent_checkpoint_id", "checkpoint", "metadata"})
SQLITE_WRITES_COLUMNS = frozenset({"thread_id", "checkpoint_ns", "checkpoint_id", "task_id",
                                   "idx", "channel", "type", "value"})
PG_WRITES_COLUMNS = frozenset({"thread_id", "checkpoint_ns", "checkpoint_id", "task_id",
                               "idx", "channel", "type", "blob"})
PG_BLOBS_COLUMNS = frozenset({"thread_id", "checkpoint_ns", "channel", "version", "type", "blob"})
LEGACY_COLUMNS = frozenset({"thread_id", "thread_ts", "checkpoint"})


@dataclass(frozen=True)
class LangGraphSchema:
    """Which LangGraph layout a database has."""

    layout: str            # "sqlite" | "postgres" | "legacy"
    writes_table: str
    has_task_path: bool


def _cols(columns: dict[str, set[str]], table: str) -> set[str]:
    return {c.lower() for c in columns.get(table, ())}


def describe(columns: dict[str, set[str]]) -> LangGraphSchema | None:
    """The LangGraph layout of a database given table name → column names, or None."""
    tables = {name.lower(): cols for name, cols in columns.items()}
    checkpoints = _cols(tables, "checkpoints")
    if checkpoints >= CHECKPOINT_COLUMNS:
        writes = _cols(tables, "writes")
        if writes >= SQLITE_WRITES_COLUMNS:
            return LangGraphSchema("sqlite", "writes", "task_path" in writes)
        pg_writes = _cols(tables, "checkpoint_writes")
        if pg_writes >= PG_WRITES_COLUMNS and _cols(tables, "checkpoint_blobs") >= PG_BLOBS_COLUMNS:
            return LangGraphSchema("postgres", "checkpoint_writes", "task_path" in pg_writes)
        return None
    if checkpoints >= LEGACY_COLUMNS and "checkpoint_id" not in checkpoints:
        return LangGraphSchema("legacy", "writes", False)
    return None


def is_langgraph_schema(table_columns: dict[str, set[str]]) -> bool:
    """True when the tables look like a LangGraph checkpointer database (any known layout)."""
    return describe(table_columns) is not None


def detect(sqlite_table_names: set[str], columns: dict[str, set[str]]) -> bool:
    """Same as ``is_langgraph_schema``; ``sqlite_table_names`` is accepted for symmetry."""
    del sqlite_table_names
    return is_langgraph_schema(columns)
