"""Runs ``checkpoint-inspector`` command lines in forked children under resource limits.

Start-up (Python, SQLAlchemy, PySide6 with ``--gui``) is paid once here; each job is then a
``fork`` that sets ``RLIMIT_AS`` and ``RLIMIT_CPU``, optionally drops to another user, sends
its output to files and calls the same ``inspector.cli.main`` the console script calls. An
exception escaping it is printed as Python prints it (a traceback) with exit status 1, as
the console script would. The parent kills a child that outlives its wall-clock timeout.

Protocol: one JSON job per stdin line ``{"id", "argv", "out", "err", "as_mb", "cpu_s",
"timeout_s", "uid"}``; one JSON result per stdout line ``{"id", "rc", "timed_out",
"seconds", "maxrss_mb"}``. At most ``--jobs`` children run at once.
"""

from __future__ import annotations

import json
import os
import resource
import select
import signal
import sys
import time
import traceback

MB = 1024 * 1024


def _preload(gui: bool) -> None:
    from inspector import cli
    cli.build_parser()           # imports every command module
    import inspector.diff
    import inspector.resume.stuck
    import inspector.store.langgraph
    import inspector.store.opening
    import sqlalchemy.dialects.sqlite  # noqa: F401
    if gui:      # every GUI module: a child running as another user may not read this Python
        import importlib
        import pkgutil
        import inspector.ui
        for module in pkgutil.walk_packages(inspector.ui.__path__, "inspector.ui."):
            importlib.import_module(module.name)


def _child(job: dict) -> None:
    try:
        resource.setrlimit(resource.RLIMIT_AS, (job["as_mb"] * MB, job["as_mb"] * MB))
        resource.setrlimit(resource.RLIMIT_CPU, (job["cpu_s"], job["cpu_s"] + 1))
        out = os.open(job["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        err = os.open(job["err"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        os.dup2(out, 1)
        os.dup2(err, 2)
        if job.get("uid") is not None:      # another user reads the store (files opened above)
            os.setgroups([])
            os.setgid(job["uid"])
            os.setuid(job["uid"])
        sys.stdout = os.fdopen(1, "w", encoding="utf-8", errors="surrogateescape", closefd=False)
        sys.stderr = os.fdopen(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
        sys.argv = ["checkpoint-inspector", *job["argv"]]
        from inspector import cli
        code = cli.main(job["argv"])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        traceback.print_exc()
        code = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code if isinstance(code, int) else 1)


def main() -> None:
    gui = "--gui" in sys.argv
    jobs = int(sys.argv[sys.argv.index("--jobs") + 1]) if "--jobs" in sys.argv else 2
    _preload(gui)
    sys.stdout.write(json.dumps({"ready": True}) + "\n")
    sys.stdout.flush()
    running: dict[int, tuple[dict, float]] = {}
    queue: list[dict] = []
    stdin_open = True
    while stdin_open or queue or running:
        while queue and len(running) < jobs:
            job = queue.pop(0)
            pid = os.fork()
            if pid == 0:
                _child(job)
            running[pid] = (job, time.monotonic())
        if stdin_open:
            ready, _, _ = select.select([sys.stdin], [], [], 0.02)
            if ready:
                line = sys.stdin.readline()
                if not line:
                    stdin_open = False
                else:
                    queue.append(json.loads(line))
        else:
            time.sleep(0.01)
        for pid, (job, started) in list(running.items()):
            done, status, usage = os.wait4(pid, os.WNOHANG)
            timed_out = False
            if done == 0:
                if time.monotonic() - started < job["timeout_s"]:
                    continue
                os.kill(pid, signal.SIGKILL)
                done, status, usage = os.wait4(pid, 0)
                timed_out = True
            del running[pid]
            rc = os.waitstatus_to_exitcode(status)
            sys.stdout.write(json.dumps({"id": job["id"], "rc": rc, "timed_out": timed_out,
                                         "seconds": round(time.monotonic() - started, 3),
                                         "maxrss_mb": round(usage.ru_maxrss / 1024, 1)}) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
