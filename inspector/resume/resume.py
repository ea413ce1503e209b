"""Resume a run from a checkpoint: plan (read-only), take ownership (or fork), then launch."""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from typing import IO
from collections.abc import Mapping, Sequence

from inspector.errors import NotResumableError, ResumeSpecError, StoreError
from inspector.model import CheckpointInfo, RunInfo
from inspector.resume.fork import fork, lane_refusal, native
from inspector.resume.launch import (LaunchSpec, check_argv, check_cwd, check_env, handoff_env, inherited,
                                     launch_exited, spawn)
from inspector.resume.liveness import owner_of
from inspector.resume.plan import CONTINUE, FORK, ResumePlan
from inspector.resume.replay import replay_cost
from inspector.store.base import Store
from inspector.store.native.rows import check_spec
from inspector.store.native.writer import NativeWriter

__all__ = ["CONTINUE", "FORK", "ResumeOutcome", "ResumePlan", "plan_resume", "resume_checkpoint",
           "start_resume"]


def _spec(run: RunInfo) -> dict:
    spec = run.resume_spec
    if spec is None or (isinstance(spec, dict) and not spec.get("argv")):
        raise NotResumableError(f"Run {run.id} cannot be resumed: it has no resume spec "
                                "(it was not recorded by the recording library).")
    try:
        return check_spec(spec)
    except ResumeSpecError as err:
        raise NotResumableError(f"Run {run.id} cannot be resumed: its stored resume spec is damaged "
                                f"({str(err).rstrip('.')}).") from err


def plan_resume(store: Store, ref: int | str | CheckpointInfo, *, now: float | None = None,
                heartbeat_threshold: float = 30.0) -> ResumePlan:
    """Decide how to resume from ``ref`` without writing; NotResumableError says why not.

    LangGraph stores are planned by ``inspector.resume.langgraph`` (the user's graph runs).
    """
    if store.info.kind == "langgraph":
        from inspector.resume import langgraph
        return langgraph.plan_resume(store, ref)
    cp = ref if isinstance(ref, CheckpointInfo) else store.get_checkpoint(ref)
    run = store.get_run(cp.run_id)
    if store.info.kind != "native":
        raise NotResumableError(f"Runs in a {store.info.kind} store cannot be resumed from here "
                                "(only runs recorded by the recording library can).")
    if not run.resumable:
        raise NotResumableError(lane_refusal(run, action="resume") or f"Run {run.id} is marked not resumable: "
                                f"{run.not_resumable_reason or 'no reason given'}.")
    spec = _spec(run)
    owner = owner_of(run, now=time.time() if now is None else now, heartbeat_threshold=heartbeat_threshold)
    if cp.seq != run.head_seq:
        mode, why = FORK, f"#{cp.seq} is not the head of the run (#{run.head_seq}); history stays append-only"
    elif owner.live:
        mode, why = FORK, f"the run is still live ({owner.text})"
    else:
        mode, why = CONTINUE, "the head of a run that no live process owns"
        if owner.state in ("silent", "gone"):
            why += f"; the old owner will be fenced off: {owner.text}"
    inherit = tuple(str(k) for k in spec.get("inherit") or ())
    have = inherited(inherit)
    return ResumePlan(
        store_url=store.info.url, store_display=store.info.display, run=run, checkpoint=cp,
        mode=mode, why=why, owner=owner,
        argv=tuple(str(a) for a in spec["argv"]), cwd=str(spec.get("cwd") or "."),
        env={str(k): str(v) for k, v in (spec.get("env") or {}).items()}, inherit=inherit,
        replay=replay_cost(store, cp), missing=tuple(k for k in inherit if k not in have))


def start_resume(store: Store, plan: ResumePlan, *, argv: Sequence[str] | None = None,
                 cwd: str | None = None, env: Mapping[str, str] | None = None,
                 reason: str | None = None) -> LaunchSpec:
    """Do the store side of a confirmed resume and return what to launch.

    Forks first when the plan says so; then takes ownership of the run to resume (a new
    epoch fences off any previous owner). ``argv``/``cwd``/``env`` override the resume
    spec (the user edited them). Nothing is started here: pass the result to ``spawn``
    (CLI, scripts) or to the GUI console. LangGraph plans go to ``inspector.resume.langgraph``.
    """
    if store.info.kind == "langgraph":
        from inspector.resume import langgraph
        return langgraph.start_resume(store, plan, argv=argv, cwd=cwd, env=env, reason=reason)
    st = native(store, "resuming")
    argv_t = check_argv(list(argv) if argv is not None else list(plan.argv))
    cwd_s = check_cwd(cwd if cwd is not None else plan.cwd)
    env_d = check_env(dict(env) if env is not None else dict(plan.env))
    _still_valid(st, plan)
    run_id, checkpoint_id, forked = plan.run.id, plan.checkpoint.id, False
    if plan.mode == FORK:
        # the fork keeps the command it is resumed with (as edited), not the original's
        spec = {**_spec(plan.run), "argv": list(argv_t), "cwd": cwd_s, "env": env_d, "inherit": list(plan.inherit)}
        child = fork(st, plan.checkpoint, reason=reason or f"resume from {plan.run.id}:{plan.checkpoint.seq}",
                     resume_spec=spec)
        run_id, checkpoint_id, forked = child.id, st.get_checkpoint(f"{child.id}:0").id, True
    writer = NativeWriter(st)
    try:
        epoch = writer.take_ownership(run_id, status="running")
    finally:
        writer.close()
    full_env = {**inherited(plan.inherit), **env_d,
                **handoff_env(st.info.url, run_id, checkpoint_id, epoch)}
    return LaunchSpec(run_id=run_id, checkpoint_id=checkpoint_id, epoch=epoch, argv=argv_t, cwd=cwd_s,
                      env=full_env, store_url=st.info.url, forked=forked,
                      source_run=plan.run.id if forked else None, inherit=plan.inherit)


def _still_valid(store: Store, plan: ResumePlan) -> None:
    """Refuse when the run moved on since the plan was shown (the user confirmed another thing)."""
    now = store.get_run(plan.run.id)
    if plan.mode == CONTINUE and (now.epoch != plan.run.epoch or now.head_seq != plan.run.head_seq):
        raise StoreError(f"Run {now.id} changed since the resume was prepared "
                         f"(epoch {plan.run.epoch} → {now.epoch}, head #{plan.run.head_seq} → "
                         f"#{now.head_seq}); review the resume again.")
    if not now.resumable:
        raise NotResumableError(f"Run {now.id} is marked not resumable: "
                                f"{now.not_resumable_reason or 'no reason given'}.")


@dataclass(frozen=True)
class ResumeOutcome:
    """A started resume: the launch and its process (``returncode`` set when waited for)."""

    launch: LaunchSpec
    process: subprocess.Popen
    returncode: int | None = None


def resume_checkpoint(store: Store, ref: int | str | CheckpointInfo, *, wait: bool = True,
                      stdout: IO | int | None = None, stderr: IO | int | None = None,
                      heartbeat_threshold: float = 30.0, reason: str | None = None,
                      timeout: float | None = None) -> ResumeOutcome:
    """Plan, start and launch a resume in one call (for scripts that already confirmed it)."""
    plan = plan_resume(store, ref, heartbeat_threshold=heartbeat_threshold)
    launch = start_resume(store, plan, reason=reason)
    proc = spawn(launch, stdout=stdout, stderr=stderr, store=store, new_session=not wait)
    code = proc.wait(timeout=timeout) if wait else None
    if code:
        launch_exited(store, launch, code)
    return ResumeOutcome(launch, proc, code)
