"""The State tab on a big native state read on demand (``inspector.diff.lazy_value``): the
tree pages through the stored pieces, a long string shows its start, and whatever needs the
whole value (search, copy, Raw JSON) reads it in a worker — all on a real recorded store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QGuiApplication

from inspector.diff.lazy_value import LazyList, LazyMap, LazyText, is_lazy, load_view, materialize
from inspector.record import Checkpointer
from inspector.store import open_store
from inspector.ui.models.state_tree_model import BATCH, PATH_ROLE, SIZE, VALUE
from inspector.ui.widgets.state_panel import RAW, StatePanel

ITEMS, KEYS, CHARS = 120_000, 60_000, 3_000_000


def _state() -> dict:
    text = "".join(f"line {i:07d} é\n" for i in range(CHARS // 15))
    return {"items": [{"n": i} if i % 1000 == 0 else i for i in range(ITEMS)],
            "index": {f"k{i:06d}": i for i in range(KEYS)},
            "text": text, "nested": {"deep": list(range(60_000)), "small": [1, 2]}, "step": 7}


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, dict]:
    path = tmp_path_factory.mktemp("lazy") / "big.db"
    state = _state()
    with Checkpointer(path, name="big") as rec:
        rec.save({"step": 0}, force=True)
        rec.save(state, force=True)
        run = rec.run_id
    return path, f"{run}:1", state


def test_a_big_state_is_read_on_demand_and_equals_the_loaded_one(big) -> None:
    path, ref, state = big
    store = open_store(path)
    try:
        snap = load_view(store, ref)
        assert snap.meta["lazy"] and is_lazy(snap.state)
        shown = snap.state
        assert isinstance(shown["items"], LazyList) and shown["items"].length == ITEMS
        assert isinstance(shown["index"], LazyMap) and shown["index"].length == KEYS
        assert isinstance(shown["text"], LazyText) and shown["text"].length == len(state["text"].encode())
        assert state["text"].startswith(shown["text"].prefix) and len(shown["text"].prefix) > 100_000
        assert shown["step"] == 7
        page = shown["items"].entries(ITEMS - 1500, ITEMS + 10)
        assert page == list(enumerate(state["items"][ITEMS - 1500:], ITEMS - 1500))
        assert shown["index"].entries(1000, 1003) == [("k001000", 1000), ("k001001", 1001), ("k001002", 1002)]
        assert materialize(shown) == store.load(ref).state == state
        small = load_view(store, ref.replace(":1", ":0"))    # a small state is built as before
        assert not small.meta.get("lazy") and small.state == {"step": 0}
    finally:
        store.close()


def _panel(qtbot, snap) -> StatePanel:
    panel = StatePanel()
    qtbot.addWidget(panel)
    panel.resize(1000, 700)
    panel.show()
    panel.show_snapshot(snap, None)
    return panel


def test_the_tree_pages_a_lazy_list_and_map(qtbot, big) -> None:
    path, ref, state = big
    store = open_store(path)
    try:
        panel = _panel(qtbot, load_view(store, ref))
        model, tree = panel.tree_view.model, panel.tree_view.tree
        items = model.index_for_path(("items",))
        assert model.index(items.row(), VALUE).data() == f"[{ITEMS:,} items]"
        assert model.index(items.row(), SIZE).data()
        tree.expand(items)
        assert model.canFetchMore(items)
        model.fetchMore(items)
        assert model.rowCount(items) == BATCH
        model.fetchMore(items)
        assert model.rowCount(items) == 2 * BATCH
        assert model.index(999, VALUE, items).data() == "999"
        assert model.index(999, 0, items).data() == "[999]"
        assert model.index(0, VALUE, items).data() == "{1 key}"
        # a key of a chunked map is found among the rows read (search results bring their rows)
        assert not panel.tree_view.select_path(("index", "k000400"))
        tree.expand(model.index_for_path(("index",)))
        model.fetchMore(model.index_for_path(("index",)))
        assert panel.tree_view.select_path(("index", "k000400"))
        assert tree.currentIndex().data(PATH_ROLE) == ("index", "k000400")
        text = model.index_for_path(("text",))
        assert model.index(text.row(), VALUE).data().startswith("line 0000000 é ⏎ line 0000001")
        panel.tree_view.show_full_text(text)
        assert panel.tree_view.detail.text.toPlainText() == state["text"][:100_000]
        assert "bytes" in panel.tree_view.detail.shown.text()
    finally:
        store.close()


def test_search_copy_and_raw_json_read_the_whole_state_in_a_worker(qtbot, big) -> None:
    path, ref, state = big
    store = open_store(path)
    try:
        panel = _panel(qtbot, load_view(store, ref))
        view = panel.tree_view
        with qtbot.waitSignal(view.match_changed, timeout=60_000):
            view.search("k059990")
        with qtbot.waitSignal(view.match_changed, timeout=10_000):
            view.step(False)
        assert view.tree.currentIndex().data(PATH_ROLE) == ("index", "k059990")
        assert view.tree.currentIndex().row() == 59_990
        assert view.select_path(("nested",))
        with qtbot.waitSignal(view.detail.copied, timeout=60_000):
            assert view.copy_value(view.tree.currentIndex()) == ""
        assert json.loads(QGuiApplication.clipboard().text()) == state["nested"]
        panel.set_mode(RAW)
        qtbot.waitUntil(lambda: not panel._reading and not panel.raw.busy, timeout=120_000)
        assert panel.raw.toPlainText().lstrip().startswith("{")
        assert panel.raw.toPlainText().count("\n") > ITEMS
    finally:
        store.close()


def test_a_page_of_lazy_rows_is_not_read_until_asked(qtbot, big) -> None:
    path, ref, _state_ = big
    store = open_store(path)
    try:
        panel = _panel(qtbot, load_view(store, ref))
        model = panel.tree_view.model
        items = model.index_for_path(("items",))
        assert model.rowCount(items) == 0 and model.hasChildren(items)
        assert model.rowCount(QModelIndex()) == 5
        assert model.index(items.row(), 2).data(Qt.ItemDataRole.DisplayRole) == "array"
    finally:
        store.close()


@pytest.fixture(scope="module")
def lg_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from typing import TypedDict

    from tests.lgcorpus import sqlite_saver
    from langgraph.graph import END, START, StateGraph

    class State(TypedDict, total=False):
        items: list
        step: int

    graph = StateGraph(State)
    graph.add_node("build", lambda state: {"items": list(range(ITEMS)), "step": 1})
    graph.add_node("tweak", lambda state: {"items": [-1, *state["items"][1:]], "step": 2})
    graph.add_edge(START, "build")
    graph.add_edge("build", "tweak")
    graph.add_edge("tweak", END)
    path = tmp_path_factory.mktemp("lgpanel") / "lg.sqlite"
    with sqlite_saver(path) as saver:
        graph.compile(checkpointer=saver).invoke({"step": 0}, {"configurable": {"thread_id": "t"}})
    return path


def test_langgraph_state_and_pending_writes_are_paged_in_the_state_and_metadata_tabs(qtbot, lg_store) -> None:
    from inspector.ui.widgets.metadata_panel import MetadataPanel
    store = open_store(lg_store)
    try:
        snap = load_view(store, "t:2")       # before tweak: tweak's writes are pending, not applied
        assert snap.meta["lazy"]
        panel = _panel(qtbot, snap)
        model = panel.tree_view.model
        items = model.index_for_path(("items",))
        assert model.index(items.row(), VALUE).data() == f"[{ITEMS:,} items]"
        panel.tree_view.tree.expand(items)
        model.fetchMore(items)
        assert [model.index(r, VALUE, items).data() for r in (0, 1, 499)] == ["0", "1", "499"]
        meta = MetadataPanel()
        qtbot.addWidget(meta)
        meta.show_snapshot(snap, None)
        path = ("writes", next(i for i, w in enumerate(snap.meta["writes"]) if w["channel"] == "items"), "value")
        index = meta.meta_model.index_for_path(path)
        assert index.isValid() and meta.meta_model.index(index.row(), VALUE, index.parent()).data() == \
            f"[{ITEMS:,} items]"
        meta.meta_model.fetchMore(index)
        assert meta.meta_model.index(0, VALUE, index).data() == "-1"
    finally:
        store.close()
