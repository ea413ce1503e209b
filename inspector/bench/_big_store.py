"""Stores with big legitimate states (``bench big`` and the GUI's big-state test).

Three stores, each with two checkpoints whose second changes a few items of the first:

* ``langgraph``: a real LangGraph ``StateGraph`` run by ``graph.invoke`` with the real
  ``SqliteSaver``: a 3,000,000-item list and a 1,000,000-key map (node ``build``), then a
  node ``tweak`` that changes three items and one key and adds a key;
* ``native``: the same two states recorded by ``Checkpointer``;
* ``string``: a 200 MB string (base64 text) recorded by ``Checkpointer``, then the same
  string with its last 1,000 characters replaced.

The sizes can be scaled down (``scale``) for quick runs. Stores are cached in the temp
directory by their parameters.
"""

from __future__ import annotations

import base64
import os
import random
import sqlite3
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspector.errors import StoreError

GENERATOR_VERSION = 1
LIST_ITEMS = 3_000_000
MAP_KEYS = 1_000_000
STRING_CHARS = 200_000_000
TAIL = 1_000


@dataclass(frozen=True)
class BigCase:
    """One generated store and the checkpoints that are compared (old ``a``, new ``b``)."""

    name: str
    store: Path
    a: str
    b: str
    what: str


def _two_states(items: int, keys: int) -> tuple[dict[str, Any], dict[str, Any]]:
    first: dict[str, Any] = {"items": list(range(items)), "index": {f"k{i:07d}": i for i in range(keys)}, "step": 1}
    second: dict[str, Any] = {"items": list(first["items"]), "index": dict(first["index"]), "step": 2}
    for i in (5, items // 2, items - 1):
        second["items"][i] = -second["items"][i]
    second["index"]["k0000007"] = "changed"
    second["index"]["new-key"] = 1
    return first, second


def _langgraph(path: Path, items: int, keys: int) -> None:
    try:
        from typing import TypedDict

        from langgraph.checkpoint.sqlite import SqliteSaver
        from langgraph.graph import END, START, StateGraph
    except ImportError as err:
        raise StoreError(f"bench big needs langgraph installed ({err.name} is missing).") from err
    first, second = _two_states(items, keys)
    State = TypedDict("State", {"items": list, "index": dict, "step": int}, total=False)  # noqa: UP013

    def build(state: Any) -> Any:
        """The big state."""
        return first

    def tweak(state: Any) -> Any:
        """A few items changed."""
        return second

    graph = StateGraph(State)
    graph.add_node("build", build)
    graph.add_node("tweak", tweak)
    graph.add_edge(START, "build")
    graph.add_edge("build", "tweak")
    graph.add_edge("tweak", END)
    conn = sqlite3.connect(path, check_same_thread=False)
    try:
        graph.compile(checkpointer=SqliteSaver(conn)).invoke({"step": 0}, {"configurable": {"thread_id": "big"}})
    finally:
        conn.close()


def _native(path: Path, states: list[Any]) -> None:
    from inspector.record import Checkpointer

    with Checkpointer(path, name="big", agent="bench-big") as recorder:
        for state in states:
            recorder.save(state, force=True)


def _text(chars: int) -> str:
    rnd = random.Random(13)
    return base64.b64encode(rnd.randbytes(chars * 3 // 4)).decode("ascii")


def cache_dir() -> Path:
    """Where the generated stores are kept."""
    return Path(tempfile.gettempdir()) / "checkpoint-inspector-bench"


def build(scale: float = 1.0, folder: Path | None = None, log: Any = print) -> list[BigCase]:
    """The three stores at ``scale`` (1.0: the sizes of the module docstring), built once."""
    items, keys = max(10, int(LIST_ITEMS * scale)), max(10, int(MAP_KEYS * scale))
    chars = max(10_000, int(STRING_CHARS * scale))
    folder = folder or cache_dir() / f"big-v{GENERATOR_VERSION}-{scale:g}"
    folder.mkdir(parents=True, exist_ok=True)
    made = {"langgraph": folder / "langgraph.sqlite", "native": folder / "native.db", "string": folder / "string.db"}
    for name, path in made.items():
        if path.exists():
            continue
        log(f"generating the {name} store at {path} (cached for next time) …")
        tmp = path.with_name(f"{path.stem}.{os.getpid()}.tmp{path.suffix}")
        if name == "langgraph":
            _langgraph(tmp, items, keys)
        elif name == "native":
            _native(tmp, list(_two_states(items, keys)))
        else:
            text = _text(chars)
            _native(tmp, [{"text": text}, {"text": text[:-TAIL] + "the changed tail. " * (TAIL // 18)}])
        for suffix in ("-wal", "-shm"):
            Path(f"{tmp}{suffix}").unlink(missing_ok=True)
        os.replace(tmp, path)
    return [
        BigCase("langgraph", made["langgraph"], "big:2", "big:3",
                f"LangGraph (SqliteSaver): {items:,}-item list + {keys:,}-key map"),
        BigCase("native", made["native"], f"{_run(made['native'])}:0", f"{_run(made['native'])}:1",
                f"native: {items:,}-item list + {keys:,}-key map"),
        BigCase("string", made["string"], f"{_run(made['string'])}:0", f"{_run(made['string'])}:1",
                f"native: a {chars / 1e6:,.0f} MB string"),
    ]


def _run(path: Path) -> str:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return str(conn.execute("SELECT id FROM ci_runs LIMIT 1").fetchone()[0])
    finally:
        conn.close()
