"""LangGraph values whose type is all that tells them apart: NaN and the infinities against their
text ("nan", "inf"), an int map key against its text (101 and "101", 1 beside "1").

A real graph writes a real ``SqliteSaver`` file; ``show``, ``diff`` (the CLI, as a user runs
it) and the adapter's state must tell such values apart exactly as LangGraph's own
``get_state_history`` does, and present them as native stores do (``NaN``/``Infinity`` in
``--json``, ``"1 (int)"`` beside ``"1"``). A fork that edits an int-keyed map, through the
CLI, must keep the keys ints, as LangGraph's ``update_state`` does.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from collections.abc import Iterator
from typing import Any

import pytest

from inspector import cli
from inspector.highlight.jsontext import to_json_text
from inspector.resume.edits import EditError, apply_assignments, restore_keys, set_path
from inspector.resume.langgraph import fork_langgraph
from inspector.store import open_store
from inspector.codec.exact import canonical
from inspector.store.langgraph.edit import merge_edit, runner_form
from inspector.store.langgraph.decode import pack, plain_or_error, unpack

from . import copy_sqlite, sqlite_saver

GRAPH = '''
from typing_extensions import TypedDict
from langgraph.graph import StateGraph, START


class S(TypedDict):
    scores: dict
    mixed: dict
    limit: object
    score: object
    note: str


def build(checkpointer=None):
    g = StateGraph(S)
    g.add_node("score", lambda s: {"scores": {101: 0.5, 202: 0.9}, "mixed": {1: "int-one", "1": "str-one"},
                                   "limit": "inf", "score": "nan", "note": "scored"})
    g.add_node("tune", lambda s: {"mixed": {1: "CHANGED", "1": "str-one"}, "limit": float("inf"),
                                  "score": float("nan"), "note": "tuned"})
    g.add_node("rank", lambda s: {"note": "best=%s types=%s" % (
        max(s["scores"], key=s["scores"].get), ",".join(sorted({type(k).__name__ for k in s["scores"]})))})
    g.add_edge(START, "score")
    g.add_edge("score", "tune")
    g.add_edge("tune", "rank")
    return g.compile(checkpointer=checkpointer)


def build_scores(checkpointer=None):
    """Only the int-keyed map (the thread "s")."""
    g = StateGraph(S)
    g.add_node("score", lambda s: {"scores": {101: 0.5, 202: 0.9}, "note": "scored"})
    g.add_node("rank", lambda s: {"note": "best=%s types=%s" % (
        max(s["scores"], key=s["scores"].get), ",".join(sorted({type(k).__name__ for k in s["scores"]})))})
    g.add_edge(START, "score")
    g.add_edge("score", "rank")
    return g.compile(checkpointer=checkpointer)
'''
MODULE = "typed_keys_graph"
START = {"scores": {}, "mixed": {}, "limit": 0, "score": 0, "note": ""}
SCORED, TUNED = "t:2", "t:3"       # the checkpoints after the nodes score and tune


@pytest.fixture(scope="module")
def graph_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A folder holding the graph's module (importable here and by the runner)."""
    folder = tmp_path_factory.mktemp("typed_keys")
    (folder / f"{MODULE}.py").write_text(GRAPH)
    sys.path.insert(0, str(folder))
    try:
        yield folder
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop(MODULE, None)


def _build(checkpointer: Any, name: str = "build") -> Any:
    import importlib
    return getattr(importlib.import_module(MODULE), name)(checkpointer)


@pytest.fixture(scope="module")
def master(graph_dir: Path) -> Path:
    """The threads ``t`` (graph ``build``) and ``s`` (``build_scores``) run to their end by LangGraph."""
    path = graph_dir / "master.db"
    with sqlite_saver(path) as saver:
        _build(saver).invoke(START, {"configurable": {"thread_id": "t"}})
        _build(saver, "build_scores").invoke(START, {"configurable": {"thread_id": "s"}})
    return path


@pytest.fixture
def db(master: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CHECKPOINT_INSPECTOR_CONFIG_DIR", str(tmp_path / "config"))
    return copy_sqlite(master, tmp_path / "t.db")


def _history(path: Path) -> dict[int, dict]:
    """LangGraph's own values of every checkpoint of ``t``, by step."""
    with sqlite_saver(path) as saver:
        return {s.metadata["step"]: s.values for s in _build(saver).get_state_history({"configurable": {"thread_id": "t"}})}


def _head(path: Path, thread: str = "t") -> dict:
    with sqlite_saver(path) as saver:
        graph = _build(saver, "build" if thread == "t" else "build_scores")
        return graph.get_state({"configurable": {"thread_id": thread}}).values


def _langgraph_fork_and_resume(path: Path, thread: str, step: int, values: dict, as_node: str) -> dict:
    """LangGraph's own fork (``update_state``) of ``thread`` at ``step`` and resume: the oracle."""
    with sqlite_saver(path) as saver:
        graph = _build(saver, "build" if thread == "t" else "build_scores")
        source = next(s for s in graph.get_state_history({"configurable": {"thread_id": thread}})
                      if s.metadata["step"] == step)
        graph.invoke(None, graph.update_state(source.config, values, as_node=as_node))
    return _head(path, thread)


def _cli_json(capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    assert cli.main(list(args)) == 0
    return json.loads(capsys.readouterr().out)


def test_the_state_holds_what_langgraph_holds_type_for_type(db: Path) -> None:
    history = _history(db)
    with open_store(db) as store:
        for step in (1, 2, 3):
            state = store.load(f"t:{step + 1}").state
            assert canonical(state) == canonical(history[step]), step
    assert math.isnan(history[2]["score"]) and history[2]["limit"] == math.inf


def test_show_json_writes_non_finite_floats_as_native_stores_do(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = _cli_json(capsys, "show", str(db), SCORED, "--json")["state"]
    after = _cli_json(capsys, "show", str(db), TUNED, "--json")["state"]
    assert (before["limit"], before["score"]) == ("inf", "nan")
    assert (after["limit"], after["score"]) == ("Infinity", "NaN")
    assert before["mixed"] == {"1 (int)": "int-one", "1": "str-one"}
    assert after["mixed"] == {"1 (int)": "CHANGED", "1": "str-one"}


def test_diff_sees_text_become_a_float_and_an_int_key_change(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    changes = _cli_json(capsys, "diff", str(db), SCORED, TUNED, "--json")["changes"]
    assert sorted((c["path"], c["old"], c["new"]) for c in changes) == [
        (["limit"], "inf", "Infinity"), (["mixed", 1], "int-one", "CHANGED"), (["note"], "scored", "tuned"),
        (["score"], "nan", "NaN")]
    assert cli.main(["diff", str(db), SCORED, TUNED]) == 0
    text = capsys.readouterr().out
    assert "unchanged" not in text
    assert "~ limit: 'inf' → inf" in text and "~ mixed[1]: 'int-one' → 'CHANGED'" in text


def test_set_path_names_typed_keys_as_output_prints_them() -> None:
    state = {"scores": {101: 0.5, 202: 0.9}, "mixed": {1: "a", "1": "b"}, "files": {"7": "x"}}
    assert set_path(state, ("scores", "101"), 0.99)["scores"] == {101: 0.99, 202: 0.9}
    assert set_path(state, ("scores", 101), 0.99)["scores"] == {101: 0.99, 202: 0.9}
    assert set_path(state, ("scores", "303"), 0.1)["scores"] == {101: 0.5, 202: 0.9, 303: 0.1}
    assert set_path(state, ("mixed", 1), "A")["mixed"] == {1: "A", "1": "b"}
    assert set_path(state, ("mixed", "1"), "B")["mixed"] == {1: "a", "1": "B"}
    assert set_path(state, ("mixed", "1 (int)"), "A")["mixed"] == {1: "A", "1": "b"}
    assert set_path(state, ("files", 7), "y")["files"] == {"7": "y"}
    with pytest.raises(EditError, match="is an object"):
        set_path(state, ("files", 8), "y")
    edited = apply_assignments(state, ['scores["101"]=NaN'])
    assert math.isnan(edited["scores"][101]) and set(edited["scores"]) == {101, 202}


def test_a_raw_edit_keeps_the_stored_keys_and_their_values() -> None:
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
    import datetime as dt
    _, data = JsonPlusSerializer().dumps_typed({101: dt.date(2026, 1, 2), 202: 0.9, "202": "text", (1, 2): "t"})
    old = unpack(data)
    shown = plain_or_error(old)
    merged = merge_edit(old, shown, set_path(shown, ("202",), "edited"))
    assert merged[101] is old[101] and merged[202] == 0.9 and merged["202"] == "edited" and merged[(1, 2)] == "t"
    assert JsonPlusSerializer().loads_typed(("msgpack", pack(merged))) == \
        {101: dt.date(2026, 1, 2), 202: 0.9, "202": "edited", (1, 2): "t"}


def test_runner_form_carries_typed_keys_through_json() -> None:
    value = {"scores": {101: 0.5}, "mixed": {1: "a", "1": "b"}, "t": {(1, "x"): [float("inf")]}}
    sent = json.loads(json.dumps(runner_form(value)))
    assert sent["scores"] == {"__type__": "builtins.dict", "items": [[101, 0.5]]}
    assert sent["mixed"]["items"] == [[1, "a"], ["1", "b"]]
    assert sent["t"]["items"] == [[[1, "x"], [math.inf]]]


def test_raw_fork_and_resume_through_the_cli_keep_int_keys(db: Path, graph_dir: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    theirs = _langgraph_fork_and_resume(copy_sqlite(db, tmp_path / "theirs.db"), "s", 1,
                                        {"scores": {101: 0.99, 202: 0.9}}, "score")
    monkeypatch.chdir(graph_dir)                           # where the graph's module is, as a user runs it
    assert cli.main(["fork", str(db), "s:2", "--raw", "--force", "--reason", "r",
                     "--set", 'scores["101"]=0.99']) == 0
    assert cli.main(["resume", str(db), "s:-1", "--graph", f"{MODULE}:build_scores", "--yes", "--wait",
                     "--force"]) == 0
    capsys.readouterr()
    ours = _head(db, "s")
    assert canonical(ours) == canonical(theirs)
    assert (ours["scores"], ours["note"]) == ({101: 0.99, 202: 0.9}, "best=101 types=int")


def test_a_state_typed_as_json_text_gets_its_typed_keys_back() -> None:
    original = {"scores": {101: 0.5, 202: 0.9}, "mixed": {1: "a", "1": "b"}, "files": {"7": "x"},
                "rows": [{5: "x"}]}
    typed = json.loads(to_json_text(original))             # what the Fork dialog shows and reads back
    typed["scores"]["101"] = 0.99
    typed["scores"]["303"] = 0.1
    typed["rows"][0]["5"] = "y"
    assert restore_keys(original, typed) == {"scores": {101: 0.99, 202: 0.9, 303: 0.1}, "mixed": {"1": "b"},
                                             "files": {"7": "x"}, "rows": [{5: "y"}]}
    assert restore_keys(original, {"mixed": {"1": "B", "1 (int)": "A"}})["mixed"] == {"1": "B", 1: "A"}


def test_a_map_with_int_and_text_keys_is_read_and_forked_everywhere(db: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    for ref in ("t:0", "t:1", SCORED, TUNED, "t:4"):       # (the input checkpoint proves reducers)
        _cli_json(capsys, "show", str(db), ref, "--json")
    assert cli.main(["fork", str(db), TUNED, "--raw", "--force", "--reason", "r", "--set", 'mixed[1]="X"']) == 0
    capsys.readouterr()
    assert _head(db)["mixed"] == {1: "X", "1": "str-one"}


def test_a_fork_of_the_whole_state_as_text_keeps_int_keys(db: Path) -> None:
    with open_store(db, readonly=False) as store:
        typed = json.loads(to_json_text(store.load("s:2").state))     # as the Fork dialog edits it
        typed["scores"]["101"] = 0.99
        fork_langgraph(store, "s:2", reason="r", state=typed, raw=True, force=True)
    assert _head(db, "s")["scores"] == {101: 0.99, 202: 0.9}


def test_dry_run_shows_the_edit_at_the_int_key(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["fork", str(db), TUNED, "--raw", "--force", "--reason", "r",
                     "--set", 'scores["101"]=0.99', "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "~ scores[101]: 0.5 → 0.99" in out and "scores['" not in out


def test_graph_fork_and_resume_through_the_cli_keep_int_keys(db: Path, graph_dir: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    theirs = _langgraph_fork_and_resume(copy_sqlite(db, tmp_path / "theirs.db"), "s", 1,
                                        {"scores": {101: 0.99, 202: 0.9}}, "score")
    monkeypatch.chdir(graph_dir)                           # where the graph's module is, as a user runs it
    assert cli.main(["fork", str(db), "s:2", "--graph", f"{MODULE}:build_scores", "--force",
                     "--reason", "r", "--set", 'scores["101"]=0.99']) == 0
    assert cli.main(["resume", str(db), "s:-1", "--yes", "--wait", "--force"]) == 0
    capsys.readouterr()
    ours = _head(db, "s")
    assert canonical(ours) == canonical(theirs)
    assert (ours["scores"], ours["note"]) == ({101: 0.99, 202: 0.9}, "best=101 types=int")
