"""A framework store (rollback journal, not WAL) whose writer was killed inside a transaction
after SQLite had spilled pages of it into the database file: a hot ``-journal`` remains. Any
SQLite client rolls it back before reading; the inspector read the database file as it was and
showed the transaction's half-written rows as committed (found by fuzzing). It reads a private
copy where SQLite rolls back, says so, and changes no file."""

from __future__ import annotations

import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

from inspector.cli import main

STORES = Path(__file__).resolve().parent / "stores"

_WRITER = r'''
import sqlite3, sys
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("PRAGMA cache_size=1")            # dirty pages go to the database file before the commit
c.execute("BEGIN")
for table, in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
    for column in [r[1] for r in c.execute(f'PRAGMA table_info("{table}")')]:
        try:
            c.execute(f'UPDATE "{table}" SET "{column}" = \'UNCOMMITTED-\' || "{column}"')
        except sqlite3.Error:
            pass
print("dirty", flush=True)
sys.stdin.read()
'''


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_a_hot_journal_is_rolled_back_in_a_private_copy(tmp_path: Path, capsys) -> None:
    folder = tmp_path / "store"
    folder.mkdir()
    path = folder / "agents_advanced.db"
    shutil.copyfile(STORES / "agents_advanced.db", path)
    assert main(["runs", str(path), "--json"]) == 0
    committed = capsys.readouterr().out
    writer = subprocess.Popen([sys.executable, "-c", _WRITER, str(path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert writer.stdout is not None and writer.stdout.readline().strip() == "dirty"
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    journal = folder / "agents_advanced.db-journal"
    assert journal.stat().st_size > 0
    before = _files(folder)
    assert b"UNCOMMITTED-" in before["agents_advanced.db"]      # spilled into the database file
    assert main(["runs", str(path), "--json"]) == 0
    out, err = capsys.readouterr()
    assert out == committed and "UNCOMMITTED" not in out
    assert err.count("\n") == 1 and "rollback journal" in err and "private copy" in err
    assert main(["show", str(path), "planner:-1"]) == 0
    assert "UNCOMMITTED" not in capsys.readouterr().out
    assert _files(folder) == before                              # not rolled back here: a copy was
    # as SQLite itself reads it (it rolls back: on a copy)
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    sqlite3.connect(copy / path.name).execute("SELECT COUNT(*) FROM sqlite_master").fetchall()
    assert main(["runs", str(copy / path.name), "--json"]) == 0
    assert capsys.readouterr().out == committed
