"""The panels' Qt models pass qtmodeltester on real snapshots and load big lists lazily."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt

from inspector.diff import diff_checkpoints
from inspector.ui.models.change_list_model import CHANGE_ROLE, ChangeListModel
from inspector.ui.models.conversation_model import MESSAGE_ROLE, ConversationModel
from inspector.ui.models.messages import build_conversation
from inspector.ui.models.state_tree_model import BATCH, PATH_ROLE, PATH_TEXT_ROLE, StateTreeModel


def test_state_tree_model_passes_modeltester(qtmodeltester, snap_at) -> None:
    model = StateTreeModel()
    model.set_value(snap_at(14).state)
    qtmodeltester.check(model, force_py=True)


def test_state_tree_top_level_rows_are_the_state_keys(snap_at) -> None:
    state = snap_at(14).state
    model = StateTreeModel()
    model.set_value(state)
    keys = [model.index(r, 0).data() for r in range(model.rowCount())]
    assert keys == list(state)
    messages = model.index(keys.index("messages"), 1)
    assert messages.data() == f"[{len(state['messages'])} items]"
    assert model.index(keys.index("messages"), 2).data() == "array"


def test_state_tree_children_load_in_batches(qtmodeltester) -> None:
    value = {"big": list(range(BATCH * 2 + 7))}
    model = StateTreeModel()
    model.set_value(value)
    big = model.index(0, 0)
    assert model.hasChildren(big) and model.rowCount(big) == 0
    assert model.canFetchMore(big)
    model.fetchMore(big)
    assert model.rowCount(big) == BATCH
    index = model.index_for_path(("big", BATCH * 2 + 3))
    assert index.isValid() and index.data(PATH_ROLE) == ("big", BATCH * 2 + 3)
    assert index.data(PATH_TEXT_ROLE) == f"big[{BATCH * 2 + 3}]"
    qtmodeltester.check(model, force_py=True)


def test_state_tree_scalar_root(qtmodeltester) -> None:
    model = StateTreeModel()
    model.set_value("just text")
    assert model.rowCount() == 1
    assert model.index(0, 1).data() == "just text"
    assert model.index(0, 0).data(PATH_ROLE) == ()
    qtmodeltester.check(model, force_py=True)


def test_conversation_model_passes_modeltester(qtmodeltester, snap_at) -> None:
    state = snap_at(14).state
    model = ConversationModel()
    model.set_conversation(build_conversation(state, ("messages",)))
    assert model.rowCount() == len(state["messages"])
    assert model.index(0).data(MESSAGE_ROLE).role == "user"
    qtmodeltester.check(model, force_py=True)


def test_change_list_model_passes_modeltester(qtmodeltester, panels_store, beekeeping) -> None:
    result = diff_checkpoints(panels_store, f"{beekeeping.id}:14", f"{beekeeping.id}:15")
    model = ChangeListModel()
    model.set_changes(result.changes)
    assert model.rowCount() == len(result.changes) > 0
    assert model.index(0, 0).data(CHANGE_ROLE) == result.changes[0]
    assert model.index(0, 1).data(Qt.ItemDataRole.DisplayRole) == result.changes[0].display_path
    assert model.rowCount(model.index(0, 0)) == 0 and model.rowCount(QModelIndex()) > 0
    qtmodeltester.check(model, force_py=True)


def test_change_list_rows_group_items_added_together(qtmodeltester) -> None:
    from inspector.diff import ADDED, diff_values
    from inspector.diff.grouping import ItemRange

    old = {"messages": [{"content": f"m{i}"} for i in range(10)], "step": 1}
    new = {"messages": old["messages"] + [{"content": f"n{i}"} for i in range(6)], "step": 2}
    model = ChangeListModel()
    model.set_changes(diff_values(old, new))
    assert model.rowCount() == 2
    row = model.index(0, 0).data(CHANGE_ROLE)
    assert isinstance(row, ItemRange) and row.op == ADDED and row.new == new["messages"][10:]
    assert model.index(0, 1).data(Qt.ItemDataRole.DisplayRole) == "messages[10…15]"
    assert model.index(0, 2).data(Qt.ItemDataRole.DisplayRole) == "6 items added: {\"content\": \"n0\"}, …"
    assert model.index(0, 0).data(Qt.ItemDataRole.DisplayRole) == "+"
    qtmodeltester.check(model, force_py=True)
