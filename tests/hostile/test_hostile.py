"""Every read command and the GUI's screenshot mode (State and Diff tabs) on every hostile store (``corpus.py``).

Each command runs in a child process under an address-space and CPU limit and a wall-clock
timeout (``zygote.py``), and must end with exit 0, or exit 2 and exactly one sentence on
stderr — never a traceback, a crash, a hang or a limit hit. ``--json`` output must be strict
JSON; no output may carry a terminal control character; the store's bytes and its
directory listing must be what they were before any command ran.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hostile.corpus import FORK, RUN, Case, build, cleanup, public_dir

ROOT = Path(__file__).resolve().parents[2]
CLI_LIMITS = {"as_mb": 1536, "cpu_s": 30, "timeout_s": 60}
GUI_LIMITS = {"as_mb": 4096, "cpu_s": 40, "timeout_s": 90}
NOBODY = 65534
COMMANDS = {
    "runs": lambda c: ["runs", c.store],
    "runs --json": lambda c: ["runs", c.store, "--json"],
    "checkpoints": lambda c: ["checkpoints", c.store, c.run],
    "checkpoints --json": lambda c: ["checkpoints", c.store, c.run, "--json"],
    "show": lambda c: ["show", c.store, c.b],
    "show --json": lambda c: ["show", c.store, c.b, "--json"],
    "diff": lambda c: ["diff", c.store, c.a, c.b],
    "diff --json": lambda c: ["diff", c.store, c.a, c.b, "--json"],
    "stuck": lambda c: ["stuck", c.store],
    "stuck --json": lambda c: ["stuck", c.store, "--json"],
    "usage": lambda c: ["usage", c.store],
    "usage --json": lambda c: ["usage", c.store, "--json"],
    "history": lambda c: ["history", c.store, c.run],
    "history --json": lambda c: ["history", c.store, c.run, "--json"],
    "history --path": lambda c: ["history", c.store, c.run, "--path", "messages[0].content"],
    "delete (dry run)": lambda c: ["delete", c.store, c.run, *([FORK] if c.run == RUN and c.forked else [])],
    "info": lambda c: ["info", c.store],
    "info --json": lambda c: ["info", c.store, "--json"],
    "prune (dry run)": lambda c: ["prune", c.store, "--keep-last", "1"],
    "prune --json": lambda c: ["prune", c.store, "--keep-last", "1", "--json"],
    # a dry run (the destination is never written: the listing test would see it), verified
    # with LangGraph's own saver on the damaged source
    "import": lambda c: ["import", c.store, f"{c.store}.import-dry-run.db"],
    "import --json": lambda c: ["import", c.store, f"{c.store}.import-dry-run.db", "--json"],
}
CODES = {"import": (0, 1, 2), "import --json": (0, 1, 2)}   # 1: rows skipped or the verification differs
GUI = "open --screenshot"
GUI_DIFF = "open --screenshot --tab diff"     # the Diff tab reads both sides (pieces, windows)
QT_NOISE = ("This plugin does not support propagateSizeHints()",)   # Qt's offscreen plugin, not ours
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]")


def _listing(case: Case) -> dict:
    """Names, sizes, modes and digests of everything in the store's directory."""
    if "://" in case.store:
        return {}
    folder = Path(case.store).parent
    out = {}
    for entry in sorted(os.listdir(folder)):
        path = folder / entry
        st = os.lstat(path)
        digest = ""
        if path.is_file() and not path.is_symlink():
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
        out[entry] = (st.st_size, st.st_mode, st.st_mtime_ns, digest)
    return out


def _run_all(jobs: list[dict], gui: bool) -> dict[str, dict]:
    argv = [sys.executable, "-m", "tests.hostile.zygote", "--jobs", "2"] + (["--gui"] if gui else [])
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT),
           "XDG_CONFIG_HOME": str(Path(jobs[0]["out"]).parent / "config"),
           "XDG_RUNTIME_DIR": str(Path(jobs[0]["out"]).parent / "runtime")}
    proc = subprocess.Popen(argv, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    assert json.loads(proc.stdout.readline()) == {"ready": True}
    proc.stdin.write("".join(json.dumps(j) + "\n" for j in jobs))
    proc.stdin.close()
    results = {r["id"]: r for r in map(json.loads, proc.stdout)}
    assert proc.wait() == 0
    return results


def _readable_by(uid: int, path: Path) -> bool:
    """Whether user ``uid`` can list ``path`` (tried in a forked child that drops to it)."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            os.listdir(path)
            os._exit(0)
        except BaseException:
            os._exit(1)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0


def _gui_uid(uid: int | None) -> int | None:
    """The user the GUI's other-user cases run as: ``uid`` when it can load Qt's plugins
    (a Python installed under a private home cannot be read by it), else this user — the
    case then still proves that opening writes nothing, though not that it needs no rights."""
    import PySide6

    qt = Path(PySide6.__file__).parent / "Qt" / "plugins"
    return uid if uid is None or _readable_by(uid, qt if qt.is_dir() else Path(PySide6.__file__).parent) else None


@pytest.fixture(scope="session")
def hostile(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> dict:
    """Build the corpus, run every command on every case, and keep what happened."""
    root = tmp_path_factory.mktemp("hostile")
    cases = build(root / "stores")
    request.addfinalizer(cleanup)
    out = root / "out"
    for sub in ("out", "out/config", "out/runtime"):
        (root / sub).mkdir(mode=0o777, exist_ok=True)
        os.chmod(root / sub, 0o777)
    before = {c.name: _listing(c) for c in cases}
    # as root, other-user cases run as nobody where nobody can read this checkout (a clone in a
    # private temp folder cannot be): else as this user, which still proves nothing is written
    uid = NOBODY if os.geteuid() == 0 and _readable_by(NOBODY, ROOT / "inspector" / "commands") else None
    gui_uid = _gui_uid(uid)
    jobs, gui_jobs = [], []
    for case in cases:
        for name, make in COMMANDS.items():
            ident = f"{case.name}|{name}"
            safe = re.sub(r"\W", "_", ident)
            jobs.append({"id": ident, "argv": make(case), "out": str(out / f"{safe}.out"),
                         "err": str(out / f"{safe}.err"), "uid": uid if case.other_user else None,
                         **CLI_LIMITS})
        for command, tab in ((GUI, []), (GUI_DIFF, ["--tab", "diff"])):
            safe = re.sub(r"\W", "_", case.name) + ("" if command == GUI else ".diff")
            gui_jobs.append({"id": f"{case.name}|{command}", "out": str(out / f"{safe}.gui.out"),
                             "err": str(out / f"{safe}.gui.err"), "uid": gui_uid if case.other_user else None,
                             "argv": ["open", case.store, "--screenshot", str(out / f"{safe}.png"),
                                      "--select", case.b, "--no-live", "--size", "1024x700", *tab],
                             **GUI_LIMITS})
    public = public_dir()          # another user writes its output where it can
    for job in jobs + gui_jobs:
        if job["uid"] is not None:
            for key in ("out", "err"):
                job[key] = str(public / Path(job[key]).name)
            if job["argv"][0] == "open":
                job["argv"][3] = str(public / Path(job["argv"][3]).name)
    public.chmod(0o777)
    results = _run_all(jobs, gui=False)
    results.update(_run_all(gui_jobs, gui=True))
    after = {c.name: _listing(c) for c in cases}
    (root / "results.json").write_text(json.dumps(results, indent=1))
    return {"cases": cases, "results": results, "before": before, "after": after,
            "jobs": {j["id"]: j for j in jobs + gui_jobs}}


def _problems(hostile: dict, case: Case, command: str) -> list[str]:
    job = hostile["jobs"][f"{case.name}|{command}"]
    result = hostile["results"][job["id"]]
    stdout = Path(job["out"]).read_bytes().decode("utf-8", "replace")
    stderr = "".join(line for line in Path(job["err"]).read_bytes().decode("utf-8", "replace").splitlines(True)
                     if not line.startswith(QT_NOISE))
    where = f"{case.name} · {command}"
    found = []
    if result["timed_out"]:
        found.append(f"{where}: still running after {job['timeout_s']} s")
    elif result["rc"] not in CODES.get(command, (0, 2)) or (case.expect_ok and command not in CODES and result["rc"] != 0):
        found.append(f"{where}: exit {result['rc']}: {stderr[-600:]!r}")
    if "Traceback" in stderr or "Traceback" in stdout:
        found.append(f"{where}: traceback: {stderr[-600:]!r}")
    if result["rc"] == 2:
        lines = stderr.strip().splitlines()
        if len(lines) != 1 or not lines[0].startswith("checkpoint-inspector: ") or not lines[0].endswith("."):
            found.append(f"{where}: not one sentence on stderr: {stderr[:600]!r}")
    if CONTROL.search(stdout) or CONTROL.search(stderr):
        found.append(f"{where}: a control character reaches the terminal: "
                     f"{CONTROL.search(stdout + stderr).group()!r}")
    if result["rc"] in (0, 1) and command.endswith("--json"):
        try:
            json.loads(stdout, parse_constant=lambda name: (_ for _ in ()).throw(ValueError(name)))
        except ValueError as err:
            found.append(f"{where}: stdout is not strict JSON ({err})")
    return found


@pytest.mark.parametrize("command", [*COMMANDS, GUI, GUI_DIFF])
def test_every_case_ends_cleanly(hostile: dict, command: str) -> None:
    problems = [p for case in hostile["cases"] for p in _problems(hostile, case, command)]
    assert not problems, f"{len(problems)} problem(s):\n" + "\n".join(problems)


def test_no_store_file_changes(hostile: dict) -> None:
    changed = [c.name for c in hostile["cases"] if hostile["before"][c.name] != hostile["after"][c.name]]
    details = {name: (hostile["before"][name], hostile["after"][name]) for name in changed}
    assert not changed, f"files changed: {details}"


@pytest.mark.parametrize("case", ["killed_writer", "wal_without_shm"])
def test_a_killed_writers_log_shows_every_committed_checkpoint(hostile: dict, case: str) -> None:
    job = hostile["jobs"][f"{case}|checkpoints --json"]
    listed = json.loads(Path(job["out"]).read_text())
    assert [c["seq"] for c in listed] == list(range(25))


def test_a_log_without_shm_is_read_from_a_copy_and_says_so(hostile: dict) -> None:
    from inspector.store import open_store
    case = next(c for c in hostile["cases"] if c.name == "wal_without_shm")
    with open_store(case.store) as store:
        assert "private copy" in store.info.notice
        assert store.count_checkpoints("r1") == 25


def test_a_store_in_a_read_only_directory_lists_its_runs(hostile: dict) -> None:
    job = hostile["jobs"]["read_only_dir|runs --json"]
    assert {r["id"] for r in json.loads(Path(job["out"]).read_text())} == {"r1", "r2"}


def test_one_bad_row_is_one_damaged_row(hostile: dict) -> None:
    for name in ("run_name_invalid_utf8", "time_as_string", "wrong_column_types"):
        job = hostile["jobs"][f"{name}|runs --json"]
        runs = {r["id"]: r for r in json.loads(Path(job["out"]).read_text())}
        assert set(runs) == {"r1", "r2"}, name
    job = hostile["jobs"]["run_name_invalid_utf8|runs --json"]
    runs = {r["id"]: r for r in json.loads(Path(job["out"]).read_text())}
    assert runs["r2"]["damaged"] and not runs["r1"].get("damaged")
