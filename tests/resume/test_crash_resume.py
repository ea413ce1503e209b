"""A demo agent SIGKILLed at step 7 is diagnosed as crashed and resumed to the same end."""

from __future__ import annotations

import signal
from pathlib import Path

from inspector import cli
from inspector.demo.steps import PLAN
from inspector.resume.stuck import diagnose, diagnose_many
from inspector.store import open_store
from tests.resume.helpers import final_snapshot, run_agent


def test_crashed_run_is_diagnosed_and_resumed_to_the_same_final_state(tmp_path: Path, capsys) -> None:
    store = tmp_path / "s.db"
    assert run_agent(store, "--seed", "3", "--name", "reference") == 0
    assert run_agent(store, "--seed", "3", "--name", "crashy", "--crash-at", "7") == -signal.SIGKILL
    with open_store(store) as st:
        crashed = next(r for r in st.list_runs() if r.name == "crashy")
        reference = next(r for r in st.list_runs() if r.name == "reference")
        assert crashed.status == "running" and crashed.head_seq == 6
        diag = diagnose(st, crashed)
        assert diag is not None and diag.status == "crashed"
        assert any("is gone" in r for r in diag.reasons)
        assert diag.suggested_checkpoint.seq == 6 and diag.last_checkpoint.seq == 6
        assert diag.last_tool is not None and diag.last_tool.name == "write_file outline.md"
        assert "#6" in diag.summary
        assert set(diagnose_many(st, st.list_runs())) == {crashed.id}

    code = cli.main(["resume", str(store), f"{crashed.id}:-1", "--yes", "--wait"])
    out = capsys.readouterr().out
    assert code == 0
    assert "continue run " + crashed.id in out and "--crash-at 7" in out

    done, ref = final_snapshot(store, crashed.id), final_snapshot(store, reference.id)
    assert done.info.kind == "final"
    assert done.state == ref.state and done.tasks == ref.tasks
    assert done.state["log"] == [step.name for step in PLAN]      # no completed step ran twice
    workspace = store.parent / "workspaces"
    actions = (workspace / crashed.id / "actions.log").read_text()
    assert actions == (workspace / reference.id / "actions.log").read_text()
    with open_store(store) as st:
        run = st.get_run(crashed.id)
        cps = st.list_checkpoints(crashed.id)
    assert run.status == "completed" and run.epoch == 2
    assert [c.seq for c in cps] == list(range(len(cps)))
    assert cps[7].kind == "resume" and cps[7].name == "resumed from #6"
    assert [c.name for c in cps if c.kind not in ("input", "resume", "final")] == [s.name for s in PLAN]
    with open_store(store) as st:
        assert diagnose_many(st, st.list_runs()) == {}
