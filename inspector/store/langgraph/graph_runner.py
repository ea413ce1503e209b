"""Run the user's LangGraph graph on a checkpoint database: fork (update_state), resume, answer.

Started by the inspector as a subprocess in the user's environment — never imported by the
inspector process itself, because importing the graph runs the user's code::

    python …/inspector/store/langgraph/graph_runner.py --store DB --graph module:attr \\
        --thread T [--checkpoint ID] --action fork|resume|answer [--values-json JSON] \\
        [--as-node NODE] [--reason TEXT]

(``python -m inspector.store.langgraph.graph_runner`` works too; the inspector runs it by
path, which needs only langgraph in the interpreter and skips importing our package.)

* ``fork``   — ``graph.update_state(config, values, as_node)``: the edges after ``as_node`` are
  evaluated, and the state is exactly the one edited (``exact_values``: a reducer channel is
  overwritten; what the edit left alone is the stored objects); prints ``forked THREAD@NEW_ID``.
* ``resume`` — ``graph.stream(None, config)`` from the checkpoint (LangGraph forks first when
  it is not the head).
* ``answer`` — ``graph.stream(Command(resume=value), config)`` answers a pending interrupt.
* ``channels`` — no store, thread or checkpoint: prints ``channels JSON``, each channel's kind
  (``LastValue`` → ``last``, ``BinaryOperatorAggregate`` → ``reducer`` with its operator:
  ``add``, ``or``, ``messages`` or ``custom`` and the operator's name, ``Topic``,
  ``EphemeralValue``, barriers, …) and its empty value (what ``get()`` of a fresh channel gives,
  in display form) for the graph and every subgraph (``get_subgraphs(recurse=True)``), the
  output channels ``get_state`` shows, and the project files the graph imported (the inspector
  caches the answer until one of them changes).
* ``combine`` — no store, thread or checkpoint: ``--ops-json`` (``-``: read from stdin) is
  ``{"graph": KEY, "channels": {NAME: {"stored": bool, "value": V, "writes": [W, …]}}}``, the
  stored value and the ordered pending writes of channels with a custom reducer in the (sub)graph
  ``KEY`` (``""``: the graph, ``review|inner``: a subgraph), in display form. Each channel of the
  graph is rebuilt from the stored value (a fresh copy when none is stored), its ``update`` applies
  the graph's own reducer to the writes, and the result is printed as ``combined JSON``:
  ``{NAME: {"type": T, "data": BASE64}}`` — the graph's serializer's (type, bytes), decoded by
  the inspector as it decodes a stored value — or ``{NAME: {"error": TEXT}}``.
* ``batch`` — ``--ops-json`` (``-``: read from stdin) lists operations (``{"action":
  "fork"|"resume"|"answer", "thread", "checkpoint", "values", "as_node", "reason"}``) done in turn with the graph loaded once; each
  ends with ``op N ok`` or ``op N error: …`` and a failed one does not stop the rest (exit 1
  when any failed). What ``run_graph_ops`` in the inspector sends.

Edited values arrive in the inspector's display form and are rebuilt as their types first
(``revive``): ``{"__type__": "datetime.datetime", "value": …}`` → ``datetime``, likewise date,
time, timedelta, UUID, Decimal, ip addresses, ZoneInfo, bytes, numpy arrays; an Enum, a
dataclass or a pydantic model of a module the graph has imported → that class (nothing else is
imported for it). A fork is staged first (``StagingSaver``): ``update_state`` writes into
memory, the new state is read back through the graph (its schema validates it), and only then
is the checkpoint written — a fork that fails writes nothing.

Progress goes to stdout one line at a time; the last lines say where the thread stands
(``head …``, ``next …``, ``interrupt …`` or ``finished``). On error the exit code is 1 (2 for
bad arguments) with one line on stderr. ``--store`` is a SQLite path or a postgresql:// URL
(a password comes from ``PGPASSWORD``). Set ``LANGGRAPH_STRICT_MSGPACK=true`` (the inspector
does unless the store is marked trusted) so that loading the database cannot run code named
in it. This module imports nothing from the inspector.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import sqlite3
import sys
from typing import Any
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:   # annotations only: this module runs in the user's Python, with their langgraph
    from langchain_core.runnables import RunnableConfig

ACTIONS = ("fork", "resume", "answer", "channels", "batch", "combine")


def _line(text: str) -> None:
    print(text, flush=True)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=repr)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="graph_runner", description=__doc__.splitlines()[0])
    parser.add_argument("--store", default=None, help="SQLite path or postgresql:// URL (not for channels)")
    parser.add_argument("--graph", required=True, help="module:attr of the compiled graph (or a factory)")
    parser.add_argument("--thread", default=None, help="the thread (not for channels)")
    parser.add_argument("--checkpoint", default=None, help="checkpoint id (default: the thread's head)")
    parser.add_argument("--action", required=True, choices=ACTIONS)
    parser.add_argument("--values-json", default=None, help="fork: a JSON object; answer: any JSON value")
    parser.add_argument("--as-node", default=None, help="fork: the node the update is applied as")
    parser.add_argument("--reason", default=None, help="fork: kept in the new checkpoint's metadata")
    parser.add_argument("--path", action="append", default=[], help="extra import directory")
    parser.add_argument("--ops-json", default=None,
                        help="batch: a JSON list of {action, thread, checkpoint, values, as_node, reason}; "
                        "combine: {graph, channels} ('-': read it from stdin)")
    args = parser.parse_args(argv)
    if args.action == "batch" and (not args.store or args.ops_json is None):
        parser.error("--store and --ops-json are needed for batch")
    if args.action == "combine" and args.ops_json is None:
        parser.error("--ops-json is needed for combine")
    if args.action not in ("channels", "batch", "combine") and (not args.store or not args.thread):
        parser.error(f"--store and --thread are needed for {args.action}")
    return args


def _import_path(cwd: str, extra: list[str]) -> None:
    """Import from the working directory first, never from this file's own directory."""
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    for path in reversed([cwd, *extra]):
        if path not in sys.path:
            sys.path.insert(0, path)


def load_graph(spec: str, checkpointer: Any) -> Any:
    """The compiled graph named ``module:attr``, bound to ``checkpointer``."""
    from langgraph.graph import StateGraph
    from langgraph.pregel import Pregel
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"the graph must be given as module:attr, not {spec!r}")
    obj: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    if not isinstance(obj, (StateGraph, Pregel)) and callable(obj):
        obj = obj()
    if isinstance(obj, StateGraph):
        return obj.compile(checkpointer=checkpointer)
    if isinstance(obj, Pregel):
        obj.checkpointer = checkpointer   # our own process: rebinding the user's object is fine
        return obj
    raise ValueError(f"{spec} is a {type(obj).__name__}, not a LangGraph graph")


@contextlib.contextmanager
def open_checkpointer(store: str) -> Iterator[Any]:
    """A SqliteSaver or PostgresSaver on the store."""
    if store.startswith(("postgresql://", "postgres://", "postgresql+psycopg://")):
        from langgraph.checkpoint.postgres import PostgresSaver
        conninfo = store.replace("postgresql+psycopg://", "postgresql://", 1)
        with PostgresSaver.from_conn_string(conninfo) as saver:
            yield saver
        return
    from langgraph.checkpoint.sqlite import SqliteSaver
    path = store[len("sqlite:///"):] if store.startswith("sqlite:///") else store
    if not os.path.exists(path):
        raise FileNotFoundError(f"no database at {path}")
    conn = sqlite3.connect(path, check_same_thread=False)
    try:
        yield SqliteSaver(conn)
    finally:
        conn.close()


# -- typed values back from the display form --------------------------------------------------------
_SCALARS = {
    "datetime.datetime": lambda v: __import__("datetime").datetime.fromisoformat(v),
    "datetime.date": lambda v: __import__("datetime").date.fromisoformat(v),
    "datetime.time": lambda v: __import__("datetime").time.fromisoformat(v),
    "datetime.timedelta": lambda v: _timedelta(v),
    "uuid.UUID": lambda v: __import__("uuid").UUID(v),
    "decimal.Decimal": lambda v: __import__("decimal").Decimal(v),
    "zoneinfo.ZoneInfo": lambda v: __import__("zoneinfo").ZoneInfo(v),
}


def _timedelta(text: str) -> Any:
    """``str(timedelta)`` back: ``"1 day, 0:00:30.000005"``, ``"-1 days, 23:59:59"``, ``"0:01:00"``."""
    import datetime as dt
    import re
    found = re.fullmatch(r"\s*(?:(-?\d+) days?, )?(\d+):(\d\d):(\d\d)(?:\.(\d{1,6}))?\s*", str(text))
    if not found:
        raise ValueError(f"{text!r} is not a timedelta (write it as '1 day, 0:00:30')")
    days, hours, minutes, seconds, micro = found.groups()
    return dt.timedelta(days=int(days or 0), hours=int(hours), minutes=int(minutes), seconds=int(seconds),
                        microseconds=int((micro or "0").ljust(6, "0")))


def _loaded_class(type_name: str) -> type | None:
    """The class ``module.Name`` if its module is already imported (by the graph); else None."""
    module, _, name = type_name.rpartition(".")
    mod = sys.modules.get(module)
    obj = getattr(mod, name, None) if mod is not None else None
    return obj if isinstance(obj, type) else None


def _key(key: Any) -> Any:
    """A revived map key: a list (a tuple key, as JSON carries it) as a tuple."""
    return tuple(map(_key, key)) if isinstance(key, list) else key


def revive(value: Any, messages: bool = False) -> Any:
    """A value in the inspector's display form rebuilt as the Python types it shows (``messages``:
    LangChain messages as their classes, for a reducer; else as dicts ``add_messages`` rebuilds)."""
    if isinstance(value, list):
        return [revive(v, messages) for v in value]
    if not isinstance(value, dict):
        return value
    if set(value) == {"__bytes__", "size"} and isinstance(value["__bytes__"], str):
        import base64
        return base64.b64decode(value["__bytes__"])
    kind = value.get("__type__")
    if not isinstance(kind, str):
        return {k: revive(v, messages) for k, v in value.items()}
    fields = {k: v for k, v in value.items() if k != "__type__"}
    if kind == "builtins.dict" and set(fields) == {"items"} and isinstance(fields["items"], list):
        return {_key(revive(k)): revive(v, messages) for k, v in fields["items"]}     # typed keys
    if kind.startswith("langchain_core.messages."):
        message = _loaded_class(kind) if messages else None
        rebuilt = {k: revive(v, messages) for k, v in fields.items()}
        return message(**rebuilt) if message is not None else rebuilt   # else add_messages rebuilds it
    if kind in ("builtins.set", "builtins.frozenset") and set(fields) == {"value"} \
            and isinstance(fields["value"], list):
        items = [revive(v) for v in fields["value"]]
        return set(items) if kind == "builtins.set" else frozenset(items)
    if kind in _SCALARS and set(fields) == {"value"}:
        return _SCALARS[kind](fields["value"])
    if kind.startswith("ipaddress.") and set(fields) == {"value"}:
        import ipaddress
        return getattr(ipaddress, kind.split(".", 1)[1])(fields["value"])
    if kind == "numpy.ndarray":
        if fields.get("truncated") or "values" not in fields:
            raise ValueError("a numpy array shown only in part cannot be edited back")
        import numpy
        return numpy.array(fields["values"], dtype=fields.get("dtype"), order=fields.get("order") or "C")
    cls = _loaded_class(kind)
    if cls is None:
        raise ValueError(f"cannot rebuild a {kind}: the graph did not import {kind.rpartition('.')[0]}")
    import dataclasses
    import enum
    if issubclass(cls, enum.Enum) and set(fields) == {"value"}:
        return cls(revive(fields["value"]))
    if dataclasses.is_dataclass(cls):
        return cls(**{k: revive(v) for k, v in fields.items()})
    if hasattr(cls, "model_validate"):
        return cls.model_validate({k: revive(v) for k, v in fields.items()})
    raise ValueError(f"cannot rebuild a {kind} from the edited value")


# -- a fork staged in memory first ------------------------------------------------------------------
def staging_saver(inner: Any) -> Any:
    """A saver that keeps ``put``/``put_writes`` in memory (reads see them) until ``commit``.

    The graph derives the saver it reads with (``with_allowlist``: the classes its state
    names, which strict msgpack lets through) from this one; that copy reads through the inner
    saver derived alike, and stages into the same lists."""
    import copy
    from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

    class StagingSaver(BaseCheckpointSaver):
        def __init__(self) -> None:
            super().__init__(serde=inner.serde)
            self.inner = inner
            self.puts: list[tuple] = []
            self.writes: list[tuple] = []
            self.staged: dict[tuple[str, str, str], CheckpointTuple] = {}

        def with_allowlist(self, extra_allowlist: Any) -> Any:
            derive = getattr(self.inner, "with_allowlist", None)
            if not callable(derive):
                return self
            clone = copy.copy(self)         # the same staged lists
            clone.inner = derive(extra_allowlist)
            clone.serde = clone.inner.serde
            return clone

        def get_next_version(self, current: Any, channel: Any) -> Any:
            return self.inner.get_next_version(current, channel)

        def get_tuple(self, config: RunnableConfig) -> Any:
            conf = config["configurable"]
            key = (conf["thread_id"], conf.get("checkpoint_ns", ""))
            wanted = conf.get("checkpoint_id")
            mine = [t for (th, ns, cid), t in self.staged.items()
                    if (th, ns) == key and (wanted is None or cid == wanted)]
            if mine:
                return max(mine, key=lambda t: t.config["configurable"]["checkpoint_id"])
            return self.inner.get_tuple(config)

        def list(self, config: Any, **kwargs: Any) -> Any:
            return self.inner.list(config, **kwargs)

        def put(self, config: RunnableConfig, checkpoint: Any, metadata: Any, new_versions: Any) -> RunnableConfig:
            conf = config["configurable"]
            ns = conf.get("checkpoint_ns", "")
            self.puts.append((config, checkpoint, metadata, new_versions))
            new: RunnableConfig = {"configurable": {"thread_id": conf["thread_id"], "checkpoint_ns": ns,
                                                    "checkpoint_id": checkpoint["id"]}}
            parent: RunnableConfig | None = ({"configurable": {"thread_id": conf["thread_id"], "checkpoint_ns": ns,
                                        "checkpoint_id": conf["checkpoint_id"]}}
                      if conf.get("checkpoint_id") else None)
            self.staged[(conf["thread_id"], ns, checkpoint["id"])] = CheckpointTuple(
                new, checkpoint, metadata, parent, [])
            return new

        def put_writes(self, config: RunnableConfig, writes: Any, task_id: str, task_path: str = "") -> None:
            self.writes.append((config, writes, task_id, task_path))

        def commit(self) -> None:
            for args in self.puts:
                inner.put(*args)
            for config, writes, task_id, task_path in self.writes:
                inner.put_writes(config, writes, task_id, task_path)

    return StagingSaver()


def _config(thread: str, checkpoint: str | None, reason: str | None = None) -> dict:
    conf: dict[str, Any] = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
    if checkpoint:
        conf["configurable"]["checkpoint_id"] = checkpoint
    if reason:
        conf["metadata"] = {"fork_reason": reason, "forked_by": "checkpoint-inspector"}
    return conf


def _describe_chunk(chunk: Any) -> str:
    namespace, update = chunk if isinstance(chunk, tuple) and len(chunk) == 2 else ((), chunk)
    where = "/".join(part.split(":")[0] for part in namespace)
    lines = []
    for node, value in (update.items() if isinstance(update, dict) else [("?", update)]):
        name = f"{where}/{node}" if where else str(node)
        if node == "__interrupt__":
            values = [getattr(i, "value", i) for i in (value or ())]
            lines.append(f"interrupt raised: {_json(values)}")
        else:
            keys = ", ".join(sorted(value)) if isinstance(value, dict) else "-"
            lines.append(f"node {name}: wrote {keys}")
    return "\n".join(lines)


def report(graph: Any, thread: str) -> None:
    """Where the thread stands now: head, next nodes, pending interrupts."""
    state = graph.get_state(_config(thread, None))
    _line(f"head {thread}@{state.config['configurable']['checkpoint_id']}")
    interrupts = [i for t in state.tasks for i in t.interrupts]
    if interrupts:
        for found in interrupts:       # with its id: several are answered by id
            ident = getattr(found, "id", None)
            _line(f"interrupt {_json(found.value)}" + (f" (id {ident})" if ident and len(interrupts) > 1 else ""))
    elif state.next:
        _line(f"next {', '.join(state.next)}")
    else:
        _line("finished")


# -- the graph's channels -----------------------------------------------------------------------
_KINDS = {"LastValue": "last", "LastValueAfterFinish": "last", "AnyValue": "last",
          "BinaryOperatorAggregate": "reducer", "DeltaChannel": "reducer", "Topic": "topic",
          "EphemeralValue": "ephemeral", "UntrackedValue": "untracked", "NamedBarrierValue": "barrier",
          "NamedBarrierValueAfterFinish": "barrier", "DynamicBarrierValue": "barrier"}
_OPERATORS = {("_operator", "add"): "add", ("operator", "add"): "add", ("_operator", "iadd"): "add",
              ("_operator", "concat"): "add", ("_operator", "or_"): "or", ("operator", "or_"): "or",
              ("_operator", "ior"): "or"}


def _plain(value: Any, depth: int = 0) -> tuple[bool, Any]:
    """(representable, the value in the inspector's display form) for a channel's empty value."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return True, value
    if depth > 4:
        return False, None
    if isinstance(value, (set, frozenset)) and not value:
        return True, {"__type__": f"builtins.{type(value).__name__}", "value": []}
    if isinstance(value, (list, tuple)):
        items = [_plain(v, depth + 1) for v in value]
        return all(ok for ok, _ in items), [v for _, v in items]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        pairs = {k: _plain(v, depth + 1) for k, v in value.items()}
        return all(ok for ok, _ in pairs.values()), {k: v for k, (_, v) in pairs.items()}
    return False, None


def _operator(fn: Any) -> tuple[str, str]:
    """(add | or | messages | custom, the operator's dotted name)."""
    module = str(getattr(fn, "__module__", "") or "")
    qualname = str(getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__)
    if (module, qualname) in _OPERATORS:
        return _OPERATORS[(module, qualname)], f"operator.{qualname}"
    if module == "langgraph.graph.message" and "add_messages" in qualname:
        return "messages", "langgraph.graph.message.add_messages"
    return "custom", f"{module}.{qualname}" if module else qualname


def describe_channel(channel: Any) -> dict:
    """One channel's kind, operator and empty value (see the module docstring)."""
    cls = type(channel).__name__
    out: dict[str, Any] = {"kind": _KINDS.get(cls, "other"), "class": cls}
    if out["kind"] == "reducer" and callable(getattr(channel, "operator", None)):
        out["operator"], out["operator_name"] = _operator(channel.operator)
    if cls == "Topic":
        out["accumulate"] = bool(getattr(channel, "accumulate", False))
    try:
        empty = channel.copy().get()
    except Exception:  # EmptyChannelError: get_state leaves the channel out until it is written
        return out
    ok, plain = _plain(empty)
    if ok:
        out["empty"] = plain
    else:
        out["empty_unshown"] = type(empty).__name__
    return out


def _graph_channels(graph: Any) -> dict:
    from langgraph.channels.base import BaseChannel
    channels = {str(name): describe_channel(ch) for name, ch in graph.channels.items()
                if isinstance(ch, BaseChannel)}
    stream = graph.stream_channels_asis
    return {"channels": channels, "output": [stream] if isinstance(stream, str) else [str(c) for c in stream]}


def _project_files(roots: list[str]) -> dict[str, int]:
    """The files of imported modules under the working directory or --path (not installed
    packages): their modification times say when the graph changed."""
    import sysconfig
    installed = {os.path.realpath(p) for p in (sysconfig.get_paths().get("purelib"),
                                               sysconfig.get_paths().get("platlib")) if p}
    bases = [os.path.realpath(r) for r in roots]
    me = os.path.realpath(__file__)
    found: dict[str, int] = {}
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if not isinstance(path, str):
            continue
        real = os.path.realpath(path)
        if real == me or any(real.startswith(i + os.sep) for i in installed) or "site-packages" in real:
            continue
        if any(real.startswith(b + os.sep) for b in bases) and len(found) < 500:
            with contextlib.suppress(OSError):
                found[real] = os.stat(real).st_mtime_ns
    return found


def channels_report(graph: Any, spec: str, roots: list[str]) -> dict:
    """The ``channels`` action's answer for the compiled graph ``spec`` names."""
    graphs = {"": _graph_channels(graph)}
    for name, sub in graph.get_subgraphs(recurse=True):
        graphs.setdefault(str(name), _graph_channels(sub))
    files = _project_files(roots)
    own = getattr(sys.modules.get(spec.partition(":")[0]), "__file__", None)
    if isinstance(own, str) and os.path.exists(own):     # the graph's module, even when installed
        files.setdefault(os.path.realpath(own), os.stat(own).st_mtime_ns)
    return {"graphs": graphs, "files": files}


def _subgraph(graph: Any, key: str) -> Any:
    """The (sub)graph a channels-report key names (``""``: the graph itself)."""
    if not key:
        return graph
    for name, sub in graph.get_subgraphs(recurse=True):
        if str(name) == key:
            return sub
    raise ValueError(f"the graph has no subgraph {key!r}")


def combine_writes(graph: Any, request: Any) -> dict:
    """The ``combine`` action's answer (see the module docstring) for a loaded graph."""
    import base64
    if not isinstance(request, dict) or not isinstance(request.get("channels"), dict):
        raise ValueError("--ops-json must be an object with the channels to combine")
    target = _subgraph(graph, str(request.get("graph") or ""))
    serde = _serializer(graph)
    out: dict[str, dict] = {}
    for name, entry in request["channels"].items():
        try:
            channel = target.channels.get(name)
            if channel is None or not callable(getattr(channel, "operator", None)):
                raise ValueError(f"{name} is not a reducer channel of the graph")
            if not isinstance(entry, dict) or not isinstance(entry.get("writes"), list):
                raise ValueError("a channel needs its writes")
            fresh = channel.from_checkpoint(revive(entry.get("value"), True)) if entry.get("stored") \
                else channel.copy()
            fresh.update([revive(w, True) for w in entry["writes"]])
            kind, data = serde.dumps_typed(fresh.get())
            out[str(name)] = {"type": kind, "data": base64.b64encode(data).decode("ascii")}
        except Exception as err:  # the user's reducer may raise anything; the other channels still combine
            out[str(name)] = {"error": f"{type(err).__name__}: {' '.join(str(err).split()) or type(err).__name__}"}
    return out


def _serializer(graph: Any) -> Any:
    """The serializer the graph's checkpointer would store the value with."""
    saver = getattr(graph, "checkpointer", None)
    serde = getattr(saver, "serde", None)
    if serde is not None and callable(getattr(serde, "dumps_typed", None)):
        return serde
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
    return JsonPlusSerializer()


def _entrypoint_values(graph: Any, saver: Any, config: dict, values: dict) -> Any:
    """``update_state``'s values for a functional-API entrypoint (a graph with a ``__previous__``
    channel): its edited return value and saved value (``__end__``, ``__previous__``) as one
    ``entrypoint.final``, the one not edited as stored — given as a map, the entrypoint would
    write the map itself to both. Other graphs' values as they are."""
    if "__previous__" not in (getattr(graph, "channels", None) or {}):
        return values
    other = sorted(set(values) - {"__end__", "__previous__"})
    if other:
        raise ValueError(f"an entrypoint's state is its return value (__end__) and what it saved "
                         f"(__previous__); {other[0]!r} is not a channel of it")
    from langgraph.func import entrypoint
    found = saver.get_tuple(config)
    stored = (found.checkpoint.get("channel_values") or {}) if found is not None else {}
    return entrypoint.final(value=values.get("__end__", stored.get("__end__")),
                            save=values.get("__previous__", stored.get("__previous__")))


def exact_values(graph: Any, config: dict, values: dict) -> dict:
    """A fork's edited channels as ``update_state`` must get them for the new state to be
    exactly the one edited (what the inspector showed before the fork): a channel with a
    reducer (``add_messages``, ``operator.add``, a custom one) is overwritten
    (``langgraph.types.Overwrite``) rather than given to its reducer, which would append the
    edited list to the old one; the items and values the edit left as they were are the very
    objects the checkpoint holds (rebuilt ones may differ in fields a class fills in itself)."""
    snapshot = graph.get_state(config)       # read as the graph reads (its classes allowed)
    stored = snapshot.values if isinstance(snapshot.values, dict) else {}
    channels = getattr(graph, "channels", None) or {}
    try:
        from langgraph.types import Overwrite
        overwrite: Any = Overwrite
    except ImportError:          # an older langgraph: its reducers get the values, as before
        overwrite = None
    out = {}
    for name, value in values.items():
        if name in stored:
            value = _originals(value, stored[name])
        channel = channels.get(name)
        if overwrite is not None and callable(getattr(channel, "operator", None)) and name in stored:
            value = overwrite(value)
        out[name] = value
    return out


def _originals(new: Any, old: Any) -> Any:
    """``new`` with each list item, and the whole, that equals the stored one (same class,
    ``==``) replaced by the stored object itself."""
    if type(new) is type(old) and _same(new, old):
        return old
    if isinstance(new, list) and isinstance(old, list):
        return [old[i] if i < len(old) and type(n) is type(old[i]) and _same(n, old[i]) else n
                for i, n in enumerate(new)]
    return new


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:  # a user's __eq__ may raise (numpy arrays: ambiguous truth): not the same
        return False


def act(graph: Any, saver: Any, action: str, thread: str, checkpoint: str | None, values: Any,
        as_node: str | None = None, reason: str | None = None) -> None:
    """One fork, resume or answer on a loaded graph (``values`` still in display form)."""
    if action == "fork" and not isinstance(values, dict):
        raise ValueError("--values-json must be a JSON object of channel values for a fork")
    if action == "fork":
        config = _config(thread, checkpoint)
        values = exact_values(graph, config, revive(values, True))
        values = _entrypoint_values(graph, saver, config, values)
        staging = staging_saver(saver)
        graph.checkpointer = staging
        try:
            new = graph.update_state(_config(thread, checkpoint, reason), values, as_node=as_node)
            graph.get_state(new)              # the graph's schema reads the staged state back
        finally:
            graph.checkpointer = saver
        staging.commit()
        _line(f"forked {thread}@{new['configurable']['checkpoint_id']}")
    else:
        from langgraph.types import Command
        payload: Command | None = Command(resume=values) if action == "answer" else None
        for chunk in graph.stream(payload, _config(thread, checkpoint), stream_mode="updates", subgraphs=True):
            _line(_describe_chunk(chunk))
    report(graph, thread)


def run_batch(graph: Any, saver: Any, ops: Any) -> int:
    """``--action batch``: each operation in turn on the one loaded graph; every operation ends
    with ``op N ok`` or ``op N error: TYPE: TEXT`` (a failed one does not stop the others)."""
    if not isinstance(ops, list) or not all(isinstance(op, dict) for op in ops):
        raise ValueError("--ops-json must be a JSON list of operations")
    failed = 0
    for n, op in enumerate(ops):
        _line(f"op {n} {op.get('action')} {op.get('thread')}")
        try:
            if op.get("action") not in ("fork", "resume", "answer") or not isinstance(op.get("thread"), str):
                raise ValueError("an operation needs an action (fork, resume or answer) and a thread")
            act(graph, saver, op["action"], op["thread"], op.get("checkpoint"), op.get("values"),
                op.get("as_node"), op.get("reason"))
        except Exception as err:  # the user's graph may raise anything; the next operation still runs
            failed += 1
            _line(f"op {n} error: {type(err).__name__}: {' '.join(str(err).split()) or type(err).__name__}")
        else:
            _line(f"op {n} ok")
    return 1 if failed else 0


def run(args: argparse.Namespace) -> int:
    """Do the action; raises on failure (``main`` turns that into one line)."""
    strict = os.environ.get("LANGGRAPH_STRICT_MSGPACK", "").strip().lower() in ("1", "true", "yes")
    mode = "on" if strict else "off"
    where = f"on thread {args.thread} " if args.thread else ""
    _line(f"graph {args.graph} {where}({args.action}; strict msgpack {mode})")
    _import_path(os.getcwd(), args.path)
    if args.action == "channels":
        graph = load_graph(args.graph, None)
        _line("channels " + _json(channels_report(graph, args.graph, [os.getcwd(), *args.path])))
        return 0
    if args.action == "combine":
        request = _ops(args.ops_json)
        graph = load_graph(args.graph, None)
        _line("combined " + _json(combine_writes(graph, request)))
        return 0
    values = json.loads(args.values_json) if args.values_json is not None else None
    if args.action == "fork" and not isinstance(values, dict):     # before the graph is imported
        raise ValueError("--values-json must be a JSON object of channel values for a fork")
    ops = _ops(args.ops_json) if args.action == "batch" else None
    with open_checkpointer(args.store) as saver:
        graph = load_graph(args.graph, saver)
        if args.action == "batch":
            return run_batch(graph, saver, ops)
        act(graph, saver, args.action, args.thread, args.checkpoint, values, args.as_node, args.reason)
    return 0


def _ops(text: str) -> Any:
    """The ``--ops-json`` payload: read from stdin when it is ``-`` (no size limit of an argument)."""
    return json.loads(sys.stdin.read() if text == "-" else text)


def main(argv: list[str] | None = None) -> int:
    """Entry point: exit 0 on success, 1 with one line on stderr on error."""
    args = parse_args(argv)
    try:
        return run(args)
    except Exception as err:  # the user's graph may raise anything
        text = " ".join(str(err).split()) or type(err).__name__
        print(f"error: {type(err).__name__}: {text}", file=sys.stderr, flush=True)
        return 1


if __name__ == "__main__":
    sys.exit(main())
