"""Open the native and the LangGraph Resume dialogs at a size and report overlapping widgets.

Used in-process by test_resume_layout and, for 2x device pixel ratio (QT_SCALE_FACTOR=2 must be
set before Qt starts), as ``python -m tests.ui.dialogs.resume_layout_probe SIZE NATIVE_DB REF LG_DB REF``.
"""

from __future__ import annotations

import json
import sys
import time

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QApplication

from inspector.ui.dialogs.resume_dialog import ResumeDialog
from tests.ui.layout_check import cut_off_widgets, overlapping_widgets

ANSWER = '{"ok": true, "note": "approved after reading the whole plan"}'


def _wait(until, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not until():
        if time.monotonic() > deadline:
            raise TimeoutError("the Resume dialog did not get a plan in time")
        QCoreApplication.processEvents()
        time.sleep(0.01)


def open_resume_dialog(store: str, ref: str, size: tuple[int, int], *, langgraph: bool) -> ResumeDialog:
    """A shown Resume dialog at ``size`` with its plan (LangGraph: a graph and an interrupt answer)."""
    dialog = ResumeDialog(store, ref, confirm=lambda *_args: False)
    dialog.show()
    dialog.resize(*size)
    if langgraph:
        _wait(lambda: dialog.kind == "langgraph" and bool(dialog.langgraph.answer_check.text()))
        assert not dialog.resume_button.isEnabled() and "Prepare Resume" in dialog.resume_button.toolTip()
        dialog.langgraph.graph.setText("lg_entry:graph")
        dialog.langgraph.answer.setPlainText(ANSWER)
        dialog.langgraph.replan.click()
    _wait(lambda: dialog.plan is not None and dialog.resume_button.isEnabled())
    for _ in range(5):
        QCoreApplication.processEvents()
    return dialog


def main(argv: list[str]) -> int:
    """Print {"dpr", "native", "langgraph"} as JSON: overlaps found in each dialog."""
    from inspector.ui.dialogs import langgraph_options

    langgraph_options.QUIET_SECONDS = 0.0     # the database copy was written a moment ago
    app = QApplication([])
    size = tuple(int(x) for x in argv[0].split("x"))
    out: dict = {"dpr": app.devicePixelRatio()}
    for key, store, ref in (("native", argv[1], argv[2]), ("langgraph", argv[3], argv[4])):
        dialog = open_resume_dialog(store, ref, size, langgraph=key == "langgraph")  # type: ignore[arg-type]
        out[key] = overlapping_widgets(dialog)
        out[key + "_cut"] = cut_off_widgets(dialog)
        out[key + "_size"] = [dialog.width(), dialog.height()]
        dialog.close()
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
