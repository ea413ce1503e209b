"""Backend-neutral rows a LangGraph reader returns (``SqliteReader``, ``PgReader``).

A reader runs the SQL for one backend and hands back these plain tuples; everything that
turns them into our model (``mapping``, ``snapshot``) is shared by all backends. The
PostgreSQL reader assembles ``BlobRow.channel_blobs`` from ``checkpoint_blobs``.
"""

from __future__ import annotations

import contextlib

from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol


class ThreadRow(NamedTuple):
    """One thread: first and last checkpoint ids (any namespace) and how many there are."""

    thread_id: str
    first_id: str
    last_id: str
    checkpoints: int     # (not `count`: that would hide tuple.count)


class ListRow(NamedTuple):
    """One checkpoint as listed (no state): ids, metadata source/step and stored sizes.

    ``metadata`` (JSON text/bytes, or a dict from PostgreSQL JSONB) is only needed — and may
    be None otherwise — for a namespace's first checkpoint (``parents``), legacy rows with a
    ``writes`` key, or metadata whose JSON is invalid.
    """

    ns: str
    checkpoint_id: str
    parent_id: str | None
    source: Any
    step: Any
    metadata: Any
    size: int
    parent_size: int | None


class WriteRow(NamedTuple):
    """One pending write; ``value`` is None when the query did not fetch values."""

    ns: str
    checkpoint_id: str
    task_id: str
    task_path: str
    idx: int
    channel: str
    type: str | None
    value: bytes | None


class TaskOutputRow(NamedTuple):
    """One task's output writes at one checkpoint (control writes and the null task left out).

    ``channels`` is the written channel names joined by ``CHANNEL_SEP``.
    """

    ns: str
    checkpoint_id: str
    task_path: str
    channels: str
    task_id: str = ""


CHANNEL_SEP = "\x1f"


class HeadRow(NamedTuple):
    """The latest root-namespace checkpoint of a thread (``blob`` only from ``head_bodies``)."""

    thread_id: str
    checkpoint_id: str
    type: str | None
    blob: bytes | None
    metadata: Any


@dataclass
class BlobRow:
    """One checkpoint's serialized body and metadata.

    ``channel_blobs`` (PostgreSQL only) maps channel → (type, bytes) stored outside the body.
    """

    type: str | None
    blob: bytes | None
    metadata: Any
    parent_id: str | None
    channel_blobs: dict[str, tuple[str | None, bytes | None]] = field(default_factory=dict)


class Reader(Protocol):
    """What a LangGraph backend reader provides (see ``sqlite_reader.SqliteReader``)."""

    def threads(self, thread_id: str | None = None) -> list[ThreadRow]: ...
    def held(self) -> contextlib.AbstractContextManager[None]: ...
    def parent_links(self, thread_id: str, ns: str) -> dict[str, str]: ...
    def heads(self, thread_id: str | None = None) -> list[HeadRow]: ...
    def head_bodies(self, keys: list[tuple[str, str]]) -> dict[tuple[str, str], HeadRow]: ...
    def head_writes(self, thread_id: str | None = None) -> list[tuple[str, WriteRow]]: ...
    def count_checkpoints(self, thread_id: str) -> int: ...
    def list_rows(self, thread_id: str, offset: int, limit: int | None) -> list[ListRow]: ...
    def task_outputs(self, thread_id: str, lo: str, hi: str, ns: str | None = None) -> list[TaskOutputRow]: ...
    def task_stops(self, thread_id: str, lo: str, hi: str, ns: str | None = None) -> list[tuple[str, str, str, str]]: ...
    def head_of(self, thread_id: str, ns: str) -> str | None: ...
    def child_counts(self, thread_id: str, lo: str, hi: str) -> dict[tuple[str, str], int]: ...
    def position(self, thread_id: str, ns: str, checkpoint_id: str) -> int | None: ...
    def locate(self, checkpoint_id: str) -> list[tuple[str, str]]: ...
    def body(self, thread_id: str, ns: str, checkpoint_id: str) -> BlobRow | None: ...
    def writes(self, thread_id: str, ns: str, checkpoint_id: str) -> list[WriteRow]: ...
    def namespaces(self, thread_id: str) -> list[str]: ...
    def written_channels(self, thread_id: str, ns: str) -> list[str]: ...
    def interrupt_rows(self, thread_id: str, lo: str, hi: str,
                       ns: str | None = None) -> list[tuple[str, str, str, str, Any, Any]]: ...
    def channel_steps(self, thread_id: str, channel: str, limit: int) -> list[tuple[str, str, int]]: ...
    def child_ids(self, thread_id: str, ns: str, checkpoint_id: str) -> list[str]: ...
    def ancestry(self, thread_id: str, ns: str, checkpoint_id: str, depth: int) -> list[tuple[str, Any]]: ...
    def channel_writes(self, thread_id: str, ns: str, channel: str,
                       checkpoint_ids: list[str]) -> list[WriteRow]: ...
    origin: tuple
    def cursor(self) -> tuple: ...
    def changed_since(self, cursor: tuple, upto: tuple) -> tuple[list[tuple[str, str, str]], set[str]]: ...
    def removed(self, cursor: tuple, upto: tuple, added: int) -> bool: ...
