"""Is a run's owner alive? Process checks on this host, heartbeat age everywhere."""

from __future__ import annotations

import os
import time
from functools import lru_cache

from inspector.errors import StoreError
from inspector.humanize import fmt_age  # re-exported
from inspector.model import ACTIVE_STATUSES, Record, RunInfo

PID_REUSE_SLACK = 2.0  # seconds: a process created after the owner's last heartbeat is someone else


@lru_cache(maxsize=1)
def this_host() -> str:
    """This machine's host name, as the recording library stores it."""
    if hasattr(os, "uname"):    # what socket.gethostname() returns there, without importing socket
        return os.uname().nodename
    import socket
    return socket.gethostname()


def process_gone(pid: int, heartbeat: float | None) -> bool:
    """True when ``pid`` on this host no longer runs the owner (exited, zombie or reused)."""
    if type(pid) is not int or pid <= 0:
        return True     # a damaged row: no process has that pid (and -1 or 0 must never be signalled)
    import psutil   # only when a run's owner is on this host (a listing of others' runs never needs it)

    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return True
        started = proc.create_time()
    except psutil.NoSuchProcess:     # (a pid beyond the system's too)
        return True
    except psutil.Error:  # access denied: it exists, we cannot say more
        return False
    return heartbeat is not None and started > heartbeat + PID_REUSE_SLACK


class Owner(Record):
    """What is known about the process that owns a run.

    ``state`` is one of: ``none`` (nobody claims the run), ``live`` (heartbeat fresh and,
    on this host, the process exists), ``gone`` (this host, the process is gone),
    ``silent`` (heartbeat older than the threshold) or ``starting`` (a resume took
    ownership and the new process has not claimed the run yet).
    """

    state: str
    host: str | None
    pid: int | None
    heartbeat_age: float | None
    text: str

    @property
    def live(self) -> bool:
        """True when a process is presumed to be working on the run right now."""
        return self.state in ("live", "starting")


def effective_threshold(run: RunInfo, threshold: float) -> float:
    """The heartbeat threshold for ``run``: ten of its own periods, capped by ``threshold``."""
    period = (run.labels or {}).get("heartbeat_s")
    if isinstance(period, (int, float)) and not isinstance(period, bool) and period > 0:
        return min(threshold, max(10 * float(period), 5.0))
    return threshold


def owner_of(run: RunInfo, *, now: float | None = None, heartbeat_threshold: float = 30.0) -> Owner:
    """Classify the owner of ``run`` (only runs whose status says running can be owned).

    A run that recorded its heartbeat period (label ``heartbeat_s``) is silent after ten
    missed beats, when that is sooner than ``heartbeat_threshold``.
    """
    now = time.time() if now is None else now
    heartbeat_threshold = effective_threshold(run, heartbeat_threshold)
    age = None if run.heartbeat is None else now - run.heartbeat
    who = f"pid {run.owner_pid} on {run.owner_host}" if run.owner_pid else "no process"
    if run.status not in ACTIVE_STATUSES:
        return Owner("none", run.owner_host, run.owner_pid, age, f"nobody (the run is {run.status})")
    if run.owner_pid is None:
        if age is not None and age <= heartbeat_threshold:
            return Owner("starting", None, None, age, "a resumed process is starting")
        return Owner("silent", None, None, age, "no process has claimed the run" if age is None
                     else f"no process has claimed the run for {fmt_age(age)}")
    if run.owner_host == this_host() and process_gone(run.owner_pid, run.heartbeat):
        return Owner("gone", run.owner_host, run.owner_pid, age, f"{who} is gone (crashed or killed)")
    if age is None or age > heartbeat_threshold:
        return Owner("silent", run.owner_host, run.owner_pid, age, f"{who} has never sent a heartbeat" if age is None
                     else f"{who} has sent no heartbeat for {fmt_age(age)} (threshold {fmt_age(heartbeat_threshold)})")
    return Owner("live", run.owner_host, run.owner_pid, age, f"{who}, last heartbeat {fmt_age(age)} ago")


def stoppable_owner(run: RunInfo) -> int | None:
    """The pid of ``run``'s previous owner when it is a process on this host that still runs."""
    if not run.owner_pid or run.owner_host != this_host():
        return None
    return None if process_gone(run.owner_pid, run.heartbeat) else run.owner_pid


def stop_owner(run: RunInfo, timeout: float = 5.0) -> str:
    """Stop ``run``'s owner process on this host (SIGTERM, then SIGKILL); one sentence on what happened.

    Only the process the run names, and only while it is the same process (not a reused pid).
    """
    pid = stoppable_owner(run)
    if pid is None:
        return "The old owner process is no longer running."
    import psutil

    try:
        proc = psutil.Process(pid)
        proc.terminate()
        try:
            proc.wait(timeout)
        except psutil.TimeoutExpired:
            proc.kill()
            proc.wait(timeout)
            return f"Process {pid} did not stop when asked and was killed."
    except psutil.NoSuchProcess:
        return f"Process {pid} had already exited."
    except psutil.Error as err:
        raise StoreError(f"Process {pid} could not be stopped ({type(err).__name__}).") from err
    return f"Process {pid} was stopped."
