"""PATH=JSON edit syntax and validation."""

from __future__ import annotations

import pytest

from inspector.resume.edits import (EditError, apply_assignments, check_json_value, parse_assignment,
                                    parse_json_text, parse_path, set_path, validate_tasks)


@pytest.mark.parametrize("text, path", [
    ("budget.total", ("budget", "total")),
    ("messages[2].content", ("messages", 2, "content")),
    ("messages[-1]", ("messages", -1)),
    ('files["draft.md"].sha1', ("files", "draft.md", "sha1")),
    ('["a key"]', ("a key",)),
])
def test_parse_path(text: str, path: tuple) -> None:
    assert parse_path(text) == path


@pytest.mark.parametrize("text", ["", ".a", "a..b", "a[x]", "a[1", "a b"])
def test_bad_paths(text: str) -> None:
    with pytest.raises(EditError):
        parse_path(text)


@pytest.mark.parametrize("key", ["draft.md", "it's", 'say "hi"', "tab\there", "esc\x1b", "ü ✓", "back\\slash", ""])
def test_a_path_as_diff_and_history_print_it_reads_back(key: str) -> None:
    """Keys print as Python writes them (``files['draft.md']``): pasted into ``--path`` they
    read back as the same key; only a string literal is read, nothing is evaluated."""
    from inspector.diff.model import format_path

    path = ("files", key, 0, "bytes")
    assert parse_path(format_path(path)) == path


@pytest.mark.parametrize("text", ["files['a' + 'b']", "files[__import__('os')]", "x['\\N{nope}']", "x['a'"])
def test_a_quoted_key_is_a_literal_or_refused(text: str) -> None:
    with pytest.raises(EditError):
        parse_path(text)


def test_assignment_values_are_json() -> None:
    assert parse_assignment('messages[2].content="x=y"') == (("messages", 2, "content"), "x=y")
    assert parse_assignment("a=[1, null]") == (("a",), [1, None])
    with pytest.raises(EditError, match="quote strings"):
        parse_assignment("name=bob")


def test_set_path_copies_and_checks() -> None:
    original = {"a": [1, {"b": 2}]}
    assert set_path(original, ("a", 1, "b"), 5) == {"a": [1, {"b": 5}]}
    assert set_path(original, ("a", 1, "c"), 5) == {"a": [1, {"b": 2, "c": 5}]}
    assert original == {"a": [1, {"b": 2}]}
    assert set_path(original, (), 3) == 3
    with pytest.raises(EditError, match="is a list"):
        set_path(original, ("a", "x"), 1)
    with pytest.raises(EditError, match="is an object"):
        set_path(original, (0,), 1)
    with pytest.raises(EditError, match="int, which has no"):
        set_path(original, ("a", 0, "x"), 1)


def test_json_checks() -> None:
    check_json_value({"a": [1, 2.5, None, True, "s"]})
    for bad, message in (({"a": float("nan")}, "non-finite"), ({1: 2}, "non-string key"),
                         ({"a": b"x"}, "bytes at a")):
        with pytest.raises(EditError, match=message):
            check_json_value(bad, "answer")
    # a state may hold what stores keep: NaN, the infinities, keys that are not strings
    check_json_value({"a": float("nan"), "b": {1: 2, "1": 3, (1, None): float("-inf")}}, "state")
    with pytest.raises(EditError, match="bytes at a"):
        check_json_value({"a": b"x"}, "state")
    with pytest.raises(EditError, match="non-string key"):
        check_json_value({"tasks": {1: 2}}, "task state")
    with pytest.raises(EditError, match="Extra data at line 2, column 2"):
        parse_json_text('{"a": 1\n}}', "state")
    assert apply_assignments({"a": 1}, ["a=2", "b=3"]) == {"a": 2, "b": 3}


def test_task_validation() -> None:
    assert validate_tasks(None) is None
    assert validate_tasks({"goal": "g", "tasks": [{"id": "t"}]})["tasks"][0]["status"] == "pending"
    with pytest.raises(EditError, match="duplicate id"):
        validate_tasks({"tasks": [{"id": "t"}, {"id": "t"}]})


def test_a_fork_edits_a_key_of_another_type_at_the_path_diff_prints(tmp_path) -> None:
    """``diff`` prints a tuple, bytes or bool key as Python writes it (``m[(1, 'a')]``,
    ``m[b'ab']``, ``m[True]``); ``fork --set`` refused those paths ("Cannot read the path")."""
    from inspector import cli
    from inspector.record import Checkpointer
    from inspector.store import open_store

    store = tmp_path / "keys.db"
    with Checkpointer(store, name="keys") as cp:
        cp.save({"m": {(1, "a"): 1, b"ab": 2, True: 3}})
    assert parse_path("m[(1, 'a')]") == ("m", (1, "a")) and parse_path("m[b'ab']") == ("m", b"ab")
    assert cli.main(["fork", str(store), "keys:0", "--reason", "typed keys", "--set", "m[(1, 'a')]=7",
                     "--set", "m[b'ab']=8", "--set", "m[True]=9"]) == 0
    with open_store(store) as st:
        fork = next(r for r in st.list_runs() if r.parent_run)
        assert st.load(f"{fork.id}:-1").state == {"m": {(1, "a"): 7, b"ab": 8, True: 9}}
