"""Real agent processes for the fleet tests: the fleet worker run as subprocesses."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


class Worker:
    """One ``inspector.bench._fleet_worker`` process; its JSON lines are collected by a thread."""

    def __init__(self, store: str, name: str, count: int, *extra: str) -> None:
        self.name = name
        self.lines: list[dict] = []
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "inspector.bench._fleet_worker", store, "--name", name,
             "--count", str(count), *extra],
            cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.stderr = ""
        self._out = threading.Thread(target=self._read_out, daemon=True)
        self._err = threading.Thread(target=self._read_err, daemon=True)
        self._out.start()
        self._err.start()

    def _read_out(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(json.loads(line))

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        self.stderr = self.proc.stderr.read()

    def go(self) -> None:
        """Release the start barrier (``--wait-go``)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()

    def wait(self, timeout: float) -> int:
        """Wait for exit; returns the exit code (kills the process on timeout)."""
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self._out.join(10)
        self._err.join(10)
        return code

    @property
    def run_id(self) -> str | None:
        """The run id once the worker said it is ready."""
        return next((ln["run"] for ln in self.lines if ln.get("ready")), None)

    @property
    def committed(self) -> list[int]:
        """Seqs the worker saw committed (``--each``)."""
        return [ln["seq"] for ln in list(self.lines) if "seq" in ln]

    def kill(self) -> None:
        """Stop a worker left running by a failed test."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
