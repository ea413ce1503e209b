"""A value's history (``inspector.diff.history.value_history``): every checkpoint where the value
at a path changed, against an oracle that loads each checkpoint whole and compares the value
at that path with its parent's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.diff.history import value_history
from inspector.diff.model import ADDED, CHANGED, REMOVED, DiffCancelled
from inspector.errors import StoreError
from inspector.store import open_store

MISSING = object()


def _at(value, path: tuple):
    for part in path:
        if not isinstance(value, (dict, list)) or isinstance(value, dict) != isinstance(part, str) \
                or (isinstance(part, int) and part < 0):
            return MISSING
        try:
            value = value[part]
        except (KeyError, IndexError):
            return MISSING
    return value


def _typed(value) -> str:
    """A form that tells 1 from True and 1.0, and keeps key order (JSON states)."""
    return "∅" if value is MISSING else json.dumps(value, default=repr) + repr(_types(value))


def _types(value):
    if isinstance(value, dict):
        return {k: _types(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_types(v) for v in value]
    return type(value).__name__


def _oracle(store, run_id: str, path: tuple) -> list[int]:
    """The seqs where the value at ``path`` differs from its parent's (the first: when it is there)."""
    infos = [i for i in store.list_checkpoints(run_id) if not i.lane]
    values = {i.id: _typed(_at(store.load(i.id).state, path)) for i in infos}
    return [i.seq for i in infos if values[i.id] != values.get(i.parent_id, "∅")]


def _paths(state: dict) -> list[tuple]:
    """Every top-level key, two levels into dicts, items of lists and their fields, and a path
    that is nowhere."""
    out: list[tuple] = [("no", "such", "value")]
    for key, value in state.items():
        out.append((key,))
        if isinstance(value, dict):
            out += [(key, k) for k in list(value)[:4]]
            out += [(key, k, kk) for k, v in list(value.items())[:2] if isinstance(v, dict) for kk in list(v)[:2]]
        if isinstance(value, list):
            out += [(key, i) for i in (0, 1, 3, 7, 12)]
            out += [(key, i, "content") for i in (0, 3, 9)]
    return out


def test_every_value_of_every_run_has_the_history_whole_snapshots_show(demo_store: Path) -> None:
    with open_store(demo_store) as store:
        for run in store.list_runs():
            head = store.load(f"{run.id}:-1").state
            for path in _paths(head):
                got = value_history(store, run.id, path)
                assert [e.checkpoint.seq for e in got] == _oracle(store, run.id, path), (run.name, path)
                assert all(e.changes and not e.problem for e in got)


def test_the_changes_shown_are_the_values_own(demo_store: Path) -> None:
    with open_store(demo_store) as store:
        run = next(r for r in store.list_runs() if r.status == "interrupted")
        budget = value_history(store, run.id, ("budget", "total"))
        reviews = value_history(store, run.id, ("reviews",))
        third = value_history(store, run.id, ("messages", 3, "content"))
        head = store.load(f"{run.id}:-1").state
    # a container on the way replaced (budget: None → {...}): the value's own change is shown
    (event,) = budget
    assert [(c.path, c.op) for c in event.changes] == [(("budget", "total"), ADDED)]
    assert event.changes[0].new == head["budget"]["total"]
    assert reviews[0].checkpoint.seq == 0 and reviews[0].changes[0].op == ADDED
    assert all(c.op == CHANGED for e in reviews[1:] for c in e.changes)
    # items appended before index 3 while the list was shorter do not change messages[3]
    assert len(third) == 1 and third[0].changes[0].new == head["messages"][3]["content"]


def test_a_value_that_goes_reads_as_removed(tmp_path: Path) -> None:
    from inspector.record import Checkpointer

    path = tmp_path / "s.db"
    with Checkpointer(path, name="scratch") as cp:
        cp.save({"notes": {"a": 1}, "todo": [1, 2, 3]})
        cp.save({"notes": {}, "todo": [2, 3]})            # notes.a gone; todo[0] is another item
        cp.save({"notes": {"a": True}, "todo": [2, 3]})   # 1 → True is a change of type
        cp.save({"notes": {"a": True}, "todo": [0, 2, 3]})
        run_id = cp.run_id
    with open_store(path) as store:
        notes = value_history(store, run_id, ("notes", "a"))
        first = value_history(store, run_id, ("todo", 0))
        for p in (("notes", "a"), ("todo", 0), ("todo", 2)):
            assert [e.checkpoint.seq for e in value_history(store, run_id, p)] == _oracle(store, run_id, p), p
    assert [(e.checkpoint.seq, e.changes[0].op) for e in notes] == [(0, ADDED), (1, REMOVED), (2, ADDED)]
    assert notes[2].changes[0].new is True
    assert [(e.checkpoint.seq, e.changes[0].old, e.changes[0].new) for e in first[1:]] == [(1, 1, 2), (3, 2, 0)]


def test_a_langgraph_threads_values_and_its_branches(corpus_sqlite: Path) -> None:
    with open_store(corpus_sqlite) as store:
        for run in store.list_runs():
            head = store.load(f"{run.id}:-1").state
            for path in _paths(head)[:12]:
                got = value_history(store, run.id, path)
                assert [e.checkpoint.seq for e in got] == _oracle(store, run.id, path), (run.id, path)


def test_a_langgraph_walk_loads_what_it_listed_without_looking_it_up_again(corpus_sqlite: Path, monkeypatch) -> None:
    """Walking a LangGraph thread loads each checkpoint it listed as listed: no lookup of its
    place (a count over the thread), which made a 50,000-checkpoint history four times slower;
    what it finds is what loading by lookup finds."""
    with open_store(corpus_sqlite) as store:
        run = max(store.list_runs(), key=lambda r: r.checkpoint_count)
        path = next(p for p in _paths(store.load(f"{run.id}:-1").state) if value_history(store, run.id, p))
        looked_up: list = []
        monkeypatch.setattr(store.reader, "position", lambda *key: looked_up.append(key))
        walked = [(e.checkpoint.id, e.changes) for e in value_history(store, run.id, path)]
        assert walked and looked_up == []
        monkeypatch.undo()
        monkeypatch.setattr(type(store), "_LISTED_MAX", 0)     # nothing kept: every load looks up
        assert [(e.checkpoint.id, e.changes) for e in value_history(store, run.id, path)] == walked


def test_negative_indices_are_refused_and_reading_can_be_cancelled(demo_store: Path) -> None:
    with open_store(demo_store) as store:
        run = store.list_runs()[0]
        with pytest.raises(StoreError, match="counted from the start"):
            value_history(store, run.id, ("messages", -1))
        seen: list[tuple[int, int]] = []
        with pytest.raises(DiffCancelled):
            value_history(store, run.id, ("step",), cancel=lambda: len(seen) >= 2,
                          progress=lambda d, t: seen.append((d, t)))
    assert seen == [(1, run.checkpoint_count), (2, run.checkpoint_count)]


def test_the_history_command_with_a_path(demo_store: Path, capsys) -> None:
    with open_store(demo_store) as store:
        run = next(r for r in store.list_runs() if r.status == "interrupted")
        want = _oracle(store, run.id, ("files", "draft.md", "bytes"))
    assert main(["history", str(demo_store), run.id, "--path", 'files["draft.md"].bytes']) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"run {run.id} {run.name!r}: files['draft.md'].bytes changed at ")
    assert [int(line.split()[0][1:]) for line in out.splitlines() if line.startswith("#")] == want
    assert main(["history", str(demo_store), run.id, "--path", "files['draft.md'].bytes"]) == 0   # as printed
    assert capsys.readouterr().out == out
    assert main(["history", str(demo_store), run.id, "--path", "reviews", "--json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert records and all(r["changes"][0]["path"] == ["reviews"] for r in records)
    assert main(["history", str(demo_store), run.id, "--path", "no.such"]) == 0
    assert "no.such is at no checkpoint" in capsys.readouterr().out
    for bad, words in (("messages[-1]", "counted from the start"), ("a..b", "Cannot read the path")):
        assert main(["history", str(demo_store), run.id, "--path", bad]) == 2
        err = capsys.readouterr().err
        assert words in err and err.count("\n") == 1 and "Traceback" not in err
