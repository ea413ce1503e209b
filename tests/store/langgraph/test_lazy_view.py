"""``load_view`` of a LangGraph store (real ``SqliteSaver`` inside ``graph.invoke``): big
channel values and big pending writes stay in their msgpack blob and read a page at a time;
pages, whole values and the rest of the snapshot equal what ``load`` decodes."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector import limits
from inspector.errors import StoreError
from inspector.lazy import LazyText, LazyValue, is_lazy, materialize
from inspector.store import open_store
from inspector.store.langgraph.lazy import MARK_EVERY

ITEMS, KEYS, CHARS = 120_000, 60_000, 2_500_000


@pytest.fixture(scope="module")
def lg_big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from typing import TypedDict

    from tests.lgcorpus import sqlite_saver
    from langgraph.graph import END, START, StateGraph

    class State(TypedDict, total=False):
        items: list
        index: dict
        text: str
        step: int

    def build(state: State) -> State:
        return {"items": [{"n": i, "tag": f"t{i % 7}"} if i % 1000 == 0 else i for i in range(ITEMS)],
                "index": {f"k{i:06d}": [i, "x"] if i % 5000 == 0 else i for i in range(KEYS)},
                "text": "".join(f"line {i:07d} é\n" for i in range(CHARS // 15)), "step": 1}

    def tweak(state: State) -> State:
        items = list(state["items"])
        items[7] = -7
        return {"items": items, "step": 2}

    def shift(state: State) -> State:     # an item in front, a key gone from the middle: out of line
        return {"items": [-1, *state["items"]],
                "index": {k: v for k, v in state["index"].items() if k != "k030000"}, "step": 3}

    graph = StateGraph(State)
    graph.add_node("build", build)
    graph.add_node("tweak", tweak)
    graph.add_node("shift", shift)
    graph.add_edge(START, "build")
    graph.add_edge("build", "tweak")
    graph.add_edge("tweak", "shift")
    graph.add_edge("shift", END)
    path = tmp_path_factory.mktemp("lglazy") / "lg.sqlite"
    with sqlite_saver(path) as saver:
        graph.compile(checkpointer=saver).invoke({"step": 0}, {"configurable": {"thread_id": "t"}})
    return path


def test_big_channels_are_read_a_page_at_a_time_and_equal_the_decoded_state(lg_big: Path) -> None:
    with open_store(lg_big) as store:
        full, view = store.load("t:-1"), store.load_view("t:-1")
        assert view.meta["lazy"] and is_lazy(view.state)
        items, index, text = view.state["items"], view.state["index"], view.state["text"]
        assert isinstance(items, LazyValue) and items.kind == "array" and items.length == ITEMS + 1
        assert isinstance(index, LazyValue) and index.kind == "object" and index.length == KEYS - 1
        assert isinstance(text, LazyText) and full.state["text"].startswith(text.prefix) and len(text.prefix) > 100_000
        assert view.state["step"] == 3
        want = full.state
        # pages anywhere (past the remembered offsets, back before them, across a mark)
        for start in (0, ITEMS - 700, 3 * MARK_EVERY - 3, 5, ITEMS):
            assert items.entries(start, start + 500) == list(enumerate(want["items"][start:start + 500], start))
        assert index.entries(KEYS - 3, KEYS + 5) == list(want["index"].items())[KEYS - 3:]
        assert index.entries(5000, 5001) == [("k005000", [5000, "x"])]
        assert materialize(view.state) == want
        # the rest of the snapshot is load's
        assert view.tasks == full.tasks and view.info == full.info
        assert view.meta["channel_sizes"] == full.meta["channel_sizes"]
        assert {k: v for k, v in view.meta.items() if k not in ("lazy", "channel_sizes")} == \
            {k: v for k, v in full.meta.items() if k != "channel_sizes"}


def test_every_block_is_found_when_the_view_is_made_and_reads_never_change_it() -> None:
    """The offsets of all blocks are found in the worker that makes the view: a page read on the
    GUI thread skips within one block only, and a view the State tab and a diff's worker share is
    never written by either. Damage stops the index; the pages before it still read."""
    import msgpack

    from inspector.store.langgraph.decode import BlobError
    from inspector.store.langgraph.lazy import lazy_span

    n = 120 * MARK_EVERY + 7                    # over BIG_ITEMS: a lazy view
    blob = msgpack.packb(list(range(n)))
    span = lazy_span(blob, 0, len(blob), "The channel items")
    assert isinstance(span, LazyValue)
    marks = list(span.marks)                     # type: ignore[attr-defined]
    assert len(marks) == (n - 1) // MARK_EVERY + 1
    assert span.entries(n - 3, n) == [(i, i) for i in range(n - 3, n)]
    assert span.entries(MARK_EVERY - 1, MARK_EVERY + 1) == [(MARK_EVERY - 1, MARK_EVERY - 1), (MARK_EVERY, MARK_EVERY)]
    assert span.marks == marks                   # type: ignore[attr-defined]
    cut = blob[:len(blob) // 2] + b"\xc1" * (len(blob) - len(blob) // 2)    # 0xc1: never valid msgpack
    damaged = lazy_span(cut, 0, len(cut), "The channel items")
    assert isinstance(damaged, LazyValue)
    assert damaged.entries(0, 3) == [(0, 0), (1, 1), (2, 2)]
    with pytest.raises(BlobError):
        damaged.entries(n - 3, n)


def test_a_big_pending_write_is_read_on_demand(lg_big: Path) -> None:
    """The checkpoint before ``tweak`` holds tweak's writes (not applied: it is not the head)."""
    with open_store(lg_big) as store:
        ref = "t:2"
        full, view = store.load(ref), store.load_view(ref)
        lazy = [w for w in view.meta["writes"] if isinstance(w["value"], LazyValue)]
        assert [w["channel"] for w in lazy] == ["items"]
        wanted = next(w["value"] for w in full.meta["writes"] if w["channel"] == "items")
        assert lazy[0]["value"].materialize() == wanted
        assert lazy[0]["value"].entries(6, 9) == [(6, 6), (7, -7), (8, 8)]
        assert [w["channel"] for w in view.meta["writes"]] == [w["channel"] for w in full.meta["writes"]]


def test_pages_keep_the_read_budgets(lg_big: Path) -> None:
    with open_store(lg_big) as store:
        items = store.load_view("t:-1").state["items"]
        limits.configure(nodes=100)
        try:
            with pytest.raises(StoreError, match="--max-nodes"):
                items.entries(0, 500)
            assert len(items.entries(0, 50)) == 50
        finally:
            limits.reset()


@pytest.mark.parametrize(("a", "b", "blockwise"), [("t:2", "t:3", True), ("t:3", "t:4", False), ("t:4", "t:2", False)])
def test_the_diff_compares_encoded_blocks_and_equals_the_plain_diff(lg_big: Path, a: str, b: str,
                                                                    blockwise: bool) -> None:
    """Two big channel values kept encoded are compared block by block (only unequal blocks
    decoded) when they line up, else built; either way the changes are the plain engine's."""
    from inspector.diff import diff_checkpoints
    from inspector.diff.engine import Engine
    from inspector.store.langgraph import lazy

    with open_store(lg_big) as store:
        built: list = []
        real = lazy._Span.materialize
        lazy._Span.materialize = lambda self: built.append(self.length) or real(self)   # counts whole builds
        try:
            result = diff_checkpoints(store, a, b)
        finally:
            lazy._Span.materialize = real
        plain = Engine().run(store.load_state(a).state, store.load_state(b).state)
        assert result.changes == plain and plain
        assert (not built) == blockwise


def test_a_window_of_a_state_kept_encoded_equals_the_window_of_the_built_one(lg_big: Path) -> None:
    from inspector.diff import diff_checkpoints
    from inspector.diff.window import is_big, window

    with open_store(lg_big) as store:
        result = diff_checkpoints(store, "t:2", "t:3")
        for ref, side in (("t:2", "old"), ("t:3", "new")):
            view, plain = store.load_state_view(ref).state, store.load_state(ref).state
            assert is_big(view) and is_big(plain)
            got, want = window(view, result.changes, side), window(plain, result.changes, side)
            assert got.value == want.value and got.index_maps == want.index_maps


def test_a_channel_view_keeps_its_channel_as_the_state_view_does_and_leaves_out_the_big_others(lg_big: Path) -> None:
    """``load_channel_view`` (a value's history): the channel asked for as ``load_state_view``
    gives it (a big one as the same lazy view), the other channels, big or small, left out."""
    with open_store(lg_big, readonly=True) as store:
        for info in store.list_checkpoints("t"):
            whole = store.load_state_view(info.id).state
            for channel in whole:
                one = store.load_channel_view(info.id, channel).state
                assert set(one) <= set(whole) and channel in one
                assert is_lazy(one[channel]) == is_lazy(whole[channel])
                assert materialize(one[channel]) == materialize(whole[channel]), (info.seq, channel)
                assert not any(is_lazy(v) for k, v in one.items() if k != channel)     # big others: left out
            assert "items" not in store.load_channel_view(info.id, "step").state


def _chat_with_todos(path: Path, turns: int) -> None:
    """A real graph: ``messages`` (add_messages, a human message first) and ``todos``."""
    from typing import Annotated, TypedDict

    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.graph import START, StateGraph
    from langgraph.graph.message import add_messages

    from tests.lgcorpus import sqlite_saver

    # the functional form: real objects, not the strings this module's annotations are
    State = TypedDict("State", {"messages": Annotated[list, add_messages], "todos": list}, total=False)  # noqa: UP013

    def work(state: dict) -> dict:
        n = len(state["messages"])
        return {"messages": [AIMessage(content=f"done {n}", id=f"a{n}")],
                "todos": [{"content": "plan", "status": "completed"},
                          {"content": "write", "status": "in_progress" if n < 6 else "completed"}]}

    graph = StateGraph(State)
    graph.add_node("work", work)
    graph.add_edge(START, "work")
    with sqlite_saver(path) as saver:
        app = graph.compile(checkpointer=saver)
        for turn in range(turns):
            app.invoke({"messages": [HumanMessage(content=f"ship release {turn}", id=f"h{turn}")]},
                       {"configurable": {"thread_id": "t"}})
        # a history whose first messages are not human ones (one says "human", in its text)
        app.invoke({"messages": [AIMessage(content="a human will ask", id="x0"), AIMessage(content="hi", id="x1"),
                                 HumanMessage(content="fix the build", id="x2")]}, {"configurable": {"thread_id": "u"}})
        for turn in range(turns):
            app.invoke({"messages": [HumanMessage(content=f"again {turn}", id=f"y{turn}")]},
                       {"configurable": {"thread_id": "u"}})


def test_a_task_state_reads_its_goal_from_messages_kept_encoded(tmp_path: Path, monkeypatch) -> None:
    """``load_task_view`` leaves ``messages`` out and a state view may keep it encoded (a big
    one): the goal, its first human message, is read from it item by item, and the task
    state is the one ``load_state`` gives."""
    from inspector.store.langgraph import lazy
    path = tmp_path / "chat.db"
    _chat_with_todos(path, 5)
    monkeypatch.setattr(lazy, "BIG_ITEMS", 3)      # (a message history of more than 3 is "big" here)
    with open_store(path, readonly=True) as store:
        infos = store.list_checkpoints("t") + store.list_checkpoints("u")
        lazies = 0
        for info in infos:
            full = store.load_state(info.id)
            for view in (store.load_task_view(info.id), store.load_state_view(info.id)):
                assert view.tasks == full.tasks, info.seq
            lazies += is_lazy(store.load_state_view(info.id).state.get("messages"))
            assert store.load_task_view(info.id).state.get("messages") in (None, [])    # not decoded
        assert lazies > 5
        assert store.load_task_view("t:-1").tasks["goal"] == "ship release 0"
        assert store.load_task_view("t:-1").tasks["tasks"][1]["status"] == "done"
        assert store.load_task_view("u:-1").tasks["goal"] == "fix the build"
    limits.configure(nodes=10)     # the messages read for the goal are over a read budget: said, no goal
    try:
        with open_store(path, readonly=True) as store:
            view = store.load_task_view("u:-1")
            assert view.tasks["goal"] == "" and len(view.tasks["tasks"]) == 2
            assert any(n.startswith("The task state's goal could not be read from the messages: The channel "
                                    "messages decodes to more than 10 values") for n in view.meta["notes"])
    finally:
        limits.reset()
