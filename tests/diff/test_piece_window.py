"""Windows cut from a state's stored pieces equal windows of the loaded state, reading little."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from inspector.codec import ChunkedList, ChunkedMap
from inspector.diff import diff_checkpoints
from inspector.diff.checkpoints import stored_form
from inspector.diff.piece_view import PieceView, size_hint
from inspector.diff.resolve import raw_fetcher, store_fetcher
from inspector.diff.window import window
from inspector.record import Checkpointer
from inspector.store import open_store


def _states() -> tuple[dict, dict]:
    old = {
        "items": list(range(60_000)),                                   # a chunked list with a table tree
        "index": {f"k{i:05d}": {"n": i, "tags": ["a", "b"]} for i in range(3_000)},   # a chunked map
        "nested": {"deep": [{"id": i, "text": f"item {i} " * 30} for i in range(200)]},
        "notes": "a long note about the run. " * 40,
        "small": [1, 2, 3],
        "step": 1,
    }
    new = copy.deepcopy(old)
    new["items"][7] = -7
    new["items"].insert(30_000, "inserted")
    new["items"][-1] = "last"
    new["index"]["k00042"]["n"] = "changed"
    del new["index"]["k02000"]
    new["index"]["added"] = {"n": -1}
    new["nested"]["deep"][150]["text"] += " and more"
    new["notes"] = new["notes"].replace("run", "walk", 3)
    new["step"] = 2
    return old, new


@pytest.fixture(scope="module")
def big_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("pieces") / "store.db"
    with Checkpointer(path, name="big", agent="test") as recorder:
        for state in _states():
            recorder.save(state, force=True)
    return path


def _run(store) -> str:
    return store.list_runs()[0].id


def test_a_window_from_pieces_is_the_window_of_the_loaded_state(big_store: Path) -> None:
    with open_store(big_store) as store:
        run = _run(store)
        result = diff_checkpoints(store, f"{run}:0", f"{run}:1")
        assert len(result.changes) >= 7
        for side, info in (("old", result.a), ("new", result.b)):
            form = stored_form(store, info)
            assert isinstance(form, dict)
            # the stored form really holds markers (else this test would compare plain values)
            assert isinstance(form["items"], ChunkedList) and form["items"].height > 0
            assert isinstance(form["index"], ChunkedMap)
            from_pieces = window(form, result.changes, side, PieceView(store_fetcher(store), raw_fetcher(store)))
            plain = window(store.load(info.id).state, result.changes, side)
            assert from_pieces.value == plain.value
            assert from_pieces.index_maps == plain.index_maps
            shown = repr(from_pieces.value)
            assert "unchanged item" in shown and "unchanged key" in shown


def test_a_window_from_pieces_reads_only_the_chunks_it_shows(big_store: Path) -> None:
    with open_store(big_store) as store:
        run = _run(store)
        result = diff_checkpoints(store, f"{run}:0", f"{run}:1")
        read: list[bytes] = []
        fetch = store_fetcher(store)

        def counting(digests):
            read.extend(digests)
            return fetch(digests)
        form = stored_form(store, result.a)
        window(form, [c for c in result.changes if c.path[0] == "items"], "old", PieceView(counting))
        chunks = form["items"].length // 128      # at least this many leaf chunks exist
        assert 0 < len(read) < chunks // 10, (len(read), chunks)


def test_size_hint_sees_a_big_state_without_reading_it(big_store: Path) -> None:
    with open_store(big_store) as store:
        info = store.list_checkpoints(_run(store))[0]
        form = stored_form(store, info)
        assert size_hint(form, 50_000, 2_000_000)
        assert not size_hint(form, 10_000_000, 100_000_000)
        assert not size_hint({"a": [1, 2]}, 50_000, 2_000_000)
