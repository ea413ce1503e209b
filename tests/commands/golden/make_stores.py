"""How the committed read-command fixture stores were made (run once; the files are committed).

``python -m tests.commands.golden.make_stores`` writes:

* ``native.db``: the real demo agent's store (``inspector.demo.build``), then made stable and
  given the damage a listing must survive: the crashed run stored as failed (a shown status of an active run
  would otherwise depend on this host and the clock), a run name with terminal escapes, a
  checkpoint name that is not UTF-8, a checkpoint whose state digest is cut short, and a pin.
* ``langgraph.db``: LangGraph's own ``SqliteSaver`` file of the LangGraph tests' standard threads
  (``tests.store.langgraph.lg_graphs``: a real graph, a fork and an interrupted thread).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

HERE = Path(__file__).resolve().parent


def make_native(path: Path) -> None:
    """The demo store with stable statuses and a few damaged rows."""
    from inspector.demo.build import build_demo_store

    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    build_demo_store(path, log=lambda _line: None, include_stuck=False)
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE ci_runs SET status = 'failed', owner_pid = NULL WHERE status = 'running'")
        conn.execute("UPDATE ci_runs SET owner_host = 'golden-host'")
        first = conn.execute("SELECT id FROM ci_runs ORDER BY created LIMIT 1 OFFSET 2").fetchone()[0]
        conn.execute("UPDATE ci_runs SET name = name || char(27) || ']0;pwned' || char(7) WHERE id = ?", (first,))
        run, = conn.execute("SELECT id FROM ci_runs ORDER BY created LIMIT 1 OFFSET 3").fetchone()
        conn.execute("UPDATE ci_checkpoints SET name = CAST(X'7374657020FF31' AS TEXT) WHERE run_id = ? AND seq = 2",
                     (run,))
        conn.execute("UPDATE ci_checkpoints SET state_hash = X'0011' WHERE run_id = ? AND seq = 4", (run,))
        cp, = conn.execute("SELECT id FROM ci_checkpoints WHERE run_id = ? AND seq = 1", (run,)).fetchone()
        conn.execute("INSERT INTO ci_pins (checkpoint_id, run_id, created, note) VALUES (?, ?, 1796000000.0, 'golden')",
                     (cp, run))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.close()


def make_langgraph(path: Path) -> None:
    """LangGraph's SqliteSaver file of the standard test threads."""
    from tests.store.langgraph.lg_graphs import make_database

    path.unlink(missing_ok=True)
    make_database(path)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.close()


if __name__ == "__main__":
    make_native(HERE / "native.db")
    make_langgraph(HERE / "langgraph.db")
