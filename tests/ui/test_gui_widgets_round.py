"""The window driven as its users do: a pair picked on the Diff tab, a theme switched with the
Diff open, the keyboard through the panes and tabs, the Diff at 1024x700, the runs filter."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from tests.ui.conftest import open_in, select_checkpoint, select_run


def _longest_run(window) -> str:
    return max(window.runs_panel.model.tree.by_id.values(), key=lambda n: n.run.checkpoint_count).run.id


def _diff_of(window, qtbot, seq: int):
    """The Diff tab showing checkpoint ``seq`` of the longest run, its comparison done."""
    select_run(window, qtbot, _longest_run(window))
    window.details.set_tab("diff")
    select_checkpoint(window, qtbot, seq)
    diff = window.details.panels["diff"]
    qtbot.waitUntil(lambda: diff.result is not None and diff.result.b.seq == seq and not diff.busy, timeout=10_000)
    return diff


def test_ctrl_clicking_a_second_checkpoint_on_the_diff_tab_compares_the_two(window, qtbot, demo_store: Path) -> None:
    """The pair's snapshots and the current checkpoint's snapshot arrive in either order: the
    current one's (compared with its parent) came last and replaced the pair."""
    open_in(window, qtbot, demo_store)
    diff = _diff_of(window, qtbot, 3)
    timeline = window.timeline_panel
    rect = timeline.view.visualRect(timeline.model.index(9, 2))
    with qtbot.waitSignal(window.details.pair_loaded, timeout=10_000):
        qtbot.mouseClick(timeline.view.viewport(), Qt.MouseButton.LeftButton,
                         Qt.KeyboardModifier.ControlModifier, rect.center())
    qtbot.waitUntil(lambda: window.details.snapshot is not None and window.details.snapshot.info.seq == 9
                    and not diff.busy, timeout=10_000)
    assert [c.seq for c in window.selected_checkpoints()] == [3, 9]
    assert (diff.result.a.seq, diff.result.b.seq) == (3, 9)
    assert diff.base_button.text().startswith("#3 (selected)")
    # one checkpoint selected again (the current one): compared with its parent again
    qtbot.mouseClick(timeline.view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                     rect.center())
    qtbot.waitUntil(lambda: diff.result is not None and (diff.result.a.seq, diff.result.b.seq) == (8, 9)
                    and not diff.busy, timeout=10_000)
    assert [c.seq for c in window.selected_checkpoints()] == [9]


def _contrast(a, b) -> float:
    """The WCAG contrast ratio of two colours."""
    from inspector.ui.widgets.palette import _luminance
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def _line_backgrounds(view) -> set[str]:
    doc, names = view.document(), set()
    block = doc.firstBlock()
    while block.isValid():
        brush = block.blockFormat().background()
        if brush.style() == Qt.BrushStyle.SolidPattern:
            names.add(brush.color().name())
        block = block.next()
    return names


def test_switching_the_theme_redraws_the_open_diff_in_the_new_colours(window, qtbot, demo_store: Path,
                                                                     qapp) -> None:
    """View ▸ Theme ▸ Dark with the Diff tab showing: the changed lines kept their light tint,
    the kind chips their light colours and a task change line stayed black, on dark."""
    from inspector.highlight import theme_for
    from inspector.ui.widgets.checkpoint_header import kind_chip
    from inspector.ui.widgets.palette import is_dark

    from inspector.ui.models.state_tree_model import VALUE, VALUE_ROLE
    from inspector.ui.widgets.state_tree_view import StateTreeView

    open_in(window, qtbot, demo_store)
    window.details.set_tab("state")
    diff = _diff_of(window, qtbot, 12)
    light = theme_for(False).changed_bg
    assert light in _line_backgrounds(diff.sides.right)
    tree = window.details.panels["state"].findChild(StateTreeView).model
    with qtbot.waitSignal(tree.dataChanged, timeout=5000):     # the State tab, hidden, repaints its values
        window.set_theme("dark")
    assert is_dark(qapp.palette())
    dark = theme_for(True).changed_bg
    qtbot.waitUntil(lambda: dark in _line_backgrounds(diff.sides.right) and not diff.busy, timeout=10_000)
    assert light not in _line_backgrounds(diff.sides.right) | _line_backgrounds(diff.sides.left)
    assert kind_chip(diff.target, diff.result.b.kind) in diff.target.text()
    assert kind_chip(diff.target, diff.result.a.kind) in diff.sides.left_title.text()
    tasks = diff.summary.tasks
    base = tasks.palette().color(tasks.palette().ColorRole.Base)
    for row in range(tasks.count()):
        brush = tasks.item(row).foreground()
        color = brush.color() if brush.style() != Qt.BrushStyle.NoBrush else tasks.palette().color(
            tasks.palette().ColorRole.Text)
        assert _contrast(color, base) >= 3, tasks.item(row).text()
    assert _contrast(diff.model.index(0, 0).data(Qt.ItemDataRole.ForegroundRole), base) >= 3
    header = window.details.panels["state"].header     # its kind chip too
    assert kind_chip(header, diff.result.b.kind) in header.text()
    row = next(r for r in range(tree.rowCount()) if isinstance(tree.index(r, VALUE).data(VALUE_ROLE), str))
    assert tree.index(row, VALUE).data(Qt.ItemDataRole.ForegroundRole).name() == theme_for(True).tokens["string"]


def test_tab_leaves_the_timeline_and_alt_keys_reach_each_detail_tab(window, qtbot, demo_store: Path) -> None:
    """Tab moved from cell to cell inside the timeline (never out of it) and every few presses
    selected the next checkpoint; State, Tasks, Metadata and Diff had no key."""
    from PySide6.QtWidgets import QApplication, QTableWidget

    open_in(window, qtbot, demo_store)
    select_run(window, qtbot, _longest_run(window))
    select_checkpoint(window, qtbot, 5)
    window.activateWindow()
    timeline = window.timeline_panel
    timeline.view.setFocus()
    qtbot.waitUntil(timeline.view.hasFocus)
    for _ in range(12):
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        assert timeline.current_checkpoint().seq == 5 and timeline.view.currentIndex().column() == 0
    assert not timeline.view.hasFocus()
    timeline.view.setFocus()
    qtbot.keyClick(timeline.view, Qt.Key.Key_Tab)
    assert not timeline.view.hasFocus() and timeline.current_checkpoint().seq == 5
    for key, tab in ((Qt.Key.Key_6, "diff"), (Qt.Key.Key_4, "tasks"), (Qt.Key.Key_5, "metadata"),
                     (Qt.Key.Key_3, "state")):
        qtbot.keyClick(QApplication.focusWidget(), key, Qt.KeyboardModifier.AltModifier)
        assert window.details.current_tab() == tab
        qtbot.waitUntil(lambda: window.details.isAncestorOf(QApplication.focusWidget()))
    window.menu_actions.shortcuts.trigger()
    table = window.help_dialog.findChild(QTableWidget, "shortcutsTable")
    rows = {table.item(r, 1).text(): table.item(r, 0).text() for r in range(table.rowCount())}
    assert [rows[f"Go to {name}"] for name in ("State", "Tasks", "Metadata", "Diff")] == \
        ["Alt+3", "Alt+4", "Alt+5", "Alt+6"]
    actions = {id(a): a for a in window._all_actions()}.values()    # (an action may be in two menus)
    keys = [a.shortcut().toString() for a in actions if not a.shortcut().isEmpty()]
    assert len(keys) == len(set(keys))     # no two of the window's actions share keys
    window.help_dialog.close()


def test_the_diff_header_and_panes_at_1024x700_with_the_console_open(window, qtbot, demo_store: Path) -> None:
    """At 1024x700 with the Console open, comparing with another run or a fork's origin: the
    target label was clipped ("→ #0 [for"), the summary's second line cut in half, the change
    list showed one or two rows; the State tree had three rows under an empty value pane."""
    from inspector.ui.widgets.state_tree_view import StateTreeView

    window.resize(1024, 700)
    open_in(window, qtbot, demo_store)
    window.run_actions.console.show()
    runs = {n.run.name: n.run for n in window.runs_panel.model.tree.by_id.values()}
    fork = next(r for r in runs.values() if r.parent_run)
    select_run(window, qtbot, fork.id)
    select_checkpoint(window, qtbot, 6)
    window.details.set_tab("state")
    tree = window.details.panels["state"].findChild(StateTreeView)
    qtbot.waitUntil(lambda: tree.tree.height() > tree.detail.height() > 0)
    window.details.set_tab("diff")
    diff = window.details.panels["diff"]
    qtbot.waitUntil(lambda: diff.result is not None and not diff.busy, timeout=10_000)
    other = next(r for r in runs.values() if r.id not in (fork.id, fork.parent_run) and r.checkpoint_count > 3)
    for compare in (diff.compare_with_origin, lambda: diff.choose_base(f"{other.id}:3")):
        compare()
        qtbot.waitUntil(lambda: diff.result is not None and diff.result.b.run_id == fork.id and not diff.busy
                        and diff.result.a.run_id != fork.id, timeout=10_000)
        assert window.height() == 700 and window.minimumSizeHint().height() <= 700
        target = diff.target
        qtbot.waitUntil(lambda: 0 < diff.target.sizeHint().width() <= diff.target.width())   # shortened, not clipped
        name = diff.result.b.name
        assert target.toolTip() == "" if name in target.text() else name in target.toolTip()
        label = diff.summary.summary
        lines = label.heightForWidth(label.width()) // label.fontMetrics().lineSpacing()
        assert label.height() >= min(lines, 2) * label.fontMetrics().lineSpacing()
        rows = diff.changes.viewport().height() // diff.changes.sizeHintForRow(0)
        assert rows >= 4


def test_the_runs_filter_box_keys_and_a_fork_kept_unfolded_across_filters(window, qtbot, demo_store: Path) -> None:
    """Down and Enter in the filter box did nothing, Esc left the text; clearing the Status
    filter folded the forks of a run it had hidden."""
    from inspector.store import open_store

    open_in(window, qtbot, demo_store)
    panel = window.runs_panel
    with open_store(demo_store) as store:
        runs = store.list_runs()
    fork = next(r for r in runs if r.parent_run)
    parent = next(r for r in runs if r.id == fork.parent_run)
    hiding = next(r.status for r in runs if r.status != parent.status and not r.parent_run)

    def parent_row():
        return panel.proxy.mapFromSource(panel.model.run_index(parent.id))
    assert panel.view.isExpanded(parent_row())
    panel.set_status_filter((hiding,))
    assert not parent_row().isValid()
    panel.set_status_filter(())
    assert panel.view.isExpanded(parent_row())
    panel.view.collapse(parent_row())           # folded by the user: stays folded
    panel.set_status_filter((hiding,))
    panel.set_status_filter(())
    assert not panel.view.isExpanded(parent_row())

    window.activateWindow()
    other = next(r for r in runs if not r.parent_run and r.id != parent.id)
    panel.focus_filter()
    qtbot.keyClicks(panel.filter_edit, other.name)
    with qtbot.waitSignal(panel.run_selected, check_params_cb=lambda run: run.id == other.id):
        qtbot.keyClick(panel.filter_edit, Qt.Key.Key_Down)
    assert panel.view.hasFocus() and panel.proxy.rowCount() == 1
    panel.focus_filter()
    qtbot.keyClick(panel.filter_edit, Qt.Key.Key_Escape)
    assert panel.filter_edit.text() == "" and panel.proxy.text == ""
    qtbot.keyClicks(panel.filter_edit, parent.name)
    with qtbot.waitSignal(panel.run_selected, check_params_cb=lambda run: run.id == parent.id):
        qtbot.keyClick(panel.filter_edit, Qt.Key.Key_Return)
    assert panel.view.hasFocus() and window.current_run().id == parent.id


def test_switching_the_theme_redraws_the_metadata_tab(window, qtbot, demo_store: Path) -> None:
    """The Metadata tab's kind chip kept its light colours after View ▸ Theme ▸ Dark."""
    from PySide6.QtWidgets import QLabel

    from inspector.ui.widgets.checkpoint_header import kind_chip

    open_in(window, qtbot, demo_store)
    select_run(window, qtbot, _longest_run(window))
    select_checkpoint(window, qtbot, 3)
    window.details.set_tab("metadata")
    panel = window.details.panels["metadata"]
    qtbot.waitUntil(lambda: panel._snapshot is not None, timeout=10_000)
    qtbot.wait(500)      # (its look-ups done: nothing else draws the rows again)
    kind = panel._snapshot.info.kind

    def texts() -> str:
        return "".join(label.text() for label in panel.checkpoint.findChildren(QLabel))
    assert kind_chip(panel.checkpoint.title, kind) in texts()
    light = kind_chip(panel.checkpoint.title, kind)
    window.set_theme("dark")
    qtbot.waitUntil(lambda: kind_chip(panel.checkpoint.title, kind) != light, timeout=5000)
    qtbot.waitUntil(lambda: kind_chip(panel.checkpoint.title, kind) in texts(), timeout=5000)
