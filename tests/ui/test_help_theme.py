"""Help ▸ Keyboard Shortcuts, Usage Guide (the README, offline) and About, and View ▸ Theme, at
1024x700 and 1600x1000; after a theme switch every view is drawn in the new theme's colours."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QTableWidget, QTextBrowser, QWidget

from inspector.store import open_store
from inspector.ui import style
from tests.ui.conftest import open_in, select_checkpoint, select_run
from tests.ui.layout_check import cut_off_widgets, overlapping_widgets

SIZES = [pytest.param((1024, 700), id="1024x700"), pytest.param((1600, 1000), id="1600x1000")]


def _open_help(window, qtbot, action) -> QWidget:
    action.trigger()
    dialog = window.help_dialog
    qtbot.waitUntil(dialog.isVisible, timeout=5_000)
    return dialog


@pytest.mark.parametrize("size", SIZES)
def test_help_dialogs_and_theme_menu(window, qtbot, size) -> None:
    window.resize(*size)
    actions = window.menu_actions
    shortcuts = _open_help(window, qtbot, actions.shortcuts)
    table = shortcuts.findChild(QTableWidget, "shortcutsTable")
    assert table.rowCount() >= 15 and table.item(0, 0).text()
    usage = _open_help(window, qtbot, actions.usage)
    text = usage.findChild(QTextBrowser, "usageBrowser").toPlainText()
    assert "pip install -e . && checkpoint-inspector demo" in text and "RUN:SEQ" in text   # the README, offline
    about = _open_help(window, qtbot, actions.about)
    assert "Checkpoint Inspector" in about.findChild(QTextBrowser, "aboutText").toPlainText()
    for action in (actions.shortcuts, actions.usage, actions.about):
        dialog = _open_help(window, qtbot, action)
        assert dialog.width() <= size[0] and dialog.height() <= size[1]      # fits the window's screen
        assert overlapping_widgets(dialog) == [] and cut_off_widgets(dialog) == []
    window.help_dialog.close()
    modes = {a.data(): a for a in actions.theme_group.actions()}
    assert set(modes) == {"auto", "light", "dark"}
    modes["dark"].trigger()
    assert style.current_mode() == "dark" and modes["dark"].isChecked() and not modes["light"].isChecked()
    modes["light"].trigger()
    assert style.current_mode() == "light" and modes["light"].isChecked()


def _bright_share(widget: QWidget) -> float:
    image = widget.grab().toImage()
    total = bright = 0
    for y in range(0, image.height(), 3):
        for x in range(0, image.width(), 3):
            total += 1
            bright += image.pixelColor(x, y).lightness() > 200
    return bright / max(total, 1)


def _icon_lightness(icon) -> float:
    image: QImage = icon.pixmap(24, 24).toImage()
    seen = [image.pixelColor(x, y) for y in range(24) for x in range(24)]
    ink = [c.lightness() for c in seen if c.alpha() > 128]
    return sum(ink) / max(len(ink), 1)


def test_every_view_repaints_after_a_theme_switch(window, qtbot, demo_store: Path, qapp: QApplication) -> None:
    open_in(window, qtbot, demo_store)
    with open_store(demo_store) as st:
        crashed = next(r for r in st.list_runs() if r.labels.get("seed") == 5)
    select_run(window, qtbot, crashed.id)
    select_checkpoint(window, qtbot, crashed.head_seq)
    for tab in ("tasks", "metadata", "diff", "state"):
        window.details.set_tab(tab)
        qtbot.waitUntil(lambda t=tab: t in window.details.panels, timeout=10_000)
    window.storage.dock.show()
    storage = window.storage.ensure_view()
    qtbot.waitUntil(lambda: storage.report is not None, timeout=20_000)
    qtbot.waitUntil(window.run_notice.isVisible, timeout=10_000)
    chip_before = window.store_status.readonly_chip.styleSheet()
    open_icon = window.menu_actions.open.icon()
    assert _icon_lightness(open_icon) < 100                     # dark ink on the light theme
    next(a for a in window.menu_actions.theme_group.actions() if a.data() == "dark").trigger()
    qtbot.wait(50)
    views = {"runs": window.runs_panel, "timeline": window.timeline_panel, "notice": window.run_notice,
             "status bar": window.statusBar(), "toolbar": window.menu_actions.toolbar, "storage": storage}
    for tab in ("tasks", "metadata", "diff", "state"):
        window.details.set_tab(tab)
        views[f"{tab} tab"] = window.details.panels[tab]
        qtbot.wait(20)
        assert _bright_share(window.details.panels[tab]) < 0.2, f"{tab} tab still light"
    bright = {name: round(_bright_share(view), 2) for name, view in views.items() if not name.endswith("tab")}
    assert all(share < 0.2 for share in bright.values()), bright
    assert _icon_lightness(window.menu_actions.open.icon()) > 150      # the same icon, drawn light now
    assert window.store_status.readonly_chip.styleSheet() != chip_before   # chips re-coloured
