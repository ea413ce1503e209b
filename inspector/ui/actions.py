"""The window's actions, menus and toolbar (with a "Run" section other features add to)."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu, QToolBar, QWidget

from inspector.ui import icons, style
from inspector.ui.dialogs.log_dialog import show_log

DETAIL_TABS = (("state", "&State"), ("tasks", "Tas&ks"), ("metadata", "&Metadata"), ("diff", "&Diff"))


@dataclass
class Actions:
    """Every action of the main window, plus the menus and toolbar that hold them."""

    open: QAction
    open_url: QAction
    build_demo: QAction
    close_store: QAction
    quit: QAction
    refresh: QAction
    live: QAction
    find: QAction
    show_forks: QAction
    focus_runs: QAction
    focus_timeline: QAction
    go_to_tabs: list[QAction]   # the detail tabs, each with its key ("state", "tasks", …) as data
    copy_ref: QAction
    task_history: QAction
    about: QAction
    shortcuts: QAction
    usage: QAction
    open_log: QAction
    theme_group: QActionGroup
    recent_menu: QMenu
    view_menu: QMenu
    panels_menu: QMenu
    run_menu: QMenu
    help_menu: QMenu
    toolbar: QToolBar
    run_separator: QAction


def _action(parent: QWidget, text: str, shortcut: QKeySequence | QKeySequence.StandardKey | str | None = None,
            icon: str | None = None, tip: str | None = None, checkable: bool = False) -> QAction:
    action = QAction(text, parent)
    if shortcut is not None:
        action.setShortcut(QKeySequence(shortcut))
        action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
    if icon:
        action.setIcon(icons.icon(icon))
    if tip:
        action.setToolTip(f"{tip} ({action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)})"
                          if shortcut else tip)
        action.setStatusTip(tip)
    action.setCheckable(checkable)
    return action


def build_actions(window: QMainWindow) -> Actions:
    """Create the actions, the menu bar and the toolbar of ``window``."""
    a = dict(
        open=_action(window, "&Open Store\u2026", QKeySequence.StandardKey.Open, "open", "Open a store file"),
        open_url=_action(window, "Open &URL\u2026", "Ctrl+Shift+O", "url", "Open a store by SQLAlchemy URL"),
        build_demo=_action(window, "Build &Demo Store", None, "demo", "Run the demo agent and open its store"),
        close_store=_action(window, "&Close Store", "Ctrl+W", "close", "Close the store"),
        quit=_action(window, "&Quit", QKeySequence.StandardKey.Quit, None, "Quit"),
        refresh=_action(window, "&Refresh", QKeySequence.StandardKey.Refresh, "refresh", "Re-read the store"),
        live=_action(window, "&Live", "Ctrl+L", "live", "Follow changes as agents write", checkable=True),
        find=_action(window, "&Filter Runs", QKeySequence.StandardKey.Find, "search", "Filter the runs"),
        show_forks=_action(window, "Show &Forks", "Ctrl+Shift+F", "branch", "Show forks under their runs",
                           checkable=True),
        focus_runs=_action(window, "Go to &Runs", "Alt+1", None, "Move the keyboard focus to the runs"),
        focus_timeline=_action(window, "Go to &Timeline", "Alt+2", None, "Move the keyboard focus to the timeline"),
        copy_ref=_action(window, "&Copy Checkpoint Reference", "Ctrl+Shift+C", "copy",
                         "Copy RUN:SEQ of the selected checkpoint"),
        task_history=_action(window, "Task &History\u2026", "Ctrl+H", "recent",
                             "Every checkpoint of the selected run where its tasks changed"),
        about=_action(window, "&About Checkpoint Inspector", None, "info", "About"),
        shortcuts=_action(window, "&Keyboard Shortcuts", "Ctrl+/", None, "Every keyboard shortcut"),
        usage=_action(window, "&Usage Guide", QKeySequence.StandardKey.HelpContents, None,
                      "How to use Checkpoint Inspector (the README, offline)"),
        open_log=_action(window, "Open &Log File\u2026", None, None, "The app's log (errors with their details)"),
    )
    go_to_tabs = []
    for number, (key, label) in enumerate(DETAIL_TABS, start=3):   # (Alt+1, Alt+2: runs, timeline)
        action = _action(window, f"Go to {label}", f"Alt+{number}", None,
                         f"Show the {label.replace('&', '')} tab and move the keyboard focus into it")
        action.setData(key)
        go_to_tabs.append(action)
    a["open_log"].triggered.connect(lambda: show_log(window))
    a["live"].setChecked(True)
    a["show_forks"].setChecked(True)
    bar = window.menuBar()
    file_menu = bar.addMenu("&File")
    file_menu.addActions([a["open"], a["open_url"]])
    recent_menu = file_menu.addMenu(icons.icon("recent"), "Open &Recent")
    file_menu.addSeparator()
    file_menu.addAction(a["build_demo"])
    file_menu.addSeparator()
    file_menu.addActions([a["close_store"], a["quit"]])
    view_menu = bar.addMenu("&View")
    view_menu.addActions([a["refresh"], a["live"]])
    view_menu.addSeparator()
    view_menu.addActions([a["find"], a["show_forks"]])
    view_menu.addSeparator()
    view_menu.addActions([a["focus_runs"], a["focus_timeline"], *go_to_tabs])
    view_menu.addSeparator()
    panels_menu = view_menu.addMenu("&Panels")
    theme_menu = view_menu.addMenu("&Theme")
    theme_group = QActionGroup(window)
    for mode, label in (("auto", "&Follow the System"), ("light", "&Light"), ("dark", "&Dark")):
        action = theme_menu.addAction(label)
        action.setCheckable(True)
        action.setData(mode)
        action.setObjectName(f"theme-{mode}")
        theme_group.addAction(action)
    run_menu = bar.addMenu("&Run")
    run_menu.addActions([a["copy_ref"], a["task_history"]])
    help_menu = bar.addMenu("&Help")
    help_menu.addActions([a["usage"], a["shortcuts"]])
    help_menu.addSeparator()
    help_menu.addAction(a["open_log"])
    help_menu.addAction(a["about"])
    toolbar = QToolBar("Main", window)
    toolbar.setObjectName("mainToolbar")
    style.polish(toolbar, "toolbar")
    toolbar.setMovable(False)
    toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
    toolbar.addActions([a["open"], a["refresh"], a["live"]])
    run_separator = toolbar.addSeparator()
    window.addToolBar(toolbar)
    panels_menu.addAction(toolbar.toggleViewAction())
    return Actions(**a, go_to_tabs=go_to_tabs, theme_group=theme_group, recent_menu=recent_menu, view_menu=view_menu,
                   panels_menu=panels_menu, run_menu=run_menu, help_menu=help_menu, toolbar=toolbar, run_separator=run_separator)
