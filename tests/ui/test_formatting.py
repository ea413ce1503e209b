"""Text helpers of the views."""

from __future__ import annotations

from inspector.ui import formatting


def test_relative_time() -> None:
    now = 1_000_000.0
    assert formatting.relative_time(now - 2, now) == "just now"
    assert formatting.relative_time(now - 42, now) == "42 s ago"
    assert formatting.relative_time(now - 180, now) == "3 min ago"
    assert formatting.relative_time(now - 7200, now) == "2 h ago"
    assert formatting.relative_time(now - 86_400 * 1.5, now) == "yesterday"
    assert formatting.relative_time(now - 86_400 * 12, now) == "12 days ago"
    assert formatting.relative_time(None, now) == ""


def test_gaps_and_deltas() -> None:
    assert formatting.fmt_gap(0.012) == "+12 ms"
    assert formatting.fmt_gap(1.44) == "+1.4 s"
    assert formatting.fmt_gap(125) == "+2 min 05 s"
    assert formatting.fmt_gap(3 * 3600 + 120) == "+3 h 02 min"
    assert formatting.fmt_gap(None) == ""
    assert formatting.fmt_delta(0) == ""
    assert formatting.fmt_delta(1536) == "+1.5 KB"
    assert formatting.fmt_delta(-340) == "\u2212340 B"


def test_elide_middle() -> None:
    assert formatting.elide_middle("short", 10) == "short"
    text = formatting.elide_middle("/very/long/path/to/the/store.db", 15)
    assert len(text) == 15 and text.startswith("/very") and text.endswith(".db")


def test_times_no_clock_has_read_as_a_question_mark() -> None:
    """A damaged store's times (infinite, not a number, past any calendar) are shown as '?',
    never raised on (the header once failed on an infinite created time)."""
    from inspector.ui.widgets.checkpoint_header import fmt_time

    for bad in (float("inf"), float("-inf"), float("nan"), 1e300, -1e300, 1e17):   # (1e17: OSError)
        assert formatting.relative_time(bad, 1_000_000.0) == "?"
        assert formatting.clock_time(bad) == "?"
        assert formatting.full_time(bad) == "? (not a time)" == fmt_time(bad)
        assert formatting.fmt_gap(bad) == "?"
    assert formatting.full_time(86_400.25).endswith(".250") and fmt_time(86_400.0).startswith("1970-01-0")
