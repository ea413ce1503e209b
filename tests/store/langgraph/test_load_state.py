"""``load_state``: a LangGraph checkpoint for a diff, its pending writes' values not decoded."""

from __future__ import annotations

from inspector.diff import diff_checkpoints
from inspector.store.langgraph import LangGraphStore


def test_load_state_keeps_the_state_and_tasks_and_skips_output_write_values(lg_store: LangGraphStore) -> None:
    for thread in ("thread-A", "thread-B", "thread-E"):
        infos = lg_store.list_checkpoints(thread)
        skipped = 0
        for info in infos:
            full, light = lg_store.load(info.id), lg_store.load_state(info.id)
            assert light.state == full.state
            assert light.tasks == full.tasks
            assert light.meta["tasks"] == full.meta["tasks"]
            assert light.meta["interrupts"] == full.meta["interrupts"]
            assert light.meta["errors"] == full.meta["errors"]
            for lw, fw in zip(light.meta["writes"], full.meta["writes"], strict=True):
                if lw["value"] is None and fw["value"] is not None:
                    skipped += 1
        assert skipped, f"{thread}: no pending write value was left out"


def test_a_diff_of_light_snapshots_equals_the_diff_of_full_ones(lg_store: LangGraphStore) -> None:
    infos = lg_store.list_checkpoints("thread-B")
    full = {i.id: lg_store.load(i.id) for i in infos}
    for a, b in zip(infos, infos[1:]):
        light = diff_checkpoints(lg_store, a, b)
        known = diff_checkpoints(lg_store, a, b, snapshots={a.id: full[a.id], b.id: full[b.id]})
        assert light.changes == known.changes
        assert light.task_changes == known.task_changes
