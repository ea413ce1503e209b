"""JSON printing of the CLI: listings one record per line, strict JSON, the same values."""

from __future__ import annotations

import json
import math

import pytest

from inspector.commands._common import print_json, print_json_records


def test_records_one_per_line_parse_back(capsys: pytest.CaptureFixture[str]) -> None:
    records = [{"id": i, "name": f"run «{i}»\n\x1b]0;x\x07", "score": {"passed": i, "total": 5},
                "tags": ["a", None, True], "created": 1.5 + i} for i in range(3)]
    print_json_records(records)
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "[" and lines[-1] == "]" and len(lines) == 5   # a record per line
    assert json.loads(out) == records
    assert "\x1b" not in out and "\x07" not in out                    # control characters escaped


def test_empty_listing(capsys: pytest.CaptureFixture[str]) -> None:
    print_json_records([])
    assert capsys.readouterr().out == "[]\n"


def test_non_finite_numbers_stay_strict_json(capsys: pytest.CaptureFixture[str]) -> None:
    print_json_records([{"id": 1, "created": math.nan, "sizes": [math.inf, -math.inf, 2.0]}])
    out = capsys.readouterr().out
    parsed = json.loads(out, parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))
    assert parsed == [{"id": 1, "created": "NaN", "sizes": ["Infinity", "-Infinity", 2.0]}]


def test_single_objects_stay_indented(capsys: pytest.CaptureFixture[str]) -> None:
    value = {"checkpoint": {"id": 3, "data": b"\x01\x02"}, "state": [1, {"a": "b"}]}
    print_json(value)
    out = capsys.readouterr().out
    assert out == json.dumps({"checkpoint": {"id": 3, "data": "0102"}, "state": [1, {"a": "b"}]},
                             indent=2, ensure_ascii=False) + "\n"


def test_a_bytes_key_and_the_string_of_its_hex_stay_apart_in_json() -> None:
    """A bytes key is written as hex: beside the string key of that hex, the bytes key says its
    type (the string key got a stray quote mark instead, and '6162' no longer read back)."""
    from inspector.commands._common import _keys_apart

    assert _keys_apart({b"ab": 1, "6162": 2}) == {"6162 (bytes)": 1, "6162": 2}
    assert _keys_apart({"6162": 2, b"ab": 1}) == {"6162": 2, "6162 (bytes)": 1}
    assert _keys_apart({1: "a", "1": "b"}) == {"1 (int)": "a", "1": "b"}
