"""Mistakes a user makes at the command line get one sentence and exit 2 (Ctrl-C: 130), never
a traceback or argparse's usage block."""

from __future__ import annotations

from pathlib import Path

import pytest

import inspector.cli
from inspector.cli import main


def test_ctrl_c_while_a_command_loads_is_one_sentence(monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture) -> None:
    def interrupted(only: str | None = None) -> None:
        raise KeyboardInterrupt      # as a SIGINT landing while the command's modules import
    monkeypatch.setattr(inspector.cli, "build_parser", interrupted)
    assert main(["prune", "store.db", "--keep-last", "5"]) == 130
    assert capsys.readouterr().err == "checkpoint-inspector: interrupted.\n"


@pytest.mark.parametrize("argv, words", [
    (["diff", "STORE", "a:0"], "required: B"),
    (["prune", "STORE", "--keep-last", "abc"], "invalid int value: 'abc'"),
    (["fork", "STORE", "a:1"], "required: --reason"),
    (["show", "STORE", "-1:-1"], "goes after '--'"),
])
def test_a_wrong_command_line_is_one_sentence(argv: list[str], words: str, tmp_path: Path,
                                              capsys: pytest.CaptureFixture) -> None:
    argv = [str(tmp_path / "store.db") if a == "STORE" else a for a in argv]
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and err.count("\n") == 1 and words in err, err
    assert err.startswith(f"checkpoint-inspector {argv[0]}: ") and err.rstrip().endswith("--help).")
