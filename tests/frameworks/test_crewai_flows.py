"""CrewAI flow persistence written by crewai 1.15 (``@persist`` with ``SQLiteFlowPersistence``):
each flow a run, each saved state a checkpoint, crewai's own ``load_state`` the oracle."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from inspector.diff import diff_checkpoints
from inspector.errors import NotResumableError, StoreError
from inspector.resume.frameworks import plan
from inspector.store import open_store

ORACLE = json.loads((Path(__file__).parent / "stores" / "crewai_flows_oracle.json").read_text())


@pytest.mark.parametrize("name", ["crewai_flows.db", "crewai_both.db"])
def test_every_saved_state_is_the_state_crewai_reads_back(store_copy, name: str) -> None:
    """A run per flow, a checkpoint per saved state named by its method, and each checkpoint's
    state what crewai's ``load_state`` answered right after that state was saved."""
    expected = ORACLE[name]
    with open_store(store_copy(name)) as store:
        assert store.info.kind == "crewai"
        flows = {r.id: r for r in store.list_runs() if r.agent == "crewai flow"}
        assert flows.keys() == expected.keys()
        for flow, saves in expected.items():
            assert [c.name for c in store.list_checkpoints(flow)] == [method for method, _state in saves]
            for seq, (method, state) in enumerate(saves):
                snap = store.load(f"{flow}:{seq}")
                assert snap.state == state and snap.meta["method"] == method and not snap.problems
            assert not flows[flow].resumable and "kickoff(inputs=" in str(flows[flow].not_resumable_reason)


def test_a_flow_kicked_off_again_goes_on_in_its_run_and_diffs_show_the_change(store_copy) -> None:
    """crewai restores a flow's latest state for ``kickoff(inputs={"id": …})``: its new saves follow
    in the same run, and a diff across the two kickoffs shows what the second one changed."""
    flow = next(f for f, saves in ORACLE["crewai_flows.db"].items() if len(saves) == 6)
    with open_store(store_copy("crewai_flows.db")) as store:
        cps = store.list_checkpoints(flow)
        assert [c.name for c in cps] == ["research", "outline", "draft"] * 2
        assert cps[1].change == "outline · changed: outline" and cps[3].change == "research · no change"
        result = diff_checkpoints(store, f"{flow}:2", f"{flow}:5")
        assert [(c.path, c.old, c.new) for c in result.changes] == [(("words",), 360, 720)]
        assert store.load(f"{flow}:-1").state == ORACLE["crewai_flows.db"][flow][-1][1]


def test_flow_states_are_read_only_and_say_so(store_copy) -> None:
    """crewai resumes a flow only through the user's Flow class: a flows file offers neither fork
    nor resume, and a flow in a file with crew checkpoints refuses them while its crew offers them."""
    with open_store(store_copy("crewai_flows.db")) as store:
        caps = store.info.capabilities
        assert not caps.fork.available and not caps.resume.available and "read-only" in caps.resume.reason
        flow = next(iter(ORACLE["crewai_flows.db"]))
        with pytest.raises(StoreError, match="read-only"):
            plan(store, f"{flow}:-1", "resume")
    with open_store(store_copy("crewai_both.db")) as store:
        assert store.info.capabilities.resume.available and "flow states" in store.info.label
        crew = store.get_run("main")
        assert crew.checkpoint_count == 3 and crew.tasks_total == 3 and crew.resumable
        assert plan(store, "main:-1", "resume", cwd="/tmp").action == "resume"
        flow = next(iter(ORACLE["crewai_both.db"]))
        for action in ("resume", "fork"):
            with pytest.raises(NotResumableError, match="YourFlow"):
                plan(store, f"{flow}:0", action, cwd="/tmp")


def test_a_flow_paused_for_human_feedback_is_interrupted(store_copy) -> None:
    """A flow whose feedback provider deferred (crewai saved its state and a pending_feedback row)
    is interrupted, saying what it waits for; its saved states read as any other."""
    flow = next(f for f, saves in ORACLE["crewai_flows.db"].items() if saves[-1][0] == "review")
    with open_store(store_copy("crewai_flows.db")) as store:
        run = store.get_run(flow)
        assert run.status == "interrupted"
        assert run.last_error == "waiting for human feedback on 'review': Are the facts right?"
        assert store.load(f"{flow}:-1").state == ORACLE["crewai_flows.db"][flow][-1][1]
        others = [r for r in store.list_runs() if r.id != flow]
        assert others and all(r.status != "interrupted" for r in others)


def test_a_saved_state_crewai_cannot_decode_is_reported(store_copy) -> None:
    """A state_json that is not UTF-8 (crewai's own read fails on it) is reported, not shown."""
    path = store_copy("crewai_flows.db")
    store_copy.modified = True
    flow = next(f for f, saves in ORACLE["crewai_flows.db"].items() if len(saves) == 3)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE flow_states SET state_json = CAST(x'7b22ff223a317d' AS TEXT) "
                 "WHERE id = (SELECT MIN(id) FROM flow_states WHERE flow_uuid = ?)", (flow,))
    conn.commit()
    conn.close()
    with open_store(path) as store:
        assert "not UTF-8" in store.get_run(flow).damaged
        assert "not UTF-8" in store.list_checkpoints(flow)[0].damaged
        first = store.load(f"{flow}:0")
        assert "not UTF-8" in first.state["__opaque__"] and "not UTF-8" in first.problems[0]
        assert not store.load(f"{flow}:1").problems   # each saved state is whole: the next one is fine
