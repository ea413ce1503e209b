"""One reference syntax in every command: RUN:SEQ with ids, id prefixes or names; statuses as the GUI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.store import open_store
from tests.conftest import store_files_digest


def _run(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def _demo_runs(path: Path) -> dict[str, object]:
    with open_store(path) as store:
        runs = store.list_runs()
    return {
        "fork": next(r for r in runs if r.parent_run),
        "failed": next(r for r in runs if r.status == "failed"),
        "crashed": next(r for r in runs if r.labels.get("crash_at") or "river" in r.name),
        "original": next(r for r in runs if any(f.parent_run == r.id for f in runs)),
    }


def test_runs_prints_a_forks_parent_as_a_ref_show_accepts(demo_store: Path, capsys) -> None:
    runs = _demo_runs(demo_store)
    fork = runs["fork"]
    code, out, _ = _run(capsys, "runs", str(demo_store), "--json")
    listed = {r["id"]: r for r in json.loads(out)}
    parent = listed[fork.id]["parent"]
    with open_store(demo_store) as store:
        source = store.get_checkpoint(fork.parent_checkpoint)
    assert parent == f"{fork.parent_run}:{source.seq}" and source.seq != source.id
    code, out, _ = _run(capsys, "show", str(demo_store), parent, "--json")
    assert code == 0 and json.loads(out)["checkpoint"]["id"] == source.id
    _, table, _ = _run(capsys, "runs", str(demo_store))
    row = next(line for line in table.splitlines() if line.startswith(fork.id))
    assert parent in row.split()


def test_runs_shows_a_dead_running_run_as_crashed(demo_store: Path, capsys) -> None:
    crashed = _demo_runs(demo_store)["crashed"]
    assert crashed.status == "running"      # as written: its process was killed
    _, out, _ = _run(capsys, "runs", str(demo_store), "--json")
    shown = next(r for r in json.loads(out) if r["id"] == crashed.id)
    assert shown["status"] == "crashed" and shown["stored_status"] == "running"
    _, out, _ = _run(capsys, "runs", str(demo_store), "--status", "crashed")
    assert crashed.id in out and "running" not in out


def test_every_command_takes_names_prefixes_and_negative_seqs(demo_store: Path, capsys) -> None:
    original = _demo_runs(demo_store)["original"]
    with open_store(demo_store) as store:
        head = store.get_checkpoint(f"{original.id}:-1")
        second = store.get_checkpoint(f"{original.id}:-2")
    for ref in (original.id[:5], original.name):
        code, out, _ = _run(capsys, "checkpoints", str(demo_store), ref, "--json")
        assert code == 0 and len(json.loads(out)) == original.checkpoint_count
        code, out, _ = _run(capsys, "show", str(demo_store), f"{ref}:-2", "--json")
        assert code == 0 and json.loads(out)["checkpoint"]["id"] == second.id
        if not ref.isdigit():   # a bare number is a checkpoint id first
            code, out, _ = _run(capsys, "show", str(demo_store), ref, "--json")   # a run alone: its head
            assert json.loads(out)["ref"] == f"{original.id}:{head.seq}"
    code, out, _ = _run(capsys, "diff", str(demo_store), f"{original.id[:6]}:3", f"{original.name}:-1")
    assert code == 0
    first = out.splitlines()[0]
    assert first.startswith(f"diff {original.id}:3 → {original.id}:{head.seq}")
    assert "#" not in first        # '#N' only ever means a seq, and ids are not seqs


def test_refs_that_do_not_resolve_are_one_sentence(demo_store: Path, capsys) -> None:
    name = _demo_runs(demo_store)["original"].name
    code, _, _ = _run(capsys, "fork", str(demo_store), f"{name}:2", "--reason", "twin", "--name", name)
    assert code == 0     # now two runs have this name
    for ref, words in (("#8", "is a seq without its run"), (f"{name}:3", "matches 2 run names"),
                       ("nope:1", "There is no run 'nope'"), ("zzz", "There is no run or checkpoint 'zzz'")):
        code, _, err = _run(capsys, "show", str(demo_store), ref)
        assert code == 2 and words in err and "Traceback" not in err and err.count("\n") == 1


def test_a_part_of_one_runs_name_is_enough_in_any_case(demo_store: Path, capsys) -> None:
    runs = _demo_runs(demo_store)
    failed, original = runs["failed"], runs["original"]
    word = failed.name.split()[-1].upper()          # 'report: e-bike logistics' → 'LOGISTICS'
    code, out, _ = _run(capsys, "show", str(demo_store), f"{word}:2", "--json")
    assert code == 0 and json.loads(out)["ref"] == f"{failed.id}:2"
    topic = original.name.split(": ")[1]             # in the original's name and its fork's
    code, _, err = _run(capsys, "show", str(demo_store), topic)
    assert code == 2 and f"{topic!r} matches 2 run names" in err and repr(original.name) in err
    assert original.id in err and err.count("\n") == 1
    code, out, _ = _run(capsys, "show", str(demo_store), f"{original.name}:-1", "--json")
    assert code == 0 and json.loads(out)["ref"].startswith(original.id)   # the exact name wins


def test_show_puts_a_failed_runs_error_first(demo_store: Path, capsys) -> None:
    failed = _demo_runs(demo_store)["failed"]
    code, out, _ = _run(capsys, "show", str(demo_store), f"{failed.id}:-1")
    lines = out.splitlines()
    assert code == 0 and failed.last_error
    assert lines[1].startswith(f"run {failed.id}") and "failed" in lines[1]
    assert lines[2] == f"error: {failed.last_error}"


def test_fork_dry_run_prints_the_edit_and_writes_nothing(demo_store: Path, capsys) -> None:
    original = _demo_runs(demo_store)["original"]
    before = store_files_digest(demo_store)
    code, out, _ = _run(capsys, "fork", str(demo_store), f"{original.name}:4", "--reason", "try",
                        "--set", 'topic="bees"', "--dry-run")
    assert code == 0
    assert f"would fork {original.id}:4" in out and '~ topic: "urban beekeeping" → "bees"' in out
    assert "nothing was written" in out
    assert store_files_digest(demo_store) == before
    code, _, err = _run(capsys, "fork", str(demo_store), f"{original.id}:4", "--reason", "x",
                        "--set", "topic=not json", "--dry-run")
    assert code == 2 and "Traceback" not in err and store_files_digest(demo_store) == before
    code, out, _ = _run(capsys, "fork", str(demo_store), f"{original.id[:4]}:-1", "--reason", "real")
    assert code == 0
    with open_store(demo_store) as store:
        made = store.get_run(out.strip())
        assert made.parent_run == original.id
        assert store.get_checkpoint(made.parent_checkpoint).seq == original.head_seq


def test_show_gives_an_interrupted_runs_reason_as_a_reason_not_an_error(demo_store: Path, capsys) -> None:
    with open_store(demo_store) as store:
        paused = next(r for r in store.list_runs() if r.status == "interrupted")
    code, out, _ = _run(capsys, "show", str(demo_store), f"{paused.id}:-1")
    assert code == 0 and paused.last_error     # the demo agent stops it "waiting for a human"
    assert out.splitlines()[2] == f"reason: {paused.last_error}"


def test_a_thread_whose_id_starts_with_a_dash_is_given_after_two_dashes(tmp_path: Path, capsys) -> None:
    """LangGraph takes any thread id, "-1" too; argparse takes such a reference for an option
    and said only that a positional was missing. The message says how to give it, and that way
    works."""
    import sqlite3
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, StateGraph
    from typing_extensions import TypedDict

    class State(TypedDict):
        n: int

    path = tmp_path / "lg.sqlite"
    conn = sqlite3.connect(path, check_same_thread=False)
    graph = StateGraph(State)
    graph.add_node("step", lambda s: {"n": s["n"] + 1})
    graph.add_edge(START, "step")
    graph.add_edge("step", END)
    graph.compile(checkpointer=SqliteSaver(conn)).invoke({"n": 0}, {"configurable": {"thread_id": "-1"}})
    conn.close()
    with pytest.raises(SystemExit) as stopped:
        main(["show", str(path), "-1:-1"])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and "'-1:-1' was taken for an option" in err and "show STORE -- -1:-1" in err
    code, out, err = _run(capsys, "show", str(path), "--json", "--", "-1:-1")
    assert code == 0, err
    assert json.loads(out)["state"]["n"] == 1
    with pytest.raises(SystemExit):
        main(["show", str(path)])
    assert "taken for an option" not in capsys.readouterr().err      # nothing dashed: argparse's own words
