"""Edits applied to a fork: ``PATH=JSON`` assignments and validation of edited states."""

from __future__ import annotations

import ast
import copy
import json
import math
import re
from typing import Any

from inspector import taskstate
from inspector.diff.model import read_path
from inspector.errors import StoreError, TaskStateError

_TOKEN = re.compile(r"""
    \.?(?P<name>[^\W\d][\w\-]*)               # .key or a leading key (letters of any script: .ünï, .名前)
  | \[(?P<index>-?\d+)\]                        # [3]
  | \[(?P<quoted>"(?:[^"\\]|\\.)*")\]           # ["any key"]
  | \[(?P<single>'(?:[^'\\]|\\.)*')\]           # ['any key'], as the diff and history print keys
""", re.VERBOSE)
MAX_DEPTH = 500
_INT = re.compile(r"-?[0-9]+")
_KEYS = (str, int, float, bool, bytes, type(None))


class EditError(StoreError):
    """An edit of a fork's state or task state is invalid; the message gives the reason."""


def parse_path(text: str) -> tuple[str | int, ...]:
    """``budget.total`` → ('budget', 'total'); ``messages[2].content`` → ('messages', 2, 'content').

    Keys that are not identifiers are written as quoted JSON strings: ``files["draft.md"]``,
    or as Python writes them, which is how ``diff`` and ``history`` print paths:
    ``files['draft.md']`` (read as a string literal alone: nothing is evaluated).
    """
    text = text.strip()
    if not text:
        raise EditError("An edit needs a path (for example budget.total=123).")
    parts: list[str | int] = []
    pos = 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None or (match.group("name") and pos == 0 and text.startswith(".")):
            printed = read_path(text)     # a key of another type, as diff prints it: pairs[(1, 'a')], files[b'x']
            if printed is not None:
                return printed
            raise EditError(f"Cannot read the path {text!r} at character {pos + 1} (a key that is not a "
                            f"name goes in brackets and quotes, e.g. files[\"draft.md\"]).")
        if match.group("name") is not None:
            parts.append(match.group("name"))
        elif match.group("index") is not None:
            parts.append(int(match.group("index")))
        else:
            parts.append(_key(match.group("quoted") or match.group("single"), text, pos))
        pos = match.end()
    return tuple(parts)


def _key(literal: str, text: str, pos: int) -> str:
    """A quoted key: JSON, or a Python string literal (its escapes, as ``repr`` writes them)."""
    if literal.startswith('"'):
        try:
            return json.loads(literal)
        except ValueError:
            pass            # a Python escape JSON lacks (``"\x1b"``)
    try:
        key = ast.literal_eval(literal)
    except (ValueError, SyntaxError):
        key = None
    if not isinstance(key, str):
        raise EditError(f"Cannot read the key {literal} in the path {text!r} at character {pos + 2}.")
    return key


def parse_assignment(text: str) -> tuple[tuple[str | int, ...], Any]:
    """Split ``PATH=JSON`` into a path and a decoded JSON value."""
    path_text, sep, value_text = text.partition("=")
    if not sep:
        raise EditError(f"The edit {text!r} has no '=' (write PATH=JSON, e.g. budget.total=123).")
    try:
        value = json.loads(value_text)
    except ValueError as err:
        raise EditError(f"The value of {path_text.strip()} is not valid JSON ({err}); "
                        "quote strings, e.g. name=\"x\".") from err
    return parse_path(path_text), value


def set_path(root: Any, path: tuple[str | int, ...], value: Any) -> Any:
    """A deep copy of ``root`` with ``value`` stored at ``path`` (the last key may be new).

    A map's keys keep their types: a part names the key of that type when the map has it,
    else the one key that is not a string whose text it is (``scores["101"]`` is the int key
    101, as ``show`` prints it; ``v["1 (int)"]`` too, as ``show`` prints it beside a "1").
    """
    if not path:
        return copy.deepcopy(value)
    result = copy.deepcopy(root)
    node = result
    for depth, key in enumerate(path):
        last = depth == len(path) - 1
        where = _display(path[:depth]) or "(root)"
        if isinstance(node, dict):
            found = map_key(node, key)
            if found is None:
                raise EditError(f"{where} is an object; use a key, not [{key}].")
            if last:
                node[found] = copy.deepcopy(value)
            elif found not in node:
                raise EditError(f"{_display(path[:depth + 1])} does not exist.")
            else:
                node = node[found]
        elif isinstance(node, list):
            if not isinstance(key, int):
                raise EditError(f"{where} is a list; use an index like [0], not .{key}.")
            if not -len(node) <= key < len(node):
                raise EditError(f"{_display(path[:depth + 1])} is out of range ({where} has {len(node)} items).")
            if last:
                node[key] = copy.deepcopy(value)
            else:
                node = node[key]
        else:
            raise EditError(f"{where} is a {type(node).__name__}, which has no {_display((key,))}.")
    return result


def key_text(key: Any) -> str:
    """A map key as output writes it (``str``; bytes as hex)."""
    return key.hex() if isinstance(key, bytes) else str(key)


def map_key(node: dict, part: str | int) -> Any:
    """The key of ``node`` a path part names (see ``set_path``); when none is, the new key: a
    number where the map has int keys (digits too, where all its keys are ints), else the
    text. None: a bracketed number where the map has no int key (it is not a list)."""
    if part in node:        # (an assignment keeps the stored key: 1.0 stays 1.0 when [1] names it)
        return part
    if isinstance(part, int):
        if str(part) in node:
            return str(part)
        return part if any(type(k) is int for k in node) else None
    return _KeyNames(node).key(part)


def restore_keys(original: Any, edited: Any) -> Any:
    """``edited`` (a whole state typed as JSON text, whose keys are all text) with each key
    that names a key of ``original`` which is not a string (as ``map_key`` reads it: "101" the
    int 101) given that key back; the rest as it is."""
    if isinstance(original, dict) and isinstance(edited, dict):
        names = _KeyNames(original)
        keys = {k: names.key(k) for k in edited}
        if len(set(keys.values())) < len(keys):      # two keys would become one: leave them
            keys = {k: k for k in edited}
        return {keys[k]: restore_keys(original.get(keys[k]), v) for k, v in edited.items()}
    if isinstance(original, list) and isinstance(edited, list):
        return [restore_keys(original[i], v) if i < len(original) else v for i, v in enumerate(edited)]
    return edited


class _KeyNames:
    """Which key of a map a text names: itself, else the one key that is not a string written
    so (``101``, or ``1 (int)`` as output writes it beside a "1"), else a new key (its int
    in a map whose keys are all ints)."""

    __slots__ = ("node", "texts", "ints")

    def __init__(self, node: dict) -> None:
        self.node = node
        self.texts: dict[str, list] = {}
        for k in node:
            if not isinstance(k, str):
                for text in (key_text(k), f"{key_text(k)} ({type(k).__name__})"):
                    self.texts.setdefault(text, []).append(k)
        self.ints = bool(node) and all(type(k) is int for k in node)

    def key(self, text: Any) -> Any:
        if not isinstance(text, str) or text in self.node:
            return text
        named = self.texts.get(text, ())
        if len(named) == 1:
            return named[0]
        return int(text) if self.ints and _INT.fullmatch(text) else text


def _display(path: tuple) -> str:
    out = ""
    for key in path:
        if isinstance(key, int) and not isinstance(key, bool):
            out += f"[{key}]"
        elif not isinstance(key, str):
            out += f"[{key!r}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_\-]*", key):
            out += f".{key}" if out else key
        else:
            out += f"[{json.dumps(key)}]"
    return out


def _state_key(key: Any) -> bool:
    """A map key a stored state may hold (what native stores and LangGraph's msgpack keep)."""
    if isinstance(key, tuple):
        return all(map(_state_key, key))
    return type(key) in _KEYS


def check_json_value(value: Any, what: str = "state") -> None:
    """Refuse values that JSON cannot express (sets, bytes, NaN, non-string keys, objects).

    A state (``what`` "state") may also hold what stores keep and show: NaN and the
    infinities, and map keys that are numbers, booleans, None, bytes or tuples of them (an
    int-keyed map stays int-keyed through a fork)."""
    typed = what == "state"
    stack: list[tuple[Any, tuple]] = [(value, ())]
    while stack:
        node, path = stack.pop()
        where = _display(path) or "(root)"
        if len(path) > MAX_DEPTH:
            raise EditError(f"The edited {what} is nested more than {MAX_DEPTH} levels deep.")
        if node is None or isinstance(node, (str, bool, int)):
            continue
        if isinstance(node, float):
            if not typed and not math.isfinite(node):
                raise EditError(f"The edited {what} has a non-finite number at {where}.")
        elif isinstance(node, dict):
            for key, child in node.items():
                if not (isinstance(key, str) or typed and _state_key(key)):
                    raise EditError(f"The edited {what} has a non-string key {key!r} at {where}.")
                stack.append((child, (*path, key)))
        elif isinstance(node, list):
            stack.extend((child, (*path, i)) for i, child in enumerate(node))
        else:
            raise EditError(f"The edited {what} holds a {type(node).__name__} at {where}, "
                            "which is not a JSON value.")


def validate_tasks(value: Any) -> dict | None:
    """The normalised task state, None kept as None; EditError with the reason otherwise."""
    if value is None:
        return None
    check_json_value(value, "task state")
    try:
        return taskstate.validate(value)
    except TaskStateError as err:
        raise EditError(f"The edited task state is invalid: {err}.") from err


def parse_json_text(text: str, what: str) -> Any:
    """Decode an editor's JSON text; EditError naming the line and column otherwise."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise EditError(f"The {what} is not valid JSON: {err.msg} at line {err.lineno}, "
                        f"column {err.colno}.") from err


def apply_assignments(root: Any, assignments: list[str], what: str = "state") -> Any:
    """Apply ``PATH=JSON`` assignments in order to a copy of ``root``."""
    for text in assignments:
        path, value = parse_assignment(text)
        root = set_path(root, path, value)
    check_json_value(root, what)
    return root
