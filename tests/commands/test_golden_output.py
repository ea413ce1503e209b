"""Every read command's output, byte for byte, against golden files captured from ``main``
before the read commands were made fast (issue 16): native SQLite, native PostgreSQL, LangGraph.

The stores are committed files (``golden/make_stores.py`` says how they were made); the
PostgreSQL store is the native one copied row by row into a fresh database. Each command
runs as users run it, in a fresh ``python -m inspector`` process (TZ=UTC, so times print the
same everywhere). ``CI_GOLDEN_UPDATE=1`` rewrites the golden files instead of comparing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent / "golden"
ROOT = HERE.parents[2]
UPDATE = os.environ.get("CI_GOLDEN_UPDATE") == "1"
TIMING = re.compile(r'"seconds": [0-9.e-]+')   # how long a diff took (``diff --json``) varies

# run ids of golden/native.db: the forked-from run, its fork, the run with an escape in its
# name, the run with damaged checkpoints (a name that is not UTF-8, a digest cut short, a pin)
ORIGIN, FORK, ESCAPED, DAMAGED = "2e1c2284c1f2", "fca9778aea8d", "195cbc37cbe2", "5a1ee68eefa9"

NATIVE_CASES: dict[str, list[str]] = {
    "runs": ["runs"],
    "runs --json": ["runs", "--json"],
    "runs --filter": ["runs", "--filter", "beekeeping"],
    "runs --status": ["runs", "--status", "completed", "--status", "failed"],
    "runs --filter none": ["runs", "--filter", "no such run", "--json"],
    "checkpoints": ["checkpoints", ORIGIN],
    "checkpoints --json": ["checkpoints", ORIGIN, "--json"],
    "checkpoints by prefix": ["checkpoints", FORK[:4]],
    "checkpoints by name": ["checkpoints", "report: tidal energy"],
    "checkpoints damaged": ["checkpoints", DAMAGED],
    "checkpoints damaged --json": ["checkpoints", DAMAGED, "--json"],
    "checkpoints escaped": ["checkpoints", ESCAPED, "--json"],
    "checkpoints unknown": ["checkpoints", "no-such-run"],
    "show": ["show", f"{ORIGIN}:5"],
    "show head": ["show", ORIGIN],
    "show --json": ["show", f"{ORIGIN}:8", "--json"],
    "show fork": ["show", f"{FORK}:-1"],
    "show escaped": ["show", f"{ESCAPED}:0"],
    "show damaged name": ["show", f"{DAMAGED}:2", "--json"],
    "show damaged digest": ["show", f"{DAMAGED}:4"],
    "show by id": ["show", "16"],
    "show unknown": ["show", f"{ORIGIN}:999"],
    "show seq only": ["show", "#3"],
    "diff": ["diff", f"{ORIGIN}:2", f"{ORIGIN}:8"],
    "diff --json": ["diff", f"{ORIGIN}:2", f"{ORIGIN}:8", "--json"],
    "diff fork": ["diff", f"{ORIGIN}:8", f"{FORK}:-1"],
    "diff across runs": ["diff", f"{ORIGIN}:-1", f"{FORK}:-1", "--limit", "3"],
    "diff equal": ["diff", f"{ORIGIN}:3", f"{ORIGIN}:3", "--exit-code"],
    "diff --exit-code": ["diff", f"{ORIGIN}:3", f"{ORIGIN}:4", "--exit-code", "--json"],
    "diff damaged": ["diff", f"{DAMAGED}:3", f"{DAMAGED}:4"],
}
LANGGRAPH_CASES: dict[str, list[str]] = {
    "runs": ["runs"],
    "runs --json": ["runs", "--json"],
    "checkpoints": ["checkpoints", "thread-B"],
    "checkpoints --json": ["checkpoints", "thread-A", "--json"],
    "show": ["show", "thread-A"],
    "show --json": ["show", "thread-B:8", "--json"],
    "show subgraph": ["show", "thread-B:5"],
    "diff": ["diff", "thread-B:2", "thread-B:9"],
    "diff --json": ["diff", "thread-A:1", "thread-A:-1", "--json"],
    "diff threads": ["diff", "thread-C:-1", "thread-D:-1"],
    "checkpoints unknown": ["checkpoints", "thread-Z"],
}


def run_cases(store: str, cases: dict[str, list[str]]) -> dict[str, dict]:
    """Each case's exit code and stdout (and stderr when it failed), the store's name as STORE."""
    env = {**os.environ, "TZ": "UTC", "PYTHONPATH": str(ROOT)}

    def one(argv: list[str]) -> dict:
        proc = subprocess.run([sys.executable, "-m", "inspector", argv[0], store, *argv[1:]],
                              capture_output=True, env=env, cwd=ROOT, timeout=120, check=False)
        stdout = TIMING.sub('"seconds": 0', proc.stdout.decode("utf-8", "backslashreplace"))
        out = {"code": proc.returncode, "stdout": stdout}
        if proc.returncode == 2:
            out["stderr"] = proc.stderr.decode("utf-8", "backslashreplace")
        return {k: v.replace(store, "STORE") if isinstance(v, str) else v for k, v in out.items()}

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(one, cases.values()))
    return dict(zip(cases, results, strict=True))


def check_against(name: str, got: dict[str, dict]) -> None:
    path = HERE / f"{name}.json"
    if UPDATE:
        path.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        return
    want = json.loads(path.read_text(encoding="utf-8"))
    assert got.keys() == want.keys()
    for case, result in got.items():
        assert result == want[case], f"{name}: {case!r} differs from its golden output"


def private_copy(name: str, tmp_path: Path) -> str:
    target = tmp_path / name
    shutil.copyfile(HERE / name, target)
    return str(target)


def test_native_sqlite_read_commands_print_what_they_printed(tmp_path: Path) -> None:
    store = private_copy("native.db", tmp_path)
    before = Path(store).read_bytes()
    check_against("native", run_cases(store, NATIVE_CASES))
    assert Path(store).read_bytes() == before
    assert not Path(store + "-wal").exists() and not Path(store + "-shm").exists()


def test_langgraph_read_commands_print_what_they_printed(tmp_path: Path) -> None:
    check_against("langgraph", run_cases(private_copy("langgraph.db", tmp_path), LANGGRAPH_CASES))


def copy_native_to(url: str) -> None:
    """The rows of golden/native.db in a new native store at ``url`` (text that is not
    UTF-8 cannot be PostgreSQL text: it arrives with replacement characters)."""
    import sqlite3

    import sqlalchemy as sa

    from inspector.store import create_store
    from inspector.store.native.schema import metadata

    create_store(url).close()
    src = sqlite3.connect(f"file:{HERE / 'native.db'}?mode=ro&immutable=1", uri=True)
    src.text_factory = lambda raw: raw.decode("utf-8", "replace")
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.text("DELETE FROM ci_meta"))
            for table in metadata.sorted_tables:
                cur = src.execute(f"SELECT * FROM {table.name}")   # our own table names
                names = [d[0] for d in cur.description]
                rows = [dict(zip(names, row, strict=True)) for row in cur]
                if rows:
                    conn.execute(table.insert(), rows)
    finally:
        engine.dispose()
        src.close()


@pytest.mark.postgres
def test_native_postgres_read_commands_print_what_they_printed(pg_url: str) -> None:
    from inspector.store.engine import parse_target

    copy_native_to(pg_url)
    cases = {k: v for k, v in NATIVE_CASES.items() if "damaged name" not in k}
    got = run_cases(pg_url, cases)
    display = parse_target(pg_url).display
    for result in got.values():
        for key in ("stdout", "stderr"):
            if key in result:
                result[key] = result[key].replace(display, "STORE")
    check_against("native_postgres", got)
