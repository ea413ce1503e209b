"""The Console dock: resumed agent processes (QProcess) with their live output and exit codes."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QProcess, QProcessEnvironment, Signal
from PySide6.QtGui import QFontDatabase, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (QDockWidget, QHBoxLayout, QLabel, QPlainTextEdit, QPushButton,
                               QVBoxLayout, QWidget)

from inspector.ui.availability import set_available
from inspector.ui.tasks import TaskRunner
from inspector.ui.widgets.palette import accent

if TYPE_CHECKING:   # loaded with the first launch, not with the window
    from inspector.resume.launch import LaunchSpec
    from inspector.ui.store_access import StoreAccess

MAX_LINES = 20_000
HUES = {"err": "#cf222e", "ok": "#1a7f37", "info": "#0969da"}
KILL_GRACE_MS = 3000


@dataclass
class _Proc:
    """One launched process and what it resumes."""

    spec: LaunchSpec
    process: QProcess
    started: float
    exit_code: int | None = None


def _mark_failed(access: StoreAccess, spec: LaunchSpec, message: str) -> None:
    if not spec.epoch:   # a LangGraph runner: the thread has no run row of ours to mark
        return
    from inspector.resume.launch import launch_failed

    with access.write() as store:
        launch_failed(store, spec, message)


def _note_exit(access: StoreAccess, spec: LaunchSpec, code: int) -> bool:
    if not spec.epoch:   # a LangGraph runner: LangGraph records its own errors
        return False
    from inspector.resume.launch import launch_exited

    with access.write() as store:
        return launch_exited(store, spec, code)


NO_PROCESS = "no process is running; a resume started with Run ▸ Resume… can be stopped here."


class ConsoleDock(QDockWidget):
    """Starts resumed processes without a shell and streams their stdout/stderr.

    Signals: ``process_started(run_id, pid)``, ``process_finished(run_id, exit_code)``
    (-1 when it crashed or could not start) and ``follow_run(run_id)`` — the run to select so
    the timeline follows it live.
    """

    process_started = Signal(str, int)
    process_finished = Signal(str, int)
    follow_run = Signal(str)

    def __init__(self, parent: QWidget | None = None, *, runner: TaskRunner | None = None) -> None:
        super().__init__("Console", parent)
        self.setObjectName("consoleDock")
        self._runner = runner or TaskRunner(self)
        self.store_access: StoreAccess | None = None   # the window's access, when docked in one
        self.procs: list[_Proc] = []
        body = QWidget(self)
        self.output = QPlainTextEdit(body)
        self.output.setReadOnly(True)
        self.output.setMaximumBlockCount(MAX_LINES)
        self.output.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.output.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.output.setPlaceholderText("Output of resumed agent processes appears here.")
        self.status = QLabel("No process.", body)
        self.stop_button = QPushButton("Stop", body)
        self.stop_button.setToolTip("Terminate the most recent running process (SIGTERM, then SIGKILL)")
        set_available(self.stop_button, False, NO_PROCESS)
        self.clear_button = QPushButton("Clear", body)
        self.clear_button.setToolTip("Clear the output shown here (processes keep running)")
        self.stop_button.clicked.connect(self.stop_latest)
        self.clear_button.clicked.connect(self.output.clear)
        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        bar.addWidget(self.status, 1)
        bar.addWidget(self.stop_button)
        bar.addWidget(self.clear_button)
        layout = QVBoxLayout(body)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(bar)
        layout.addWidget(self.output, 1)
        self.setWidget(body)

    # -- public ------------------------------------------------------------------------
    def start(self, spec: LaunchSpec) -> QProcess:
        """Start the resumed process of ``spec`` (argv passed literally; exactly ``spec.env``)."""
        proc = QProcess(self)
        proc.setProgram(spec.argv[0])
        proc.setArguments(list(spec.argv[1:]))
        proc.setWorkingDirectory(spec.cwd)
        env = QProcessEnvironment()
        for key, value in spec.env.items():
            env.insert(key, value)
        proc.setProcessEnvironment(env)
        entry = _Proc(spec, proc, time.time())
        self.procs.append(entry)
        proc.readyReadStandardOutput.connect(lambda: self._read(entry, err=False))
        proc.readyReadStandardError.connect(lambda: self._read(entry, err=True))
        proc.started.connect(lambda: self._on_started(entry))
        proc.finished.connect(lambda code, status: self._on_finished(entry, code, status))
        proc.errorOccurred.connect(lambda error: self._on_error(entry, error))
        what = f"fork {spec.run_id} of {spec.source_run}" if spec.forked else f"run {spec.run_id}"
        epoch = f" (epoch {spec.epoch})" if spec.epoch > 0 else ""
        self._write(f"▶ resuming {what}{epoch} in {spec.cwd}\n$ {spec.command_line()}\n", "info")
        self.show()
        proc.start()
        return proc

    def running(self) -> list[str]:
        """Run ids whose process is still running."""
        return [p.spec.run_id for p in self.procs if p.process.state() != QProcess.ProcessState.NotRunning]

    def text(self) -> str:
        """Everything the console shows (for tests and copy)."""
        return self.output.toPlainText()

    def stop_latest(self) -> None:
        """Terminate the most recently started process that still runs."""
        for entry in reversed(self.procs):
            if entry.process.state() != QProcess.ProcessState.NotRunning:
                self._write(f"■ stopping run {entry.spec.run_id} (pid {entry.process.processId()})\n", "info")
                entry.process.terminate()
                if not entry.process.waitForFinished(KILL_GRACE_MS):
                    entry.process.kill()
                return

    def shutdown(self, msecs: int = KILL_GRACE_MS) -> None:
        """Stop every running process (closing the window): SIGTERM, then SIGKILL after ``msecs``."""
        for entry in self.procs:
            proc = entry.process
            if proc.state() != QProcess.ProcessState.NotRunning:
                proc.terminate()
                if not proc.waitForFinished(msecs):
                    proc.kill()
                    proc.waitForFinished(msecs)

    # -- process events ------------------------------------------------------------------
    def _on_started(self, entry: _Proc) -> None:
        pid = int(entry.process.processId())
        self.status.setText(f"Running: run {entry.spec.run_id}, pid {pid}")
        set_available(self.stop_button, True)
        self.process_started.emit(entry.spec.run_id, pid)
        self.follow_run.emit(entry.spec.run_id)

    def _read(self, entry: _Proc, *, err: bool) -> None:
        proc = entry.process
        data = proc.readAllStandardError() if err else proc.readAllStandardOutput()
        text = bytes(data.data()).decode("utf-8", errors="replace")
        if text:
            self._write(text, "err" if err else None)

    def _on_finished(self, entry: _Proc, code: int, status: QProcess.ExitStatus) -> None:
        self._read(entry, err=False)
        self._read(entry, err=True)
        crashed = status == QProcess.ExitStatus.CrashExit
        entry.exit_code = -1 if crashed else int(code)
        seconds = time.time() - entry.started
        if crashed:
            self._write(f"■ run {entry.spec.run_id}: the process crashed after {seconds:.1f} s\n", "err")
        else:
            self._write(f"■ run {entry.spec.run_id}: exit code {code} after {seconds:.1f} s\n",
                        "ok" if code == 0 else "err")
        if entry.exit_code:
            self._note_exit(entry)
        self._after_exit(entry)

    def _on_error(self, entry: _Proc, error: QProcess.ProcessError) -> None:
        if error != QProcess.ProcessError.FailedToStart:
            return  # crashes are reported by finished()
        message = f"Could not start {entry.spec.argv[0]!r}: {entry.process.errorString()}."
        entry.exit_code = -1
        self._write(f"■ {message}\n", "err")
        access = self._access(entry.spec)
        self._runner.run(lambda: _mark_failed(access, entry.spec, message),
                         on_error=lambda m: self._write(f"(could not mark the run failed: {m})\n", "err"))
        self._after_exit(entry)

    def _note_exit(self, entry: _Proc) -> None:
        """A failed process that never claimed its run: mark the run failed (off the GUI thread)."""
        access, spec, code = self._access(entry.spec), entry.spec, int(entry.exit_code or 0)

        def on_done(marked: bool) -> None:
            if marked:
                self._write(f"  run {spec.run_id} marked failed: the process never took it over\n", "err")
        self._runner.run(lambda: _note_exit(access, spec, code), on_done)

    def _access(self, spec: LaunchSpec) -> StoreAccess:
        """The window's store access when it is the launch's store, else one per call."""
        from inspector.ui.store_access import StoreAccess

        access = self.store_access
        return access if access is not None and access.url == spec.store_url else StoreAccess(spec.store_url)

    def _after_exit(self, entry: _Proc) -> None:
        left = self.running()
        set_available(self.stop_button, bool(left), NO_PROCESS)
        self.status.setText(f"Running: {', '.join(left)}" if left else
                            f"Last: run {entry.spec.run_id} exited with {entry.exit_code}")
        self.process_finished.emit(entry.spec.run_id, entry.exit_code if entry.exit_code is not None else -1)

    # -- text ------------------------------------------------------------------------------
    def _write(self, text: str, style: str | None) -> None:
        fmt = QTextCharFormat()
        pal = self.palette()
        fmt.setForeground(accent(pal, HUES[style]) if style in HUES else pal.color(pal.ColorRole.Text))
        bar = self.output.verticalScrollBar()
        at_end = bar.value() >= bar.maximum() - 4
        cursor = QTextCursor(self.output.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText(text, fmt)
        if at_end:
            bar.setValue(bar.maximum())

