"""The decoded-piece cache of a store's reads is bounded by bytes, not only by count: a window
following a live run reads new pieces at every save, and 20,000 decoded list chunks held
hundreds of MB (a soak test's window grew 16 MB a minute)."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.record import Checkpointer
from inspector.store import open_store
from inspector.store.native import reads


def test_decoded_pieces_kept_stay_within_their_byte_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.db"
    state: dict = {"messages": []}
    with Checkpointer(path, name="live") as cp:
        for i in range(120):
            state["messages"].append({"role": "user", "content": f"message {i} " + "lorem ipsum " * (50 + i % 7)})
            cp.save(state, kind="llm", name="step")
        run = cp.run_id
    budget = 64 * 1024
    monkeypatch.setattr(reads, "PIECE_CACHE_BYTES", budget, raising=False)
    with open_store(path) as store:
        for seq in range(120):            # a window following the run: every checkpoint shown once
            assert len(store.load(f"{run}:{seq}").state["messages"]) == seq + 1
        kept = list(store._pieces)
        assert kept, "the newest pieces are kept"
        held = sum(map(len, store.read_raw_pieces(kept).values()))
        assert held <= budget, f"{len(kept)} decoded pieces of {held:,} raw bytes kept"
        assert store.load(f"{run}:119").state == state        # what is kept still reads right
