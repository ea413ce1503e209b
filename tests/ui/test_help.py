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


def _images(browser: QTextBrowser) -> list[str]:
    """The names of the images in the browser's document."""
    names, block = [], browser.document().begin()
    while block.isValid():
        fragments = block.begin()
        while not fragments.atEnd():
            fmt = fragments.fragment().charFormat()
            if fmt.isImageFormat():
                names.append(fmt.toImageFormat().name())
            fragments += 1
        block = block.next()
    return names


def test_the_usage_guide_shows_the_readmes_screenshots_or_leaves_them_out(window, qtbot, tmp_path,
                                                                       monkeypatch) -> None:
    """Screenshots are read from beside the README (no broken-image placeholders); one that is
    not there is left out, and an image table left empty goes with it."""
    from PySide6.QtCore import QUrl
    from PySide6.QtGui import QTextDocument

    from inspector.ui import help as help_windows

    monkeypatch.chdir(tmp_path)          # (not found relative to the working directory by chance)
    window.menu_actions.usage.trigger()
    browser = window.help_dialog.findChild(QTextBrowser, "usageBrowser")
    names = _images(browser)
    assert len(names) >= 10
    for name in names:
        image = browser.loadResource(QTextDocument.ResourceType.ImageResource.value, QUrl(name))
        assert image is not None and not image.isNull(), name
        assert QUrl(name).isLocalFile()
    (tmp_path / "shot.png").write_bytes((help_windows.README.parent / "resources/screenshots/diff.png").read_bytes())
    text = ("Intro\n\n| | |\n|---|---|\n| ![a](gone.png) | ![b](gone2.png) |\n\nMiddle ![c](shot.png) end\n\n"
            "| | |\n|---|---|\n| ![d](shot.png) | ![e](gone.png) |\n")
    shown = help_windows.local_images(text, tmp_path)
    assert "gone" not in shown and "|---|" in shown and shown.count("shot.png") == 2
    assert shown.split("\n")[:3] == ["Intro", "", ""]          # the empty table went
    window.help_dialog.close()
