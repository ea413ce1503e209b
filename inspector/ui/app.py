"""Start the desktop app: display checks, QApplication set-up, the window, screenshot mode."""

from __future__ import annotations

import contextlib
import ctypes.util
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

QT_LINUX_LIBRARIES = {  # library → Debian/Ubuntu package (what Qt's xcb platform plugin needs)
    "xcb-cursor": "libxcb-cursor0",
    "xkbcommon-x11": "libxkbcommon-x11-0",
    "xcb-icccm": "libxcb-icccm4",
    "xcb-keysyms": "libxcb-keysyms1",
    "EGL": "libegl1",
}
NO_DISPLAY = ("No display found (DISPLAY and WAYLAND_DISPLAY are unset); use --screenshot PATH "
              "to render the window to a PNG instead.")
SCREENSHOT_SIZE = (1400, 900)
# called with the main window just before it is first shown (``inspector.bench._gui_probe``
# attaches the GUI benchmark's probe here; the app itself ships no benchmark code)
WINDOW_HOOKS: list[Callable[[Any], None]] = []


def missing_qt_libraries() -> list[str]:
    """Debian package names of the X11 libraries Qt needs that this system lacks."""
    return [pkg for lib, pkg in QT_LINUX_LIBRARIES.items() if ctypes.util.find_library(lib) is None]


def display_problem(screenshot: bool = False) -> str | None:
    """One sentence when the GUI cannot start here (Linux without a display), else None."""
    if screenshot or not sys.platform.startswith("linux") or os.environ.get("QT_QPA_PLATFORM"):
        return None
    if os.environ.get("WAYLAND_DISPLAY"):
        return None
    if not os.environ.get("DISPLAY"):
        return NO_DISPLAY
    missing = missing_qt_libraries()
    if missing:
        return (f"Qt cannot open a window: the system libraries {', '.join(missing)} are missing "
                f"(e.g. sudo apt install {' '.join(missing)}); or use --screenshot PATH.")
    return None


def create_app(theme: str = "auto"):  # QApplication imported lazily
    """The QApplication (created once) with name, icon and theme set."""
    from PySide6.QtWidgets import QApplication

    from inspector.ui import collector, icons, refguard, settings, style

    QApplication.setApplicationName(settings.APPLICATION)
    QApplication.setOrganizationName(settings.ORGANIZATION)
    QApplication.setApplicationDisplayName(settings.APPLICATION)
    QApplication.setDesktopFileName("checkpoint-inspector")
    existing = QApplication.instance()
    app = existing if existing is not None else QApplication([sys.argv[0]])
    if not isinstance(app, QApplication):
        raise RuntimeError("This process already runs a QCoreApplication without widgets.")
    refguard.install()
    collector.install(app)   # the GUI thread collects garbage; workers never switch the collector
    style.apply_theme(app, theme)
    app.setWindowIcon(icons.app_icon())
    return app


def run_gui(store: str | None, *, screenshot: str | os.PathLike | None = None, select: str | None = None,
            tab: str | None = None, theme: str | None = None, live: bool = True,
            size: tuple[int, int] = SCREENSHOT_SIZE) -> int:
    """Open the window on ``store`` (None: welcome page) and run until it closes.

    With ``screenshot`` the window is rendered offscreen once the data asked for by
    ``select`` ('RUN' or 'RUN:SEQ') and ``tab`` has loaded, saved as a PNG, and the
    function returns (0, or 2 with a message on stderr).
    """
    if screenshot is not None:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    if os.environ.get("QT_QPA_PLATFORM") == "offscreen":     # a screenshot, or a window run headless
        _quiet_offscreen_notes()
    if screenshot is None:     # a screenshot leaves no trace; the app logs to its rotating file
        from inspector.ui import logfile
        logfile.install()
    app = create_app(theme or _saved_theme(screenshot is None))
    from inspector.ui.main_window import MainWindow
    from inspector.ui.session import StoreSession

    session = StoreSession()
    if store is not None:
        # the first runs are read in the thread pool while the window is being built; the
        # store itself (SQLAlchemy) opens once they are painted (see MainWindow.open_store)
        from inspector.ui.models.run_tree import preview_load
        session.open(store, preview=preview_load if screenshot is None else None)
    window = MainWindow(session=session, restore_settings=screenshot is None)
    window.menu_actions.live.setChecked(live)
    if screenshot is not None:
        from inspector.ui.screenshot import ScreenshotDriver

        window.resize(*size)
        driver = ScreenshotDriver(window, Path(screenshot), select, tab)
        window.show()
        driver.start()
    else:
        _show(window, size, select, tab)
    restore = _quit_on_termination(app) if screenshot is None else (lambda: None)
    try:
        code = app.exec()
    finally:
        restore()
    window.close()
    return code


TERMINATION = ("SIGINT", "SIGTERM", "SIGHUP")


def _quit_on_termination(app: Any) -> Callable[[], None]:
    """Ctrl+C in the terminal, ``kill`` and a closed terminal quit the app as its window's
    close does (settings saved, the demo's agents stopped), instead of ending the process
    where it stands. Python runs a signal handler only between bytecodes, and Qt's event loop
    runs none while idle: the signal's number is written to a socket Qt watches, which wakes
    the loop. Returns what puts the previous handlers back."""
    import signal
    import socket
    import threading

    from PySide6.QtCore import QSocketNotifier, QTimer

    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    reader, writer = socket.socketpair()
    reader.setblocking(False)
    writer.setblocking(False)
    previous_fd = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    previous = {}

    def quit_app(signum: int, _frame: Any) -> None:
        logging.getLogger(__name__).info("quitting on %s", signal.Signals(signum).name)
        QTimer.singleShot(0, app.quit)    # (a quit before the loop runs would be lost)
    for name in TERMINATION:
        sig = getattr(signal, name, None)
        if sig is not None:
            previous[sig] = signal.signal(sig, quit_app)
    notifier = QSocketNotifier(reader.fileno(), QSocketNotifier.Type.Read)

    def drain() -> None:   # the handler itself has run by now (this is Python code)
        with contextlib.suppress(OSError):
            reader.recv(64)
    notifier.activated.connect(drain)
    logging.getLogger(__name__).info("window open (pid %d)", os.getpid())

    def restore() -> None:
        notifier.setEnabled(False)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        signal.set_wakeup_fd(previous_fd)
        reader.close()
        writer.close()
    return restore


OFFSCREEN_NOTES = ("This plugin does not support propagateSizeHints()",)


def _quiet_offscreen_notes() -> None:
    """The offscreen platform (screenshots, a window run headless): drop what it says about
    every window it shows (a live window followed for minutes printed it hundreds of times).

    It is not a problem of the app (that plugin simply has no window manager to hint);
    every other Qt message still goes to stderr.
    """
    from PySide6.QtCore import QtMsgType, qInstallMessageHandler

    def handler(kind: QtMsgType, _context: object, message: str) -> None:
        if kind == QtMsgType.QtWarningMsg and message.startswith(OFFSCREEN_NOTES):
            return
        sys.stderr.write(message + "\n")

    qInstallMessageHandler(handler)


def _saved_theme(use_settings: bool) -> str:
    """The theme chosen in View ▸ Theme (screenshots ignore it: they follow --theme or auto)."""
    if not use_settings:
        return "auto"
    from inspector.ui import settings
    value = str(settings.settings().value("theme", "auto"))
    return value if value in ("auto", "light", "dark") else "auto"


def _show(window, size: tuple[int, int], select: str | None, tab: str | None) -> None:
    from inspector.ui import settings
    from inspector.ui.selection import SelectionRequest

    if settings.settings().value("window/geometry") is None:
        window.resize(*size)
    if tab:
        window.details.set_tab(tab, build=False)
    if select:
        SelectionRequest(window, select)
    for hook in WINDOW_HOOKS:
        hook(window)
    window.show()
