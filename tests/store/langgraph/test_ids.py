"""Checkpoint ids: round trip, never mistaken for RUN:SEQ, and UUIDv6 time/step."""

from __future__ import annotations

import datetime as dt

from hypothesis import given, settings, strategies as st
from langgraph.checkpoint.base.id import uuid6

from inspector.store.base import parse_ref
from inspector.store.langgraph.ids import id_step, id_time, make_id, parse_id

_part = st.text(min_size=1, max_size=12)


@settings(max_examples=300, deadline=None)
@given(_part, st.one_of(st.just(""), _part), _part)
def test_ids_round_trip_and_are_not_run_seq(thread, ns, cid):
    ident = make_id(thread, ns, cid)
    assert parse_id(ident) == (thread, ns, cid)
    run, key = parse_ref(ident)
    assert run is None and key == ident.strip()


def test_plain_ids_stay_readable():
    assert make_id("thread-A", "", "1f1ec390-ef7c-69d9-8002-42ed79031485") == \
        "thread-A@1f1ec390-ef7c-69d9-8002-42ed79031485"
    assert make_id("t", "planner:3d4e|inner:9", "c1") == "t@planner:3d4e|inner:9@c1"
    assert make_id("a@b", "", "x:1") == "a@b@x%3A1"        # an id is printed as written where it reads back
    assert make_id("a@b:c", "", "x") == "a%40b:c@x"


def test_uuid6_time_and_step():
    for step in (-1, 0, 7, 300):
        cid = str(uuid6(clock_seq=step))
        assert abs(id_time(cid) - dt.datetime.now().timestamp()) < 5
        assert id_step(cid) == step
    assert id_time("not-a-uuid") == 0.0 and id_step("nope") is None
