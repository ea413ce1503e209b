"""Helpers for resume tests: real demo-agent processes and raw byte dumps of a run."""

from __future__ import annotations

import contextlib
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from collections.abc import Callable, Iterator

from inspector.store import open_store
from inspector.codec import iter_digests, unpack


def agent_argv(store: Path, *args: str) -> list[str]:
    """The demo agent's command line (``python -m inspector.demo``, as users run it)."""
    return [sys.executable, "-m", "inspector.demo", "--store", str(store), *args]


def run_agent(store: Path, *args: str, cwd: Path | None = None) -> int:
    """Run the demo agent to its end (or its injected fault); return its exit code."""
    proc = subprocess.run(agent_argv(store, *args), cwd=cwd or store.parent, timeout=120,
                          capture_output=True, text=True)
    return proc.returncode


def start_agent(store: Path, *args: str, cwd: Path | None = None) -> subprocess.Popen:
    """Start the demo agent in the background (stdout piped, text)."""
    return subprocess.Popen(agent_argv(store, *args), cwd=cwd or store.parent, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def wait_for(predicate: Callable[[], Any], timeout: float = 60.0, what: str = "condition") -> Any:
    """Poll ``predicate`` until it returns something truthy (no fixed sleeps in assertions)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def only_run(store: Path, **labels: Any):
    """The one run whose labels match (demo runs carry seed and topic labels)."""
    with open_store(store) as st:
        found = [r for r in st.list_runs() if all(r.labels.get(k) == v for k, v in labels.items())]
    assert len(found) == 1, found
    return found[0]


def final_snapshot(store: Path, run_id: str):
    """The head snapshot of a run."""
    with open_store(store) as st:
        return st.load(f"{run_id}:-1")


def raw_run_dump(store: Path, run_id: str) -> dict:
    """Every byte that belongs to a run: its ci_runs row, its checkpoint rows, the blobs they reach."""
    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        run_row = con.execute("SELECT * FROM ci_runs WHERE id = ?", (run_id,)).fetchall()
        cps = con.execute("SELECT * FROM ci_checkpoints WHERE run_id = ? ORDER BY seq", (run_id,)).fetchall()
        cols = [d[0] for d in con.execute("SELECT * FROM ci_checkpoints LIMIT 0").description]
        roots = {row[cols.index(c)] for row in cps for c in ("state_hash", "tasks_hash")} - {None}
        blobs = _reachable_blobs(con, roots)
    finally:
        con.close()
    return {"run": run_row, "checkpoints": cps, "blobs": blobs}


def _reachable_blobs(con: sqlite3.Connection, roots: set[bytes]) -> dict[bytes, tuple]:
    from inspector.store.native import blobs as codec

    found: dict[bytes, tuple] = {}
    frontier = set(roots)
    while frontier:
        digest = frontier.pop()
        row = con.execute("SELECT hash, codec, size, data FROM ci_blobs WHERE hash = ?", (digest,)).fetchone()
        assert row is not None, f"missing piece {digest.hex()}"
        found[digest] = row
        value = unpack(codec.decompress(row[1], row[3], row[2]))
        frontier |= set(iter_digests(value)) - found.keys()
    return found


def copy_store(source: Path, target: Path) -> Path:
    """Copy a SQLite store with its write-ahead log (a killed writer may leave one)."""
    for suffix in ("", "-wal"):
        src = Path(f"{source}{suffix}")
        if src.exists():
            Path(f"{target}{suffix}").write_bytes(src.read_bytes())
    return target


def blob_count(store: Path) -> int:
    """How many pieces the store holds."""
    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        return con.execute("SELECT count(*) FROM ci_blobs").fetchone()[0]
    finally:
        con.close()


def read_until(proc, text: str, max_lines: int = 200) -> str:  # a Popen with text stdout
    """Read the process's stdout line by line until a line contains ``text``; return that line."""
    for _ in range(max_lines):
        line = proc.stdout.readline()
        if not line:
            break
        if text in line:
            return line
    raise AssertionError(f"the process never printed {text!r}")


@contextlib.contextmanager
def hung_agent(store: Path, at: int, hang_for: float = 600) -> Iterator[tuple[subprocess.Popen, Any]]:
    """A demo run (seed 2, heartbeat every 0.1 s) whose agent hangs before step ``at``: yields
    the live process and the run; the process is killed on the way out if still alive."""
    hung = start_agent(store, "--seed", "2", "--hang-at", str(at), "--hang-for", str(hang_for),
                       "--heartbeat", "0.1")
    try:
        read_until(hung, f"hanging before step {at}")
        with open_store(store) as st:
            run = st.list_runs()[0]
        yield hung, run
    finally:
        if hung.poll() is None:
            hung.kill()
            hung.wait()
