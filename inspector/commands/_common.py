"""Helpers shared by CLI sub-commands: opening stores and printing tables or JSON."""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
import time
from typing import Any
from collections.abc import Iterable, Sequence

from inspector import limits
from inspector.humanize import fmt_size  # noqa: F401  (re-exported for the commands)


def add_store_arg(parser: argparse.ArgumentParser) -> None:
    """The positional STORE argument (a path or a SQLAlchemy URL), with the read budgets."""
    parser.add_argument("store", metavar="STORE", help="store path or SQLAlchemy URL")
    add_budget_args(parser)


def add_budget_args(parser: argparse.ArgumentParser) -> None:
    """``--max-piece-mb`` … : the read budgets of ``inspector.limits`` for this command."""
    group = parser.add_argument_group("read budgets (what a damaged or hostile store may cost)")
    now = limits.current()
    for name, budget in limits.BUDGETS.items():
        value = getattr(now, {"piece": "piece_bytes", "state": "state_bytes"}.get(name, name))
        shown = value // limits.MB if budget.unit == "MB" else value
        group.add_argument(budget.flag, type=int, default=None, metavar="N", dest=f"budget_{name}",
                           help=f"the {budget.what} (now {shown:,}{' MB' if budget.unit else ''}; "
                                f"setting {budget.env})")


def apply_budget_args(args: argparse.Namespace) -> None:
    """Put the budgets given on the command line in force for this process."""
    limits.configure(**{name: getattr(args, f"budget_{name}", None) for name in limits.BUDGETS})


def add_json_arg(parser: argparse.ArgumentParser) -> None:
    """The --json flag."""
    parser.add_argument("--json", action="store_true", help="print JSON for scripts")


_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029]")   # legal in JSON strings, harmful in a terminal


def escape_control(text: str) -> str:
    """``text`` with terminal control characters shown as escapes (``\\x1b``): a run name
    holding ``ESC]0;…BEL`` must not retitle or clear the user's terminal."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def terminal_safe_json(text: str) -> str:
    """JSON text with the characters JSON allows raw but terminals obey (DEL, C1) escaped."""
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def to_jsonable(value: Any) -> Any:
    """Dataclasses, bytes and tuples as plain JSON values; NaN and the infinities as the
    strings "NaN", "Infinity", "-Infinity" (strict JSON has no such numbers); map keys as
    text (bytes keys as hex)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {(k.hex() if isinstance(k, (bytes, bytearray)) else str(k)): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return str(value).replace("inf", "Infinity").replace("nan", "NaN")
    return value


def dumps(value: Any, indent: int | None = 2) -> str:
    """Strict JSON text of ``value`` (see ``to_jsonable``) that is also safe in a terminal."""
    return terminal_safe_json(json.dumps(to_jsonable(value), indent=indent, ensure_ascii=False,
                                         default=str, allow_nan=False))


def print_json(value: Any) -> None:
    """Write ``value`` as indented strict JSON on stdout (one write: ``json.dump`` to a
    terminal or pipe made one call per token, millions for a long listing)."""
    sys.stdout.write(dumps(value))
    sys.stdout.write("\n")


_RECORD_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, default=str)


def _finite(value: Any) -> Any:
    """``value`` with NaN and infinities as the strings "NaN", "Infinity", "-Infinity"
    (strict JSON has no such numbers; a damaged store may hold them)."""
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return str(value).replace("inf", "Infinity").replace("nan", "NaN")
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def print_json_records(records: Iterable[dict[str, Any]]) -> None:
    """Write a listing (``runs``, ``checkpoints`` …) as a JSON array with one record per line.

    Listings can hold 100,000 records: an indented dump runs json's pure-Python encoder over
    every token (seconds), one record per line runs its C encoder (what ``jq`` and ``grep``
    read as easily). Records hold only JSON values (str keys; nested dicts and lists).
    """
    encode = _RECORD_ENCODER.encode
    lines = []
    for record in records:
        try:
            lines.append(encode(record))
        except ValueError:                       # a non-finite float somewhere in it
            lines.append(encode(_finite(record)))
    # one pass for the characters terminals obey (JSON text has no line breaks to cross)
    sys.stdout.write(terminal_safe_json("[\n  " + ",\n  ".join(lines) + "\n]\n") if lines else "[]\n")


def _column(values: Sequence[Any]) -> list[str]:
    """One column of a table as text, control characters escaped (one scan per column)."""
    cells = ["" if c is None else str(c) for c in values] if None in values else list(map(str, values))
    # cells are joined by a line feed, which the control pattern leaves alone
    return [escape_control(c) for c in cells] if _CONTROL.search("\n".join(cells)) else cells


def print_table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """A plain aligned text table (control characters escaped), written at once."""
    rows = list(rows)
    columns = [_column(col) for col in zip(*rows, strict=False)][:len(headers)] if rows else []
    widths = [max(len(h), max(map(len, col), default=0)) for h, col in zip(headers, columns, strict=False)]
    widths += [len(h) for h in headers[len(widths):]]
    line = "  ".join(f"{{:<{w}}}" for w in widths).format
    out = [line(*headers).rstrip()]
    out += [line(*cells).rstrip() for cells in zip(*columns, strict=False)] if columns else []
    sys.stdout.write("\n".join(out) + "\n")


def say(*parts: object) -> None:
    """``print`` for lines that may hold text from a store: control characters escaped."""
    print(*(escape_control(str(p)) for p in parts))


def note_store(store: Any) -> None:
    """One line on stderr when the store is read in a way the user should know about (e.g. a
    write-ahead log that cannot be read untouched: its checkpoints are not shown)."""
    notice = getattr(getattr(store, "info", None), "notice", "")
    if notice:
        print(f"checkpoint-inspector: note: {escape_control(notice)}", file=sys.stderr)


def use_graph_kinds(store: Any) -> None:
    """A LangGraph store with a graph set reads channel kinds from the graph (asked in its
    runner, cached); when the graph cannot say, one line on stderr and the kinds are inferred."""
    if not hasattr(store, "use_graph_channels"):
        return                  # not LangGraph: nothing to import (native reads stay lean)
    from inspector.resume.graph_channels import attach
    problem = attach(store)
    if problem:
        print(f"checkpoint-inspector: note: channel kinds are inferred: {escape_control(problem)}",
              file=sys.stderr)


def print_damaged(rows: Iterable[tuple[str, str]]) -> None:
    """After a table: one line per damaged row, with why (the other rows are fine)."""
    for name, why in rows:
        if why:
            print(escape_control(f"damaged: {name}: {why}"))


def fmt_time(ts: float | None) -> str:
    """Local time as YYYY-MM-DD HH:MM:SS ('?' for a time no calendar has)."""
    if not ts:
        return ""
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))
    except (OverflowError, OSError, ValueError, TypeError):
        return "?"


def confirm(prompt: str) -> bool:
    """Ask on the terminal; anything but y/yes (or no terminal at all) declines."""
    if not sys.stdin or not sys.stdin.isatty():
        print("checkpoint-inspector: not confirmed (no terminal to ask; pass --yes to run it).",
              file=sys.stderr)
        return False
    try:
        answer = input(prompt)
    except EOFError:
        return False
    return answer.strip().lower() in ("y", "yes")


def run_launch(launch: Any, *, wait: bool) -> int:
    """Start a confirmed fork or resume process (``inspector.resume.launch``); with ``wait``
    follow it to its end and return its exit code, else print its pid and return 0."""
    from inspector.resume.launch import spawn

    proc = spawn(launch, new_session=not wait)
    if not wait:
        print(f"started pid {proc.pid}")
        return 0
    code = proc.wait()
    print(f"process exited with code {code}", file=sys.stderr)
    return int(code)
