"""Select a run (and a checkpoint) by reference once the data has loaded — signals, no sleeps."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal

from inspector.store.refs import ambiguity
from inspector.ui.main_window import MainWindow


def parse_selection(text: str) -> tuple[str, int | None]:
    """'RUN' or 'RUN:SEQ' (SEQ may be negative, counting from the end)."""
    run, sep, seq = text.rpartition(":")
    if sep and run:
        try:
            return run, int(seq)
        except ValueError:
            pass
    return text, None


class SelectionRequest(QObject):
    """Waits for the runs list, selects RUN, then SEQ, then waits for the snapshot (if any).

    Emits ``done`` when everything asked for is on screen, ``failed(message)`` otherwise.
    """

    done = Signal()
    failed = Signal(str)

    def __init__(self, window: MainWindow, text: str | None, parent: QObject | None = None) -> None:
        super().__init__(parent or window)
        self.window = window
        self.run_ref: str | None
        self.seq: int | None
        self.run_ref, self.seq = parse_selection(text) if text else (None, None)
        self._runs_loaded = False
        self._waiting_forks = True
        self._waiting_rows = False
        self._waiting_snapshot = False
        self._finished = False
        model = window.runs_panel.model
        model.runs_loaded.connect(self._on_runs_loaded)
        model.annotated.connect(self._on_annotated)
        window.timeline_panel.model.page_loaded.connect(self._on_page_loaded)
        window.timeline_panel.model.rows_unreadable.connect(self._on_rows_unreadable)
        window.details.snapshot_loaded.connect(self._on_snapshot_loaded)
        self._run_id = ""

    def _on_runs_loaded(self, _count: int) -> None:
        if self._finished or self._runs_loaded:
            return
        self._runs_loaded = True
        if self.run_ref is None:
            self._check()
            return
        rule, hits = self.window.runs_panel.model.match_run(self.run_ref)
        if len(hits) != 1:
            self._fail(ambiguity(self.run_ref, rule, hits) if hits else
                       f"There is no run {self.run_ref!r} in this store (give an id, an id prefix or a name).")
            return
        run = hits[0]
        self._run_id = run.id
        self._waiting_rows = self._waiting_snapshot = run.checkpoint_count > 0   # its head is shown
        self.window.runs_panel.select_run(run.id)
        if self.seq is not None and run.checkpoint_count:
            seq = self.seq if self.seq >= 0 else run.checkpoint_count + self.seq
            if not 0 <= seq < run.checkpoint_count:
                self._fail(f"Run {run.id} has no checkpoint #{self.seq} (it has {run.checkpoint_count}).")
                return
            self._waiting_snapshot = True
            self.window.timeline_panel.select_seq(self.seq)   # negative: back from the branch's head
        self._check()

    def _on_annotated(self) -> None:
        self._waiting_forks = False
        self._check()

    def _on_page_loaded(self, _first: int, _last: int) -> None:
        self._waiting_rows = False
        self._check()

    def _on_rows_unreadable(self, first: int, last: int) -> None:
        """The checkpoint asked for is in rows a damaged store cannot give: say so (waiting
        for its snapshot would wait for ever)."""
        if self._finished or self.seq is None or self.seq < 0:
            return
        row = self.window.timeline_panel.model.row_of_seq(self.seq)
        if row is not None and first <= row <= last:
            self._fail_unreadable()

    def _fail_unreadable(self) -> None:
        self._fail(f"Checkpoint #{self.seq} of run {self._run_id} cannot be shown: the run's checkpoints "
                   "are not all there (the store is damaged).")

    def _on_snapshot_loaded(self, snapshot: Any) -> None:
        info = getattr(snapshot, "info", None)
        if (self.seq is not None and self.seq >= 0 and info is not None and info.run_id == self._run_id
                and info.seq != self.seq):
            # a damaged run lacking seqs lists later checkpoints in their rows
            self._fail_unreadable()
            return
        self._waiting_snapshot = False
        self._check()

    def _check(self) -> None:
        if self._finished or not self._runs_loaded:
            return
        if not (self._waiting_forks or self._waiting_rows or self._waiting_snapshot):
            self._finished = True
            self.done.emit()

    def _fail(self, message: str) -> None:
        if not self._finished:
            self._finished = True
            self.failed.emit(message)
