"""Help ▸ Usage Guide (the README, offline), Keyboard Shortcuts, About; View ▸ Theme."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication, QTableWidget, QTextBrowser

from inspector.ui import style


def test_help_menu_offers_usage_shortcuts_and_about(window, qtbot) -> None:
    titles = [a.text().replace("&", "") for a in window.menu_actions.help_menu.actions() if not a.isSeparator()]
    assert titles[:2] == ["Usage Guide", "Keyboard Shortcuts"] and "About Checkpoint Inspector" in titles
    window.menu_actions.usage.trigger()
    browser = window.help_dialog.findChild(QTextBrowser, "usageBrowser")
    text = browser.toPlainText()
    assert "Checkpoint Inspector" in text and "checkpoint-inspector demo" in text and "RUN:SEQ" in text
    window.menu_actions.shortcuts.trigger()
    table = window.help_dialog.findChild(QTableWidget, "shortcutsTable")
    rows = {table.item(r, 1).text(): table.item(r, 0).text() for r in range(table.rowCount())}
    assert rows["Resume"] == "Ctrl+Shift+R" and rows["Fork"] == "Ctrl+Shift+K"
    assert rows["Keyboard Shortcuts"] == "Ctrl+/" and rows["Copy Checkpoint Reference"] == "Ctrl+Shift+C"
    window.menu_actions.about.trigger()
    assert "read-only" in window.help_dialog.findChild(QTextBrowser, "aboutText").toPlainText()
    window.help_dialog.close()


def test_view_theme_switches_the_palette_now(window, qtbot, qapp: QApplication) -> None:
    light = qapp.palette().window().color().lightness()
    dark_action = next(a for a in window.menu_actions.theme_group.actions() if a.data() == "dark")
    dark_action.trigger()
    assert style.current_mode() == "dark" and dark_action.isChecked()
    assert qapp.palette().window().color().lightness() < light - 100
    next(a for a in window.menu_actions.theme_group.actions() if a.data() == "light").trigger()
    assert qapp.palette().window().color().lightness() == light
