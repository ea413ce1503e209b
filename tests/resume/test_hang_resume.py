"""A hung agent is diagnosed stuck; a resume takes ownership and fences the hung process off."""

from __future__ import annotations

from pathlib import Path

from inspector.demo.agent import EXIT_OWNERSHIP_LOST
from inspector.resume.resume import CONTINUE, plan_resume, resume_checkpoint
from inspector.resume.stuck import diagnose
from inspector.store import open_store
from tests.resume.helpers import read_until, start_agent, wait_for


def test_hung_agent_is_fenced_off_when_resumed(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    hung = start_agent(store, "--seed", "2", "--hang-at", "5", "--hang-for", "4", "--heartbeat", "0.1")
    try:
        read_until(hung, "hanging before step 5")
        with open_store(store) as st:
            run = st.list_runs()[0]
            # no heartbeat for more than a second: stuck (the process still exists)
            diag = wait_for(lambda: diagnose(st, run.id, heartbeat_threshold=1.0), what="stuck diagnosis")
        assert diag.status == "stuck" and diag.owner.state == "silent"
        assert "no heartbeat" in diag.reasons[0] and diag.suggested_checkpoint.seq == 4

        with open_store(store, readonly=False) as st:
            plan = plan_resume(st, f"{run.id}:-1", heartbeat_threshold=1.0)
            assert plan.mode == CONTINUE and "fenced off" in plan.why
            outcome = resume_checkpoint(st, f"{run.id}:-1", heartbeat_threshold=1.0, wait=True)
        assert outcome.returncode == 0 and outcome.launch.epoch == 2
        assert hung.wait(timeout=60) == EXIT_OWNERSHIP_LOST
        assert "taken over by another process" in hung.stderr.read()
    finally:
        if hung.poll() is None:
            hung.kill()
            hung.wait()
    with open_store(store) as st:
        final = st.get_run(run.id)
        cps = st.list_checkpoints(run.id)
        epochs = [_epoch(store, c.id) for c in cps]
    assert final.status == "completed" and final.epoch == 2
    assert [c.seq for c in cps] == list(range(len(cps)))
    resume_at = next(i for i, c in enumerate(cps) if c.kind == "resume")
    assert resume_at == 5                         # input + 4 steps, then the resume
    assert epochs == [1] * resume_at + [2] * (len(cps) - resume_at)   # no interleaved writes
    assert cps[-1].kind == "final"


def _epoch(store: Path, checkpoint_id: int) -> int:
    import sqlite3
    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        return con.execute("SELECT epoch FROM ci_checkpoints WHERE id = ?", (checkpoint_id,)).fetchone()[0]
    finally:
        con.close()
