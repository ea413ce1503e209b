"""Mistakes a user makes at the command line get one sentence and exit 2 (Ctrl-C: 130), never
a traceback or argparse's usage block."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import inspector.cli
from inspector.cli import main
from tests.store.langgraph.conftest import lg_master  # noqa: F401  (fixture: real LangGraph threads)


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


# -- a recorded store: options that do not apply, references, values out of range ---------------
@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    """A native store with two runs recorded by the real recording library."""
    from inspector.record import Checkpointer
    path = tmp_path / "agent.db"
    for name in ("nightly report", "weekly digest"):
        with Checkpointer(path, name=name, agent="writer") as cp:
            for step in range(4):
                cp.save({"step": step, "notes": ["x"] * step}, kind="tool", name=f"step{step}")
    return path


@pytest.mark.parametrize("argv, words", [
    (["fork", "STORE", "nightly:1", "--reason", "r", "--graph", "m:g"], "--graph is only for LangGraph stores"),
    (["fork", "STORE", "nightly:1", "--reason", "r", "--raw"], "--raw is only for LangGraph stores"),
    (["fork", "STORE", "nightly:1", "--reason", "r", "--as-node", "n"], "--as-node is only for LangGraph stores"),
    (["fork", "STORE", "nightly:1", "--reason", "r", "--python", "/x"], "--python is only for framework stores"),
    (["fork", "STORE", "nightly:1", "--reason", "r", "--branch", "b"], "--branch is only for framework stores"),
    (["fork", "STORE", "nightly:1", "--reason", "r", "--wait"], "--wait is only for framework stores"),
    (["fork", "STORE", "nightly:1", "--reason", "r", "--cwd", "/no/such/dir"], "'/no/such/dir' does not exist"),
    (["resume", "STORE", "nightly", "--answer", "{bad", "--yes"], "--answer is only for LangGraph stores"),
    (["resume", "STORE", "nightly", "--cwd", "/tmp", "--yes"], "--cwd is only for framework stores"),
    (["prune", "STORE", "--keep-last", "1", "--backup", "b.db"], "--backup is only for LangGraph databases"),
    (["delete", "STORE", "nightly", "--langgraph-write"], "--langgraph-write is only for LangGraph databases"),
    (["prune", "STORE", "--keep-last", "1", "--run", "no such run"], "There is no run 'no such run'"),
    (["prune", "STORE", "--keep-last", "1", "--status", "bogus"], "'bogus' is not a run status"),
    (["usage", "STORE", "no such run"], "There is no run 'no such run'"),
    (["demo", "--store", "STORE", "--no-gui", "--screenshot", "x.png"], "--no-gui only builds the store"),
    # a URL was taken for a path: a SQLite file under ./postgresql+psycopg:/… and exit 0
    (["demo", "--store", "postgresql+psycopg://u@127.0.0.1:1/db", "--no-gui"], "give --store a file path"),
])
def test_what_does_not_apply_is_refused_and_nothing_runs_or_changes(recorded: Path, argv: list[str], words: str,
                                                                     tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from tests.conftest import store_files_digest
    before = store_files_digest(recorded)
    argv = [str(recorded) if a == "STORE" else str(tmp_path) if a == "DIR" else a for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err, err
    assert store_files_digest(recorded) == before


@pytest.mark.parametrize("argv, words", [
    (["stuck", "STORE", "--threshold", "-5"], "--threshold: -5 is too small"),
    (["diff", "STORE", "nightly:0", "nightly:1", "--limit", "-1"], "--limit: -1 is too small"),
    (["show", "STORE", "nightly:0", "--max-nodes", "-1"], "--max-nodes: -1 is too small"),
    (["show", "STORE", "nightly:0", "--max-depth", "0"], "--max-depth: 0 is too small"),
    (["open", "STORE", "--screenshot", "x.png", "--size", "100000x100000"], "is not a window size"),  # Qt crashed
    (["open", "STORE", "--screenshot", "x.png", "--size", "0x10"], "is not a window size"),
    (["diff", "STORE", "nightly:0", "nightly:1", "--bogus"], "(see checkpoint-inspector diff --help)"),  # (not the top's)
])
def test_a_number_out_of_range_is_one_sentence(recorded: Path, argv: list[str], words: str,
                                               capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as stopped:
        main([str(recorded) if a == "STORE" else a for a in argv])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and err.count("\n") == 1 and words in err, err


def test_runs_are_named_alike_everywhere(recorded: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["usage", str(recorded), "nightly"]) == 0
    assert "checkpoint by checkpoint" in capsys.readouterr().out
    assert main(["prune", str(recorded), "--keep-last", "1", "--run", "weekly", "--json"]) == 0
    import json
    plan = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in plan["runs"]] == ["weekly digest"] and plan["remove_checkpoints"] == 3


def test_stuck_json_holds_checkpoints_as_objects(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    import json
    import os
    import subprocess
    import sys
    path = tmp_path / "crashed.db"
    script = ("import os\nfrom inspector.record import Checkpointer\n"
              f"cp = Checkpointer({str(path)!r}, name='crashy')\ncp.__enter__()\n"
              "cp.save({'n': 1}, kind='tool', name='search')\ncp.save({'n': 2}, kind='llm', name='think')\n"
              "os._exit(9)\n")
    assert subprocess.run([sys.executable, "-c", script], env={**os.environ}).returncode == 9
    assert main(["stuck", str(path), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found[0]["status"] == "crashed"
    assert found[0]["last_checkpoint"]["seq"] == 1 and found[0]["last_checkpoint"]["name"] == "think"
    assert found[0]["last_tool"]["name"] == "search"
    assert main(["usage", str(path)]) == 0
    assert " crashed " in capsys.readouterr().out         # the status runs shows, not the stored "running"
    assert main(["stuck", str(path), "-d"]) == 0
    out = capsys.readouterr().out
    assert out.count("is gone (crashed or killed)") == 1, out     # the reason once, not again as a bullet


def test_an_import_keeps_when_langgraph_wrote_and_a_dry_run_checks_the_destination(
        lg_master: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from inspector.store import open_store
    assert main(["import", str(lg_master), str(tmp_path)]) == 2          # a directory: refused in a dry run too
    assert "is a directory" in capsys.readouterr().err
    copy = tmp_path / "copy.db"
    assert main(["import", str(lg_master), str(copy), "--apply", "--no-verify"]) == 0
    capsys.readouterr()
    with open_store(lg_master) as source, open_store(copy) as imported:
        roots = {r.name: r for r in imported.list_runs() if r.parent_run is None}
        assert sorted(roots) == sorted(r.id for r in source.list_runs())
        for run in source.list_runs():
            theirs = [c.created for c in source.list_checkpoints(run.id) if c.lane == ""]
            mine = roots[run.id]
            assert [c.created for c in imported.list_checkpoints(mine.id)] == pytest.approx(theirs, abs=1e-3)
            assert (mine.created, mine.updated) == pytest.approx((min(theirs), max(theirs)), abs=1e-3)


def test_info_says_whether_you_may_write_the_store(recorded: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture) -> None:
    assert main(["info", str(recorded)]) == 0
    out = capsys.readouterr().out
    assert "· writable by you ·" in out and "fork: yes" in out     # (info itself reads it read-only)
    import inspector.commands.info as info_command
    assert info_command._writable(str(recorded))
    monkeypatch.setattr(info_command, "_writable", lambda target: False)   # as for another user of a 0444 file
    assert main(["info", str(recorded)]) == 0
    out = capsys.readouterr().out
    assert "· read-only for you ·" in out and "fork: no — the store is read-only for you" in out


@pytest.mark.parametrize("argv, words", [
    (["resume", "STORE", "nosuch"], "There is no run or checkpoint 'nosuch'"),
    (["show", "STORE", "nosuch"], "There is no run or checkpoint 'nosuch'"),
    (["show", "STORE", "99999"], "There is no checkpoint 99999"),
    (["history", "STORE", "nightly", "--path", ""], "Give the path of a value"),
])
def test_what_is_not_there_is_named_plainly(recorded: Path, argv: list[str], words: str,
                                            capsys: pytest.CaptureFixture) -> None:
    assert main([str(recorded) if a == "STORE" else a for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err, err


def test_info_on_a_relative_path_that_starts_like_a_url(recorded: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture) -> None:
    import shutil
    shutil.copy(recorded, recorded.parent / "sqlite.db")
    monkeypatch.chdir(recorded.parent)
    assert main(["info", "sqlite.db"]) == 0          # (an IndexError once: taken for a sqlite:/// URL)
    assert "· writable by you ·" in capsys.readouterr().out


def test_show_keeps_keys_that_read_alike(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """{1: …, "1": …} was shown with one entry (JSON keys are text: the second overwrote the first)."""
    import json
    from inspector.record import Checkpointer
    with Checkpointer(tmp_path / "k.db", name="keys") as cp:
        cp.save({"m": {1: "int key", "1": "str key", 2.5: "float key", "2.5": "text", "x": 2}})
    assert main(["show", str(tmp_path / "k.db"), "keys:0", "--json"]) == 0
    state = json.loads(capsys.readouterr().out)["state"]
    assert state["m"] == {"1 (int)": "int key", "1": "str key", "2.5 (float)": "float key", "2.5": "text", "x": 2}


def test_a_path_with_letters_of_any_script_after_a_dot(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    import json
    from inspector.record import Checkpointer
    with Checkpointer(tmp_path / "u.db", name="unicode") as cp:
        cp.save({"nested": {"ünï": "a", "名前": [1, 2]}})
    assert main(["fork", str(tmp_path / "u.db"), "unicode:0", "--reason", "r",
                 "--set", 'nested.ünï="x"', "--set", "nested.名前[1]=5"]) == 0
    fork_run = capsys.readouterr().out.strip()
    assert main(["show", str(tmp_path / "u.db"), f"{fork_run}:-1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["state"]["nested"] == {"ünï": "x", "名前": [1, 5]}


def test_a_huge_keep_last_keeps_everything(recorded: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["prune", str(recorded), "--keep-last", "99999999999999999999"]) == 0   # (OverflowError once)
    assert "Would remove 0 of 8 checkpoints" in capsys.readouterr().out


def test_no_terminal_to_confirm_is_a_usage_mistake(recorded: Path, tmp_path: Path) -> None:
    """Without --yes and without a terminal (a script, a pipe, cron), nothing can be confirmed:
    one sentence and exit 2, as for any other mistake — not 1, the exit of a user declining."""
    import subprocess
    import sys
    from tests.conftest import store_files_digest
    before = store_files_digest(recorded)
    argv = [sys.executable, "-m", "inspector", "resume", str(recorded), "nightly"]
    done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert (done.returncode, done.stderr) == (
        2, "checkpoint-inspector: not confirmed: there is no terminal to ask (pass --yes to run it).\n"), done
    assert store_files_digest(recorded) == before


@pytest.fixture
def crew_folder(tmp_path: Path) -> Path:
    """A copy of the CrewAI JSON store the real crewai wrote (tests/frameworks/stores)."""
    import shutil
    source = Path(__file__).resolve().parents[1] / "frameworks" / "stores" / "crewai_json"
    return Path(shutil.copytree(source, tmp_path / "crewai_json"))


@pytest.mark.parametrize("extra, words", [
    (["--set", "a=1"], "--set is only for native and LangGraph stores"),
    (["--state-file", "s.json"], "--state-file is only for native and LangGraph stores"),
    (["--argv", "python agent.py"], "--argv is only for native stores"),
    (["--env", "A=1"], "--env is only for native stores"),
    (["--name", "n"], "--name is only for native stores"),
    (["--graph", "m:app"], "--graph is only for LangGraph stores"),
    (["--as-node", "n"], "--as-node is only for LangGraph stores"),
])
def test_a_framework_fork_refuses_what_its_command_cannot_do(crew_folder: Path, extra: list[str], words: str,
                                                             capsys: pytest.CaptureFixture) -> None:
    """A framework forks as it is: an edit or a resume command given for it was silently
    dropped (the plan printed and, with --yes, run without it)."""
    def files() -> dict:
        return {p: p.read_bytes() for p in sorted(crew_folder.rglob("*")) if p.is_file()}
    before = files()
    assert main(["fork", str(crew_folder), "main:1", "--reason", "r", "--dry-run", *extra]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err and "is a CrewAI (JSON) store." in err, err
    assert files() == before


def test_framework_runs_are_named_as_everywhere(crew_folder: Path, capsys: pytest.CaptureFixture) -> None:
    """fork and resume of a framework store take a run's name or prefix, RUN:-1 and RUN:#N, as
    every command does (they wanted the exact run id with a seq)."""
    assert main(["fork", str(crew_folder), "retry:-1", "--reason", "r", "--dry-run"]) == 0
    assert "Dry run: nothing was run or written" in capsys.readouterr().out
    assert main(["fork", str(crew_folder), "ma:#1", "--reason", "r", "--dry-run"]) == 0
    assert "main:1" in capsys.readouterr().out
    assert main(["show", str(crew_folder), "main:#1"]) == 0
    assert capsys.readouterr().out.startswith("checkpoint main:1")


@pytest.mark.parametrize("blocked, argv, words", [
    ("psycopg", ["runs", "postgresql://nobody@127.0.0.1:1/none"], "needs the psycopg driver: install the package's postgres extra"),
    ("deepdiff", ["bench", "diff"], "needs the deepdiff package, which is not installed: install the package's bench extra"),
])
def test_an_optional_extra_not_installed_is_one_sentence(blocked: str, argv: list[str], words: str) -> None:
    """After the README's ``pip install -e .`` alone, a PostgreSQL URL or a benchmark needing
    an extra printed a ModuleNotFoundError traceback (exit 1)."""
    import subprocess
    import sys
    script = (f"import sys; sys.modules[{blocked!r}] = None\n"     # as if it were not installed
              f"from inspector.cli import main; raise SystemExit(main({argv!r}))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and words in done.stderr, done.stderr


def test_runs_refuses_a_status_that_is_none_and_takes_them_comma_separated(demo_store, capsys) -> None:
    from inspector import cli

    assert cli.main(["runs", str(demo_store), "--status", "bogus"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["checkpoint-inspector: 'bogus' is not a run status (use running, completed, failed, crashed, "
                   "interrupted, stuck, forked)."]
    assert cli.main(["runs", str(demo_store), "--json", "--status", "completed,failed"]) == 0
    both = json.loads(capsys.readouterr().out)
    assert cli.main(["runs", str(demo_store), "--json", "--status", "completed", "--status", "failed"]) == 0
    assert json.loads(capsys.readouterr().out) == both and {r["status"] for r in both} == {"completed", "failed"}
