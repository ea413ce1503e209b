"""Per-store settings of the code the inspector runs for a store (like ``langgraph.json``): a
LangGraph store's graph, trust and task channel; the Python and folder of a framework's runner.

Kept in one JSON file in the user's config directory, keyed by the store's resolved path
(SQLite) or URL without password (PostgreSQL)::

    ~/.config/checkpoint-inspector/store-settings.json
    {"/home/me/agent/checkpoints.db": {"graph": "agent.graph:app", "trusted": false,
                                      "task_channel": "todos", "python": null, "cwd": "/home/me/agent"}}

``CHECKPOINT_INSPECTOR_CONFIG_DIR`` (then ``XDG_CONFIG_HOME``) moves the directory. Nothing
in a store can change these settings; only the user does (CLI options, the GUI).
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspector import paths
from inspector.errors import StoreError
from inspector.store.target import path_target, plain_sqlite_url
from inspector.taskstate import DEFAULT_TASK_CHANNEL

FILE_NAME = "store-settings.json"
OLD_FILE_NAME = "langgraph-stores.json"     # its name before it kept framework stores' too: still read


@dataclass(frozen=True)
class GraphSettings:
    """How to run a store's graph.

    ``graph`` is ``module:attr`` of the compiled graph (or of a StateGraph / a factory);
    ``trusted`` lets LangGraph revive any type named in the database (otherwise the runner
    sets ``LANGGRAPH_STRICT_MSGPACK=true``); ``python`` is the interpreter of the user's
    environment (default: this one); ``cwd`` is where ``module`` is importable from.
    """

    graph: str | None = None
    trusted: bool = False
    task_channel: str = DEFAULT_TASK_CHANNEL
    python: str | None = None
    cwd: str | None = None

    def merged(self, **overrides: Any) -> GraphSettings:
        """These settings with the given non-None values replaced."""
        return dataclasses.replace(self, **{k: v for k, v in overrides.items() if v is not None})


def config_dir() -> Path:
    """The user's config directory for Checkpoint Inspector."""
    return paths.config_dir()


def store_key(url_or_path: str) -> str:
    """The key of a store: its resolved path, or its URL without password."""
    if "://" not in url_or_path:
        target = path_target(url_or_path)
    else:
        found = plain_sqlite_url(url_or_path)   # a store's own URL: no URL parser (SQLAlchemy) needed
        if found is None:
            from inspector.store.engine import parse_target
            found = parse_target(url_or_path)
        target = found
    if target.path is not None:
        return str(target.path)
    return target.display


def _read_all() -> dict[str, Any]:
    path = config_dir() / FILE_NAME
    if not path.exists() and (config_dir() / OLD_FILE_NAME).exists():
        path = config_dir() / OLD_FILE_NAME
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as err:
        raise StoreError(f"Cannot read the store settings in {path}: {err}.") from err
    return data if isinstance(data, dict) else {}


def check_graph_spec(spec: str) -> str:
    """``module:attr`` with a dotted module name, else a StoreError."""
    module, sep, attr = spec.strip().partition(":")
    parts = module.split(".") + attr.split(".")
    if not sep or not all(p.isidentifier() for p in parts):
        raise StoreError(f"The graph must be given as module:attr (like langgraph.json), not {spec!r}.")
    return spec.strip()


def load_settings(url_or_path: str) -> GraphSettings:
    """The settings of one store (defaults when none were saved)."""
    raw = _read_all().get(store_key(url_or_path))
    if not isinstance(raw, dict):
        return GraphSettings()
    known = {f.name for f in dataclasses.fields(GraphSettings)}
    values = {k: v for k, v in raw.items() if k in known}
    try:
        settings = GraphSettings(**values)
    except TypeError:
        return GraphSettings()
    return dataclasses.replace(settings, trusted=settings.trusted is True)


def save_settings(url_or_path: str, settings: GraphSettings) -> Path:
    """Store one store's settings (atomically replacing the file); returns the file path."""
    if settings.graph:
        check_graph_spec(settings.graph)
    data = _read_all()
    data[store_key(url_or_path)] = dataclasses.asdict(settings)
    folder = config_dir()
    path = folder / FILE_NAME
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".store-settings.")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2, sort_keys=True)
        os.replace(tmp, path)
    except OSError as err:
        raise StoreError(f"Cannot save the store settings in {path}: {err.strerror or err}.") from err
    return path
