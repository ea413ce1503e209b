"""Run the user's LangGraph graph on a checkpoint database: fork (update_state), resume, answer.

Started by the inspector as a subprocess in the user's environment — never imported by the
inspector process itself, because importing the graph runs the user's code::

    python …/inspector/store/langgraph/graph_runner.py --store DB --graph module:attr \\
        --thread T [--checkpoint ID] --action fork|resume|answer [--values-json JSON] \\
        [--as-node NODE] [--reason TEXT]

(``python -m inspector.store.langgraph.graph_runner`` works too; the inspector runs it by
path, which needs only langgraph in the interpreter and skips importing our package.)

* ``fork``   — ``graph.update_state(config, values, as_node)``: reducers apply and the edges
  after ``as_node`` are evaluated; prints ``forked THREAD@NEW_ID``.
* ``resume`` — ``graph.stream(None, config)`` from the checkpoint (LangGraph forks first when
  it is not the head).
* ``answer`` — ``graph.stream(Command(resume=value), config)`` answers a pending interrupt.

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

ACTIONS = ("fork", "resume", "answer")


def _line(text: str) -> None:
    print(text, flush=True)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=repr)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="graph_runner", description=__doc__.splitlines()[0])
    parser.add_argument("--store", required=True, help="SQLite path or postgresql:// URL")
    parser.add_argument("--graph", required=True, help="module:attr of the compiled graph (or a factory)")
    parser.add_argument("--thread", required=True)
    parser.add_argument("--checkpoint", default=None, help="checkpoint id (default: the thread's head)")
    parser.add_argument("--action", required=True, choices=ACTIONS)
    parser.add_argument("--values-json", default=None, help="fork: a JSON object; answer: any JSON value")
    parser.add_argument("--as-node", default=None, help="fork: the node the update is applied as")
    parser.add_argument("--reason", default=None, help="fork: kept in the new checkpoint's metadata")
    parser.add_argument("--path", action="append", default=[], help="extra import directory")
    return parser.parse_args(argv)


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
    interrupts = [i.value for t in state.tasks for i in t.interrupts]
    if interrupts:
        for value in interrupts:
            _line(f"interrupt {_json(value)}")
    elif state.next:
        _line(f"next {', '.join(state.next)}")
    else:
        _line("finished")


def run(args: argparse.Namespace) -> int:
    """Do the action; raises on failure (``main`` turns that into one line)."""
    strict = os.environ.get("LANGGRAPH_STRICT_MSGPACK", "").strip().lower() in ("1", "true", "yes")
    mode = "on" if strict else "off"
    _line(f"graph {args.graph} on thread {args.thread} ({args.action}; strict msgpack {mode})")
    _import_path(os.getcwd(), args.path)
    values = json.loads(args.values_json) if args.values_json is not None else None
    if args.action == "fork" and not isinstance(values, dict):
        raise ValueError("--values-json must be a JSON object of channel values for a fork")
    with open_checkpointer(args.store) as saver:
        graph = load_graph(args.graph, saver)
        config = _config(args.thread, args.checkpoint)
        if args.action == "fork":
            new = graph.update_state(_config(args.thread, args.checkpoint, args.reason), values,
                                     as_node=args.as_node)
            _line(f"forked {args.thread}@{new['configurable']['checkpoint_id']}")
        else:
            from langgraph.types import Command
            payload = Command(resume=values) if args.action == "answer" else None
            for chunk in graph.stream(payload, config, stream_mode="updates", subgraphs=True):
                _line(_describe_chunk(chunk))
        report(graph, args.thread)
    return 0


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
