"""A resume spec with shell metacharacters runs as literal arguments, never through a shell."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from inspector import cli
from tests.resume.helpers import final_snapshot

AGENT = """\
import sys
from inspector.record import Checkpointer
with Checkpointer(sys.argv[1], name="metachar agent") as cp:
    state = cp.restored_state or {"runs": []}
    state["runs"].append({"argv": sys.argv[2:], "resumed": cp.resumed})
    cp.save(state, kind="final", name="done")
    print("run id", cp.run_id)
"""
NASTY = ["; touch pwned1", "$(touch pwned2)", "`touch pwned3`", "x | touch pwned4",
         "&& touch pwned5", "> pwned6", "*", "'quoted' \"double\"", "$HOME", "a\nb"]


def test_metacharacters_are_literal_arguments(tmp_path: Path, capsys) -> None:
    store = tmp_path / "s.db"
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    first = subprocess.run([sys.executable, str(script), str(store), *NASTY], cwd=tmp_path,
                           capture_output=True, text=True, timeout=60)
    assert first.returncode == 0, first.stderr
    run_id = first.stdout.split()[-1]
    code = cli.main(["resume", str(store), f"{run_id}:-1", "--yes", "--wait"])
    assert code == 0
    out = capsys.readouterr().out
    assert "'; touch pwned1'" in out               # shown shell-quoted, passed literally
    state = final_snapshot(store, run_id).state
    assert state["runs"] == [{"argv": NASTY, "resumed": False}, {"argv": NASTY, "resumed": True}]
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("pwned")) == []
