"""The panels the render script draws, each set up on a real snapshot (used by render_panels)."""

from __future__ import annotations

from collections.abc import Iterator

from PySide6.QtWidgets import QWidget

from inspector.model import RunInfo, Snapshot
from inspector.store.base import Store


def panels(store: Store, snap: Snapshot, run: RunInfo) -> Iterator[tuple[str, QWidget, tuple[int, int]]]:
    """Yield (file name, widget showing the snapshot, size)."""
    from inspector.ui.widgets.state_panel import CONVERSATION, RAW, StatePanel

    state = StatePanel()
    state.show_snapshot(snap, run)
    state.tree_view.select_path(("messages",))
    state.tree_view.tree.expand(state.tree_view.model.index_for_path(("messages",)))
    state.tree_view.select_path(("draft",))
    yield "state-tree", state, (900, 700)
    conv = StatePanel()
    conv.show_snapshot(snap, run)
    conv.set_mode(CONVERSATION)
    yield "conversation", conv, (900, 700)
    raw = StatePanel()
    raw.show_snapshot(snap, run)
    raw.set_mode(RAW)
    yield "state-raw", raw, (900, 700)
    yield from more_panels(store, snap, run)


def more_panels(store: Store, snap: Snapshot, run: RunInfo) -> Iterator[tuple[str, QWidget, tuple[int, int]]]:
    """Tasks, metadata and diff panels."""
    from inspector.ui.widgets.tasks_panel import TasksPanel

    tasks = TasksPanel()
    tasks.show_snapshot(snap, run)
    yield "tasks-board", tasks, (900, 700)
    from inspector.ui.widgets.metadata_panel import MetadataPanel

    meta = MetadataPanel()
    meta.set_store(store)
    meta.show_snapshot(snap, run)
    yield "metadata", meta, (900, 900)
    failed = next(r for r in store.list_runs() if r.status == "failed")
    fsnap = store.load(f"{failed.id}:-1")
    meta2 = MetadataPanel()
    meta2.set_store(store)
    meta2.show_snapshot(fsnap, failed)
    meta2.show_diagnosis("No heartbeat for 40 min and the owner process (pid 7356) is gone.\n"
                         "Last checkpoint: #11 tool calculator.")
    yield "metadata-failed", meta2, (900, 900)
    fork = next(r for r in store.list_runs() if r.parent_run)
    meta3 = MetadataPanel()
    meta3.set_store(store)
    meta3.show_snapshot(store.load(f"{fork.id}:0"), fork)
    yield "metadata-fork", meta3, (900, 900)
    from inspector.ui.widgets.diff_panel import DiffPanel

    diff = DiffPanel()
    diff.set_store(store)
    review = store.load(f"{run.id}:{snap.info.seq + 1}")
    diff.show_snapshot(review, run)
    yield "diff", diff, (1000, 760)
    fork_head = store.load(f"{fork.id}:0")
    original = store.get_checkpoint(f"{fork.parent_run}:-1")
    pair = DiffPanel()
    pair.compare(store, original, fork_head.info)
    pair.diff_ready.connect(lambda _result: _select_change(pair, "messages[9]"))
    yield "diff-fork", pair, (1000, 760)


def _select_change(panel: QWidget, path: str) -> None:
    """Select the change at ``path`` in a DiffPanel (to show its detail and alignment)."""
    rows = [r for r in range(panel.proxy.rowCount()) if panel.proxy.index(r, 1).data() == path]
    if rows:
        panel.select_change(rows[0])
