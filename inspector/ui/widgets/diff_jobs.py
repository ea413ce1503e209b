"""Background work of the Diff tab: the diff itself, then the aligned side-by-side texts."""

from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtGui import QBrush

from inspector.diff import DiffResult, diff_checkpoints
from inspector.diff.window import MAX_CHANGES, is_big, window
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
    loaded: dict = field(default_factory=dict, compare=False)   # what the diff loaded, for the text


def run_diff(request: DiffRequest, ctx: JobContext) -> DiffResult:
    """The structural and task diff of a request (in a worker; progress goes to ``ctx``)."""
    loaded = request.loaded
    loaded.update({s.info.id: s for s in request.known})
    return diff_checkpoints(request.store, request.a, request.b, cancel=ctx.cancelled,
                            progress=lambda stage, done: ctx.progress(done, 0, stage), snapshots=loaded)


def run_text(request: DiffRequest, result: DiffResult, colors: dict[str, QBrush], dark: bool,
              ctx: JobContext) -> tuple[SideBySide, PreparedText, PreparedText, str]:
    """Both states formatted, aligned and baked into tinted documents (in a worker).

    Big states (``inspector.diff.window.is_big``) are shown as windows around their changes,
    never as millions of lines; the last item is then a note saying so (else "")."""
    ctx.progress(0, 0, "text")
    known = {**request.loaded, **{s.info.id: s for s in request.known}}
    states = []
    for info in (result.a, result.b):
        assert info is not None     # diff_checkpoints names both checkpoints
        snap = known.get(info.id) or request.store.load(info.id)
        ctx.check()
        states.append(snap.state)
    request.loaded.clear()      # the text job is the last to need them
    big = any(is_big(state) for state in states)
    sides = []
    for state, side in zip(states, ("old", "new"), strict=True):
        shown = window(state, result.changes, side) if big else None
        text, spans, paths = prepare_json(shown.value if shown else state, ctx)
        if shown is not None:   # paths of the copy back to the state's (for "scroll to change")
            paths = [shown.real_path(p) for p in paths]
        sides.append((text.split("\n"), spans, paths))
    del states
    aligned = align(sides[0], sides[1], cancel=ctx.cancelled)
    ctx.check()
    left, right = prepare_sides(aligned, colors, dark)
    note = ""
    if big:
        around = f"the first {MAX_CHANGES:,} changes" if len(result.changes) > MAX_CHANGES else "each change"
        note = f"Big states: only the parts around {around} are shown (⋯ marks what is left out)."
    return aligned, left, right, note
