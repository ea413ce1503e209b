"""Fork and resume through another framework's own API (CrewAI, OpenAI Agents Advanced sessions).

The inspector never imports the framework: it plans a command — your Python running one of
the scripts in ``inspector/store/frameworks/runners`` — shows it exactly (argv, working
directory, environment), and starts it only once confirmed (the CLI's question, the GUI's
confirmation box; the Console dock shows its output). The framework writes the new snapshots
or branch to its store; the inspector, watching the store, shows them.

An adapter that lacks an action (``StoreInfo.capabilities``) gets its reason as a StoreError.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Mapping

import inspector
from inspector.errors import NotResumableError, StoreError
from inspector.model import CheckpointInfo, RunInfo
from inspector.resume.launch import LaunchSpec, check_argv, check_cwd, check_env, display_env, inherited
from inspector.store.frameworks.base import EngineCatalogStore
from inspector.store.base import Store
from inspector.store.langgraph.settings import GraphSettings, load_settings, save_settings

RUNNERS = Path(inspector.__file__).resolve().parent / "store" / "frameworks" / "runners"
INHERIT = ("PATH", "HOME", "LANG", "LC_ALL", "VIRTUAL_ENV", "PYTHONPATH", "OPENAI_API_KEY", "OPENAI_BASE_URL",
           "ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY")
HANDLED = ("crewai", "openai-agents")


@dataclass(frozen=True)
class FrameworkPlan:
    """A fork or resume to run through a framework: what, why, and the exact command."""

    action: str                      # "fork" | "resume"
    framework: str                   # StoreInfo.label
    store_url: str
    run: RunInfo
    checkpoint: CheckpointInfo
    what: str                        # one sentence
    argv: tuple[str, ...]
    cwd: str
    env: Mapping[str, str]
    inherit: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())

    def describe(self) -> str:
        """Several lines for the CLI and the confirmation box."""
        lines = [f"{self.action} {self.run.id}:{self.checkpoint.seq} ({self.checkpoint.kind} "
                 f"{self.checkpoint.name!r}) through {self.framework} — {self.what}",
                 f"  command: {shlex.join(self.argv)}", f"  working directory: {self.cwd}", "  environment:"]
        lines += [f"    {k}={v}" for k, v in sorted(display_env(self.env).items())]
        lines += [f"    {k} (passed from this environment)" for k in self.inherit]
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)

    def launch(self) -> LaunchSpec:
        """What the console or ``launch.spawn`` starts (the framework writes; this process does not)."""
        argv = check_argv(list(self.argv))
        cwd = check_cwd(self.cwd)
        env = {**inherited(self.inherit), **check_env(dict(self.env))}
        return LaunchSpec(run_id=self.run.id, checkpoint_id=self.checkpoint.id, epoch=0, argv=argv, cwd=cwd,
                          env=env, store_url=self.store_url, forked=self.action == "fork",
                          source_run=self.run.id if self.action == "fork" else None, inherit=self.inherit)


def require(store: Store, action: str) -> None:
    """StoreError with the adapter's reason when ``store`` does not offer ``action``."""
    cap = store.info.capabilities.get(action)
    if not cap.available:
        error = NotResumableError if action == "resume" else StoreError
        raise error(f"{action.capitalize()} is not available for {store.info.label or store.info.kind} stores: "
                    f"{cap.reason}")


def saved_settings(url: str) -> GraphSettings:
    """The store's saved settings (``python``, ``cwd``; the per-store file LangGraph stores use too)."""
    try:
        return load_settings(url)
    except StoreError:   # an unreadable settings file must not stop the plan
        return GraphSettings()


def remember(url: str, python: str | None, cwd: str | None) -> Path | None:
    """Save ``python``/``cwd`` given on the command line as the store's defaults; the file's path."""
    if not python and not cwd:
        return None
    return save_settings(url, saved_settings(url).merged(python=python, cwd=cwd))


def user_python(python: str | None = None) -> str:
    """The Python of the user's environment: given, else the first python3 on PATH (else this one)."""
    if python:
        return python
    return shutil.which("python3") or shutil.which("python") or sys.executable


def _env() -> tuple[dict[str, str], tuple[str, ...]]:
    return {"PYTHONUNBUFFERED": "1"}, tuple(k for k in INHERIT if k in os.environ)


def plan(store: Store, ref: int | str | CheckpointInfo, action: str, *, python: str | None = None,
         cwd: str | None = None, branch: str | None = None, setup: str | None = None) -> FrameworkPlan:
    """Plan ``action`` ("fork" or "resume") from ``ref`` through the store's framework (read-only)."""
    require(store, action)
    saved = saved_settings(store.info.url)
    python, cwd = python or saved.python, cwd or saved.cwd
    cp = ref if isinstance(ref, CheckpointInfo) else store.get_checkpoint(ref)
    run = store.get_run(cp.run_id)
    kind = store.info.kind
    if kind == "crewai":
        return _crewai(store, run, cp, action, user_python(python), cwd or os.getcwd(), branch, setup)
    if kind == "openai-agents" and action == "fork":
        return _agents_branch(store, run, cp, user_python(python), cwd or os.getcwd(), branch)
    raise StoreError(f"{action.capitalize()} through {store.info.label or kind} is not implemented here.")


def _crewai(store: Store, run: RunInfo, cp: CheckpointInfo, action: str, python: str, cwd: str,
            branch: str | None, setup: str | None) -> FrameworkPlan:
    from inspector.store.frameworks.crewai import CrewAIStore
    if not isinstance(store, CrewAIStore):
        raise StoreError(f"{store.info.display} is not a CrewAI store.")
    restore = store.restore_from(str(cp.id))
    folder = store.info.backend == "folder"
    location = store.info.url if folder else restore.rpartition("#")[0]
    notes = ["a restored crew gets crewai's default LLM and no tools unless --setup module:function sets them"
             if not setup else f"{setup} is called with the restored crew before kickoff"]
    if action == "resume" and cp.seq != run.head_seq:
        action_taken = "fork"
        branch = branch or f"{run.labels.get('branch', run.id)}-from-{cp.seq}-{time.strftime('%H%M%S')}"
        notes.append(f"#{cp.seq} is not the head of the run (#{run.head_seq}): resuming it makes a fork "
                     f"(branch {branch!r}), so history stays append-only")
    else:
        action_taken = action
    argv = [python, str(RUNNERS / "crewai_runner.py"), action_taken, "--restore-from", restore,
            "--location", location, "--provider", "json" if folder else "sqlite"]
    if action_taken == "fork":
        branch = branch or f"{run.labels.get('branch', run.id)}-fork-{time.strftime('%Y%m%d%H%M%S')}"
        argv += ["--branch", branch]
        what = f"Crew.fork(…, branch={branch!r}) from this snapshot, then kickoff()"
    else:
        what = "Crew.from_checkpoint(…) at the head of the branch, then kickoff()"
    if setup:
        argv += ["--setup", setup]
    env, inherit = _env()
    return FrameworkPlan(action, "crewai", store.info.url, run, cp, what, tuple(argv), cwd, env, inherit,
                         tuple(notes))


def _agents_branch(store: Store, run: RunInfo, cp: CheckpointInfo, python: str, cwd: str,
                   branch: str | None) -> FrameworkPlan:
    snap = store.load(cp.id)
    turn = snap.meta.get("turn")
    if cp.kind != "input" or cp.name != "user" or not isinstance(turn, int):
        raise StoreError("An Advanced session branches at a user turn: choose one of the user messages "
                         "(kind input); the branch keeps the turns before it.")
    path = store.target.path if isinstance(store, EngineCatalogStore) else None
    if path is None:
        raise StoreError("An Advanced session branches in its SQLite file; this store has no file to branch in.")
    session, source = str(run.labels.get("session")), str(run.labels.get("branch", "main"))
    if turn < 2:   # the SDK makes it, but with no rows: nothing lists it and switch_to_branch refuses it
        raise StoreError(f"#{cp.seq} is the first user turn of branch {source!r}: a branch from it would keep "
                         "no turns, and the SDK would leave it empty, unlisted and unreachable; choose a later "
                         "user turn.")
    name = _branch_name(store, session, branch or f"{source}-turn{turn}-{time.strftime('%H%M%S')}", bool(branch))
    argv = [python, str(RUNNERS / "openai_agents_branch.py"), "--db", str(path), "--session", session,
            "--from-branch", source, "--turn", str(turn), "--name", name]
    env, inherit = _env()
    return FrameworkPlan("fork", "openai-agents", store.info.url, run, cp,
                         f"create_branch_from_turn({turn}, {name!r}) on branch {source!r}: the new branch keeps "
                         f"{'turn 1' if turn == 2 else f'turns 1–{turn - 1}'}", tuple(argv), cwd, env, inherit,
                         ("continue the branch from your code: switch_to_branch(…) then Runner.run(…)",))


def _branch_name(store: Store, session: str, name: str, chosen: bool) -> str:
    """``name`` when the session has not used it (the SDK refuses a name used before, even for a
    branch deleted or left empty); a made-up name gets a number instead."""
    if not name.strip():
        raise StoreError("A branch name cannot be empty (the SDK refuses it); give one with --branch.")
    from inspector.store.frameworks.openai_agents import OpenAIAgentsStore
    used = store.branch_names(session) if isinstance(store, OpenAIAgentsStore) else set()
    if chosen and name in used:
        raise StoreError(f"Session {session!r} has used the branch name {name!r} already (the SDK refuses a "
                         "name used before); choose another --branch.")
    stem, n = name, 2
    while name in used:
        name, n = f"{stem}-{n}", n + 1
    return name
