"""A read command on a native or LangGraph SQLite store runs without SQLAlchemy (or Qt,
LangGraph …): each runs in a fresh process that reports what it imported (issue 16:
fresh-process speed)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

GOLDEN = Path(__file__).resolve().parent / "golden"
ROOT = GOLDEN.parents[2]
HEAVY = ("sqlalchemy", "PySide6", "langgraph", "langchain_core", "pydantic", "numpy", "psycopg")
PROBE = """
import io, json, sys
from contextlib import redirect_stdout
from inspector.cli import main
out = io.StringIO()
with redirect_stdout(out):
    code = main(sys.argv[1:])
heavy = sorted({m.split(".")[0] for m in sys.modules} & set(json.loads(sys.stdin.readline())))
print(json.dumps({"code": code, "heavy": heavy, "printed": len(out.getvalue())}))
"""


def _probe(*argv: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", PROBE, *argv], input=json.dumps(HEAVY) + "\n",
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def native(tmp_path_factory: pytest.TempPathFactory) -> str:
    target = tmp_path_factory.mktemp("lean") / "native.db"
    shutil.copyfile(GOLDEN / "native.db", target)
    return str(target)


@pytest.mark.parametrize("argv", [
    ["runs"], ["runs", "--json"], ["checkpoints", "2e1c2284c1f2"], ["checkpoints", "2e1c", "--json"],
    ["show", "2e1c2284c1f2:5"], ["show", "2e1c2284c1f2:-1", "--json"],
    ["diff", "2e1c2284c1f2:2", "fca9778aea8d:-1"], ["diff", "2e1c2284c1f2:2", "2e1c2284c1f2:8", "--json"],
    ["info"], ["info", "--json"], ["stuck"], ["stuck", "--json"], ["usage"], ["usage", "2e1c2284c1f2", "--json"],
], ids=" ".join)
def test_read_commands_on_native_sqlite_import_no_sqlalchemy(native: str, argv: list[str]) -> None:
    got = _probe(argv[0], native, *argv[1:])
    assert got["code"] == 0 and got["printed"] > 2
    assert got["heavy"] == []


@pytest.fixture(scope="module")
def langgraph(tmp_path_factory: pytest.TempPathFactory) -> str:
    target = tmp_path_factory.mktemp("lean") / "langgraph.db"
    shutil.copyfile(GOLDEN / "langgraph.db", target)
    return str(target)


@pytest.mark.parametrize("argv", [
    ["runs"], ["runs", "--json"], ["checkpoints", "thread-A"], ["checkpoints", "thread-A", "--json"],
    ["show", "thread-A:1"], ["show", "thread-A:-1", "--json"], ["diff", "thread-A:1", "thread-A:-1"],
    ["info"], ["stuck", "--json"],
], ids=" ".join)
def test_read_commands_on_a_langgraph_sqlite_file_import_no_sqlalchemy(langgraph: str, argv: list[str]) -> None:
    got = _probe(argv[0], langgraph, *argv[1:])
    assert got["code"] == 0 and got["printed"] > 2
    assert got["heavy"] == []


def test_a_storage_report_still_reads_through_sqlalchemy(langgraph: str) -> None:
    got = _probe("usage", langgraph)
    assert got["code"] == 0 and "sqlalchemy" in got["heavy"]    # the probe sees what it imports
