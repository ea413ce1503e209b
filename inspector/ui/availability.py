"""Enable or disable an action or button, saying why when it is disabled and what to do about it."""

from __future__ import annotations

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QWidget

_BASE = "ci_base_tip"      # dynamic property: the tip the target shows when it is enabled
NO_STORE = "open a store first (File ▸ Open Store…, or drop a file on the window)."
BUILDING_DEMO = "the demo store is being built; it opens when the demo agent is done."
SEPARATOR = " \u2014 "      # between the tip and the reason: "Fork… — open a store first (File ▸ Open)."


def _base_tip(target: QAction | QWidget) -> str:
    saved = target.property(_BASE)
    if isinstance(saved, str):
        return saved
    tip = target.toolTip() or (target.text().replace("&", "").rstrip("\u2026") if isinstance(target, QAction) else "")
    target.setProperty(_BASE, tip)
    return tip


def set_tip(target: QAction | QWidget, tip: str) -> None:
    """Change the tip shown while ``target`` is enabled (the reason is added while it is not)."""
    target.setProperty(_BASE, tip)
    _show(target, tip, None if target.isEnabled() else disabled_reason(target))


def set_available(target: QAction | QWidget, enabled: bool, why: str = "") -> None:
    """Enable ``target``, or disable it with ``why`` (the reason and the remedy, one sentence).

    The tooltip and the status tip both read ``tip — why`` while disabled and ``tip`` again when
    enabled. A disabled target without a reason is a bug the GUI tests look for.
    """
    tip = _base_tip(target)
    target.setEnabled(enabled)
    reason = "" if enabled else (why or "not available right now.")
    target.setProperty("ci_disabled_reason", reason)
    _show(target, tip, reason or None)


def disabled_reason(target: QAction | QWidget) -> str:
    """The reason given to the last ``set_available(target, False, why)`` ('' when enabled)."""
    value = target.property("ci_disabled_reason")
    return value if isinstance(value, str) and not target.isEnabled() else ""


def _show(target: QAction | QWidget, tip: str, reason: str | None) -> None:
    text = f"{tip}{SEPARATOR}{reason}" if reason else tip
    target.setToolTip(text)
    target.setStatusTip(text)
