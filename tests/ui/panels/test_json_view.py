"""The JSON text view: baked highlighting off the GUI thread, long strings, live editing."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt

from inspector.highlight import MAX_LINE
from inspector.ui.widgets.json_view import JsonView


def test_value_is_formatted_and_highlighted(qtbot) -> None:
    view = JsonView()
    qtbot.addWidget(view)
    value = {"name": "bees", "count": 3, "ok": True}
    with qtbot.waitSignal(view.text_ready, timeout=5000):
        view.set_value(value)
    assert json.loads(view.toPlainText()) == value
    formats = view.document().findBlockByNumber(1).layout().formats()
    assert {(f.start, f.length) for f in formats} >= {(2, 6)}   # the key "name"
    assert view.path_at_line(2) == ("count",)
    assert view.line_of_path(("ok",)) == 3


def test_giant_strings_are_shortened_for_display(qtbot) -> None:
    view = JsonView()
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.text_ready, timeout=5000):
        view.set_value({"blob": "z" * (MAX_LINE * 5)})
    line = view.document().findBlockByNumber(1).text()
    assert len(line) < MAX_LINE + 60 and "characters]" in line


def test_find_wraps_around(qtbot) -> None:
    view = JsonView()
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.text_ready, timeout=5000):
        view.set_value({"a": "needle", "b": ["Needle", "hay"]})
    with qtbot.waitSignal(view.match_changed) as first:
        view.find_text("needle", restart=True)
    assert first.args == [0, 2]
    view.find_text("needle")
    with qtbot.waitSignal(view.match_changed) as third:
        view.find_text("needle")
    assert third.args == [0, 2]
    assert view.textCursor().selectedText() == "needle"


def test_editable_view_highlights_lines_as_they_change(qtbot) -> None:
    view = JsonView(editable=True)
    qtbot.addWidget(view)
    view.show()
    with qtbot.waitSignal(view.text_ready, timeout=5000):
        view.set_value({"a": 1})
    assert not view.isReadOnly()
    view.moveCursor(view.textCursor().MoveOperation.End)
    qtbot.keyClick(view, Qt.Key.Key_Return)
    qtbot.keyClicks(view, '"added": true')
    block = view.document().lastBlock()
    assert block.text() == '"added": true'
    qtbot.waitUntil(lambda: len(block.layout().formats()) >= 2, timeout=5000)
