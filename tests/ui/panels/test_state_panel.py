"""The State tab: tree, conversation, raw JSON, find, copy, and superseded snapshots."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from inspector.ui.models.state_tree_model import PATH_ROLE
from inspector.ui.widgets.state_panel import CONVERSATION, RAW, TREE, StatePanel


def _panel(qtbot) -> StatePanel:
    panel = StatePanel()
    qtbot.addWidget(panel)
    panel.resize(900, 700)
    panel.show()
    return panel


def test_tree_shows_the_top_level_keys_and_header(qtbot, snap_at, beekeeping) -> None:
    snap = snap_at(14)
    panel = _panel(qtbot)
    panel.show_snapshot(snap, beekeeping)
    model = panel.tree_view.model
    assert [model.index(r, 0).data() for r in range(model.rowCount())] == list(snap.state)
    header = panel.header.text()
    assert "report: urban beekeeping" in header and "#14" in header and snap.info.name in header


def test_find_selects_a_match_and_steps(qtbot, snap_at, beekeeping) -> None:
    panel = _panel(qtbot)
    panel.show_snapshot(snap_at(14), beekeeping)
    with qtbot.waitSignal(panel.tree_view.match_changed, timeout=5000):
        qtbot.keyClicks(panel.find_bar.field, "word_count")
        panel.find_bar.flush()
    matches = panel.tree_view.matches
    assert len(matches) >= 2   # the tool message's text and the log entry
    current = panel.tree_view.tree.currentIndex().data(PATH_ROLE)
    assert current == matches[0]
    assert "1 of" in panel.find_bar._count.text()
    with qtbot.waitSignal(panel.tree_view.match_changed, timeout=5000):
        qtbot.keyClick(panel.find_bar.field, Qt.Key.Key_Return)
    assert panel.tree_view.tree.currentIndex().data(PATH_ROLE) == matches[1]


def test_copy_path_and_value(qtbot, snap_at, beekeeping) -> None:
    snap = snap_at(14)
    panel = _panel(qtbot)
    panel.show_snapshot(snap, beekeeping)
    tree = panel.tree_view
    assert tree.select_path(("messages", 3, "content"))
    tree.tree.setFocus()
    qtbot.keyClick(tree.tree, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert QGuiApplication.clipboard().text() == "messages[3].content"
    qtbot.keyClick(tree.tree, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QGuiApplication.clipboard().text() == snap.state["messages"][3]["content"]
    assert tree.select_path(("files",))
    assert json.loads(tree.copy_value()) == snap.state["files"]


def test_detail_pane_shows_long_text_in_full(qtbot, snap_at, beekeeping) -> None:
    snap = snap_at(14)
    panel = _panel(qtbot)
    panel.show_snapshot(snap, beekeeping)
    index = panel.tree_view.model.index_for_path(("draft",))
    assert index.data(Qt.ItemDataRole.DisplayRole).endswith("") and len(snap.state["draft"]) > 160
    assert panel.tree_view.model.index(index.row(), 1).data().endswith("…")
    panel.tree_view.show_full_text(index)
    assert panel.tree_view.detail.text.toPlainText() == snap.state["draft"]


def test_expanded_paths_survive_a_new_snapshot(qtbot, snap_at, beekeeping) -> None:
    panel = _panel(qtbot)
    panel.show_snapshot(snap_at(10), beekeeping)
    tree = panel.tree_view
    tree.tree.expand(tree.model.index_for_path(("files",)))
    tree.select_path(("files", "notes.md"))
    panel.show_snapshot(snap_at(11), beekeeping)
    assert tree.tree.isExpanded(tree.model.index_for_path(("files",)))
    assert tree.selected_path() == ("files", "notes.md")


def test_conversation_has_one_bubble_per_message(qtbot, snap_at, beekeeping) -> None:
    snap = snap_at(14)
    panel = _panel(qtbot)
    panel.show_snapshot(snap, beekeeping)
    with qtbot.waitSignal(panel.conversation.conversation_ready, timeout=5000):
        panel.set_mode(CONVERSATION)
    assert panel.conversation.model.rowCount() == len(snap.state["messages"])
    index, count = panel.conversation.find_text("calculator")
    assert (index, count) == (0, 1)
    row = panel.conversation.list_view.currentIndex().row()
    assert "calculator" in snap.state["messages"][row]["content"]


def test_raw_json_is_highlighted_and_searchable(qtbot, snap_at, beekeeping) -> None:
    snap = snap_at(14)
    panel = _panel(qtbot)
    panel.show_snapshot(snap, beekeeping)
    with qtbot.waitSignal(panel.raw.text_ready, timeout=5000):
        panel.set_mode(RAW)
    assert panel.raw.toPlainText() == json.dumps(snap.state, indent=2, ensure_ascii=False)
    first = panel.raw.document().findBlockByNumber(1)
    qtbot.waitUntil(lambda: len(first.layout().formats()) > 0, timeout=5000)
    with qtbot.waitSignal(panel.raw.match_changed, timeout=5000):
        qtbot.keyClicks(panel.find_bar.field, "editorial")
        panel.find_bar.flush()
    assert panel.raw.textCursor().selectedText().lower() == "editorial"


def test_the_last_snapshot_wins(qtbot, snap_at, beekeeping) -> None:
    panel = _panel(qtbot)
    panel.set_mode(RAW)
    snaps = [snap_at(seq) for seq in range(5, 15)]
    for snap in snaps:
        panel.show_snapshot(snap, beekeeping)
    last = snaps[-1]
    qtbot.waitUntil(lambda: not panel.raw.busy, timeout=5000)
    assert panel.raw.toPlainText() == json.dumps(last.state, indent=2, ensure_ascii=False)
    assert f"#{last.info.seq}" in panel.header.text()
    panel.set_mode(TREE)
    assert panel.tree_view.model.value() is last.state


def test_clearing(qtbot, snap_at, beekeeping) -> None:
    """Without a checkpoint the tab is its sentence alone (no empty tree, toolbar or detail
    pane); a checkpoint brings them back."""
    panel = _panel(qtbot)
    assert panel.empty.isVisible() and not panel.tree_view.isVisible()
    panel.show_snapshot(snap_at(3), beekeeping)
    assert panel.tree_view.isVisible() and panel.find_bar.isVisible() and not panel.empty.isVisible()
    panel.show_snapshot(None, None)
    assert panel.tree_view.model.rowCount() == 0
    assert panel.empty.isVisible() and not panel.tree_view.isVisible() and not panel.find_bar.isVisible()
    assert panel.empty.text().startswith("No checkpoint selected")


def test_a_damaged_checkpoint_says_so_in_its_header(qtbot, snap_at, beekeeping) -> None:
    import dataclasses
    panel = _panel(qtbot)
    snap = snap_at(14)
    panel.show_snapshot(dataclasses.replace(snap, problems=("pending write 'log' of task t: cannot be decoded",)),
                        beekeeping)
    assert "damaged: 1 part" in panel.header.text()
    assert "damaged: pending write 'log' of task t: cannot be decoded" in panel.header.toolTip()
    panel.show_snapshot(snap, beekeeping)
    assert "damaged" not in panel.header.text()


def _highlighted(panel: StatePanel) -> dict[str, int]:
    """How many matches each mode marks now."""
    from inspector.ui.models.conversation_model import MATCH_ROLE
    model = panel.conversation.model
    return {"tree": len(panel.tree_view.matches), "raw": len(panel.raw.extraSelections()),
            "conversation": sum(bool(model.index(r).data(MATCH_ROLE)) for r in range(model.rowCount()))}


def _find(qtbot, panel: StatePanel, text: str) -> None:
    panel.find_bar.field.setFocus()
    panel.find_bar.field.selectAll()
    if text:
        qtbot.keyClicks(panel.find_bar.field, text)
    else:
        qtbot.keyClick(panel.find_bar.field, Qt.Key.Key_Backspace)
    panel.find_bar.flush()


def test_clearing_the_find_field_clears_every_modes_highlights(qtbot, snap_at, beekeeping) -> None:
    """Found in the tree, the raw JSON and the conversation, cleared while in one of them:
    none keeps its marks, also after switching mode or showing another checkpoint."""
    panel = _panel(qtbot)
    panel.show_snapshot(snap_at(14), beekeeping)
    with qtbot.waitSignal(panel.tree_view.match_changed, timeout=5000):
        _find(qtbot, panel, "calculator")
    panel.set_mode(RAW)
    qtbot.waitUntil(lambda: _highlighted(panel)["raw"] > 0, timeout=5000)
    panel.set_mode(CONVERSATION)      # each mode shown searches the text
    qtbot.waitUntil(lambda: _highlighted(panel)["conversation"] > 0, timeout=5000)
    assert all(_highlighted(panel).values()), _highlighted(panel)
    _find(qtbot, panel, "")
    qtbot.waitUntil(lambda: not any(_highlighted(panel).values()), timeout=5000)
    panel.set_mode(TREE)
    panel.set_mode(RAW)
    panel.show_snapshot(snap_at(15), beekeeping)
    qtbot.waitUntil(lambda: not panel.raw.busy, timeout=5000)
    panel.set_mode(TREE)
    qtbot.wait(100)        # (a search of a stale text would finish in this time)
    assert not any(_highlighted(panel).values()), _highlighted(panel)
    assert panel.find_bar._count.text() == ""


def test_another_checkpoint_is_searched_for_the_current_text_only(qtbot, snap_at, beekeeping) -> None:
    panel = _panel(qtbot)
    panel.show_snapshot(snap_at(14), beekeeping)
    with qtbot.waitSignal(panel.tree_view.match_changed, timeout=5000):
        _find(qtbot, panel, "calculator")
    with qtbot.waitSignal(panel.conversation.conversation_ready, timeout=5000):
        panel.set_mode(CONVERSATION)
    _find(qtbot, panel, "editorial")      # a new text, typed in the conversation
    with qtbot.waitSignal(panel.conversation.conversation_ready, timeout=5000):
        panel.show_snapshot(snap_at(15), beekeeping)
    qtbot.waitUntil(lambda: _highlighted(panel)["conversation"] > 0, timeout=5000)
    with qtbot.waitSignal(panel.tree_view.match_changed, timeout=5000):
        panel.set_mode(TREE)
    assert panel.tree_view.matches and all("calculator" not in json.dumps(p) for p in panel.tree_view.matches)
    assert panel.tree_view._needle == "editorial"
