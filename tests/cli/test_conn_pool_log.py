"""The CLI does not print SQLAlchemy's pool traceback for a connection that could not be
reset (a server gone mid-command: the command's sentence says so); ``-v`` still shows it."""

from __future__ import annotations

import subprocess
import sys

# a pooled connection whose driver connection is gone when it goes back to the pool, as one
# whose server was stopped: the pool's rollback of it fails
SCRIPT = """
import sys
from inspector.cli import configure_logging
configure_logging(sys.argv[2] == "-v")
import sqlalchemy as sa
engine = sa.create_engine("sqlite:///" + sys.argv[1], poolclass=sa.pool.QueuePool)
raw = engine.raw_connection()
raw.driver_connection.close()
raw.close()
"""


def _stderr(tmp_path, *flag: str) -> str:
    run = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path / "s.db"), *(flag or ("",))],
                         capture_output=True, text=True, check=True)
    return run.stderr


def test_pool_reset_failure_is_not_printed(tmp_path):
    assert _stderr(tmp_path) == ""


def test_pool_reset_failure_is_shown_with_verbose(tmp_path):
    assert "Exception during reset" in _stderr(tmp_path, "-v")
