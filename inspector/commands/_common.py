"""Helpers shared by CLI sub-commands: opening stores and printing tables or JSON."""

from __future__ import annotations

import json
import re
import sys
import time
from typing import TYPE_CHECKING, Any
from collections.abc import Callable, Iterable, Sequence

from inspector import limits
from inspector.errors import StoreError
from inspector.humanize import CONTROL_CHARS, escape_char
from inspector.humanize import fmt_size  # noqa: F401  (re-exported for the commands)
from inspector.model import Record

if TYPE_CHECKING:
    import argparse


def add_store_arg(parser: argparse.ArgumentParser) -> None:
    """The positional STORE argument (a path or a SQLAlchemy URL), with the read budgets."""
    parser.add_argument("store", metavar="STORE", help="store path or SQLAlchemy URL")
    add_budget_args(parser)


def add_run_arg(parser: argparse.ArgumentParser) -> None:
    """The positional RUN argument (an id, a unique id prefix or a name)."""
    parser.add_argument("run", metavar="RUN", help="run id, unique id prefix, name or a part of one (a LangGraph thread id)")


def at_least(lowest: float, kind: type = int) -> Callable[[str], Any]:
    """An argparse ``type``: a number of ``kind`` no smaller than ``lowest`` (else argparse's
    one-sentence error naming the option)."""
    def parse(text: str) -> Any:
        import argparse
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {'a whole number' if kind is int else 'a number'}") from None
        if not value >= lowest:     # NaN fails too
            raise argparse.ArgumentTypeError(f"{text} is too small (at least {lowest:g})")
        return value
    parse.__name__ = kind.__name__
    return parse


def add_budget_args(parser: argparse.ArgumentParser) -> None:
    """``--max-piece-mb`` … : the read budgets of ``inspector.limits`` for this command."""
    group = parser.add_argument_group("read budgets (what a damaged or hostile store may cost)")
    now = limits.current()
    for name, budget in limits.BUDGETS.items():
        value = getattr(now, {"piece": "piece_bytes", "state": "state_bytes"}.get(name, name))
        shown = value // limits.MB if budget.unit == "MB" else value
        group.add_argument(budget.flag, type=at_least(1), default=None, metavar="N", dest=f"budget_{name}",
                           help=f"the {budget.what} (now {shown:,}{' MB' if budget.unit else ''}; "
                                f"setting {budget.env})")


def apply_budget_args(args: argparse.Namespace) -> None:
    """Put the budgets given on the command line in force for this process."""
    limits.configure(**{name: getattr(args, f"budget_{name}", None) for name in limits.BUDGETS})


def add_json_arg(parser: argparse.ArgumentParser) -> None:
    """The --json flag."""
    parser.add_argument("--json", action="store_true", help="print JSON for scripts")


def add_langgraph_write_args(parser: argparse.ArgumentParser, what: str) -> None:
    """--langgraph-write (a command that deletes ``what`` of a LangGraph database) and --backup."""
    parser.add_argument("--langgraph-write", action="store_true",
                        help=f"allow deleting {what} of a LangGraph database (SQLite: a backup is made first)")
    parser.add_argument("--backup", metavar="PATH", help="where the LangGraph SQLite backup goes")


def refuse_langgraph_write_options(args: argparse.Namespace, probe: Any) -> None:
    """StoreError when --langgraph-write or --backup is given for a store that is not a LangGraph
    database (``probe``: the store, open)."""
    if probe.info.kind != "langgraph":
        refuse_options(args, {"langgraph_write": "--langgraph-write", "backup": "--backup"},
                       "LangGraph databases", probe.info.display, probe.info.kind)


def stderr_progress(args: argparse.Namespace) -> Callable[[str], None] | None:
    """What a long write says as it goes (``… text`` on stderr); nothing with --json."""
    return None if args.json else (lambda text: print(f"… {text}", file=sys.stderr, flush=True))


# which rule wins for a reference holding ':' (``store.refs``), for the commands' help
COLON_RULE = ("a run id holding ':' (a LangGraph thread user:42) names that run's head, a reference that "
              "could also be RUN:SEQ is refused, and RUN:#SEQ is always a run and a seq")

_CONTROL = re.compile(f"[{CONTROL_CHARS}]")
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029]")   # legal in JSON strings, harmful in a terminal


def escape_control(text: str) -> str:
    """``text`` with terminal control characters shown as escapes (``\\x1b``): a run name
    holding ``ESC]0;…BEL`` must not retitle or clear the user's terminal."""
    return _CONTROL.sub(lambda m: escape_char(m.group()), text)


def terminal_safe_json(text: str) -> str:
    """JSON text with the characters JSON allows raw but terminals obey (DEL, C1) escaped."""
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def to_jsonable(value: Any) -> Any:
    """Dataclasses, bytes and tuples as plain JSON values; NaN and the infinities as the
    strings "NaN", "Infinity", "-Infinity" (strict JSON has no such numbers); map keys as
    text (bytes keys as hex)."""
    if isinstance(value, Record):   # the model's types: frozen dataclasses that need no dataclasses import
        return {name: to_jsonable(getattr(value, name)) for name in value.__match_args__}
    dataclasses = sys.modules.get("dataclasses")   # any other dataclass instance means it is loaded
    if dataclasses is not None and dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        out = {(k.hex() if isinstance(k, (bytes, bytearray)) else str(k)): to_jsonable(v) for k, v in value.items()}
        return out if len(out) == len(value) else _keys_apart(value)
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return str(value).replace("inf", "Infinity").replace("nan", "NaN")
    return value


def _keys_apart(value: dict) -> dict:
    """A map whose keys become the same text (``1`` and ``"1"``, ``True`` and ``"True"``) with
    each kept: a key that is not a string says its type ("1 (int)")."""
    out: dict[str, Any] = {}
    for k, v in value.items():
        text = k.hex() if isinstance(k, (bytes, bytearray)) else str(k)
        if not isinstance(k, str):
            text = f"{text} ({type(k).__name__})" if text in out or text in value else text
        while text in out:
            text += "'"
        out[text] = to_jsonable(v)
    return out


def dumps(value: Any, indent: int | None = 2) -> str:
    """Strict JSON text of ``value`` (see ``to_jsonable``) that is also safe in a terminal."""
    return terminal_safe_json(json.dumps(to_jsonable(value), indent=indent, ensure_ascii=False,
                                         default=str, allow_nan=False))


def print_json(value: Any) -> None:
    """Write ``value`` as indented strict JSON on stdout (one write: ``json.dump`` to a
    terminal or pipe made one call per token, millions for a long listing)."""
    sys.stdout.write(dumps(value))
    sys.stdout.write("\n")


def print_json_with_list(value: dict[str, Any], key: str, items: Iterable[Any]) -> None:
    """``print_json`` of ``value`` whose top-level ``key`` is the list ``items``, written item
    by item: the same text, without ever holding all of it (a diff of a million changes was
    3.7 GB as one string and its objects)."""
    import uuid
    marker = uuid.uuid4().hex        # (a value no store can have planted in the text)
    head, tail = dumps({**value, key: marker}).split(f'"{marker}"', 1)
    write = sys.stdout.write
    write(head)
    first = True
    for item in items:
        write("[\n    " if first else ",\n    ")
        write(dumps(item).replace("\n", "\n    "))
        first = False
    write("[]" if first else "\n  ]")
    write(tail)
    write("\n")


_RECORD_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, default=str,
                                   check_circular=False)   # records are trees built here: no cycle to look for


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


def print_json_records(records: list[dict[str, Any]]) -> None:
    """Write a listing (``runs``, ``checkpoints`` …) as a JSON array with one record per line.

    Listings can hold 100,000 records: an indented dump runs json's pure-Python encoder over
    every token (seconds), one record per line runs its C encoder (what ``jq`` and ``grep``
    read as easily). Records hold only JSON values (str keys; nested dicts and lists).
    """
    write_json_lines(_record_lines(records))


def _record_lines(records: list[dict[str, Any]]) -> list[str]:
    """Each record as one line of compact JSON (``, `` and ``: `` between items)."""
    if not records:
        return []
    try:    # the whole list in one call of the C encoder, cut where one record ends
        text = _RECORD_ENCODER.encode(records)
    except ValueError:                           # a non-finite float somewhere
        text = ""
    # records hold no list of records, so "}, {" outside a string is only ever a record's
    # end: when it occurs exactly that often, no string holds it and every one is a cut
    if text and text.count("}, {") == len(records) - 1:
        return [text[1:-1]] if len(records) == 1 else _cut(text)
    encode = _RECORD_ENCODER.encode
    lines = []
    for record in records:
        try:
            lines.append(encode(record))
        except ValueError:                       # a non-finite float somewhere in it
            lines.append(encode(_finite(record)))
    return lines


def _cut(text: str) -> list[str]:
    """``[{…}, {…}, …]`` as its records' texts (see ``_record_lines``)."""
    parts = text[1:-1].split("}, {")
    return [parts[0] + "}", *("{" + p + "}" for p in parts[1:-1]), "{" + parts[-1]]


def write_json_lines(lines: list[str]) -> None:
    """Write records already encoded (one JSON text each) as a JSON array, one per line."""
    if not lines:
        sys.stdout.write("[]\n")
        return
    write_safe("[\n  ", ",\n  ".join(lines), "\n]\n")


_C1_UTF8 = re.compile(rb"\xc2[\x80-\x9f]")


def _unsafe_utf8(data: bytes) -> bool:
    """True when UTF-8 ``data`` holds a character ``terminal_safe_json`` escapes (byte searches:
    a regular expression over a listing's 30 million characters took 0.15 s)."""
    if b"\x7f" in data or b"\xe2\x80\xa8" in data or b"\xe2\x80\xa9" in data:
        return True
    return b"\xc2" in data and _C1_UTF8.search(data) is not None


def write_safe(head: str, body: str, tail: str) -> None:
    """Write the JSON text ``head + body + tail`` on stdout made terminal-safe
    (``terminal_safe_json``; ``head`` and ``tail`` are ASCII), at once."""
    out = sys.stdout
    buffer = getattr(out, "buffer", None)
    if buffer is not None and (getattr(out, "encoding", "") or "").lower().replace("-", "") == "utf8":
        data = body.encode("utf-8", getattr(out, "errors", None) or "strict")
        # whether a str is ASCII is known without a scan, and DEL is the one character of
        # ASCII to escape: a 30 MB listing skips the searches for the others
        if ("\x7f" not in body) if body.isascii() else not _unsafe_utf8(data):
            out.flush()
            buffer.write(head.encode())
            buffer.write(data)
            buffer.write(tail.encode())
            return
    out.write(terminal_safe_json(head + body + tail))


def _column(values: Sequence[Any]) -> list[str]:
    """One column of a table as text, control characters escaped (one scan per column)."""
    cells = ["" if c is None else str(c) for c in values] if None in values else list(map(str, values))
    joined = " ".join(cells)
    # text with no control character is printable but for other kinds of character
    # (``isprintable`` is a C loop; the pattern only looks further when it is not)
    return [escape_control(c) for c in cells] if not joined.isprintable() and _CONTROL.search(joined) else cells


def print_table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """A plain aligned text table (control characters escaped), written at once."""
    rows = list(rows)
    print_columns(headers, [list(col) for col in zip(*rows, strict=False)][:len(headers)] if rows else [])


def print_columns(headers: Sequence[str], values: Sequence[Sequence[Any]]) -> None:
    """``print_table`` of a table given column by column (each as long as the others)."""
    columns = [_column(col) for col in values]
    widths = [max(len(h), max(map(len, col), default=0)) for h, col in zip(headers, columns, strict=False)]
    widths += [len(h) for h in headers[len(widths):]]
    line = "  ".join(f"{{:<{w}}}" for w in widths).format
    out = [line(*headers).rstrip()]
    out += [line(*cells).rstrip() for cells in zip(*columns, strict=False)] if columns and columns[0] else []
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


class _Seconds(dict):
    """Whole second (an int) → its ``fmt_time``, worked out a minute at a time: the text of a
    minute whose local time moves evenly (no change of offset inside it) is its first
    second's text with the seconds counted on."""

    def __init__(self) -> None:
        super().__init__()
        self.minutes: dict[int, str | None] = {}

    def __missing__(self, second: int) -> str:
        start = second - second % 60
        prefix = self.minutes.get(start, "")
        if prefix == "":
            prefix = self.minutes[start] = _minute_prefix(start)
        value = self[second] = fmt_time(second) if prefix is None else f"{prefix}{second - start:02d}"
        return value


def _minute_prefix(start: int) -> str | None:
    """``YYYY-MM-DD HH:MM:`` of the minute from ``start`` when all its 60 seconds share it."""
    try:
        first, last = time.localtime(start), time.localtime(start + 59)
    except (OverflowError, OSError, ValueError):
        return None
    if first.tm_sec != 0 or last.tm_sec != 59 or first.tm_gmtoff != last.tm_gmtoff or first.tm_min != last.tm_min:
        return None
    return time.strftime("%Y-%m-%d %H:%M:", first)


def fmt_times(values: Sequence[Any]) -> list[str]:
    """``[fmt_time(v) for v in values]``, for a listing's column of times (each distinct
    second formatted once, a minute's seconds from one ``localtime``)."""
    if values and set(map(type, values)) == {float} and min(values) >= 1 and max(values) < 1e11:
        return list(map(_Seconds().__getitem__, map(int, values)))
    return [fmt_time(v) for v in values]


def confirm(prompt: str) -> bool:
    """Ask on the terminal; anything but y/yes declines. Without a terminal to ask, the
    command cannot go on as given: one sentence, exit 2 (as for any other usage mistake)."""
    if not sys.stdin or not sys.stdin.isatty():
        raise StoreError("not confirmed: there is no terminal to ask (pass --yes to run it).")
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


def refuse_options(args: Any, options: dict[str, str], meant_for: str, display: str, kind: str) -> None:
    """StoreError naming the first of ``options`` (dest → flag) given on the command line, when
    they are meant for another kind of store than ``kind`` (silently ignoring one would let a
    user believe it was applied)."""
    for dest, flag in options.items():
        if getattr(args, dest, None) not in (None, False, []):      # ([]: an append option not given)
            name = _KIND_NAMES.get(kind, kind)
            raise StoreError(f"{flag} is only for {meant_for}; {display} is {'an' if name[:1] in 'AEIOU' else 'a'} "
                             f"{name} store.")


_KIND_NAMES = {"native": "native", "langgraph": "LangGraph"}
