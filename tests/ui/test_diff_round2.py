"""The Diff tab, second round: a huge diff and its filter never hold the GUI thread, bytes
changes are visible in the texts, and the panes are readable in a small window."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QTimer

from inspector.diff import diff_checkpoints
from inspector.highlight import line_paths, to_json_text
from inspector.record import Checkpointer, Interval
from inspector.store import open_store
from inspector.ui.models.change_list_model import CHANGE_ROLE, PATH
from tests.ui.conftest import open_in, select_checkpoint, select_run

TIMEOUT = 120_000
RECORDS = 40_000      # two leaves of each change: 80,000 changes, each a row of the list
GUI_BOUND = 0.5       # seconds of the GUI thread's own work between two ticks of a 20 ms timer


@pytest.fixture(scope="module")
def huge_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run of two checkpoints whose states differ in every record (written by the recorder)."""
    path = tmp_path_factory.mktemp("huge") / "huge.db"
    old = {"rows": [{"id": i, "v": i, "s": f"value-{i:08d}-a"} for i in range(RECORDS)]}
    new = {"rows": [{"id": i, "v": i + 0.5, "s": f"value-{i:08d}-b"} for i in range(RECORDS)]}
    with Checkpointer(path, name="huge", interval=Interval.every_step()) as cp:
        cp.save(old, kind="step", name="old")
        cp.save(new, kind="step", name="new")
    return path


class GuiProbe:
    """A 20 ms timer on the GUI thread that records, between two of its ticks, how much CPU
    the GUI thread itself used: the time an event loop stood still doing our work (a worker
    holding the interpreter lock makes a tick late too, but spends no GUI-thread CPU)."""

    def __init__(self) -> None:
        self.busy: list[float] = []
        self._cpu = time.thread_time()
        self._timer = QTimer()
        self._timer.timeout.connect(self._tick)
        self._timer.start(20)

    def _tick(self) -> None:
        now = time.thread_time()
        self.busy.append(now - self._cpu)
        self._cpu = now

    def worst(self) -> float:
        """The longest stretch of GUI-thread work so far; starts a new measurement."""
        self._tick()
        worst, self.busy = max(self.busy), []
        return worst

    def stop(self) -> None:
        self._timer.stop()


def _diff_panel(window, qtbot):
    window.details.set_tab("diff")
    qtbot.waitUntil(lambda: "diff" in window.details.panels, timeout=TIMEOUT)
    return window.details.panels["diff"]


def test_a_huge_diff_and_its_filter_never_hold_the_gui_thread(window, qtbot, huge_store: Path) -> None:
    """80,000 changes: the list was a tree that laid out every row when the diff arrived
    (over a second on the GUI thread), and each keystroke in the filter read every row's
    path on the GUI thread (half a second a key)."""
    window.resize(1024, 700)
    open_in(window, qtbot, huge_store)
    with open_store(huge_store) as store:
        run = store.list_runs()[0]
        expected = diff_checkpoints(store, f"{run.id}:0", f"{run.id}:1")
    select_run(window, qtbot, run.id)
    select_checkpoint(window, qtbot, 0)
    panel = _diff_panel(window, qtbot)
    qtbot.waitUntil(lambda: not panel.busy, timeout=TIMEOUT)
    probe = GuiProbe()
    try:
        with qtbot.waitSignal(panel.diff_ready, timeout=TIMEOUT):
            window.timeline_panel.select_seq(1)
        qtbot.waitUntil(lambda: not panel.busy, timeout=TIMEOUT)
        qtbot.wait(100)
        assert panel.model.rowCount() == panel.proxy.rowCount() == len(expected.changes) == 2 * RECORDS
        assert probe.worst() < GUI_BOUND
        last = f"rows[{RECORDS - 1}]"
        for key in last:    # typed: the list is filtered once typing pauses, not per key
            qtbot.keyClicks(panel.filter, key)
            qtbot.wait(30)
        assert panel.busy and panel.proxy.rowCount() == 2 * RECORDS
        qtbot.waitUntil(lambda: not panel.busy, timeout=TIMEOUT)
        shown = [panel.proxy.index(r, 1).data() for r in range(panel.proxy.rowCount())]
        assert shown == [f"{last}.s", f"{last}.v"] or shown == [f"{last}.v", f"{last}.s"]
        panel.select_change(1)
        assert panel.detail.title.text().count(last) == 1
        panel.filter.clear()
        qtbot.waitUntil(lambda: not panel.busy and panel.proxy.rowCount() == 2 * RECORDS, timeout=TIMEOUT)
        # the selected change stays selected when the filter is cleared
        assert panel.proxy.mapToSource(panel.changes.currentIndex()).row() >= 2 * RECORDS - 2
        assert probe.worst() < GUI_BOUND
    finally:
        probe.stop()


# -- bytes: their changes show in the texts ---------------------------------------------------

def _two_states(path: Path, old: dict, new: dict, **extra: dict) -> str:
    """A run of two checkpoints with these states (and task boards); returns its id."""
    with Checkpointer(path, name="pair", interval=Interval.every_step()) as cp:
        cp.save(old, kind="step", name="old", **{k: v[0] for k, v in extra.items()})
        cp.save(new, kind="step", name="new", **{k: v[1] for k, v in extra.items()})
        return cp.run_id


def _compared(qtbot, path: Path, run_id: str):
    """A Diff panel comparing the run's two checkpoints, its text diff shown."""
    from inspector.ui.widgets.diff_panel import DiffPanel

    store = open_store(path)
    panel = DiffPanel()
    qtbot.addWidget(panel)
    panel.resize(1000, 760)
    panel.show()
    panel.set_store(store)
    with qtbot.waitSignal(panel.text_ready, timeout=TIMEOUT):
        panel.compare(store, store.get_checkpoint(f"{run_id}:0"), store.get_checkpoint(f"{run_id}:1"))
    qtbot.waitUntil(lambda: not panel.busy, timeout=TIMEOUT)
    return panel, store


def _select(qtbot, panel, path: str, old: str, new: str) -> tuple[str, str]:
    """Select the change at ``path`` and wait until its panes show ``old`` and ``new`` (each
    pane formats its value in a job of its own); returns both panes' texts."""
    row = next(r for r in range(panel.proxy.rowCount()) if panel.proxy.index(r, PATH).data() == path)
    panel.select_change(row)
    qtbot.waitUntil(lambda: old in panel.detail.old.toPlainText() and new in panel.detail.new.toPlainText(),
                    timeout=TIMEOUT)
    assert panel.proxy.index(row, 0).data(CHANGE_ROLE).display_path == path
    return panel.detail.old.toPlainText(), panel.detail.new.toPlainText()


def test_a_bytes_change_shows_in_the_panes_and_the_text_diff(qtbot, tmp_path: Path) -> None:
    """The texts wrote every bytes value as "<N bytes>": two different values of one length
    showed the same, the text diff said "equal" beside "state: 2 changed", and a string
    "<3 bytes>" read like bytes."""
    blob = bytes(range(256)) * 4
    run_id = _two_states(tmp_path / "b.db", {"blob": blob, "small": b"abc", "text": "<3 bytes>"},
                         {"blob": blob[:768] + b"\xff" + blob[769:], "small": b"abd", "text": "<3 bytes>"})
    panel, store = _compared(qtbot, tmp_path / "b.db", run_id)
    with store:
        assert panel.result.summary.endswith("2 changed")
        assert panel.sides.hunk_count == 2 and "equal" not in panel.hunk_label.text()
        old, new = _select(qtbot, panel, "blob", "0300  00", "0300  ff")
        changed = [(a, b) for a, b in zip(old.split("\n"), new.split("\n"), strict=True) if a != b]
        assert changed == [('  "0300  00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f  |................|",',
                            '  "0300  ff 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f  |................|",')]
        old, new = _select(qtbot, panel, "small", "63  |abc|", "64  |abd|")    # ("abc" is in the blob's dump too)
        assert (old, new) == ('{"__bytes__": "61 62 63  |abc|"}', '{"__bytes__": "61 62 64  |abd|"}')
        # the side-by-side text: the changed row of the dump is the one tinted, beside its path
        line = panel.sides.scroll_to_path(("blob",))
        assert panel.sides.right.path_at_line(line) == ("blob",)
        assert "0300  ff" in panel.sides.right.document().findBlockByNumber(line).text()
        text = panel.sides.right.toPlainText()
        assert '"text": "<3 bytes>"' in text and '"small": {"__bytes__": "61 62 64  |abd|"}' in text


def test_the_text_diff_never_says_equal_when_the_state_changed(qtbot, tmp_path: Path) -> None:
    """A key 1 and a key "1" are one text in JSON: the texts are equal, the states are not."""
    run_id = _two_states(tmp_path / "k.db", {"m": {1: "a"}}, {"m": {"1": "a"}})
    panel, store = _compared(qtbot, tmp_path / "k.db", run_id)
    with store:
        assert panel.result.changes and panel.sides.hunk_count == 0
        assert panel.hunk_label.text() == "no difference in the text"
        assert "cannot show" in panel.hunk_label.toolTip()
        panel.resize(600, 760)     # the short words of a narrow bar
        qtbot.waitUntil(lambda: panel.hunk_label.text() == "same text")
        assert "no difference in the text" in panel.hunk_label.toolTip()


def test_bytes_text_is_json_with_every_line_on_the_bytes_path() -> None:
    from inspector.highlight.jsontext import DUMP_BYTES

    value = {"blob": bytes(range(40)), "list": [b"", b"x" * 17], "s": "<3 bytes>"}
    text = to_json_text(value)
    assert json.loads(text) == {
        "blob": {"__bytes__": ["0000  00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f  |................|",
                               "0010  10 11 12 13 14 15 16 17 18 19 1a 1b 1c 1d 1e 1f  |................|",
                               "0020  20 21 22 23 24 25 26 27  | !\"#$%&'|"]},
        "list": [{"__bytes__": ""}, {"__bytes__": ["0000  78 78 78 78 78 78 78 78 78 78 78 78 78 78 78 78  "
                                                   "|xxxxxxxxxxxxxxxx|", "0010  78  |x|"]}],
        "s": "<3 bytes>"}
    paths = line_paths(text)
    assert paths == [(), *[("blob",)] * 5, ("list",), ("list", 0), *[("list", 1)] * 4, ("list",), ("s",), ()]
    assert json.loads(to_json_text(value, indent=None))["blob"] == {"__bytes__": "40 bytes: " + bytes(range(16)).hex(" ") + " …"}
    big = bytes(DUMP_BYTES) + b"\x01"      # beyond the dump: its count and digest still differ
    assert to_json_text(big).split("\n")[-2] != to_json_text(bytes(DUMP_BYTES + 1)).split("\n")[-2]


def test_the_change_rows_proxy_is_a_sound_model(qtbot, qtmodeltester, tmp_path: Path) -> None:
    run_id = _two_states(tmp_path / "p.db", {"a": 1, "b": [1, 2], "c": {"d": "x"}},
                         {"a": 2, "b": [1, 2, 3, 4, 5], "c": {"d": "y"}, "e": None})
    panel, store = _compared(qtbot, tmp_path / "p.db", run_id)
    with store:
        qtmodeltester.check(panel.proxy)
        qtbot.keyClicks(panel.filter, "C.")
        assert [panel.proxy.index(r, PATH).data() for r in range(panel.proxy.rowCount())] == ["c.d"]
        qtmodeltester.check(panel.proxy)
        panel.filter.clear()
        assert panel.proxy.rowCount() == panel.model.rowCount() == 4


# -- room: readable panes in a small window, the diff's share in a big one ---------------------

def _board(status: str, lint: bool, more: bool) -> dict:
    """A task board: a task with two checks, and with ``more`` five tasks besides."""
    tasks = [{"id": "t1", "title": "Research", "status": status, "progress": 0.5 if status != "done" else 1.0,
              "checks": [{"name": "3 sources", "passed": status == "done", "detail": None},
                         {"name": "lint", "passed": lint, "detail": None}]}]
    tasks += [{"id": f"t{n}", "title": f"Step {n}", "status": "done" if more else "pending", "progress": 0.0,
               "checks": []} for n in range(2, 7)]
    return {"goal": "Ship it", "tasks": tasks}


def test_a_small_window_wraps_the_values_and_shows_a_regression_first(window, qtbot, tmp_path: Path) -> None:
    """At 1024x700 the two values of a change were cut at ~150 px (no wrapping), the task
    changes showed four lines, a regression below them."""
    path = tmp_path / "t.db"
    words = "Please do step 4: refactor module m4.py AND add type hints"
    run_id = _two_states(path, {"messages": [{"role": "user", "content": "Please do step 4"}]},
                         {"messages": [{"role": "user", "content": words}]},
                         tasks=(_board("in_progress", True, False), _board("done", False, True)))
    window.resize(1024, 700)
    open_in(window, qtbot, path)
    select_run(window, qtbot, run_id)
    select_checkpoint(window, qtbot, 1)
    panel = _diff_panel(window, qtbot)
    qtbot.waitUntil(lambda: panel.result is not None and not panel.busy, timeout=TIMEOUT)
    qtbot.waitUntil(lambda: words in panel.detail.new.toPlainText(), timeout=TIMEOUT)
    view = panel.detail.new
    assert view.width() < 260                    # (narrow indeed)
    assert view.horizontalScrollBar().maximum() == 0 and view.document().lineCount() > view.document().blockCount()
    lines = panel.summary.task_lines()
    assert len(lines) == 9 and "regression" in lines[0] and "lint" in lines[0]
    tasks = panel.summary.tasks
    assert tasks.viewport().rect().contains(tasks.visualItemRect(tasks.item(0)))


def test_a_big_window_gives_its_height_to_the_details(qtbot, tmp_path: Path) -> None:
    """At 1920x1200 the timeline kept 40% of the height (two rows of a short run in 440 px)
    and a taller window gave it half of its new rows."""
    from inspector.ui.main_window import MainWindow

    path = tmp_path / "s.db"
    _two_states(path, {"a": 1}, {"a": 2})
    window = MainWindow(restore_settings=False)
    qtbot.addWidget(window)
    window.resize(1920, 1200)
    window.show()
    open_in(window, qtbot, path)     # (the panels are sized when they first show, with a store)
    splitter = window.right_splitter
    qtbot.waitUntil(lambda: window._splitters_sized and sum(splitter.sizes()) > 1000)
    qtbot.wait(50)     # (their first sizes are set once the window is laid out)
    top, total = splitter.sizes()[0], sum(splitter.sizes())
    assert top <= 0.3 * total
    window.resize(1920, 1500)
    qtbot.waitUntil(lambda: sum(splitter.sizes()) > total + 200)
    assert splitter.sizes()[0] - top <= (sum(splitter.sizes()) - total) / 3 + 1


def test_a_bytes_cell_shows_its_first_bytes() -> None:
    """The state tree's value cell said "<3 bytes>" for any three bytes (native, or LangGraph's
    base64 marker): two values of one size looked the same."""
    import base64

    from inspector.ui.models.json_walk import preview

    assert preview(b"abc") == "<3 bytes: 61 62 63>" and preview(b"") == "<0 bytes>"
    marker = {"__bytes__": base64.b64encode(bytes(range(40))).decode(), "size": 40}
    assert preview(marker) == preview(bytes(range(40))) == f"<40 bytes: {bytes(range(16)).hex(' ')} …>"
