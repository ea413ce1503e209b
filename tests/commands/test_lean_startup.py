"""Start-up of the read commands imports only what they use (issue 16: ``show`` in a fresh
process): no ``logging`` until something logs, no thread pool until one starts, no ``shutil``
for argparse's terminal width. Yet logging,
imported later by anything, still logs in the CLI's format and level."""

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
DEFERRED = ("logging", "concurrent.futures", "shutil")
PROBE = f"DEFERRED = {DEFERRED!r}\n" + """
import io, json, sys
from contextlib import redirect_stdout
from inspector.cli import main
out = io.StringIO()
with redirect_stdout(out):
    code = main(sys.argv[1:])
print(json.dumps({"code": code, "printed": len(out.getvalue()),
                  "loaded": [m for m in DEFERRED if m in sys.modules]}))
"""


def _fresh(code: str, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=120, check=False)


def _probed(code: str, *argv: str) -> dict:
    """What a probe printed last (JSON), from a fresh process that must succeed."""
    proc = _fresh(code, *argv)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("startup")
    for name in ("native", "langgraph"):
        shutil.copyfile(GOLDEN / f"{name}.db", folder / f"{name}.db")
    return {name: str(folder / f"{name}.db") for name in ("native", "langgraph")}


@pytest.mark.parametrize("store, argv", [
    ("native", ["show", "2e1c2284c1f2:5"]), ("native", ["show", "2e1c2284c1f2:-1", "--json"]),
    ("native", ["runs"]), ("native", ["checkpoints", "2e1c2284c1f2", "--json"]), ("native", ["info"]),
    ("langgraph", ["show", "thread-A:1"]), ("langgraph", ["runs", "--json"]),
], ids=lambda v: " ".join(v) if isinstance(v, list) else v)
def test_read_commands_start_without_logging_or_a_thread_pool(stores: dict[str, str], store: str,
                                                              argv: list[str]) -> None:
    got = _probed(PROBE, argv[0], stores[store], *argv[1:])
    assert got["code"] == 0 and got["printed"] > 2
    # a LangGraph store's settings need platformdirs, which imports shutil (through tempfile)
    assert got["loaded"] == ([] if store == "native" else [m for m in got["loaded"] if m == "shutil"])


# the model's types are records, not dataclasses: dataclasses (with inspect, ast and dis) is
# imported only by what asks for dataclass fields
NO_DATACLASSES = PROBE.replace(repr(DEFERRED), repr(("dataclasses", "inspect", "ast", "dis")), 1)


@pytest.mark.parametrize("argv", [
    ["show", "2e1c2284c1f2:5"], ["show", "2e1c2284c1f2:-1", "--json"], ["runs"], ["runs", "--json"],
    ["checkpoints", "2e1c2284c1f2"], ["checkpoints", "2e1c2284c1f2", "--json"], ["info"],
], ids=" ".join)
def test_native_read_commands_start_without_dataclasses(stores: dict[str, str], argv: list[str]) -> None:
    got = _probed(NO_DATACLASSES, argv[0], stores["native"], *argv[1:])
    assert got["code"] == 0 and got["printed"] > 2 and got["loaded"] == []


def test_runs_with_an_active_run_start_without_dataclasses(stores: dict[str, str], tmp_path: Path) -> None:
    import sqlite3
    path = tmp_path / "active.db"
    shutil.copyfile(stores["native"], path)
    with sqlite3.connect(path) as conn:   # a run whose owner is looked up (resume.liveness.Owner)
        conn.execute("UPDATE ci_runs SET status = 'running', owner_host = 'elsewhere', owner_pid = 1, "
                     "heartbeat = 0 WHERE id = (SELECT min(id) FROM ci_runs)")
    conn.close()
    got = _probed(NO_DATACLASSES, "runs", str(path))
    assert got["code"] == 0 and got["loaded"] == []
    listing = _fresh("import sys; from inspector.cli import main; main(sys.argv[1:])", "runs", str(path)).stdout
    assert " stuck " in listing   # its owner's heartbeat was looked at


# typing compiles a NamedTuple's annotation strings (``from __future__ import annotations``),
# and the first compile() of a process sets up the AST types (~1 ms)
NO_COMPILE = """
import io, json, sys
from contextlib import redirect_stdout
compiled = []
def hook(event, args):
    if event != "compile":
        return
    try:
        caller = sys._getframe(1).f_code   # ForwardRef.__init__ compiles an annotation string
    except ValueError:
        return
    if caller.co_filename.endswith("typing.py") and caller.co_name == "__init__":
        compiled.append(repr(args[0])[:60])
sys.addaudithook(hook)
from inspector.cli import main
with redirect_stdout(io.StringIO()):
    code = main(sys.argv[1:])
print(json.dumps({"code": code, "compiled": compiled}))
"""


@pytest.mark.parametrize("argv", [["show", "2e1c2284c1f2:5"], ["runs", "--json"], ["checkpoints", "2e1c2284c1f2"],
                                  ["diff", "2e1c2284c1f2:2", "2e1c2284c1f2:8"]], ids=" ".join)
def test_start_up_compiles_no_annotation_strings(stores: dict[str, str], argv: list[str]) -> None:
    got = _probed(NO_COMPILE, argv[0], stores["native"], *argv[1:])
    assert got == {"code": 0, "compiled": []}


@pytest.mark.parametrize("argv", [["2e1c2284c1f2:2", "2e1c2284c1f2:8"], ["2e1c2284c1f2:0", "2e1c2284c1f2:-1", "--json"]],
                         ids=" ".join)
def test_a_diff_of_small_states_starts_without_a_thread_pool_logging_or_dataclasses(stores: dict[str, str],
                                                                                   argv: list[str]) -> None:
    # its pieces are decompressed by the diff itself (a small batch is quicker done than handed
    # to the worker thread, whose pool imports logging); its result types are records
    probe = PROBE.replace(repr(DEFERRED), repr((*DEFERRED, "dataclasses", "inspect")), 1)
    got = _probed(probe, "diff", stores["native"], *argv)
    assert got["code"] == 0 and got["printed"] > 2 and got["loaded"] == []


LATE = """
import sys
from inspector.cli import configure_logging
configure_logging(sys.argv[1] == "-v")
assert "logging" not in sys.modules or sys.argv[1] == "-v"
import logging                       # as a library imported later would
logging.getLogger("some.library").warning("careful")
logging.getLogger("some.library").debug("details")
logging.getLogger("some.library").info("news")
"""


def test_logging_imported_later_logs_in_the_cli_format() -> None:
    proc = _fresh(LATE, "-")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == "WARNING some.library: careful\n"


def test_verbose_logging_logs_debug_in_the_cli_format() -> None:
    proc = _fresh(LATE, "-v")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ("WARNING some.library: careful\nDEBUG some.library: details\n"
                           "INFO some.library: news\n")


def test_a_command_that_fails_on_bad_input_still_says_one_sentence(stores: dict[str, str]) -> None:
    proc = _fresh("import sys; from inspector.cli import main; sys.exit(main(sys.argv[1:]))",
                  "show", stores["native"], "no-such-run:1")
    assert proc.returncode == 2
    assert proc.stderr.startswith("checkpoint-inspector: ") and proc.stderr.count("\n") == 1


HELP = """
import argparse, sys
import inspector.cli
if sys.argv[1] == "stock":
    inspector.cli.Parser._get_formatter = argparse.ArgumentParser._get_formatter
sys.exit(inspector.cli.main(sys.argv[2:]))
"""


@pytest.mark.parametrize("columns", [None, "50", "200", "1", "junk"])
@pytest.mark.parametrize("argv", [["--help"], ["show", "--help"], ["bench", "cli", "--help"]],
                         ids=" ".join)      # (a mistake prints one sentence, no usage block: test_user_mistakes)
def test_help_and_usage_wrap_as_argparse_wraps_them(argv: list[str], columns: str | None) -> None:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"} | ({"COLUMNS": columns} if columns else {})
    runs = [subprocess.run([sys.executable, "-c", HELP, kind, *argv], capture_output=True, text=True,
                           env={**env, "PYTHONPATH": str(ROOT)}, cwd=ROOT, timeout=120, check=False)
            for kind in ("ours", "stock")]
    assert runs[0].returncode == runs[1].returncode
    assert runs[0].stdout + runs[0].stderr == runs[1].stdout + runs[1].stderr
    assert len((runs[0].stdout + runs[0].stderr).splitlines()) >= 2


# a plain read-command line is parsed without argparse (and so without gettext and locale), and
# nothing a read command does starts a thread (the locks are threading's own, from _thread)
NO_ARGPARSE = PROBE.replace(repr(DEFERRED), repr(("argparse", "gettext", "locale", "threading")), 1)


@pytest.mark.parametrize("argv", [
    ["show", "2e1c2284c1f2:5"], ["show", "2e1c2284c1f2:-1", "--json"], ["runs"], ["runs", "--json"],
    ["checkpoints", "2e1c2284c1f2"], ["checkpoints", "2e1c2284c1f2", "--json"], ["info"],
    ["diff", "2e1c2284c1f2:2", "2e1c2284c1f2:8"], ["diff", "2e1c2284c1f2:0", "2e1c2284c1f2:-1", "--json"],
], ids=" ".join)
def test_plain_read_commands_start_without_argparse_or_threading(stores: dict[str, str], argv: list[str]) -> None:
    got = _probed(NO_ARGPARSE, argv[0], stores["native"], *argv[1:])
    assert got["code"] == 0 and got["printed"] > 2 and got["loaded"] == []


def test_a_read_command_with_an_option_value_is_parsed_by_argparse(stores: dict[str, str]) -> None:
    got = _probed(NO_ARGPARSE, "runs", stores["native"], "--filter", "e")
    assert got["code"] == 0 and "argparse" in got["loaded"] and "threading" not in got["loaded"]
