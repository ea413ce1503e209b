"""Background work of the Diff tab: the diff itself, then the aligned side-by-side texts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from PySide6.QtGui import QBrush

from inspector.diff import Change, DiffResult, diff_checkpoints
from inspector.diff.checkpoints import stored_form
from inspector.diff.grouping import group_changes
from inspector.diff.piece_view import PieceView, size_hint
from inspector.diff.resolve import raw_fetcher, store_fetcher
from inspector.diff.window import BIG_CHARS, BIG_NODES, MAX_CHANGES, WRAP, is_big, window
from inspector.errors import StoreError
from inspector.highlight import SideBySide, align
from inspector.model import CheckpointInfo, Snapshot
from inspector.store.base import Store
from inspector.ui.formatting import visible
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
    names: dict = field(default_factory=dict, compare=False)    # run id → name, of the compared runs


class SideTexts(NamedTuple):
    """What the text job gives the Diff tab: the aligned sides, their documents, the note
    above them ("" when none) and the characters per line of a changed long string when one
    was cut into lines (None otherwise: nothing to cut again when the view is resized)."""

    aligned: SideBySide
    left: PreparedText
    right: PreparedText
    note: str
    wrapped_at: int | None


def _built(snapshots: tuple[Snapshot, ...]) -> dict:
    """The snapshots whose state is built (a big state the State tab reads on demand,
    ``meta["lazy"]``, is compared from its pieces instead)."""
    return {s.info.id: s for s in snapshots if not s.meta.get("lazy")}


def run_diff(request: DiffRequest, ctx: JobContext) -> DiffResult:
    """The structural and task diff of a request (in a worker; progress goes to ``ctx``)."""
    loaded = request.loaded
    loaded.update(_built(request.known))
    result = diff_checkpoints(request.store, request.a, request.b, cancel=ctx.cancelled,
                              progress=lambda stage, done: ctx.progress(done, 0, stage), snapshots=loaded)
    _read_names(request, result)
    return result


def _read_names(request: DiffRequest, result: DiffResult) -> None:
    """The names of the compared checkpoints' runs the request does not know yet (the panel
    says "report: heat pumps #3", not a run id); a run that cannot be read keeps its id."""
    for info in (result.a, result.b):
        if info is not None and info.run_id not in request.names:
            try:
                request.names[info.run_id] = request.store.get_run(info.run_id).name
            except StoreError:
                continue


def run_text(request: DiffRequest, result: DiffResult, colors: dict[str, QBrush], dark: bool,
              ctx: JobContext, wrap: int = WRAP) -> SideTexts:
    """Both states formatted, aligned and baked into tinted documents (in a worker).

    Big states (``inspector.diff.window.is_big``) are shown as windows around their changes,
    never as millions of lines; the last item is then a note saying so (else ""). A big side
    that is not loaded and is stored in pieces is windowed from its pieces, never loaded; a
    changed long string there is shown in lines of ``wrap`` characters (the view's width)."""
    ctx.progress(0, 0, "text")
    states, source, big = _states(request, result, ctx)
    sides = []
    wrapped = False
    for state, side, view in zip(states, ("old", "new"), source, strict=True):
        shown = window(state, result.changes, side, view, wrap) if big else None
        wrapped = wrapped or (shown is not None and shown.wrapped)
        text, spans, paths = prepare_json(shown.value if shown else state, ctx)
        if shown is not None:   # paths of the copy back to the state's (for "scroll to change")
            paths = [shown.real_path(p) for p in paths]
        sides.append((text.split("\n"), spans, paths))
    del states
    _keep_for_rewrap(request, result, wrapped)
    aligned = align(sides[0], sides[1], cancel=ctx.cancelled)
    ctx.check()
    left, right = prepare_sides(aligned, colors, dark)
    note = ""
    if big:
        around = f"the first {MAX_CHANGES:,} changes" if len(result.changes) > MAX_CHANGES else "each change"
        note = f"Big states: only the parts around {around} are shown (⋯ marks what is left out)."
        if wrapped:
            note += " A changed long string is shown as a list of its lines."
    return SideTexts(aligned, left, right, note, wrap if wrapped else None)


def path_key(row: Any) -> str:
    """What the change filter matches a row of the change list by: its path as the list shows
    it, case-folded (the filter ignores case)."""
    return visible(row.display_path).casefold()


def filter_rows(changes: tuple[Change, ...], needle: str, cache: dict, ctx: JobContext) -> list[int]:
    """The rows of the change list (``group_changes`` of ``changes``, as its model shows them)
    whose path contains ``needle``, ignoring case (in a worker). The rows' paths are worked out
    once per diff and kept in ``cache`` for the next keystrokes."""
    keys = cache.get("paths")
    if keys is None:
        keys = [path_key(row) for row in group_changes(changes)]
        cache["paths"] = keys
    ctx.check()
    needle = needle.casefold()
    return [row for row, key in enumerate(keys) if needle in key]


def _keep_for_rewrap(request: DiffRequest, result: DiffResult, wrapped: bool) -> None:
    """Keep what the diff loaded of the two compared checkpoints (only those: keyed by
    checkpoint id) while a changed long string is shown in lines, so that cutting them again
    for a new width does not decode a side again; drop it otherwise (nothing needs it)."""
    keep = {i.id for i in (result.a, result.b) if i is not None} if wrapped else set()
    for ident in [k for k in request.loaded if k not in keep]:
        del request.loaded[ident]


def _states(request: DiffRequest, result: DiffResult, ctx: JobContext
            ) -> tuple[list, list[PieceView | None], bool]:
    """Both sides' states (plain, or a stored form read through its PieceView) and whether
    they are big."""
    known = {**request.loaded, **_built(request.known)}
    infos = [result.a, result.b]
    states: list = [known[i.id].state if i is not None and i.id in known else None for i in infos]
    big = any(is_big(state) for state, info in zip(states, infos, strict=True)
              if info is not None and info.id in known)
    source: list[PieceView | None] = [None, None]
    for n, info in enumerate(infos):
        assert info is not None     # diff_checkpoints names both checkpoints
        if info.id in known:
            continue
        form = stored_form(request.store, info)
        ctx.check()
        if form is not None and (big or size_hint(form, BIG_NODES, BIG_CHARS)):
            states[n], big = form, True
            source[n] = PieceView(store_fetcher(request.store), raw_fetcher(request.store))
        else:
            states[n] = request.store.load_state(info.id).state
            big = big or is_big(states[n])
        ctx.check()
    return states, source, big
