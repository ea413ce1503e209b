"""Helpers shared by CLI sub-commands: opening stores and printing tables or JSON."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from typing import Any
from collections.abc import Iterable, Sequence

from inspector.humanize import fmt_size  # noqa: F401  (re-exported for the commands)


def add_store_arg(parser: argparse.ArgumentParser) -> None:
    """The positional STORE argument (a path or a SQLAlchemy URL)."""
    parser.add_argument("store", metavar="STORE", help="store path or SQLAlchemy URL")


def add_json_arg(parser: argparse.ArgumentParser) -> None:
    """The --json flag."""
    parser.add_argument("--json", action="store_true", help="print JSON for scripts")


def to_jsonable(value: Any) -> Any:
    """Dataclasses, bytes and tuples as plain JSON values."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    return value


def print_json(value: Any) -> None:
    """Write ``value`` as indented JSON on stdout."""
    json.dump(to_jsonable(value), sys.stdout, indent=2, ensure_ascii=False, default=str)
    sys.stdout.write("\n")


def print_table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """A plain aligned text table."""
    rows = [["" if c is None else str(c) for c in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=False)).rstrip())
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=False)).rstrip())


def fmt_time(ts: float | None) -> str:
    """Local time as YYYY-MM-DD HH:MM:SS."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts)) if ts else ""


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
