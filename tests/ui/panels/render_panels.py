"""Render each detail panel for a real snapshot to PNG (a look-at-it tool, not a test).

Usage: ``QT_QPA_PLATFORM=offscreen python -m tests.ui.panels.render_panels STORE OUTDIR [--dark]``
(build a store first: ``python -m inspector demo --no-gui --store STORE --rebuild --no-stuck``).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QThreadPool
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QWidget

from inspector.store import open_store


def dark_palette() -> QPalette:
    """A plain dark palette (what a dark desktop theme hands a Fusion app)."""
    pal = QPalette()
    roles = {QPalette.ColorRole.Window: "#2b2b2b", QPalette.ColorRole.WindowText: "#e6e6e6",
             QPalette.ColorRole.Base: "#1e1e1e", QPalette.ColorRole.AlternateBase: "#262626",
             QPalette.ColorRole.Text: "#e6e6e6", QPalette.ColorRole.Button: "#353535",
             QPalette.ColorRole.ButtonText: "#e6e6e6", QPalette.ColorRole.Highlight: "#2f65ca",
             QPalette.ColorRole.HighlightedText: "#ffffff", QPalette.ColorRole.ToolTipBase: "#3a3a3a",
             QPalette.ColorRole.ToolTipText: "#e6e6e6", QPalette.ColorRole.PlaceholderText: "#8a8a8a",
             QPalette.ColorRole.Mid: "#444444", QPalette.ColorRole.Dark: "#1a1a1a",
             QPalette.ColorRole.Light: "#505050", QPalette.ColorRole.Midlight: "#404040"}
    for role, color in roles.items():
        pal.setColor(role, QColor(color))
    pal.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.WindowText, QColor("#7a7a7a"))
    pal.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text, QColor("#7a7a7a"))
    return pal


def settle(app: QApplication, widget: QWidget) -> None:
    """Let background jobs finish and their results arrive."""
    for _ in range(30):
        QThreadPool.globalInstance().waitForDone()
        app.processEvents()
    widget.repaint()


def save(app: QApplication, widget: QWidget, path: Path, size: tuple[int, int] = (900, 700)) -> None:
    """Resize, settle and grab a widget to a PNG."""
    widget.resize(*size)
    widget.show()
    settle(app, widget)
    widget.grab().save(str(path))
    print(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("store")
    parser.add_argument("out", type=Path)
    parser.add_argument("--dark", action="store_true")
    parser.add_argument("--ref", default="", help="RUN:SEQ to show (default: the demo's richest run)")
    parser.add_argument("--only", default="", help="comma-separated panel names")
    args = parser.parse_args(argv)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    try:
        from inspector.ui.style import apply_theme
    except ImportError:   # the shell's theme is not there: plain Fusion
        app.setStyle("Fusion")
        if args.dark:
            app.setPalette(dark_palette())
    else:
        apply_theme(app, "dark" if args.dark else "light")
    args.out.mkdir(parents=True, exist_ok=True)
    store = open_store(args.store)
    run = next((r for r in store.list_runs() if r.name == "report: urban beekeeping"), store.list_runs()[0])
    ref = args.ref or f"{run.id}:14"
    snap = store.load(ref)
    run = store.get_run(snap.info.run_id)
    suffix = "-dark" if args.dark else ""
    only = set(filter(None, args.only.split(",")))
    from tests.ui.panels import render_each
    for name, widget, size in render_each.panels(store, snap, run):
        if only and name not in only:
            continue
        save(app, widget, args.out / f"{name}{suffix}.png", size)
    return 0


if __name__ == "__main__":
    sys.exit(main())
