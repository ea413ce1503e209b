"""The desktop app's log file: rotating, in the user's log directory; Help ▸ Open Log File opens it.

Errors the GUI reports as "details are in the log" (a bug's traceback) are written here.
"""

from __future__ import annotations

import logging
import logging.handlers
from pathlib import Path

from inspector.paths import log_dir

MAX_BYTES = 1_000_000      # per file
BACKUPS = 3                # gui.log.1 … gui.log.3 are kept
FORMAT = "%(asctime)s %(levelname)s %(name)s [%(threadName)s]: %(message)s"

_handler: logging.handlers.RotatingFileHandler | None = None


def log_path() -> Path:
    """The current log file."""
    return log_dir() / "gui.log"


def install(level: int = logging.INFO, max_bytes: int = MAX_BYTES) -> Path | None:
    """Send the ``inspector`` loggers (INFO and up) to the rotating log file; idempotent.
    Returns the file, or None when it cannot be written here (the app runs on without it)."""
    global _handler
    if _handler is not None:
        return Path(_handler.baseFilename)
    path = log_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.handlers.RotatingFileHandler(path, maxBytes=max_bytes, backupCount=BACKUPS,
                                                       encoding="utf-8", delay=True)
    except OSError as err:
        logging.getLogger(__name__).warning("no log file at %s: %s", path, err)
        return None
    handler.setFormatter(logging.Formatter(FORMAT))
    handler.setLevel(level)
    logger = logging.getLogger("inspector")
    logger.addHandler(handler)
    if logger.getEffectiveLevel() > level:
        logger.setLevel(level)
    _handler = handler
    return path


def uninstall() -> None:
    """Detach and close the log file (tests, or an app shutting down)."""
    global _handler
    if _handler is not None:
        logging.getLogger("inspector").removeHandler(_handler)
        _handler.close()
        _handler = None


def current_path() -> Path:
    """The file being written (after ``install``), else where it would be."""
    return Path(_handler.baseFilename) if _handler is not None else log_path()


def open_log_file() -> bool:
    """Open the log file in the desktop's viewer for text files (it is created if missing)."""
    from PySide6.QtCore import QUrl
    from PySide6.QtGui import QDesktopServices

    path = current_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch(exist_ok=True)
    except OSError:
        return False
    return QDesktopServices.openUrl(QUrl.fromLocalFile(str(path)))
