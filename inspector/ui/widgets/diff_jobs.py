"""Background work of the Diff tab: the diff itself, then the aligned side-by-side texts."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QBrush

from inspector.diff import DiffResult, diff_checkpoints
from inspector.highlight import SideBySide, align
from inspector.model import CheckpointInfo, Snapshot
from inspector.store.base import Store
from inspector.ui.tasks import JobContext
from inspector.ui.widgets.json_view import PreparedText, prepare_json
from inspector.ui.widgets.side_by_side import prepare_sides


@dataclass(frozen=True)
class DiffRequest:
    """One comparison: the store and the two checkpoints (a = old, b = new)."""

    store: Store
    a: CheckpointInfo | int | str
    b: CheckpointInfo | int | str
    known: tuple[Snapshot, ...] = ()


def run_diff(request: DiffRequest, ctx: JobContext) -> DiffResult:
    """The structural and task diff of a request (in a worker; progress goes to ``ctx``)."""
    return diff_checkpoints(request.store, request.a, request.b, cancel=ctx.cancelled,
                            progress=lambda stage, done: ctx.progress(done, 0, stage))


def run_text(request: DiffRequest, result: DiffResult, colors: dict[str, QBrush], dark: bool,
              ctx: JobContext) -> tuple[SideBySide, PreparedText, PreparedText]:
    """Both states formatted, aligned and baked into tinted documents (in a worker)."""
    ctx.progress(0, 0, "text")
    known = {s.info.id: s for s in request.known}
    sides = []
    for info in (result.a, result.b):
        assert info is not None     # diff_checkpoints names both checkpoints
        snap = known.get(info.id) or request.store.load(info.id)
        ctx.check()
        text, spans, paths = prepare_json(snap.state, ctx)
        sides.append((text.split("\n"), spans, paths))
    aligned = align(sides[0], sides[1], cancel=ctx.cancelled)
    ctx.check()
    left, right = prepare_sides(aligned, colors, dark)
    return aligned, left, right
