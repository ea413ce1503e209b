"""Channel kinds of a store's LangGraph graph, asked of the graph in its runner and cached.

The graph is the user's code, so it is imported only in the runner subprocess
(``graph_runner --action channels``), with the store's settings (Python, working directory);
never in this process. The answer (``channels.GraphChannels``) is cached in the user cache
directory per (store, graph, Python, working directory) together with the modification times
of the project files the graph imported: an edit to any of them asks the graph again.

``attach(store)`` gives an open LangGraph store its graph's channel kinds when a graph is set
(else it keeps inferring them) and returns a sentence when the graph could not say (the store
then infers, and its snapshots carry that sentence).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from inspector import paths
from inspector.errors import StoreError
from inspector.store.base import Store
from inspector.store.langgraph.channels import GraphChannels, parse_line, parse_report
from inspector.store.langgraph.settings import GraphSettings, load_settings, store_key

CACHE_FILE = "graph-channels.json"
MAX_ENTRIES = 200


def _cache_key(url: str, settings: GraphSettings) -> str:
    return json.dumps([store_key(url), settings.graph, settings.python, settings.cwd])


def _read_cache() -> dict[str, Any]:
    try:
        data = json.loads((paths.cache_dir() / CACHE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _fresh(entry: Any) -> bool:
    """A cache entry whose project files all still have the recorded modification times."""
    files = entry.get("files") if isinstance(entry, dict) else None
    if not isinstance(files, dict) or not files:
        return False
    try:
        return all(os.stat(path).st_mtime_ns == mtime for path, mtime in files.items())
    except (OSError, TypeError, ValueError):
        return False


def _write_cache(key: str, report: dict) -> None:
    data = _read_cache()
    data.pop(key, None)
    while len(data) >= MAX_ENTRIES:
        data.pop(next(iter(data)))
    data[key] = report
    folder = paths.cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".graph-channels.")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh)
        os.replace(tmp, folder / CACHE_FILE)
    except OSError:
        pass        # a cache that cannot be written only costs the next run of the graph


def ask_graph(settings: GraphSettings, timeout: float = 120.0) -> tuple[GraphChannels, dict]:
    """Run the graph's runner with ``--action channels``: (the kinds, the raw report)."""
    if not settings.graph:
        raise StoreError("No LangGraph graph is set for this store.")
    # the runner's modules (SQLAlchemy with them) only when a graph is really asked: a read
    # command on a store with no graph set stays lean
    from inspector.resume.langgraph import RUNNER_FILE, run_runner

    argv = [settings.python or sys.executable, str(RUNNER_FILE), "--graph", settings.graph,
            "--action", "channels"]
    done = run_runner(argv, settings, None, f"The graph {settings.graph} (reporting its channels)", timeout)
    line = next((ln for ln in done.stdout.splitlines() if ln.startswith("channels ")), None)
    if done.returncode != 0 or line is None:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise StoreError(f"The graph {settings.graph} could not be loaded: {last.removeprefix('error: ')}")
    try:
        channels = parse_line(settings.graph, line)
        report = json.loads(line.removeprefix("channels "))
    except ValueError as err:
        raise StoreError(f"The graph {settings.graph} reported its channels in a form this version "
                         f"does not read ({err}).") from err
    return channels, report


def graph_channels(url: str, settings: GraphSettings) -> GraphChannels:
    """The channel kinds of the store's graph: from the cache while the graph's files are
    unchanged, else asked of the graph (StoreError says why it could not answer)."""
    assert settings.graph
    key = _cache_key(url, settings)
    entry = _read_cache().get(key)
    if _fresh(entry):
        try:
            return parse_report(settings.graph, entry)
        except ValueError:
            pass
    channels, report = ask_graph(settings)
    _write_cache(key, report)
    return channels


def attach(store: Store) -> str | None:
    """Give a LangGraph store its graph's channel kinds (see the module docstring); returns
    why they are inferred instead, or None. Other stores are left alone."""
    use = getattr(store, "use_graph_channels", None)
    if not callable(use):
        return None
    try:
        settings = load_settings(store.info.url)
    except StoreError as err:
        use(None, str(err))
        return str(err)
    if not getattr(store, "graph", None) and not settings.graph:
        use(None)
        return None
    settings = settings.merged(graph=getattr(store, "graph", None))
    try:
        use(graph_channels(store.info.url, settings))
    except StoreError as err:
        use(None, str(err).rstrip("."))
        return str(err)
    return None


def cached_path() -> Path:
    """Where the cache lives (shown to the user)."""
    return paths.cache_dir() / CACHE_FILE
