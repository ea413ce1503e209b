"""Fork and resume for LangGraph stores (what the generic fork/resume dispatch to).

* With the user's graph (``module:attr``, from the per-store settings or given per call) both
  run in a subprocess in the user's environment — ``graph_runner`` does ``update_state`` for
  a fork (routing applies; the edited channels are set exactly, a reducer's overwritten), ``invoke(None)`` to continue, ``Command(resume=…)``
  to answer an interrupt — with ``LANGGRAPH_STRICT_MSGPACK=true`` unless the store is
  trusted. The inspector process never imports the graph.
* Without it, a fork is a raw fork (``store.langgraph.fork.raw_fork``) whose limits are
  returned with the result; resuming always needs the graph.

Resume follows the native shape: ``plan_resume`` (read-only) returns a ``ResumePlan`` the
Resume dialog and the CLI show; ``start_resume`` returns a ``LaunchSpec`` (argv + cwd + env)
that the Console dock or ``launch.spawn`` runs.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any
from collections.abc import Mapping, Sequence

import sqlalchemy as sa

import inspector
from inspector.errors import NotResumableError, StoreError
from inspector.model import CheckpointInfo
from inspector.record.handoff import ENV_VAR
from inspector.resume.edits import EditError, check_json_value, restore_keys
from inspector.resume.launch import LaunchSpec, check_argv, check_cwd, check_env, inherited
from inspector.resume.liveness import Owner
from inspector.resume.replay import replay_cost
from inspector.resume.plan import CONTINUE, FORK, ResumePlan
from inspector.store.base import Store
from inspector.store.langgraph.fork import (DEFAULT_QUIET_SECONDS, ForkResult, as_langgraph, check_quiet,
                                            raw_fork, writable_langgraph)
from inspector.codec.exact import canonical
from inspector.store.langgraph.edit import runner_form
from inspector.store.langgraph.ids import make_id, parse_id
from inspector.store.langgraph.settings import GraphSettings, check_graph_spec, load_settings

RUNNER_FILE = Path(inspector.__file__).resolve().parent / "store" / "langgraph" / "graph_runner.py"
_UNSET: Any = object()
NODE_NAMES_TO_SKIP = {"input", "update", "fork", "loop", "checkpoint", "__start__"}


def settings_for(store: Store, graph: str | None = None, trusted: bool | None = None,
                 python: str | None = None, cwd: str | None = None) -> GraphSettings:
    """The store's saved settings with per-call overrides."""
    if graph is not None:
        check_graph_spec(graph)
    return load_settings(store.info.url).merged(graph=graph, trusted=trusted, python=python, cwd=cwd)


def subgraph_refusal(ident: int | str) -> str | None:
    """Why a LangGraph checkpoint is not forked or resumed here (None: it is the main graph's)."""
    key = parse_id(str(ident))
    if key is not None and not key.ns:
        return None
    return ("Only checkpoints of the main graph can be forked or resumed; this one is inside a subgraph — "
            "use the main-graph step that ran it (or LangGraph's graph.update_state with its config, in your code).")


def _key(store: Store, ref: int | str | CheckpointInfo) -> tuple[CheckpointInfo, str, str]:
    info = ref if isinstance(ref, CheckpointInfo) else store.get_checkpoint(ref)
    refused = subgraph_refusal(info.id)
    if refused:
        raise StoreError(refused)
    key = parse_id(str(info.id))
    assert key is not None
    return info, key.thread_id, key.checkpoint_id


# -- the runner subprocess ---------------------------------------------------------------------
def store_argument(url: str) -> tuple[str, dict[str, str]]:
    """The ``--store`` argument (no password in argv) and the secret env carrying the password."""
    parsed = sa.engine.make_url(url)
    if parsed.get_backend_name() == "sqlite":
        return str(parsed.database), {}
    secret = {"PGPASSWORD": parsed.password} if parsed.password else {}
    shown = sa.engine.URL.create("postgresql", username=parsed.username, host=parsed.host, port=parsed.port,
                                 database=parsed.database, query=parsed.query)
    return shown.render_as_string(hide_password=False), secret


def runner_env(settings: GraphSettings) -> dict[str, str]:
    """The variables the runner gets on top of this environment (shown to the user)."""
    return {"LANGGRAPH_STRICT_MSGPACK": "false" if settings.trusted else "true", "PYTHONUNBUFFERED": "1"}


def runner_argv(settings: GraphSettings, store_url: str, thread: str, checkpoint: str | None,
                action: str, values: Any = _UNSET, as_node: str | None = None,
                reason: str | None = None) -> list[str]:
    """The runner's command line: ``PYTHON …/graph_runner.py …``.

    The runner is run by path (it imports nothing of ours), so the user's interpreter needs
    only langgraph, and no package of this process is put on its import path.
    """
    if not settings.graph:
        raise NotResumableError("This needs the LangGraph graph: give it as module:attr "
                                "(--graph, or the store's LangGraph settings).")
    argv = [settings.python or sys.executable, str(RUNNER_FILE), "--store", store_argument(store_url)[0],
            "--graph", settings.graph, "--thread", thread, "--action", action]
    if checkpoint:
        argv += ["--checkpoint", checkpoint]
    if values is not _UNSET:
        argv += ["--values-json", json.dumps(runner_form(values), ensure_ascii=False)]
    if as_node:
        argv += ["--as-node", as_node]
    if reason:
        argv += ["--reason", reason]
    return argv


def _inherit_names(visible: Mapping[str, str]) -> tuple[str, ...]:
    return tuple(sorted(k for k in os.environ if k not in visible and k != ENV_VAR))


def _full_env(store_url: str, visible: Mapping[str, str], inherit: Sequence[str]) -> tuple[dict[str, str], tuple]:
    secret = store_argument(store_url)[1]
    env = {**inherited(inherit), **check_env(dict(visible)), **secret}
    return env, tuple(inherit) + tuple(secret)


def run_runner(argv: Sequence[str], settings: GraphSettings, store_url: str | None, what: str,
               timeout: float | None, stdin_text: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run the runner (its output captured) in the settings' working directory with the runner
    environment (and the store's password, never in argv); StoreError when it cannot start or
    does not finish — ``what`` names it in the sentence (``The graph fork``); ``stdin_text`` is
    given to it on its standard input (else it gets none)."""
    visible = runner_env(settings)
    if store_url is not None:
        env, _ = _full_env(store_url, visible, _inherit_names(visible))
    else:
        env = {**os.environ, **visible}
    try:
        return subprocess.run(list(argv), cwd=check_cwd(settings.cwd or os.getcwd()), env=env, shell=False,
                              stdin=subprocess.DEVNULL if stdin_text is None else None, input=stdin_text,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as err:
        raise StoreError(f"{what} did not finish within {timeout:g} s.") from err
    except OSError as err:
        raise StoreError(f"Could not start {argv[0]!r}: {err.strerror or err}.") from err


# -- fork -----------------------------------------------------------------------------------------
def changed_channels(original: Mapping[str, Any], edited: Mapping[str, Any]) -> dict[str, Any]:
    """Top-level channels whose value differs in an edited copy of ``Snapshot.state``."""
    if not isinstance(edited, dict):
        raise EditError("A LangGraph state is an object of channel values.")
    edited = restore_keys(dict(original), edited)      # "101" typed in the text: the int key 101
    check_json_value(edited, "state")
    removed = sorted(set(original) - set(edited))
    if removed:
        raise EditError(f"LangGraph channels cannot be removed ({', '.join(removed)}); set a value instead.")
    return {k: v for k, v in edited.items() if k not in original or canonical(original[k]) != canonical(v)}


def default_as_node(info: CheckpointInfo) -> str | None:
    """The node that wrote the checkpoint (None: LangGraph decides)."""
    name = info.name or ""
    if info.kind != "loop" or "," in name or name in NODE_NAMES_TO_SKIP:
        return None
    return name


def graph_fork(store: Store, ref: int | str | CheckpointInfo, edits: Mapping[str, Any], *, reason: str,
               settings: GraphSettings, as_node: str | None = None, quiet_seconds: float = DEFAULT_QUIET_SECONDS,
               force: bool = False, timeout: float | None = 300.0) -> ForkResult:
    """Fork through the user's graph (``update_state`` in the runner), waiting for it."""
    info, thread, cid = _key(store, ref)
    check_quiet(store, thread, quiet_seconds, force)
    argv = runner_argv(settings, store.info.url, thread, cid, "fork", dict(edits),
                       as_node or default_as_node(info), reason)
    done = run_runner(argv, settings, store.info.url, "The graph fork", timeout)
    lines = done.stdout.splitlines()
    forked = [ln.split(" ", 1)[1] for ln in lines if ln.startswith("forked ")]
    if done.returncode != 0 or not forked:
        last = (done.stderr.strip().splitlines() or lines or ["no output"])[-1]
        raise StoreError(f"The graph fork failed: {last.removeprefix('error: ')}")
    new = forked[-1].rpartition("@")[2]     # "THREAD@ID": the thread as written may hold '@' and ':'
    nxt = next((ln[5:].split(", ") for ln in lines if ln.startswith("next ")), [])
    return ForkResult(make_id(thread, "", new), thread, new, str(info.id), tuple(sorted(edits)), "graph", (),
                      tuple(nxt))


def fork_langgraph(store: Store, ref: int | str | CheckpointInfo, *, reason: str, state: Any = _UNSET,
                   edits: Mapping[str, Any] | None = None, graph: str | None = None, raw: bool = False,
                   as_node: str | None = None, trusted: bool | None = None, force: bool = False,
                   quiet_seconds: float = DEFAULT_QUIET_SECONDS) -> ForkResult:
    """Fork a LangGraph checkpoint: with the graph when one is known (and not ``raw``), else raw.

    Give either ``state`` (an edited copy of ``Snapshot.state``) or ``edits`` (channel →
    value). The store must be open writable (an explicit action).
    """
    if not reason or not reason.strip():
        raise EditError("A fork needs a reason (it is kept in the new checkpoint's metadata).")
    writable_langgraph(store)
    info, _, _ = _key(store, ref)
    if edits is None:
        edits = {} if state is _UNSET else changed_channels(store.load(info.id).state, state)
    settings = settings_for(store, graph=graph, trusted=trusted)
    if settings.graph and not raw:
        return graph_fork(store, info, edits, reason=reason.strip(), settings=settings, as_node=as_node,
                          quiet_seconds=quiet_seconds, force=force)
    if not edits:
        raise EditError("A raw fork (no graph given) needs an edited value; to re-run a checkpoint "
                        "unchanged, resume it with the graph.")
    return raw_fork(store, info.id, edits, reason=reason.strip(), quiet_seconds=quiet_seconds, force=force)


# -- several operations, one runner -------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class GraphOp:
    """One operation of ``run_graph_ops``: ``fork`` (``checkpoint`` edited with ``values``, as
    ``as_node``, default: its writer), ``resume`` or ``answer`` (``values``: the answer) from
    ``checkpoint`` — None: the thread's head when the operation runs."""

    action: str
    thread: str
    checkpoint: str | None = None
    values: Any = None
    as_node: str | None = None
    reason: str | None = None


@dataclasses.dataclass(frozen=True)
class OpResult:
    """What one operation printed, and its error (None: it worked)."""

    lines: tuple[str, ...]
    error: str | None


def graph_op(store: Store, action: str, ref: int | str | CheckpointInfo | None = None, *, thread: str | None = None,
             values: Any = None, as_node: str | None = None, reason: str | None = None) -> GraphOp:
    """A checked ``GraphOp``: a fork's values as the graph receives them and its default node (as
    ``graph_fork``), an answer a JSON value; ``ref`` None (resume/answer) is the head at run time."""
    if action not in ("fork", "resume", "answer"):
        raise EditError(f"{action!r} is not a graph operation (fork, resume or answer).")
    if ref is None:
        if action == "fork" or not thread:
            raise EditError("A fork needs its checkpoint; a resume or answer needs its thread.")
        return GraphOp(action, thread, None, values if action == "answer" else None)
    info, key_thread, cid = _key(store, ref)
    if action == "fork":
        if not reason or not reason.strip():
            raise EditError("A fork needs a reason (it is kept in the new checkpoint's metadata).")
        return GraphOp("fork", key_thread, cid, dict(values or {}), as_node or default_as_node(info),
                       reason.strip())
    if action == "answer":
        check_json_value(values, "answer")
    return GraphOp(action, key_thread, cid, values if action == "answer" else None)


def run_graph_ops(store: Store, ops: Sequence[GraphOp], *, settings: GraphSettings,
                  timeout: float | None = 600.0) -> list[OpResult]:
    """Do the operations in turn in ONE runner process (the graph imported once; ``batch``):
    what a sweep of many forks and resumes needs. The store must be open writable and quiet."""
    writable_langgraph(store)
    if not settings.graph:
        raise NotResumableError("This needs the LangGraph graph: give it as module:attr.")
    payload = [dataclasses.asdict(op) for op in ops]
    argv = [settings.python or sys.executable, str(RUNNER_FILE), "--store", store_argument(store.info.url)[0],
            "--graph", settings.graph, "--action", "batch", "--ops-json", "-"]
    done = run_runner(argv, settings, store.info.url, "The graph operations", timeout,
                      stdin_text=json.dumps(runner_form(payload), ensure_ascii=False))
    results: list[OpResult] = []
    lines: list[str] = []
    for line in done.stdout.splitlines():
        n = len(results)
        if line == f"op {n} ok" or line.startswith(f"op {n} error: "):
            results.append(OpResult(tuple(lines), None if line == f"op {n} ok" else line.split(" error: ", 1)[1]))
            lines = []
        elif not line.startswith(f"op {len(results)} "):
            lines.append(line)
    if len(results) != len(ops):
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise StoreError(f"The graph operations failed: {last.removeprefix('error: ')}")
    return results


# -- resume ----------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class LangGraphResumePlan(ResumePlan):
    """A ``ResumePlan`` for a LangGraph thread: ``action`` is resume or answer."""

    action: str = "resume"
    interrupts: tuple = ()

    def describe(self) -> str:
        """Several lines for the CLI: what runs, where, with which environment, and why."""
        cp = self.checkpoint
        what = "continue the thread" if self.mode == CONTINUE else "replay from here as a new branch"
        lines = [f"resume thread {self.run.id} from #{cp.seq} ({cp.kind} {cp.name!r}) — {what}"
                 + (" and answer its interrupt" if self.action == "answer" else ""),
                 f"  why: {self.why}", f"  command: {shlex.join(self.argv)}",
                 f"  replay: {self.replay.describe()}", f"  working directory: {self.cwd}", "  environment:"]
        lines += [f"    {k}={v}" for k, v in sorted(self.env.items())]
        shown = ", ".join(self.inherit[:6]) + (", …" if len(self.inherit) > 6 else "")
        lines.append(f"    plus {len(self.inherit)} variables of this environment ({shown})")
        return "\n".join(lines)


def pending_interrupts(store: Store, ref: int | str | CheckpointInfo) -> list[dict]:
    """The interrupts a checkpoint waits on (``{task_id, node, id, value, question}``)."""
    info = ref if isinstance(ref, CheckpointInfo) else store.get_checkpoint(ref)
    return [i for i in store.load(info.id).meta.get("interrupts", []) if i.get("pending")]


def question_text(interrupt: Mapping[str, Any]) -> str:
    """What a pending interrupt asks: its question, else its value as JSON."""
    question = interrupt.get("question")
    return question if isinstance(question, str) else json.dumps(interrupt.get("value"), default=str)


class UnansweredError(NotResumableError):
    """Checkpoint #``seq`` waits at ``interrupt()`` and no answer was given: not a fault of the
    checkpoint but the next thing to give (a form shows it as a hint, not as an error)."""

    def __init__(self, message: str, seq: int, waiting: Sequence[Mapping[str, Any]]) -> None:
        super().__init__(message)
        self.seq, self.waiting = seq, tuple(waiting)


def unanswered(seq: int, waiting: Sequence[Mapping[str, Any]], field: str | None = None) -> str:
    """The sentence refusing to resume a checkpoint whose interrupts got no answer: one names
    its question; several name every question with the id its answer is keyed by. It says where
    the answer goes: the CLI's ``--answer JSON``, or a form's ``field``."""
    if len(waiting) == 1:
        where = f"type the answer in the {field} field, as JSON" if field else "give the answer (--answer JSON)"
        return (f"Checkpoint #{seq} waits for an answer to the interrupt {question_text(waiting[0])!r} "
                f"in node {waiting[0].get('node')}; {where}.")
    return f"Checkpoint #{seq} waits for answers to {len(waiting)} interrupts; {_by_id(waiting, field)}"


def _by_id(waiting: Sequence[Mapping[str, Any]], field: str | None = None) -> str:
    listed = "; ".join(f"{i.get('id')}: {question_text(i)!r} in node {i.get('node')}" for i in waiting)
    example = json.dumps({str(i.get("id")): "…" for i in waiting[:2]}, ensure_ascii=False)
    where = f"{example} in the {field} field" if field else f"--answer '{example}'"
    return f"answer each by its interrupt id ({listed}), e.g. {where} (an id left out stays waiting)."


def keyed_answer(seq: int, waiting: Sequence[Mapping[str, Any]], answer: Any, field: str | None = None) -> Any:
    """The answer as ``Command(resume=…)`` takes it: one pending interrupt takes any value;
    several take an object keyed by their ids (or unique prefixes of them, completed here) —
    one value for several questions is ambiguous and refused before anything runs (``field``:
    the form's field the answer was typed in, else the CLI's ``--answer``)."""
    if len(waiting) < 2:
        return answer
    ids = [str(i.get("id") or "") for i in waiting]
    if not all(ids):
        raise NotResumableError(f"Checkpoint #{seq} waits on {len(ids)} interrupts but LangGraph recorded no "
                                "id for some of them; answer them through your graph (Command(resume=…)).")
    if not isinstance(answer, dict) or not answer:
        raise NotResumableError(f"Checkpoint #{seq} waits on {len(ids)} interrupts, so one answer for all is "
                                f"ambiguous; {_by_id(waiting, field)}")
    keyed = {}
    for key, value in answer.items():
        found = [i for i in ids if i == key] or ([i for i in ids if i.startswith(key)] if len(key) >= 4 else [])
        if len(found) != 1:
            raise NotResumableError(f"The answer's key {key!r} matches {'several' if found else 'none'} of the "
                                    f"interrupt ids of checkpoint #{seq}; {_by_id(waiting, field)}")
        keyed[found[0]] = value
    return keyed


def plan_resume(store: Store, ref: int | str | CheckpointInfo, *, answer: Any = _UNSET,
                graph: str | None = None, trusted: bool | None = None, python: str | None = None,
                cwd: str | None = None, quiet_seconds: float = DEFAULT_QUIET_SECONDS,
                force: bool = False, answer_field: str | None = None) -> LangGraphResumePlan:
    """Decide how to resume a LangGraph checkpoint (read-only); NotResumableError says why not.

    ``answer`` is the value for a pending ``interrupt()`` (required when there is one: else
    UnansweredError); ``answer_field`` names the form field it is typed in, for the messages
    about it (None: the CLI's ``--answer``).
    """
    info, thread, cid = _key(store, ref)
    run = store.get_run(thread)
    settings = settings_for(store, graph=graph, trusted=trusted, python=python, cwd=cwd)
    heads = as_langgraph(store).reader.heads(thread)
    at_head = bool(heads) and heads[0].checkpoint_id == cid
    waiting = pending_interrupts(store, info)
    if not (at_head and waiting):     # a thread whose head waits at interrupt() is not running
        try:
            check_quiet(store, thread, quiet_seconds, force)
        except StoreError as err:
            raise NotResumableError(str(err)) from err
    if waiting and answer is _UNSET:
        raise UnansweredError(unanswered(info.seq, waiting, answer_field), info.seq, waiting)
    if answer is not _UNSET:
        check_json_value(answer, "answer")
        answer = keyed_answer(info.seq, waiting, answer, answer_field)
    action = "answer" if answer is not _UNSET else "resume"
    argv = runner_argv(settings, store.info.url, thread, None if at_head else cid, action, answer)
    mode, why = ((CONTINUE, "the head of the thread: LangGraph continues it") if at_head else
                 (FORK, f"#{info.seq} is not the head (#{run.head_seq}); LangGraph replays from it as a new "
                        "branch and the original history stays"))
    why += "; strict msgpack" if not settings.trusted else "; the store is trusted (no strict msgpack)"
    visible = runner_env(settings)
    return LangGraphResumePlan(
        store_url=store.info.url, store_display=store.info.display, run=run, checkpoint=info, mode=mode,
        why=why, owner=Owner("none", None, None, None, "LangGraph threads have no owner process"),
        argv=tuple(argv), cwd=settings.cwd or os.getcwd(), env=visible, inherit=_inherit_names(visible),
        replay=replay_cost(store, info), action=action, interrupts=tuple(waiting))


def start_resume(store: Store, plan: ResumePlan, *, argv: Sequence[str] | None = None,
                 cwd: str | None = None, env: Mapping[str, str] | None = None,
                 reason: str | None = None) -> LaunchSpec:
    """What to launch for a confirmed LangGraph plan (the runner writes, not this process)."""
    del reason  # a LangGraph replay branch records no reason
    argv_t = check_argv(list(argv) if argv is not None else list(plan.argv))
    cwd_s = check_cwd(cwd if cwd is not None else plan.cwd)
    visible = dict(env) if env is not None else dict(plan.env)
    now = store.get_run(plan.run.id)
    if plan.mode == CONTINUE and now.head_seq != plan.run.head_seq:
        raise StoreError(f"Thread {now.id} moved on since the resume was prepared (head #{plan.run.head_seq} "
                         f"→ #{now.head_seq}); review the resume again.")
    full, shown = _full_env(plan.store_url, visible, plan.inherit)
    return LaunchSpec(run_id=plan.run.id, checkpoint_id=plan.checkpoint.id, epoch=0, argv=argv_t, cwd=cwd_s,
                      env=full, store_url=plan.store_url, forked=plan.mode == FORK, source_run=None,
                      inherit=shown)
