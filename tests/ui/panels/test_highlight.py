"""The Qt-free highlighting layer: pygments spans, per-line spans, line paths, side-by-side alignment."""

from __future__ import annotations

import json

from inspector.highlight import (DARK, LIGHT, TOKEN_TYPES, align, json_spans, line_paths, line_spans,
                                 spans_by_line, theme_for, to_json_text)
from inspector.highlight.sidebyside import ADDED, CHANGED, EQUAL, FILLER, REMOVED


def _prepared(value: object) -> tuple[list[str], list, list]:
    text = to_json_text(value)
    return text.split("\n"), spans_by_line(text, json_spans(text)), line_paths(text)


def test_spans_classify_keys_strings_numbers_and_keywords() -> None:
    text = to_json_text({"name": "x", "n": 2.5, "ok": True, "none": None})
    found = {text[s.start:s.start + s.length]: s.token for s in json_spans(text)}
    assert found['"name"'] == "key"
    assert found['"x"'] == "string"
    assert found["2.5"] == "number"
    assert found["true"] == "keyword" and found["null"] == "keyword"
    assert set(found.values()) <= set(TOKEN_TYPES)


def test_spans_by_line_are_line_relative() -> None:
    text = to_json_text({"a": [1, "two"]})
    lines = text.split("\n")
    per_line = spans_by_line(text, json_spans(text))
    assert len(per_line) == len(lines)
    for line, spans in zip(lines, per_line, strict=True):
        for start, length, _token in spans:
            assert start >= 0 and start + length <= len(line)
    assert [lines[3][s.start:s.start + s.length] for s in per_line[3]] == ['"two"']


def test_line_spans_lex_one_line_alone() -> None:
    spans = line_spans('  "key": [1, false],')
    assert [(s.token) for s in spans][:2] == ["key", "punctuation"]
    assert "keyword" in {s.token for s in spans}


def test_line_paths_name_each_line() -> None:
    value = {"messages": [{"role": "user", "content": "hi"}], "n": 1, "empty": {}}
    text = to_json_text(value)
    paths = dict(zip(text.split("\n"), line_paths(text), strict=True))
    assert paths['      "content": "hi"'] == ("messages", 0, "content")
    assert paths['  "n": 1,'] == ("n",)
    assert paths['  "empty": {}'] == ("empty",)
    assert len(line_paths(text)) == len(text.split("\n"))


def test_to_json_text_matches_json_dumps_for_json_values() -> None:
    value = {"a": [1, 2, {"b": "ü"}], "c": None}
    assert to_json_text(value) == json.dumps(value, indent=2, ensure_ascii=False)


def test_to_json_text_tolerates_bytes_and_odd_keys() -> None:
    text = to_json_text({(1, 2): b"xyz"})
    assert json.loads(text) == {"(1, 2)": {"__bytes__": "78 79 7a  |xyz|"}}


def test_align_pads_both_sides_to_the_same_length() -> None:
    old = {"a": 1, "items": [1, 2, 3], "c": "x"}
    new = {"a": 2, "items": [1, 3, 4, 5], "c": "x", "d": None}
    aligned = align(_prepared(old), _prepared(new))
    left, right = aligned.left, aligned.right
    assert len(left.lines) == len(right.lines)
    assert [n for n in left.numbers if n is not None] == list(range(1, len(to_json_text(old).split("\n")) + 1))
    assert [n for n in right.numbers if n is not None] == list(range(1, len(to_json_text(new).split("\n")) + 1))
    assert CHANGED in left.tags and REMOVED in left.tags and FILLER in left.tags
    assert ADDED in right.tags and FILLER in right.tags
    assert aligned.hunks and all(left.tags[h] != EQUAL or right.tags[h] != EQUAL for h in aligned.hunks)
    assert right.paths[right.lines.index('  "d": null')] == ("d",)


def test_align_of_equal_texts_has_no_hunks() -> None:
    same = _prepared({"a": [1, 2]})
    aligned = align(same, same)
    assert aligned.hunks == []
    assert set(aligned.left.tags) == {EQUAL}


def test_themes_differ_for_light_and_dark() -> None:
    assert theme_for(False) is LIGHT and theme_for(True) is DARK
    assert set(LIGHT.tokens) == set(DARK.tokens) == set(TOKEN_TYPES)
    assert LIGHT.color("key") != DARK.color("key")


def test_long_lines_are_cut_inside_their_string() -> None:
    from inspector.highlight import MAX_LINE, elide_long_lines

    value = {"blob": "x" * (MAX_LINE * 3), "list": ["y" * (MAX_LINE + 5), 1], "short": "ok"}
    text, cut = elide_long_lines(to_json_text(value))
    assert cut == 2
    assert all(len(line) <= MAX_LINE + 40 for line in text.split("\n"))
    shown = json.loads(text)
    assert shown["short"] == "ok" and shown["list"][1] == 1
    kept = len(shown["blob"]) - len(shown["blob"].lstrip("x"))
    assert shown["blob"].endswith(f"… [+{MAX_LINE * 3 - kept:,} characters]")
