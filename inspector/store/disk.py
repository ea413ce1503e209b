"""How much room a store takes where it lives (shared by the native and the LangGraph adapters)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DiskUsage:
    """How big the store is where it lives: files (SQLite) or relations (PostgreSQL)."""

    total_bytes: int                 # everything the store occupies (file + WAL, or relations)
    free_bytes: int                  # free pages inside the file (SQLite) / 0 when unknown
    wal_bytes: int
    tables: dict[str, int]           # table (with its indexes) -> bytes; empty when unknown
    page_size: int = 0
    page_count: int = 0
    freelist_count: int = 0
    method: str = ""
