"""References to runs and checkpoints as users type them, and as every command prints them.

One syntax everywhere: a checkpoint is ``RUN:SEQ`` (``#N`` is only ever a seq, shown, never
parsed as an id), where RUN is a run id, a unique id prefix, a run's exact name or a part of
one run's name (any case), and a negative SEQ counts from the end of the run (``RUN:-1`` is its
head). A bare RUN means its head; a bare number or a store's own id form is a checkpoint id.
A run id may hold ``:`` (a LangGraph thread ``user:42``): a reference that is exactly a run's id
names that run (its head) rather than ``RUN:SEQ``, and when it could be both (threads ``42``
and ``42:7``) it is a sentence; ``RUN:#SEQ`` is always a run and a seq.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from inspector.errors import RunNotFoundError, StoreError
from inspector.model import CheckpointInfo, RunInfo
from inspector.store.base import Store, parse_ref


SHOWN_CANDIDATES = 5


class AmbiguousRun(StoreError):
    """A run reference that matches several runs (the sentence lists some of them)."""


def format_ref(info: CheckpointInfo) -> str:
    """``RUN:SEQ`` of a checkpoint: what ``show``/``diff``/``fork`` accept back."""
    return f"{info.run_id}:{info.seq}"


def match_runs(runs: Iterable[RunInfo], text: str) -> tuple[str, list[RunInfo]]:
    """The runs ``text`` names, by the first rule any run meets: its exact id, an id prefix,
    its exact name, then a part of its name (any case); with the rule's name ("id", "name",
    "" when none matched). One run: ``text`` names it; several: it is ambiguous."""
    runs = list(runs)
    folded = text.casefold()
    rules: tuple[tuple[str, Callable[[RunInfo], bool]], ...] = (
        ("id", lambda r: r.id == text), ("id", lambda r: r.id.startswith(text)),
        ("name", lambda r: r.name == text), ("name", lambda r: folded in r.name.casefold()))
    for rule, named in rules:
        found = [r for r in runs if named(r)]
        if found:
            return rule, found
    return "", []


def resolve_run(store: Store, text: str) -> RunInfo:
    """A run by exact id, unique id prefix, exact name or a part of one run's name; a
    StoreError sentence otherwise."""
    wanted = str(text).strip()
    if not wanted:
        raise StoreError("Give a run: its id, a unique id prefix or its name.")
    try:
        return store.get_run(wanted)
    except StoreError:
        pass
    rule, matches = match_runs(store.list_runs(text=wanted), wanted)
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise AmbiguousRun(ambiguity(wanted, rule, matches))
    raise RunNotFoundError(f"There is no run {wanted!r} in {store.info.display} "
                           "(give an id, a unique id prefix or a name).")


def ambiguity(text: str, rule: str, matches: list[RunInfo]) -> str:
    """The sentence for a reference that ``match_runs`` found several runs for."""
    if rule == "id":
        return f"{text!r} matches {len(matches)} run ids ({_some(matches)}); give more of the id."
    return (f"{text!r} matches {len(matches)} run names ({_some(matches, names=True)}); "
            "give more of the name, or the id.")


def _some(runs: list[RunInfo], *, names: bool = False) -> str:
    shown = ", ".join(f"{r.name!r} ({r.id})" if names else r.id for r in runs[:SHOWN_CANDIDATES])
    return shown + (", …" if len(runs) > SHOWN_CANDIDATES else "")


def resolve_checkpoint(store: Store, ref: int | str | CheckpointInfo) -> CheckpointInfo:
    """A checkpoint by ``RUN:SEQ`` (see the module docstring), a bare RUN (its head) or an id;
    what is neither is one sentence saying so, and a store that cannot be read says that."""
    if isinstance(ref, CheckpointInfo):
        return ref
    text = str(ref).strip()
    if text.startswith("#"):
        raise StoreError(f"{text!r} is a seq without its run; give RUN:{text[1:]} (e.g. a run id "
                         "prefix, then the seq).")
    head, sep, seq = text.rpartition(":#")
    explicit = bool(sep and head and seq.lstrip("-").isdigit())
    if explicit:     # RUN:#N, as the window writes a seq: always a run and a seq
        text = f"{head}:{seq}"
    run_text, key = parse_ref(text if not isinstance(ref, int) else ref)
    if run_text is not None:
        whole = None if explicit else _exact_run(store, text)
        if whole is not None:      # a run whose id holds ':' (a LangGraph thread 'user:42'): its head
            _refuse_both(store, text, whole, run_text, key)
            return store.get_checkpoint(f"{whole.id}:-1")
        run = resolve_run(store, run_text)
        return store.get_checkpoint(f"{run.id}:{key}")
    try:
        return store.get_checkpoint(ref)
    except StoreError as err:
        try:   # a run id prefix may be all digits: a number that is no checkpoint id may be a run
            run = resolve_run(store, text)
        except AmbiguousRun:
            raise
        except RunNotFoundError:
            if isinstance(ref, int) or text.isdigit():
                raise err from None
            raise StoreError(f"There is no run or checkpoint {text!r} in {store.info.display} (give a run's "
                             "id, id prefix or name, RUN:SEQ, or a checkpoint id).") from None
        return store.get_checkpoint(f"{run.id}:-1")


def _exact_run(store: Store, text: str) -> RunInfo | None:
    """The run whose id is exactly ``text`` (one indexed lookup), else None."""
    try:
        return store.get_run(text)
    except StoreError:
        return None


def _refuse_both(store: Store, text: str, whole: RunInfo, run_text: str, seq: int | str) -> None:
    """A sentence when ``RUN:SEQ`` also names a checkpoint of another run by its exact id."""
    other = _exact_run(store, run_text)
    if other is None or other.id == whole.id:
        return
    try:
        store.get_checkpoint(f"{other.id}:{seq}")
    except StoreError:
        return
    raise StoreError(f"{text!r} names both run {whole.id!r} (its head) and checkpoint #{seq} of run {other.id!r}; "
                     f"write {whole.id}:-1 for the first or {other.id}:#{seq} for the second.")


def parent_refs(store: Store, runs: Iterable[RunInfo]) -> dict[str, CheckpointInfo]:
    """Run id → the checkpoint each fork was made from (forks whose source still exists)."""
    forks = [r for r in runs if r.parent_run is not None and r.parent_checkpoint is not None]
    if not forks:
        return {}
    try:
        found = store.checkpoints_by_id([r.parent_checkpoint for r in forks if r.parent_checkpoint is not None])
    except Exception:  # a damaged store: the forks are listed without their origin
        import logging     # here, not at the top: the CLI's start-up does without it
        logging.getLogger(__name__).debug("reading the forks' origins failed", exc_info=True)
        return {}
    return {r.id: found[r.parent_checkpoint] for r in forks
            if r.parent_checkpoint is not None and r.parent_checkpoint in found}
