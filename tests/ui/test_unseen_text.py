"""Text from a store that a window must not draw as it is: control characters (Qt draws them as
empty boxes; ``ESC]0;…BEL`` is a terminal's retitle), bidirectional overrides (they reorder what
follows them) and markup in a plain-text place (a task title of ``<h1>…`` is the agent's text)."""

from __future__ import annotations

import re
from pathlib import Path

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtWidgets import QLabel

from inspector.record import Checkpointer
from inspector.ui.formatting import visible
from tests.ui.conftest import open_in, select_checkpoint, select_run

ESCAPE = "\x1b]0;pwned\x07\x1b[2J\r\x08"
OVERRIDE = "\u202etxt.exe"
UNSEEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def test_visible_escapes_what_a_view_cannot_draw() -> None:
    assert visible("report: heat pumps" + ESCAPE) == "report: heat pumps\\x1b]0;pwned\\x07\\x1b[2J\\r\\x08"
    assert visible("invoice" + OVERRIDE) == "invoice\\u202etxt.exe"
    assert visible("a\nb\tc") == "a \u23ce b\tc"                    # one line: the break is marked
    assert visible("a\nb\tc\x00", lines=True) == "a\nb\tc\\x00"     # several lines keep it
    for text in ("plain", "é → ✓ 中文", "family 👩\u200d👩\u200d👧", ""):   # printable text is left as it is
        assert visible(text) == text


def _store(path: Path) -> str:
    tasks = {"goal": "goal" + ESCAPE,
             "tasks": [{"id": "t1", "title": "<h1>big</h1>" + ESCAPE, "status": "in_progress", "progress": 0.5,
                        "review": {"status": "none"}, "checks": [{"name": "check" + ESCAPE, "passed": True}]}]}
    with Checkpointer(path, name="report" + ESCAPE + OVERRIDE, agent="agent" + ESCAPE) as cp:
        for i in range(3):
            cp.save({"step": i, "note": "note" + ESCAPE, "key" + ESCAPE: i}, kind="tool", name="step" + ESCAPE,
                    tasks=tasks)
        return cp.run_id


def _model_texts(model, parent: QModelIndex = QModelIndex()) -> list[str]:
    texts = []
    for row in range(model.rowCount(parent)):
        for col in range(model.columnCount(parent)):
            index = model.index(row, col, parent)
            for role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
                value = model.data(index, role)
                if isinstance(value, str):
                    texts.append(value)
        child = model.index(row, 0, parent)
        if child.isValid() and model.rowCount(child):
            texts += _model_texts(model, child)
    return texts


def test_a_window_shows_control_characters_and_overrides_as_escapes(window, qtbot, tmp_path: Path) -> None:
    run_id = _store(tmp_path / "s.db")
    open_in(window, qtbot, tmp_path / "s.db")
    select_run(window, qtbot, run_id)
    select_checkpoint(window, qtbot, 2)
    tabs = window.details.tabs
    for key, title in (("metadata", "Metadata"), ("tasks", "Tasks"), ("state", "State")):
        tabs.setCurrentIndex(next(i for i in range(tabs.count()) if tabs.tabText(i).replace("&", "") == title))
        qtbot.waitUntil(lambda key=key: key in window.details.panels, timeout=10_000)   # made when first shown
    tasks = window.details.panels["tasks"]
    qtbot.waitUntil(lambda: any(c.cards for c in tasks.columns.values()), timeout=10_000)

    texts = (_model_texts(window.runs_panel.model) + _model_texts(window.timeline_panel.model)
             + [label.text() for label in window.findChildren(QLabel)] + [window.windowTitle()])
    state_view = window.details.panels["state"]
    for view in state_view.findChildren(type(window.runs_panel.view)):
        texts += _model_texts(view.model())
    drawn = "\n".join(texts)
    assert not UNSEEN.search(drawn), repr(UNSEEN.search(drawn))
    for shown in ("report\\x1b]0;pwned\\x07\\x1b[2J\\r\\x08\\u202etxt.exe",   # runs list, timeline, headers
                  "agent\\x1b]0;pwned", "step\\x1b]0;pwned", "note\\x1b]0;pwned", "key\\x1b]0;pwned",
                  "goal\\x1b]0;pwned", "check\\x1b]0;pwned"):
        assert shown in drawn, shown
    card = next(c for column in tasks.columns.values() for c in column.cards)
    assert card.title.textFormat() == Qt.TextFormat.PlainText      # markup in a title is shown, not obeyed
    assert card.title.text() == "<h1>big</h1>\\x1b]0;pwned\\x07\\x1b[2J\\r\\x08"
