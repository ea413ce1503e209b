"""Panels on a real LangGraph SqliteSaver database: LangChain messages, node tasks, metadata."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.store import open_store
from inspector.store.base import Store
from inspector.ui.widgets.metadata_panel import MetadataPanel
from inspector.ui.widgets.state_panel import CONVERSATION, StatePanel
from inspector.ui.widgets.tasks_panel import TasksPanel
from tests.store.langgraph.lg_graphs import make_database


@pytest.fixture(scope="module")
def lg_store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """A LangGraph database written by the real langgraph package, opened read-only."""
    path = make_database(tmp_path_factory.mktemp("lg") / "graph.db")
    store = open_store(Path(path))
    yield store
    store.close()


def _last_with_messages(store: Store):
    for run in store.list_runs():
        snap = store.load(store.list_checkpoints(run.id)[-1].id)
        if isinstance(snap.state, dict) and snap.state.get("messages"):
            return run, snap
    raise AssertionError("no LangGraph thread with messages")


def test_langchain_messages_become_bubbles(qtbot, lg_store) -> None:
    run, snap = _last_with_messages(lg_store)
    panel = StatePanel()
    qtbot.addWidget(panel)
    panel.show_snapshot(snap, run)
    with qtbot.waitSignal(panel.conversation.conversation_ready, timeout=5000):
        panel.set_mode(CONVERSATION)
    model = panel.conversation.model
    assert model.rowCount() == len(snap.state["messages"])
    roles = [model.message(r).role for r in range(model.rowCount())]
    assert roles[0] == "user" and "assistant" in roles
    assert model.message(0).text == snap.state["messages"][0]["content"]


def test_node_tasks_and_langgraph_metadata(qtbot, lg_store) -> None:
    run, snap = _last_with_messages(lg_store)
    tasks = TasksPanel()
    qtbot.addWidget(tasks)
    tasks.show_snapshot(snap, run)
    assert tasks.showing_board
    shown = sum(len(c.cards) for c in tasks.columns.values())
    assert shown == len(snap.tasks["tasks"])
    meta = MetadataPanel()
    meta.set_store(lg_store)
    qtbot.addWidget(meta)
    meta.show_snapshot(snap, run)
    keys = {meta.meta_model.index(r, 0).data() for r in range(meta.meta_model.rowCount())}
    assert keys == {str(k) for k in snap.meta}
    assert meta.checkpoint.values()["Kind"].strip() == snap.info.kind


def test_langgraph_metadata_says_a_thread_has_no_owner_process(qtbot, lg_store, panels_store, beekeeping) -> None:
    """A LangGraph thread has no owner process, heartbeat, ownership epoch or replay count:
    the Metadata tab says so instead of "epoch 0", "never" and "1 operation"; a native run's
    tab keeps them."""
    run, snap = _last_with_messages(lg_store)
    assert run.owner_pid is None and run.heartbeat is None
    meta = MetadataPanel()
    meta.set_store(lg_store)
    qtbot.addWidget(meta)
    meta.show_snapshot(snap, run)
    rows = meta.run.values()
    assert rows["Owner"] == "no owner process (a LangGraph database's thread)"
    assert "Heartbeat" not in rows and "epoch" not in " ".join(rows.values())
    assert "Replay cost" not in meta.sizes.values() and meta.sizes.title.text() == "<b>Size</b>"
    meta.set_store(panels_store)
    native = panels_store.load(f"{beekeeping.id}:-1")
    meta.show_snapshot(native, beekeeping)
    assert meta.run.values()["Owner"].endswith(f"pid {beekeeping.owner_pid} · epoch {beekeeping.epoch}")
    assert "Heartbeat" in meta.run.values() and "Replay cost" in meta.sizes.values()
    assert meta.sizes.title.text() == "<b>Size and replay cost</b>"
