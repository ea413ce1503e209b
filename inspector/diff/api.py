"""Diff entry points on values: plain values, content-addressed roots, and snapshots."""

from __future__ import annotations

import time
from typing import Any

from inspector.codec import Ref
from inspector.diff.engine import Engine
from inspector.diff.model import CancelFn, Change, DiffResult, ProgressFn
from inspector.diff.resolve import FetchMany, FetchRaw, StreamPiece, StreamRaw
from inspector.diff.summary import result_summary
from inspector.diff.tasks import task_diff
from inspector.diff.text import TEXT_MIN
from inspector.model import Snapshot


def diff_values(a: Any, b: Any, *, cancel: CancelFn | None = None, progress: ProgressFn | None = None,
                text_min: int = TEXT_MIN) -> tuple[Change, ...]:
    """Structural changes turning plain value ``a`` into ``b``, in document order.

    Equal subtrees are skipped with one C-level ``==``; lists are aligned (appends, inserts,
    moves); strings of ``text_min`` characters or more get a TextDelta, numbers a NumberDelta.
    ``cancel()`` returning True raises DiffCancelled; ``progress(stage, done)`` may raise too.
    Equality is Python's: ``1 == 1.0 == True``.
    """
    return Engine(cancel=cancel, progress=progress, text_min=text_min).run(a, b)


def diff_pieces(fetch_many: FetchMany, root_a: bytes, root_b: bytes, *,
                cancel: CancelFn | None = None, progress: ProgressFn | None = None,
                text_min: int = TEXT_MIN, stats: dict | None = None,
                fetch_raw: FetchRaw | None = None, stream_raw: StreamRaw | None = None,
                stream_piece: StreamPiece | None = None) -> tuple[Change, ...]:
    """Structural changes between two content-addressed states given their root digests.

    Subtrees with equal digests are skipped unread; chunked lists are aligned chunk by chunk
    and only differing chunks are read. With ``fetch_raw`` (raw piece bytes) those chunks are
    split into encoded items and only the items that differ are decoded; ``stream_raw`` reads
    them in parts instead, and the walk goes on with each part as it comes. Old and new values
    in the result are plain values. ``stats``, when given, receives the engine's counters
    (nodes, pieces_read, fetches). With ``stream_piece`` two huge strings are compared
    streamed (``inspector.diff.huge_text``): their old and new values are then ``StreamedText``.
    """
    engine = Engine(fetch_many, fetch_raw=fetch_raw, stream_raw=stream_raw, cancel=cancel,
                    progress=progress, text_min=text_min, stream_piece=stream_piece)
    changes = engine.run(Ref(root_a, 0), Ref(root_b, 0))
    if stats is not None:
        stats.update(engine.stats())
    return changes


def diff_snapshots(a: Snapshot, b: Snapshot, *, cancel: CancelFn | None = None,
                   progress: ProgressFn | None = None) -> DiffResult:
    """Diff two loaded snapshots (state and task state), without lineage."""
    started = time.perf_counter()
    engine = Engine(cancel=cancel, progress=progress)
    changes = engine.run(a.state, b.state)
    task_changes, task_line = task_diff(a.tasks, b.tasks)
    summary = result_summary(task_line, changes)
    stats = engine.stats() | {"seconds": time.perf_counter() - started}
    return DiffResult(changes, task_changes, summary, a.info, b.info, stats=stats)
