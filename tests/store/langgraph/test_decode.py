"""The safe decoder on values written by LangGraph's own serializer, and on hostile bytes."""

from __future__ import annotations

import collections
import datetime as dt
import decimal
import enum
import ipaddress
import json
import math
import pathlib
import re
import sqlite3
import uuid
from dataclasses import dataclass
from typing import NamedTuple
from zoneinfo import ZoneInfo

import msgpack
import numpy as np
import pydantic
import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.serde.types import _DeltaSnapshot
from langgraph.types import Interrupt, Send

from inspector.commands._common import dumps
from inspector.store.langgraph.decode import decode_plain, decode_typed, pack, unpack
from inspector.codec.exact import canonical


class Color(enum.Enum):
    RED = "red"


@dataclass
class Point:
    x: int
    y: int


class Pair(NamedTuple):
    a: int
    b: str


class Model(pydantic.BaseModel):
    name: str
    size: int = 3


def _plain(obj):
    """Serialize with LangGraph's real serializer, decode with ours."""
    tag, data = JsonPlusSerializer().dumps_typed(obj)
    assert tag == "msgpack"
    return decode_plain(tag, data)


@pytest.mark.parametrize("obj, expected", [
    (uuid.UUID("12345678-1234-5678-1234-567812345678"),
     {"__type__": "uuid.UUID", "value": "12345678-1234-5678-1234-567812345678"}),
    (decimal.Decimal("1.50"), {"__type__": "decimal.Decimal", "value": "1.50"}),
    ({10, 2, 1}, {"__type__": "builtins.set", "value": [1, 2, 10]}),
    (frozenset({"x", "b"}), {"__type__": "builtins.frozenset", "value": ["b", "x"]}),
    (collections.deque([1, 2]), [1, 2]),
    (ipaddress.IPv4Address("10.0.0.1"), {"__type__": "ipaddress.IPv4Address", "value": "10.0.0.1"}),
    (ZoneInfo("Europe/Paris"), {"__type__": "zoneinfo.ZoneInfo", "value": "Europe/Paris"}),
    (pathlib.Path("/tmp/a/b"), "/tmp/a/b"),
    (dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC),
     {"__type__": "datetime.datetime", "value": "2026-01-02T03:04:05+00:00"}),
    (dt.date(2026, 1, 2), {"__type__": "datetime.date", "value": "2026-01-02"}),
    (dt.time(3, 4, 5), {"__type__": "datetime.time", "value": "03:04:05"}),
    (dt.timedelta(days=1, seconds=2), {"__type__": "datetime.timedelta", "value": "1 day, 0:00:02"}),
    (re.compile("a+", re.I), {"__type__": "re.Pattern", "pattern": "a+", "flags": re.compile("a+", re.I).flags}),
    (Point(1, 2), {"__type__": f"{__name__}.Point", "x": 1, "y": 2}),
    (Pair(1, "b"), {"__type__": f"{__name__}.Pair", "a": 1, "b": "b"}),
    (Model(name="m"), {"__type__": f"{__name__}.Model", "name": "m", "size": 3}),
    (Color.RED, {"__type__": f"{__name__}.Color", "value": "red"}),
    (Send("node", {"k": 1}), {"__type__": "langgraph.types.Send", "node": "node", "arg": {"k": 1}}),
    (Interrupt(value="why?", id="i1"),
     {"__type__": "langgraph.types.Interrupt", "value": "why?", "id": "i1"}),
    (_DeltaSnapshot([1, 2]), {"__delta_snapshot__": [1, 2]}),
    (b"\x00\xff", {"__bytes__": "AP8=", "size": 2}),
    ({(1, "a"): "tuple key", 3: "int key", None: "none key", 3.5: "float key", b"\x01": "bytes key"},
     {(1, "a"): "tuple key", 3: "int key", None: "none key", 3.5: "float key", b"\x01": "bytes key"}),
    ({1: "int one", "1": "text one"}, {1: "int one", "1": "text one"}),
])
def test_langgraph_values_have_plain_forms(obj, expected):
    got = _plain({"v": obj})["v"]
    if isinstance(expected, dict) and isinstance(got, dict):
        assert {k: got[k] for k in expected} == expected
    elif isinstance(expected, list):
        assert sorted(got) == sorted(expected)
    else:
        assert got == expected
    json.loads(dumps(got))      # what --json writes of it is strict JSON


def test_non_finite_floats_stay_floats_apart_from_their_text():
    got = _plain({"f": [float("nan"), float("inf"), float("-inf"), "nan", "inf", "-inf"]})["f"]
    assert [type(v) for v in got] == [float] * 3 + [str] * 3
    assert math.isnan(got[0]) and got[1:3] == [math.inf, -math.inf] and got[3:] == ["nan", "inf", "-inf"]
    assert json.loads(dumps(got)) == ["NaN", "Infinity", "-Infinity", "nan", "inf", "-inf"]


def test_messages_keep_their_fields():
    got = _plain([HumanMessage(content="hi", id="h1"), AIMessage(content="yo", id="a1")])
    assert [m["__type__"] for m in got] == ["langchain_core.messages.human.HumanMessage",
                                            "langchain_core.messages.ai.AIMessage"]
    assert [(m["type"], m["content"], m["id"]) for m in got] == [("human", "hi", "h1"), ("ai", "yo", "a1")]


def test_numpy_array_is_summarised_with_its_values():
    got = _plain(np.arange(6, dtype="<i4").reshape(2, 3))
    assert got == {"__type__": "numpy.ndarray", "dtype": "<i4", "shape": [2, 3], "order": "C", "nbytes": 24,
                   "values": [[0, 1, 2], [3, 4, 5]]}


@pytest.mark.parametrize("array", [
    np.arange(12, dtype=">f8").reshape(3, 4), np.asfortranarray(np.arange(6, dtype="<u2").reshape(2, 3)),
    np.array([True, False]), np.arange(24, dtype=np.float32).reshape(2, 3, 4), np.array(5.5),
    np.arange(2500, dtype=np.int64).reshape(50, 50), np.array([np.nan, 1.0]),
])
def test_numpy_values_equal_numpy_own_within_the_preview_bound(array):
    from tests.lgcorpus.expected import numpy_preview
    assert canonical(_plain(array)) == canonical(numpy_preview(array))      # (NaN is NaN)


def test_numpy_unsupported_dtype_says_so():
    got = _plain(np.array(["a", "b"]))
    assert "values" not in got and "dtype" in got["note"]


def test_lossless_round_trip_of_every_real_row(lg_master):
    conn = sqlite3.connect(str(lg_master))
    blobs = [r[0] for r in conn.execute("SELECT checkpoint FROM checkpoints WHERE type='msgpack'")]
    blobs += [r[0] for r in conn.execute("SELECT value FROM writes WHERE type='msgpack'")]
    conn.close()
    assert len(blobs) > 100
    exts = 0
    for blob in blobs:
        value = unpack(blob)
        assert pack(value) == blob
        exts += blob.count(b"\xc7") + blob.count(b"\xc8")
    assert exts  # the rows really carry extension values


def test_tuple_keys_round_trip():
    tag, data = JsonPlusSerializer().dumps_typed({("a", 1): {"x": [1, 2]}})
    value = unpack(data)
    assert value == {("a", 1): {"x": [1, 2]}}
    assert pack(value) == data


def test_unknown_and_malformed_extensions_are_markers():
    data = pack({"u": msgpack.ExtType(99, b"xyz"), "m": msgpack.ExtType(0, b"\xc1"),
                 "s": msgpack.ExtType(2, pack("not a tuple"))})
    got = decode_plain("msgpack", data)
    assert got["u"]["__ext__"] == 99 and got["u"]["__bytes__"] == "eHl6"
    assert got["m"]["__ext__"] == 0 and "malformed" in got["m"]["__error__"]
    assert got["s"] == {"__ext__": 2, "value": "not a tuple"}


def test_type_tags():
    assert decode_plain("null", b"") is None
    assert decode_plain("bytes", b"\x01") == {"__bytes__": "AQ==", "size": 1}
    assert decode_plain("bytearray", b"\x01")["size"] == 1
    assert decode_plain("pickle", b"\x80\x04.")["__opaque__"] == "pickle"
    assert decode_plain("json+aes", b"123")["note"] == "not decoded: json encrypted with aes"
    assert decode_plain("MyCustomType", b"abc")["__opaque__"] == "MyCustomType"
    assert "__error__" in decode_plain("json", b"{not json")
    assert "__error__" in decode_plain("msgpack", b"\x92\x01")  # truncated array
    assert "__error__" in decode_plain("msgpack", b"\x01\x02")  # extra data
    assert decode_typed("json", b'{"lc": 1, "type": "secret", "id": ["OPENAI_API_KEY"]}') == \
        {"__secret__": "OPENAI_API_KEY"}


def test_deep_nesting_is_an_error_marker_not_a_crash():
    data = b"\x91" * 100_000 + b"\xc0"
    assert "__error__" in decode_plain("msgpack", data)
    nested = pack(msgpack.ExtType(0, pack(["m", "n", None])))
    for _ in range(3000):
        nested = pack(msgpack.ExtType(7, nested))
    assert "__error__" in json.dumps(decode_plain("msgpack", nested))


def test_secrets_are_masked():
    got = _plain({"key": pydantic.SecretStr("hunter2")})
    assert "hunter2" not in json.dumps(got)


from hypothesis import given, settings, strategies as st  # noqa: E402

_leaf = st.one_of(st.none(), st.booleans(), st.integers(-2**63, 2**64 - 1), st.text(max_size=8),
                  st.binary(max_size=8), st.floats(allow_nan=True))


def _ext_of(children):
    return st.builds(lambda code, inner: msgpack.ExtType(code, pack(inner)),
                     st.integers(0, 12), children)


_tree = st.recursive(_leaf, lambda kids: st.one_of(
    st.lists(kids, max_size=4), st.dictionaries(st.text(max_size=5), kids, max_size=4), _ext_of(kids)),
    max_leaves=20)


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=64))
def test_random_bytes_never_raise(data):
    json.loads(dumps(decode_plain("msgpack", data)))
    json.loads(dumps(decode_plain("json", data)))


@settings(max_examples=150, deadline=None)
@given(_tree)
def test_random_trees_with_extensions_decode_to_json(value):
    data = pack(value)
    assert pack(unpack(data)) == data
    json.loads(dumps(decode_plain("msgpack", data)))
