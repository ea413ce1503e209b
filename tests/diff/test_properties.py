"""Property tests: diff(a, a) is empty, apply(a, diff(a, b)) == b, plain and hashed diffs agree."""

from __future__ import annotations

import copy

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.diff import MOVED, apply, dict_fetcher, diff_pieces, diff_tasks, diff_values, task_summary
from inspector.diff.tasks import normalise
from inspector.codec import PieceEncoder, unpack
from inspector.taskstate import score

from .strategies import edited, histories, json_values, task_pairs

FAST = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _encoded(*states, chunk_formats=(2, 2)):
    """Roots and raw pieces of states encoded in order, each with its chunk format (one
    encoder while the format stays, as the recording library does; a new one when it changes,
    as after an upgrade)."""
    roots, raw, encoder = [], {}, None
    for state, chunk_format in zip(states, chunk_formats, strict=True):
        if encoder is None or encoder.chunk_format != chunk_format:
            encoder = PieceEncoder()
            encoder.chunk_format = chunk_format
        root, _, pieces = encoder.encode(state)
        roots.append(root)
        raw.update(pieces)
    return roots, raw


def hashed_diff(old, new):
    """Encode both states like the recording library does (one encoder, in order) and diff,
    reading list chunks both decoded and raw (the two must agree), and with the chunks in
    format 1 (older stores) or old and new in different formats (an upgraded store)."""
    (root_a, root_b), raw = _encoded(old, new)
    pieces = {d: unpack(r) for d, r in raw.items()}
    decoded = diff_pieces(dict_fetcher(pieces), root_a, root_b)
    encoded = diff_pieces(dict_fetcher(pieces), root_a, root_b, fetch_raw=dict_fetcher(raw))
    assert encoded == decoded       # chunks split into encoded items give the same diff
    streamed = diff_pieces(dict_fetcher(pieces), root_a, root_b, stream_raw=lambda ds: (
        {d: raw[d] for d in list(ds)[n:n + 2]} for n in range(0, len(ds), 2)))
    assert streamed == decoded      # and so do chunks read in parts, walked as each part comes
    for formats in ((1, 1), (1, 2)):
        (root_a, root_b), raw = _encoded(old, new, chunk_formats=formats)
        pieces = {d: unpack(r) for d, r in raw.items()}
        assert diff_pieces(dict_fetcher(pieces), root_a, root_b, fetch_raw=dict_fetcher(raw)) == encoded
    return encoded


@FAST
@given(json_values)
def test_diff_of_a_value_with_itself_is_empty(value) -> None:
    assert diff_values(value, value) == ()
    assert diff_values(value, copy.deepcopy(value)) == ()


@FAST
@given(st.data())
def test_apply_of_the_diff_gives_the_new_value(data) -> None:
    old = data.draw(json_values)
    new = data.draw(st.one_of(edited(old), json_values))
    frozen = copy.deepcopy(old)
    changes = diff_values(old, new)
    assert apply(old, changes) == new
    assert old == frozen
    assert (changes == ()) == (old == new)


@FAST
@given(histories())
def test_history_edits_round_trip(pair) -> None:
    old, new = pair
    changes = diff_values(old, new)
    assert apply(old, changes) == new
    appended = len(new["messages"]) - len(old["messages"])
    if appended > 0 and new["messages"][:len(old["messages"])] == old["messages"] and old["notes"] == new["notes"] \
            and old["meta"] == new["meta"]:
        assert len(changes) == appended   # an append is reported as exactly the new items


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories())
def test_hashed_diff_round_trips_and_skips_nothing(pair) -> None:
    old, new = pair
    changes = hashed_diff(old, new)
    assert apply(old, changes) == new
    assert (changes == ()) == (old == new)
    assert hashed_diff(old, old) == ()


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_hashed_diff_round_trips_on_any_values(data) -> None:
    old = {"big": data.draw(st.lists(json_values, max_size=30)), "x": data.draw(json_values)}
    new = data.draw(edited(old, rounds=6))
    assert apply(old, hashed_diff(old, new)) == new


FIELD_KINDS = {"status": {"status"}, "progress": {"progress"}, "review": {"review"}, "title": {"title"},
               "checks": {"check", "check_added", "check_removed"}}


@FAST
@given(task_pairs())
def test_task_changes_agree_with_structural_changes(pair) -> None:
    old, new = pair
    changes = diff_tasks(old, new)
    assert diff_tasks(old, old) == ()
    a, b = normalise(old), normalise(new)
    before = {t["id"]: t for t in a["tasks"]}
    after = {t["id"]: t for t in b["tasks"]}
    for tid in before.keys() | after.keys():
        mine = [c for c in changes if c.task_id == tid]
        if tid not in before or tid not in after:
            assert [c.kind for c in mine] == ["added" if tid in after else "removed"]
            continue
        structural = [c for c in diff_values(before[tid], after[tid]) if c.op != MOVED or c.path[0] != "checks"]
        fields = {c.path[0] for c in structural}
        kinds = {c.kind for c in mine}
        assert bool(structural) == bool(mine)
        for field in fields:
            assert kinds & FIELD_KINDS[field], (field, kinds)
        for kind in kinds:
            assert any(kind in FIELD_KINDS[f] for f in fields), (kind, fields)
    flips = sum(1 for c in changes if c.kind == "check" and c.old is True and c.new is False)
    assert sum(1 for c in changes if c.regression and c.kind == "check") == flips
    line = task_summary(changes, old, new)
    s_old, s_new = score(a), score(b)
    assert (f"checks {s_old} → {s_new}" in line) == ((s_old.checks_passed, s_old.checks_total)
                                                      != (s_new.checks_passed, s_new.checks_total))
    assert (line == "") == (changes == ())


@FAST
@given(st.text(alphabet="ab \n.", max_size=300), st.text(alphabet="ab \n.", max_size=300))
def test_text_delta_segments_rebuild_both_strings(old, new) -> None:
    from inspector.diff.text import text_delta

    segments = text_delta(old, new).segments
    assert "".join(t for tag, t in segments if tag != "+") == old
    assert "".join(t for tag, t in segments if tag != "-") == new
    assert all(text for _, text in segments)
