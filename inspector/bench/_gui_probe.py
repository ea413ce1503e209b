"""GUI benchmark probe: the real window, offscreen, reporting timings as JSON lines on stdout.

``checkpoint-inspector bench gui`` (``inspector.bench.gui``) launches
``python -m inspector.bench._gui_probe STORE``: the app's own start-up (``inspector.ui.app.run_gui``,
what ``checkpoint-inspector open STORE`` runs) with this probe attached to the window through
``inspector.ui.app.WINDOW_HOOKS``, so start-up, memory and CPU are those of the app as users
run it, and the app itself ships no benchmark code. Stages, each reported as one JSON line:
``runs_painted`` (first paint of a non-empty runs list), ``timeline_painted`` (the long run's
timeline painted where it opens: its head's row loaded), ``timeline_jump_painted`` (the
checkpoint halfway back selected, its page read and painted), ``live_ready`` (the live run is
shown), then one ``row`` line per checkpoint appended live, and ``done`` (peak RSS) after the
parent writes ``quit`` on stdin.

A stage ends at the first paint with the current row loaded, not at a page read: a run opens
on its head, whose page may be read before the stage starts (or be read with page 0).
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections.abc import Callable

from PySide6.QtCore import QModelIndex, QObject, QSocketNotifier
from PySide6.QtWidgets import QApplication

from inspector.bench import PROBE_ENV
from inspector.ui.startup import PaintWatch


def emit(event: str, **values: object) -> None:
    """Write one JSON line for the parent."""
    sys.stdout.write(json.dumps({"event": event, "t": time.time(), **values}) + "\n")
    sys.stdout.flush()


class Probe(QObject):
    """Drives the window through the benchmark stages."""

    def __init__(self, window, long_run: str, live_run: str) -> None:
        super().__init__(window)
        self.window, self.long_run, self.live_run = window, long_run, live_run
        self.runs_view = window.runs_panel.view
        self.timeline = window.timeline_panel
        PaintWatch(self.runs_view.viewport(), lambda: window.runs_panel.proxy.rowCount() > 0, self._runs_painted)
        self._stdin = QSocketNotifier(sys.stdin.fileno(), QSocketNotifier.Type.Read, self)
        self._stdin.activated.connect(self._on_stdin)

    def _runs_painted(self) -> None:
        emit("runs_painted", runs=len(self.window.runs_panel.model.tree), open_started=self.window.session.open_started,
             cpu_s=time.process_time(), modules=len(sys.modules))
        model = self.window.runs_panel.model
        # a preview is painted before the store opens: the later stages wait for the store
        self._waiting_for_all = model.previewing or model.run(self.long_run) is None  # deep in a big store
        if model.loaded:
            emit("runs_all_loaded", runs=len(model.tree))
            self._select_long_run()
            return
        model.runs_loaded.connect(self._on_all_runs)
        if not self._waiting_for_all:
            self._select_long_run()

    def _on_all_runs(self, count: int) -> None:
        self.window.runs_panel.model.runs_loaded.disconnect(self._on_all_runs)
        emit("runs_all_loaded", runs=count)
        if self._waiting_for_all:
            self._select_long_run()

    def _select_long_run(self) -> None:
        self._t = time.time()
        self._when_current_painted(self.long_run, self._timeline_painted)
        self.window.runs_panel.select_run(self.long_run)

    def _when_current_painted(self, run_id: str, then: Callable[[], None]) -> None:
        """``then()`` after the first paint of the timeline showing ``run_id`` with its
        current row loaded (or no rows at all)."""
        model, view = self.timeline.model, self.timeline.view

        def ready() -> bool:
            current = view.currentIndex()
            return model.run is not None and model.run.id == run_id and (
                not model.rowCount() or current.isValid() and model.is_loaded(current.row()))
        PaintWatch(view.viewport(), ready, then)
        view.viewport().update()

    def _timeline_painted(self) -> None:
        rows = self.timeline.model.rowCount()
        emit("timeline_painted", ms=(time.time() - self._t) * 1000, rows=rows)
        self._t = time.time()
        # the run opened on its head (its last page read, and its first): halfway back is a
        # page not read yet, as the last one was when a run opened on its first checkpoint
        self._when_current_painted(self.long_run, self._jump_painted)
        self.timeline.select_row(rows // 2)

    def _jump_painted(self) -> None:
        emit("timeline_jump_painted", ms=(time.time() - self._t) * 1000,
             row=self.timeline.view.currentIndex().row())
        self._when_current_painted(self.live_run, self._live_ready)
        self.window.runs_panel.select_run(self.live_run)

    def _live_ready(self) -> None:
        self.timeline.model.rowsInserted.connect(self._on_rows)
        emit("live_ready", rows=self.timeline.model.rowCount())

    def _on_rows(self, _parent: QModelIndex, first: int, last: int) -> None:
        now = time.time()
        for row in range(first, last + 1):
            sys.stdout.write(json.dumps({"event": "row", "seq": row, "t": now}) + "\n")
        sys.stdout.flush()

    def _on_stdin(self) -> None:
        line = sys.stdin.readline()
        if not line or line.strip() == "quit":
            self._stdin.setEnabled(False)
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            emit("done", peak_rss_mb=peak / (1024 * 1024 if sys.platform == "darwin" else 1024))
            self.window.close()
            QApplication.quit()


def attach_from_env(window) -> None:
    """Attach the probe when ``$CHECKPOINT_INSPECTOR_BENCH_PROBE`` is 'LONG_RUN,LIVE_RUN'."""
    value = os.environ.get(PROBE_ENV, "")
    if value:
        long_run, _, live_run = value.partition(",")
        Probe(window, long_run, live_run)


def main(argv: list[str]) -> int:
    """Open the window on the store ``argv[0]`` (light theme), the probe hooked to it."""
    from inspector.ui.app import WINDOW_HOOKS, run_gui

    WINDOW_HOOKS.append(attach_from_env)
    return run_gui(argv[0], theme="light")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
