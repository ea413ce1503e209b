"""The fast ways listings are printed give the bytes the plain ways give: JSON records from
one encoder call or one text template, terminal-safe checks on bytes, times a minute at a time."""

from __future__ import annotations

import io
import json
import math
import sys
import time

import pytest

from inspector.commands import _common, checkpoints

TEXTS = ["plain", "", "quote \" in it", "back\\slash", "tab\there", "line\nbreak", "\x1b]0;title\x07", "é → ✓",
         "del \x7f", "c1 \x85 \x9b", "sep \u2028 \u2029", "}, {", '"}, {"', "null", "nbsp\u00a0°", "— dash …"]


def _encode(records: list[dict]) -> list[str]:
    """What ``print_json_records`` wrote before: each record on its own."""
    encoder = json.JSONEncoder(ensure_ascii=False, allow_nan=False, default=str)
    return [encoder.encode(r) if not any(isinstance(v, float) and not math.isfinite(v) for v in r.values())
            else encoder.encode(_common._finite(r)) for r in records]


def _row(i: int, **change: object) -> tuple:
    row = dict(id=1000 + i, seq=i, kind="step", name=f"step {i}", created=1796132596.5 + i, parent_id=999 + i or None,
               size=2**40 + i, size_delta=-i, ops=1, tasks_done=i % 3, tasks_total=3, checks_passed=0,
               checks_total=2, change="edited", lane="", damaged="")
    row.update(change)
    return tuple(row.values())


def _variants() -> list[list[tuple]]:
    plain = [_row(i) for i in range(5)]
    out = [plain, [_row(0)], [_row(0, parent_id=None)]]
    for name in ("kind", "name", "change"):
        out += [[*plain, _row(9, **{name: text})] for text in TEXTS]
    for name, value in (("created", math.nan), ("created", math.inf), ("created", 3), ("id", "abc"),
                        ("parent_id", "p"), ("seq", True), ("size", 1.5), ("lane", "lg"), ("damaged", "bad"),
                        ("parent_id", None)):
        out.append([*plain, _row(9, **{name: value})])
    return out


@pytest.mark.parametrize("rows", _variants(), ids=lambda rows: repr(rows[-1][2:4] + rows[-1][13:])[:40])
def test_checkpoint_json_lines_are_what_each_record_encoded_gives(rows: list[tuple]) -> None:
    want = _encode([checkpoints.json_record(r) for r in rows])
    assert checkpoints.json_lines(rows) == want
    assert _common._record_lines([checkpoints.json_record(r) for r in rows]) == want


def _templated(rows: list[tuple]) -> list[str] | None:
    return checkpoints._TEMPLATE.lines(list(zip(*rows, strict=True)))


def test_the_template_is_taken_for_plain_rows_only() -> None:
    assert _templated(_variants()[0]) is not None and _templated([_row(0, parent_id=None)]) is not None
    assert _templated([_row(0, name="quote \" in it")]) is None
    assert _templated([_row(0, created=math.nan)]) is None
    assert _templated([_row(0, damaged="bad")]) is None


class _Stdout(io.TextIOWrapper):
    """A UTF-8 stdout over bytes (what a pipe gives a command)."""

    def __init__(self, encoding: str = "utf-8") -> None:
        super().__init__(io.BytesIO(), encoding=encoding, errors="strict", newline="\n")

    def written(self) -> bytes:
        self.flush()
        return self.buffer.getvalue()  # type: ignore[attr-defined]


@pytest.mark.parametrize("encoding", ["utf-8", "latin-1"])
@pytest.mark.parametrize("text", TEXTS)
def test_write_safe_writes_what_terminal_safe_json_gives(monkeypatch: pytest.MonkeyPatch, text: str,
                                                         encoding: str) -> None:
    body = json.dumps({"k": text}, ensure_ascii=False)
    out = _Stdout(encoding)
    monkeypatch.setattr(sys, "stdout", out)
    try:
        _common.write_safe("[\n  ", body, "\n]\n")
    except UnicodeEncodeError:
        assert encoding != "utf-8"
        return
    assert out.written() == _common.terminal_safe_json("[\n  " + body + "\n]\n").encode(encoding)


@pytest.mark.parametrize("zone", ["UTC", "Europe/London", "America/St_Johns", "Asia/Kathmandu", "Africa/Monrovia",
                                  "Australia/Lord_Howe", "Pacific/Chatham"])
def test_fmt_times_gives_what_fmt_time_gives(monkeypatch: pytest.MonkeyPatch, zone: str) -> None:
    monkeypatch.setenv("TZ", zone)
    time.tzset()
    try:
        # around DST changes of several years (Lord Howe moves by 30 minutes, Monrovia kept
        # -0:44:30 until 1972), every 7 s for a few hours, and single odd times
        values = [float(t) + f for start in (0, 63_000_000, 1_711_846_800, 1_730_592_000, 1_796_132_596)
                  for t, f in zip(range(start - 7_200, start + 7_200, 7), (0.0, 0.25, 0.999) * 3_000,
                                  strict=False) if t >= 1]
        values += [1.0, 59.5, 60.0, 1e11 - 1]
        assert _common.fmt_times(values) == [_common.fmt_time(v) for v in values]
        odd = [0.0, -5.0, 0.5, None, 3, 1e12, math.inf]
        assert _common.fmt_times(odd) == [_common.fmt_time(v) for v in odd]
    finally:
        monkeypatch.undo()
        time.tzset()


def _run(i: int, **change: object) -> tuple:
    row = dict(id=f"run-{i}", name=f"run {i}", agent="coder", status="running" if i % 2 else "completed",
               checkpoint_count=i, created=1796132596.25 + i, updated=1796132597.5 + i,
               parent_run="run-0" if i == 3 else None, parent_checkpoint=7 if i == 3 else None,
               last_error="boom" if i == 4 else None, checks_passed=1, checks_total=2, tasks_done=0,
               tasks_total=3, damaged="")
    row.update(change)
    return (*row.values(), "extra", None)       # a store's rows may carry more columns


def _run_variants() -> list[list[tuple]]:
    plain = [_run(i) for i in range(6)]
    out = [plain, [_run(0)]]
    for name in ("id", "name", "agent", "status", "parent_run", "last_error"):
        out += [[*plain, _run(9, **{name: text})] for text in TEXTS]
    for name, value in (("created", math.nan), ("updated", math.inf), ("checkpoint_count", 1.5),
                        ("parent_checkpoint", "x"), ("parent_checkpoint", 2**40), ("checks_passed", None),
                        ("damaged", "bad"), ("tasks_total", True)):
        out.append([*plain, _run(9, **{name: value})])
    return out


@pytest.mark.parametrize("rows", _run_variants(), ids=lambda rows: repr(rows[-1][:4])[:40])
@pytest.mark.parametrize("shown", ["stored", "diagnosed"])
def test_runs_json_lines_are_what_each_record_encoded_gives(rows: list[tuple], shown: str) -> None:
    from inspector.commands import runs
    from inspector.model import CheckpointInfo
    from inspector.resume.status import EffectiveStatus

    statuses = {"run-1": EffectiveStatus("stuck", "no heartbeat for 40 s"), "run-5": EffectiveStatus("crashed", "pid 7 is gone")} \
        if shown == "diagnosed" else {}
    parents = {"run-3": CheckpointInfo(id=7, run_id="run-0", seq=2, kind="step", name="s", created=1.0)} \
        if shown == "diagnosed" else {}
    want = _encode([runs.run_json(r, statuses, parents) for r in rows])
    got = runs.json_lines(rows, statuses, parents)
    assert got is None or got == want
    if len(rows) <= 6:
        assert got is not None      # plain rows take the template
