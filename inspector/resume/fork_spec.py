"""A fork's own resume spec: prefilled from the original's, edited, and the flags its edit contradicts."""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from typing import Any
from collections.abc import Iterable, Mapping, Sequence

from inspector.errors import ResumeSpecError, StoreError
from inspector.resume.launch import check_argv, check_env
from inspector.store.native.rows import check_spec

# edited values this large are not diffed just to find key names (the review diffs them anyway)
_MAX_KEYS = 200


@dataclass(frozen=True)
class FlagConflict:
    """An argument of the resume command whose flag name matches a key the fork's edit changed.

    The inspector cannot know what a flag means; a name match (``--approve-first`` and the
    edited ``approve_first``) is a strong hint that the original's start-up option says the
    opposite of the edit, so the user is shown it before the fork keeps the command.
    """

    index: int      # position in argv
    flag: str       # the argument as written, e.g. "--approve-first"
    key: str        # the edited key it matches, e.g. "approve_first"

    def describe(self) -> str:
        """One phrase: which argument matches which edited key."""
        return f"{self.flag} (argument {self.index}) matches the edited key {self.key!r}"


def _normal(name: str) -> str:
    return name.strip().lower().replace("-", "_")


def flag_name(argument: str) -> str | None:
    """The normalised name of an option argument (``--no-approve-first=1`` → ``approve_first``), else None."""
    if not argument.startswith("-") or argument in ("-", "--") or argument[1:2].isdigit():
        return None
    name = _normal(argument.lstrip("-").split("=", 1)[0])
    if name.startswith("no_"):
        name = name[3:]
    return name or None


def edited_keys(old: Any, new: Any) -> tuple[str, ...]:
    """The dict keys, nearest the change, of every path where ``new`` differs from ``old``.

    ``{"budget": {"total": 1}}`` → ``{"budget": {"total": 2}}`` gives ``("total",)``; a changed
    list item names the nearest key on its path (``messages[3]`` or ``messages[3].content``).
    """
    from inspector.diff.api import diff_values

    keys: list[str] = []
    for change in diff_values(old, new):
        names = [part for part in change.path if isinstance(part, str)]
        if names and names[-1] not in keys:
            keys.append(names[-1])
        if len(keys) >= _MAX_KEYS:
            break
    return tuple(keys)


def contradicted_flags(argv: Sequence[str], keys: Iterable[str]) -> tuple[FlagConflict, ...]:
    """The arguments of ``argv`` (after the program) whose flag name matches one of ``keys``."""
    wanted = {_normal(k): k for k in keys if isinstance(k, str) and k.strip()}
    found: list[FlagConflict] = []
    for index, argument in enumerate(argv):
        name = flag_name(argument) if index else None
        if name is not None and name in wanted:
            found.append(FlagConflict(index, argument, wanted[name]))
    return tuple(found)


def without_arguments(argv: Sequence[str], conflicts: Iterable[FlagConflict]) -> list[str]:
    """``argv`` without the flagged arguments (only the flags: a value written after one stays)."""
    drop = {c.index for c in conflicts}
    return [a for i, a in enumerate(argv) if i not in drop]


def fork_spec(original: Mapping[str, Any] | None, *, argv: Sequence[str] | None = None,
              cwd: str | None = None, env: Mapping[str, str] | None = None,
              unset_env: Iterable[str] = ()) -> dict | None:
    """The resume spec a fork stores: the original's with ``argv``/``cwd``/``env`` replaced.

    ``env`` entries are added to (or replace) the original's; ``unset_env`` names are removed.
    ``inherit`` (secret-looking names passed from the launcher's environment) is kept. None when
    the original has no spec and nothing was given. StoreError says what is invalid.
    """
    unset = [str(k) for k in unset_env]
    if original is None and argv is None:
        if cwd is not None or env or unset:
            raise StoreError("The original run has no resume command; give the fork's with --argv.")
        return None
    spec: dict[str, Any] = json.loads(json.dumps(dict(original or {})))   # a deep, JSON-only copy
    if argv is not None:
        spec["argv"] = list(check_argv(list(argv)))
    if cwd is not None:
        if not cwd.strip():
            raise StoreError("The fork's working directory is empty.")
        spec["cwd"] = cwd
    spec.setdefault("cwd", ".")
    merged = dict(spec.get("env") or {})
    merged.update(check_env(dict(env or {})))
    for name in unset:
        merged.pop(name, None)
    spec["env"] = merged
    spec.setdefault("inherit", [])
    try:
        return check_spec(spec)
    except ResumeSpecError as err:
        raise StoreError(f"The fork's resume command is invalid: {str(err).rstrip('.')}.") from err


@dataclass(frozen=True)
class SpecEdit:
    """How a fork's resume spec differs from the original's (the CLI's --argv, --cwd, --env, --unset-env)."""

    argv: tuple[str, ...] | None = None
    cwd: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    unset_env: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        """True when nothing is changed: the fork keeps a copy of the original's spec."""
        return self.argv is None and self.cwd is None and not self.env and not self.unset_env

    def apply(self, original: Mapping[str, Any] | None) -> dict | None:
        """The fork's spec (see ``fork_spec``)."""
        return fork_spec(original, argv=self.argv, cwd=self.cwd, env=dict(self.env), unset_env=self.unset_env)


def parse_argv_option(text: str) -> list[str]:
    """The CLI's ``--argv`` value: a JSON array of strings, or words split like a POSIX shell."""
    stripped = text.strip()
    if stripped.startswith("["):
        try:
            value = json.loads(stripped)
        except ValueError as err:
            raise StoreError(f"--argv is not a valid JSON array ({err}).") from err
        if not isinstance(value, list) or not all(isinstance(a, str) for a in value):
            raise StoreError("--argv as JSON must be an array of strings, one argument each.")
        return list(check_argv(value))
    try:
        return list(check_argv(shlex.split(stripped)))
    except ValueError as err:
        raise StoreError(f"--argv cannot be split into words ({err}).") from err


def parse_env_options(items: Iterable[str]) -> dict[str, str]:
    """The CLI's ``--env NAME=VALUE`` options as a map; StoreError for one without '='."""
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise StoreError(f"--env {item!r} is not NAME=VALUE.")
        out[name] = value
    return check_env(out)


def describe_spec(spec: Mapping[str, Any] | None, conflicts: Sequence[FlagConflict] = ()) -> list[str]:
    """Lines for ``fork --dry-run``: the fork's resume command, where, its environment, and warnings."""
    if not spec:
        return ["resume command of the fork: none (the original has none; it cannot be resumed)"]
    lines = [f"resume command of the fork: {shlex.join(spec['argv'])}", f"  in {spec.get('cwd') or '.'}"]
    env = spec.get("env") or {}
    if env:
        lines.append("  environment: " + " ".join(f"{k}={shlex.quote(str(v))}" for k, v in sorted(env.items())))
    for name in spec.get("inherit") or ():
        lines.append(f"  passed from the launcher's environment: {name}")
    for conflict in conflicts:
        lines.append(f"warning: {conflict.describe()}; pass --argv without it if the fork should not get it")
    return lines
