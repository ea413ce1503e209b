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
