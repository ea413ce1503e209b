"""Every disabled action and button of the main window says why it is disabled and what to do.

Walked in several states: no store, a store open read-only with nothing selected, a completed
run with and without a checkpoint, a LangGraph database without a graph set.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QAbstractButton, QMenu, QTabBar, QWidget

from inspector.store import open_store
from inspector.ui.availability import SEPARATOR
from inspector.ui.main_window import MainWindow
from tests.store.langgraph.conftest import lg_copy, lg_master  # noqa: F401 - fixtures
from tests.ui.conftest import open_in, select_checkpoint, select_run


def _qt_internal(obj: QWidget | QAction) -> bool:
    name = obj.objectName()
    parent = obj.parent()
    return (name.startswith(("qt_", "_q_")) or isinstance(parent, QTabBar)      # tab scroll arrows
            or (parent is not None and parent.objectName().startswith("qt_")))


def _targets(window: MainWindow) -> list[QAction | QAbstractButton]:
    found: dict[int, QAction | QAbstractButton] = {}
    menus = window.findChildren(QMenu)
    for menu in menus:   # menus filled when shown (Open Recent) fill now
        menu.aboutToShow.emit()
    for action in window.findChildren(QAction):
        if not action.isSeparator() and not _qt_internal(action):
            found[id(action)] = action
    for menu in menus:   # menus' actions (the Open Recent entries too)
        for action in menu.actions():
            if not action.isSeparator() and action.menu() is None:
                found[id(action)] = action
    for button in window.findChildren(QAbstractButton):
        if not _qt_internal(button):
            found[id(button)] = button
    return list(found.values())


def _unexplained(window: MainWindow) -> list[str]:
    bad = []
    disabled = [t for t in _targets(window) if not t.isEnabled()]
    for target in disabled:
        label = (target.text() or target.toolTip() or type(target).__name__).replace("&", "")
        tips = [target.toolTip()] + ([target.statusTip()] if isinstance(target, QAction) else [])
        for tip in tips:
            reason = tip.split(SEPARATOR, 1)[1] if SEPARATOR in tip else ""
            if len(reason.strip()) < 10:
                bad.append(f"{label!r}: {tip!r}")
    return bad


def _count_disabled(window: MainWindow) -> int:
    return sum(not t.isEnabled() for t in _targets(window))


def test_every_disabled_action_says_why(window, qtbot, demo_store: Path, lg_copy: Path,
                                        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHECKPOINT_INSPECTOR_CONFIG_DIR", str(tmp_path / "config"))
    # no store: most actions are disabled
    assert _count_disabled(window) >= 8
    assert _unexplained(window) == []
    assert "open a store first" in window.run_actions.fork.toolTip()
    # (Go to State … did nothing and said nothing with no store)
    assert not any(a.isEnabled() for a in window.menu_actions.go_to_tabs)
    # a store open read-only, nothing selected
    open_in(window, qtbot, demo_store)
    assert window.session.info.read_only
    window.storage.ensure_view()            # the Storage dock's buttons too
    assert _unexplained(window) == []
    assert all(a.isEnabled() for a in window.menu_actions.go_to_tabs)
    assert "select a run" in window.run_actions.fork.statusTip()
    assert "select a checkpoint" in window.menu_actions.copy_ref.toolTip()
    # a completed run, then one of its checkpoints; then a run that is not a fork
    with open_store(demo_store) as st:
        completed = next(r for r in st.list_runs() if r.status == "completed" and not r.parent_run)
    select_run(window, qtbot, completed.id)
    assert _unexplained(window) == []
    select_checkpoint(window, qtbot, 2)
    assert window.menu_actions.copy_ref.isEnabled() and window.run_actions.fork.isEnabled()
    window.details.set_tab("diff")
    qtbot.waitUntil(lambda: "diff" in window.details.panels, timeout=10_000)
    diff = window.details.panels["diff"]
    assert _unexplained(window) == []
    assert not diff.origin_action.isEnabled() and "not a fork" in diff.origin_action.toolTip()
    # a LangGraph database with no graph set
    open_in(window, qtbot, lg_copy)
    assert window.session.info.kind == "langgraph"
    assert _unexplained(window) == []
    tip = window.storage.pin.toolTip()      # (it said "a langgraph store, where prune does not apply": it does)
    assert not window.storage.pin.isEnabled() and "a LangGraph database has no place for them" in tip
    assert "prune does not apply" not in tip
    # and back to no store
    window.session.close()
    qtbot.waitUntil(lambda: window.session.info is None, timeout=10_000)
    assert _unexplained(window) == []
