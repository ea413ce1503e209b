"""Diff and value history on what a tester found: an unchanged NaN reported as a change, a
value under an int key missing its first checkpoint, the paths diff prints for keys that are
not strings refused by ``history --path``, and a bytes key told apart from a string key in
``diff --json``. Stores written by the real recording library, the CLI run in-process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.diff.api import diff_values
from inspector.diff.model import format_path, read_path
from inspector.record import Checkpointer


def test_an_unchanged_nan_is_no_change() -> None:
    nan = float("nan")
    assert diff_values({"n": nan, "l": [nan, 1], "d": {"x": nan}},
                       {"n": float("nan"), "l": [float("nan"), 1], "d": {"x": float("nan")}}) == ()
    (change,) = diff_values({"n": nan}, {"n": 1.0})
    assert change.path == ("n",)


def _store(tmp_path: Path) -> tuple[Path, str]:
    store = tmp_path / "keys.db"
    with Checkpointer(store, name="keys") as cp:
        cp.save({"n": float("nan"), 7: "same", 8: "a", b"ab": 3, "6162": 4, (1, "a"): 5, True: 6, None: 0})
        cp.save({"n": float("nan"), 7: "same", 8: "b", b"ab": 33, "6162": 4, (1, "a"): 55, True: 66, None: 0})
    return store, cp.run_id


def _out(capsys: pytest.CaptureFixture, *args: str) -> str:
    assert main(list(args)) == 0
    return capsys.readouterr().out


def test_history_of_an_int_key_starts_at_its_first_value(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    store, run = _store(tmp_path)
    out = _out(capsys, "history", str(store), run, "--path", "[7]")
    assert "[7] changed at 1 checkpoint" in out and "+ [7] = 'same'" in out
    out = _out(capsys, "history", str(store), run, "--path", "[8]")
    assert "+ [8] = 'a'" in out and "~ [8]: 'a' → 'b'" in out
    out = _out(capsys, "history", str(store), run, "--path", "n")
    assert "n changed at 1 checkpoint" in out and "nan →" not in out


def test_history_takes_the_paths_diff_prints(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    store, run = _store(tmp_path)
    printed = [line.split(":")[0].strip("~ ") for line in _out(capsys, "diff", str(store), f"{run}:0", f"{run}:1")
               .splitlines() if line.startswith("  ~ ")]
    assert set(printed) == {"[8]", "[b'ab']", "[(1, 'a')]", "[True]"}
    for path in printed:
        out = _out(capsys, "history", str(store), run, "--path", path)
        assert f"{path} changed at 2 checkpoints" in out, out


def test_diff_json_tells_a_bytes_key_from_a_string_key(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    store = tmp_path / "bytes.db"
    with Checkpointer(store, name="keys") as cp:
        cp.save({b"ab": 1, "6162": 1})
        cp.save({b"ab": 2, "6162": 2})
    data = json.loads(_out(capsys, "diff", str(store), f"{cp.run_id}:0", f"{cp.run_id}:1", "--json"))
    assert sorted(c["path"][0] for c in data["changes"]) == ["6162", "6162 (bytes)"]


@pytest.mark.parametrize("path", [("a", 1, "b"), (7,), (b"x]", "c"), ((1, ("a", None)),), (True, 1.5, None)])
def test_a_printed_path_reads_back(path: tuple) -> None:
    assert read_path(format_path(path)) == path


@pytest.mark.parametrize("text", ["[__import__('os')]", "[[1]]", "[{1: 2}]", "a..b", "[1", ".a"])
def test_what_is_not_a_printed_path_is_none(text: str) -> None:
    assert read_path(text) is None
