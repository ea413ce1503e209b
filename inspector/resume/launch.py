"""Launching a resumed agent process: argv, working directory and environment, never a shell."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any
from collections.abc import Mapping, Sequence

import sqlalchemy as sa

from inspector.errors import StoreError
from inspector.record.handoff import ENV_VAR, Handoff
from inspector.store.base import Store


@dataclass(frozen=True)
class LaunchSpec:
    """Everything needed to start the resumed process (the store side is already done).

    ``env`` is the complete environment of the process, hand-off included; nothing else
    from the launcher's environment is passed.
    """

    run_id: str
    checkpoint_id: int | str
    epoch: int
    argv: tuple[str, ...]
    cwd: str
    env: Mapping[str, str]
    store_url: str
    forked: bool = False
    source_run: str | None = None
    inherit: tuple[str, ...] = field(default=())

    def command_line(self) -> str:
        """The argv quoted for display (it is never run through a shell)."""
        return shlex.join(self.argv)


def check_argv(argv: Sequence[str]) -> tuple[str, ...]:
    """A non-empty tuple of strings, else StoreError."""
    if not argv or not all(isinstance(a, str) for a in argv):
        raise StoreError("The resume command is empty or malformed; it must be a list of arguments.")
    if not argv[0].strip():
        raise StoreError("The resume command has no program to run.")
    if any("\x00" in a for a in argv):
        raise StoreError("An argument of the resume command contains a NUL character.")
    return tuple(argv)


def check_cwd(cwd: str) -> str:
    """An existing directory, else StoreError."""
    if not cwd or not Path(cwd).is_dir():
        raise StoreError(f"The working directory {cwd!r} does not exist.")
    return cwd


def check_env(env: Mapping[str, str]) -> dict[str, str]:
    """Names and values must be strings; names must not contain '='."""
    out: dict[str, str] = {}
    for key, value in env.items():
        if not isinstance(key, str) or not key or "=" in key or "\x00" in key:
            raise StoreError(f"{key!r} is not a valid environment variable name.")
        if not isinstance(value, str) or "\x00" in value:
            raise StoreError(f"The value of environment variable {key} is not a plain string.")
        out[key] = value
    return out


def inherited(names: Sequence[str], environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Values of the named variables (secrets the spec refers to by name) from this process."""
    env = os.environ if environ is None else environ
    return {k: env[k] for k in names if k in env}


def handoff_env(store_url: str, run_id: str, checkpoint: int | str, epoch: int) -> dict[str, str]:
    """The hand-off variable telling the new process what to continue."""
    return Handoff(store=store_url, run=run_id, checkpoint=checkpoint, epoch=epoch).to_env()


def display_url(url: str) -> str:
    """A store URL with any password hidden (for dialogs and terminals)."""
    if "://" not in url:
        return url
    try:
        return sa.engine.make_url(url).render_as_string(hide_password=True)
    except Exception:  # display only
        return url


def display_env(env: Mapping[str, str], secret_names: Sequence[str] = ()) -> dict[str, str]:
    """``env`` for display: inherited secrets shown as '<from this environment>', URLs masked."""
    shown: dict[str, str] = {}
    for key, value in env.items():
        if key in secret_names:
            shown[key] = "<from this environment>"
        elif key == ENV_VAR:
            shown[key] = value.replace(_store_in(value), display_url(_store_in(value))) if _store_in(value) else value
        else:
            shown[key] = value
    return shown


def _store_in(handoff_json: str) -> str:
    try:
        return str(json.loads(handoff_json).get("store", ""))
    except (ValueError, AttributeError):
        return ""


def spawn(spec: LaunchSpec, *, stdout: IO | int | None = None, stderr: IO | int | None = None,
          new_session: bool = False, store: Store | None = None) -> subprocess.Popen:
    """Start the process described by ``spec`` (no shell: arguments are passed literally).

    If it cannot start, the run is marked failed (when ``store`` is given) and a
    StoreError says why.
    """
    try:
        return subprocess.Popen(list(spec.argv), cwd=spec.cwd, env=dict(spec.env), shell=False,
                                stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr,
                                start_new_session=new_session)
    except OSError as err:
        message = f"Could not start {spec.argv[0]!r}: {err.strerror or err}."
        if store is not None:
            launch_failed(store, spec, message)
        raise StoreError(message) from err


def launch_failed(store: Store, spec: LaunchSpec, message: str) -> None:
    """Mark the run failed when its resumed process could not even start (fenced by epoch)."""
    if store.info.kind != "native" or spec.epoch <= 0:
        return  # LangGraph threads have no owner to release
    from inspector.store.native.store import NativeStore
    from inspector.store.native.writer import NativeWriter
    if not isinstance(store, NativeStore):
        return
    writer = NativeWriter(store)
    try:
        writer.set_status(spec.run_id, spec.epoch, "failed", message)
    finally:
        writer.close()


def launch_exited(store: Store, spec: LaunchSpec, code: int) -> bool:
    """After the resumed process ended: if it failed before claiming the run, mark the run failed.

    Otherwise (it claimed the run) the recording library already set the status, or the
    stuck diagnosis will call the run crashed. Returns True when the status was set here.
    """
    if code == 0 or store.info.kind != "native" or spec.epoch <= 0:
        return False
    run = store.get_run(spec.run_id)
    if run.epoch != spec.epoch or run.owner_pid is not None or run.status != "running":
        return False
    from inspector.store.native.store import NativeStore
    from inspector.store.native.writer import NativeWriter
    if not isinstance(store, NativeStore):
        return False
    writer = NativeWriter(store)
    try:
        return writer.set_status(spec.run_id, spec.epoch, "failed",
                                 f"The resumed process exited with code {code} before it took over the run.")
    finally:
        writer.close()


def describe(spec: LaunchSpec) -> dict[str, Any]:
    """A JSON-able description of a launch (for ``--json`` and logs)."""
    return {"run": spec.run_id, "checkpoint": spec.checkpoint_id, "epoch": spec.epoch,
            "argv": list(spec.argv), "cwd": spec.cwd, "forked": spec.forked,
            "env": display_env(spec.env, spec.inherit)}
