"""A fork's own resume command: prefilled, edited, stored; flags its edit contradicts are named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector import cli
from inspector.errors import StoreError
from inspector.resume.fork import fork
from inspector.resume.fork_spec import (contradicted_flags, edited_keys, fork_spec, flag_name,
                                        parse_argv_option, without_arguments)
from inspector.resume.resume import plan_resume, start_resume
from inspector.store import open_store
from tests.conftest import store_files_digest
from tests.resume.helpers import copy_store, run_agent
from tests.store.langgraph.lg_graphs import make_database


@pytest.fixture(scope="module")
def approved_master(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A completed demo run started with --approve-first (seed 2)."""
    store = tmp_path_factory.mktemp("forkspec") / "s.db"
    assert run_agent(store, "--seed", "2", "--approve-first") == 0
    return store


@pytest.fixture
def approved(approved_master: Path, tmp_path: Path) -> Path:
    return copy_store(approved_master, tmp_path / "s.db")


def _run(store: Path):
    with open_store(store) as st:
        return st.list_runs()[0]


def test_flag_names_and_conflicts() -> None:
    assert flag_name("--approve-first") == "approve_first"
    assert flag_name("--no-approve-first=1") == "approve_first"
    assert flag_name("-v") == "v" and flag_name("-3") is None and flag_name("x") is None
    assert flag_name("--") is None
    argv = ["python", "--approve-first", "--seed", "2", "--Approve_First"]
    found = contradicted_flags(argv, ["approve_first", "budget"])
    assert [(c.index, c.flag, c.key) for c in found] == [(1, "--approve-first", "approve_first"),
                                                         (4, "--Approve_First", "approve_first")]
    assert contradicted_flags(["--approve-first"], ["approve_first"]) == ()   # the program itself
    assert without_arguments(argv, found) == ["python", "--seed", "2"]


def test_edited_keys_name_the_key_nearest_each_change() -> None:
    old = {"approve_first": True, "budget": {"total": 1}, "messages": [{"content": "a"}], "same": 1}
    new = {"approve_first": False, "budget": {"total": 2}, "messages": [{"content": "b"}], "same": 1}
    assert set(edited_keys(old, new)) == {"approve_first", "total", "messages"}
    assert edited_keys(old, old) == ()


def test_fork_spec_merges_and_validates() -> None:
    original = {"argv": ["py", "--approve-first"], "cwd": "/w", "env": {"A": "1", "B": "2"}, "inherit": ["TOKEN"]}
    spec = fork_spec(original, argv=["py"], env={"C": "3"}, unset_env=["A"])
    assert spec == {"argv": ["py"], "cwd": "/w", "env": {"B": "2", "C": "3"}, "inherit": ["TOKEN"]}
    assert original["argv"] == ["py", "--approve-first"]            # the original is not touched
    assert fork_spec(original) == original and fork_spec(None) is None
    with pytest.raises(StoreError, match="no resume command"):
        fork_spec(None, cwd="/x")
    with pytest.raises(StoreError):
        fork_spec(original, argv=[])
    with pytest.raises(StoreError, match="variable name"):
        fork_spec(original, env={"A=B": "1"})
    assert parse_argv_option('["a b", "c"]') == ["a b", "c"]
    assert parse_argv_option("py -m 'x y'") == ["py", "-m", "x y"]


def test_fork_stores_its_own_spec_and_resume_launches_it(approved: Path) -> None:
    run = _run(approved)
    argv = [a for a in run.resume_spec["argv"] if a != "--approve-first"]
    with open_store(approved, readonly=False) as st:
        child = fork(st, f"{run.id}:5", reason="review for real", state={**st.load(f"{run.id}:5").state,
                                                                          "approve_first": False},
                     resume_spec={**run.resume_spec, "argv": argv})
        plan = plan_resume(st, f"{child.id}:-1")
        assert list(plan.argv) == argv                      # the Resume dialog is built from the fork's spec
        launch = start_resume(st, plan)
        assert list(launch.argv) == argv
        assert st.get_run(run.id).resume_spec == run.resume_spec


def test_resume_from_an_old_checkpoint_forks_with_the_edited_command(approved: Path) -> None:
    run = _run(approved)
    with open_store(approved, readonly=False) as st:
        plan = plan_resume(st, f"{run.id}:4")
        assert plan.mode == "fork"
        argv = [a for a in plan.argv if a != "--approve-first"]
        launch = start_resume(st, plan, argv=argv, env={"X": "1"})
        assert launch.forked
        stored = st.get_run(launch.run_id).resume_spec
    assert stored["argv"] == argv and stored["env"] == {"X": "1"}


def test_cli_dry_run_prints_the_forks_command_and_writes_nothing(approved: Path, capsys) -> None:
    run = _run(approved)
    before = store_files_digest(approved)
    assert cli.main(["fork", str(approved), f"{run.id}:5", "--reason", "r", "--set", "approve_first=false",
                     "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "resume command of the fork:" in out and "--approve-first" in out
    assert "warning: --approve-first" in out and "'approve_first'" in out
    assert cli.main(["fork", str(approved), f"{run.id}:5", "--reason", "r", "--set", "approve_first=false",
                     "--argv", json.dumps(run.resume_spec["argv"][:-3]), "--env", "EXTRA=1", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "warning" not in out and "EXTRA=1" in out
    assert store_files_digest(approved) == before


def test_cli_fork_with_argv_stores_it_and_warns_without(approved: Path, capsys) -> None:
    run = _run(approved)
    argv = [a for a in run.resume_spec["argv"] if a != "--approve-first"]
    assert cli.main(["fork", str(approved), f"{run.id}:5", "--reason", "r", "--set", "approve_first=false"]) == 0
    captured = capsys.readouterr()
    assert "warning: the fork's resume command keeps --approve-first" in captured.err
    kept = captured.out.strip()
    assert cli.main(["fork", str(approved), f"{run.id}:5", "--reason", "r", "--set", "approve_first=false",
                     "--argv", json.dumps(argv), "--cwd", str(approved.parent), "--unset-env", "LANG"]) == 0
    captured = capsys.readouterr()
    assert "warning" not in captured.err
    with open_store(approved) as st:
        assert st.get_run(kept).resume_spec["argv"] == run.resume_spec["argv"]
        spec = st.get_run(captured.out.strip()).resume_spec
    assert spec["argv"] == argv and spec["cwd"] == str(approved.parent) and "LANG" not in spec["env"]
    assert cli.main(["fork", str(approved), f"{run.id}:5", "--reason", "r", "--argv", "'open"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_cli_refuses_a_command_for_a_langgraph_fork(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("CHECKPOINT_INSPECTOR_CONFIG_DIR", str(tmp_path / "config"))
    db = make_database(tmp_path / "lg.db")
    before = store_files_digest(db)
    for extra in (["--dry-run"], []):
        assert cli.main(["fork", str(db), "thread-C:-1", "--reason", "x", "--argv", "python x.py", *extra]) == 2
        err = capsys.readouterr().err
        assert "resume command of its own" in err and err.count("\n") == 1
    assert store_files_digest(db) == before
