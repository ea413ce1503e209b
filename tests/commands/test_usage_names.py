"""usage's runs table cuts a long run name with an ellipsis (it was cut at 30 characters
without a mark: 'report: soil carbon (fork of #' read as a whole name)."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.cli import main
from inspector.record import Checkpointer


def test_a_long_run_name_is_cut_with_an_ellipsis(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "s.db"
    long, short = "report: soil carbon (fork of #8 with a longer name)", "short name"
    for name in (long, short):
        with Checkpointer(path, name=name) as cp:
            cp.save({"n": 1})
    assert main(["usage", str(path)]) == 0
    out = capsys.readouterr().out
    assert "report: soil carbon (fork of …" in out and long not in out
    assert f"{short}  " in out and f"{short}…" not in out
