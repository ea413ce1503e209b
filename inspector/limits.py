"""Budgets on every read of a store: what a damaged or hostile file may cost us at most.

A store is a file anyone may hand us. Four budgets bound what reading it can cost; each is a
setting (an environment variable, read once) that the command line overrides per command
(``--max-piece-mb`` …) and that ``configure`` sets for the process:

* **piece** — the largest piece (or LangGraph blob) decompressed, in MB. A zstd frame is
  decompressed only up to the size the store's own size column declares, and never past this
  ceiling, whatever its header claims (frames without a content size are streamed).
* **state** — how big a state may expand (logical bytes of its strings and scalars), in MB.
  Shared subtrees count every time they appear, so a small file of repeated references is
  measured by what it would expand to (before anything is expanded).
* **nodes** — how many values (containers and scalars) a state may expand to.
* **depth** — how deep a state, a metadata object or a task state may nest. Every walk of a
  decoded value is iterative or stays within this depth, far below the interpreter's
  recursion limit; the recording library refuses deeper states (``StateTooDeepError``).

Exceeding a budget raises ``BudgetExceeded``: one sentence naming the budget and the flag or
setting that raises it.
"""

# No ``from __future__ import annotations`` here (nor in the other modules every command
# imports that declare NamedTuples): typing compiles a NamedTuple's annotation strings, and the
# first ``compile()`` of a process sets up the AST types, about 1 ms of every command's start-up.
import os
from typing import Any, NamedTuple

from inspector.errors import StoreError

ENV_PREFIX = "CHECKPOINT_INSPECTOR_MAX_"
MB = 1024 * 1024


class Budget(NamedTuple):
    """One budget: its field, what it bounds (for the sentence), its flag and its variable."""

    name: str
    what: str
    default: int
    unit: str = ""

    @property
    def flag(self) -> str:
        """The command-line flag that raises it for one command."""
        return f"--max-{self.name}" + ("-mb" if self.unit == "MB" else "")

    @property
    def env(self) -> str:
        """The environment variable that raises it for every command and the GUI."""
        return ENV_PREFIX + self.name.upper() + ("_MB" if self.unit == "MB" else "")


BUDGETS = {
    "piece": Budget("piece", "piece budget", 256, "MB"),
    "state": Budget("state", "state size budget", 1024, "MB"),
    "nodes": Budget("nodes", "value count budget", 5_000_000),
    "depth": Budget("depth", "nesting depth budget", 256),
}


class Limits(NamedTuple):
    """The budgets in force (sizes in bytes)."""

    piece_bytes: int
    state_bytes: int
    nodes: int
    depth: int


def _from_env(budget: Budget) -> int:
    text = os.environ.get(budget.env, "").strip()
    try:
        value = int(float(text)) if text else budget.default
    except ValueError:
        value = budget.default
    return max(1, value)


def _scaled(name: str, value: int) -> int:
    return value * MB if BUDGETS[name].unit == "MB" else value


def defaults() -> Limits:
    """The budgets from the environment (or their defaults)."""
    return Limits(*(_scaled(name, _from_env(b)) for name, b in BUDGETS.items()))


_current = defaults()


def current() -> Limits:
    """The budgets in force in this process."""
    return _current


def configure(**values: int | None) -> Limits:
    """Override budgets for this process, in the flags' units (``piece=512`` is 512 MB);
    None leaves a budget as it is. Returns the budgets now in force."""
    global _current
    changes = {}
    for name, value in values.items():
        if value is None:
            continue
        field = {"piece": "piece_bytes", "state": "state_bytes"}.get(name, name)
        changes[field] = _scaled(name, max(1, int(value)))
    _current = _current._replace(**changes)
    return _current


def reset() -> None:
    """Back to the environment's budgets (tests)."""
    global _current
    _current = defaults()


class BudgetExceeded(StoreError):
    """A read would cost more than a budget allows; the sentence names the way to raise it."""

    def __init__(self, name: str, what: str) -> None:
        budget = BUDGETS[name]
        limit = getattr(current(), {"piece": "piece_bytes", "state": "state_bytes"}.get(name, name))
        shown = f"{limit // MB:,} MB" if budget.unit == "MB" else f"{limit:,}"
        super().__init__(f"{what}, over the {budget.what} of {shown}; raise it with "
                         f"{budget.flag} or the {budget.env} setting.")
        self.budget = name


def depth_of(value: Any, limit: int | None = None, keys: bool = False) -> int:
    """How deep ``value`` nests (0 for a scalar), walked without recursion; stops counting
    (and returns ``limit + 1``) once past ``limit``. ``keys``: a map's keys count as its
    values do (a tuple key is stored as an array, one level down: what a writer checks)."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children: Any = (*item.values(), *item) if keys else item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if level > deepest:
            deepest = level
            if limit is not None and deepest > limit:
                return deepest
        stack.extend((child, level + 1) for child in children if isinstance(child, (dict, list, tuple)))
    return deepest


def check_depth(value: Any, what: str) -> Any:
    """``value`` itself when it nests within the depth budget; BudgetExceeded otherwise."""
    limit = current().depth
    if depth_of(value, limit) > limit:
        raise BudgetExceeded("depth", what)
    return value
