"""Capture how to start this process again: argv, working directory, needed environment."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable

from inspector.store.native.rows import check_spec  # noqa: F401  (re-exported: the library validates what it writes)

BASE_ENV = ("PATH", "PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "CONDA_PREFIX", "HOME", "USER",
            "LANG", "LC_ALL", "TZ", "PYTHONUNBUFFERED")
SECRET = re.compile(r"(KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH)", re.IGNORECASE)


def current_argv() -> list[str]:
    """This interpreter's command line, re-runnable as is (keeps ``-m module`` forms)."""
    orig = list(getattr(sys, "orig_argv", []) or [])
    if orig:
        return [sys.executable, *orig[1:]]
    return [sys.executable, *sys.argv]


def capture(extra_env: Iterable[str] = (), environ: dict | None = None) -> dict:
    """The resume spec of the current process.

    Secret-looking variables are never stored: they are listed under ``inherit`` so a
    launcher passes its own values through.
    """
    env = os.environ if environ is None else environ
    wanted = set(BASE_ENV) | set(extra_env) | {k for k in env if k.startswith("CHECKPOINT_INSPECTOR_")}
    wanted.discard("CHECKPOINT_INSPECTOR_RESUME")
    kept: dict[str, str] = {}
    inherit: list[str] = []
    for key in sorted(wanted):
        if key not in env:
            continue
        if SECRET.search(key):
            inherit.append(key)
        else:
            kept[key] = env[key]
    return {"argv": current_argv(), "cwd": os.getcwd(), "env": kept, "inherit": inherit}

