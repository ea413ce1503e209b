"""Channel kinds of a store's LangGraph graph, asked of the graph in its runner and cached.

The graph is the user's code, so it is imported only in the runner subprocess
(``graph_runner --action channels``), with the store's settings (Python, working directory);
never in this process. The answer (``channels.GraphChannels``) is cached in the user cache
directory per (store, graph, Python, working directory) together with the modification times
of the project files the graph imported: an edit to any of them asks the graph again.

``attach(store)`` gives an open LangGraph store its graph's channel kinds when a graph is set
(else it keeps inferring them) and returns a sentence when the graph could not say (the store
then infers, and its snapshots carry that sentence). With them it gives the store a
``GraphCombiner``: the live head's pending writes to a channel with a custom reducer are
combined by the graph's own reducer in the runner (``graph_runner --action combine``), as
``get_state`` combines them; answers are kept in memory per (store, thread, namespace,
checkpoint, the writes, the graph files' modification times).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sys
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from inspector import paths
from inspector.errors import StoreError
from inspector.store.base import Store
from inspector.store.langgraph.channels import CustomWrites, GraphChannels, parse_line, parse_report
from inspector.store.langgraph.decode import decode_plain
from inspector.store.langgraph.edit import runner_form
from inspector.store.langgraph.settings import GraphSettings, load_settings, store_key

CACHE_FILE = "graph-channels.json"
MAX_ENTRIES = 200
MAX_COMBINED_CHARS = 64_000_000     # the runner's answer for one head; a larger one is refused
COMBINE_TIMEOUT = 120.0


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


def _runner_answer(settings: GraphSettings, action: list[str], prefix: str, doing: str, failed: str,
                   timeout: float, stdin_text: str | None = None) -> str:
    """Run the graph's runner with ``action`` and return its ``prefix`` line without the prefix
    (StoreError: the runner failed or printed no such line, saying ``failed`` and why)."""
    # the runner's modules (SQLAlchemy with them) only when a graph is really asked: a read
    # command on a store with no graph set stays lean
    from inspector.resume.langgraph import RUNNER_FILE, run_runner

    graph = settings.graph
    assert graph
    argv = [settings.python or sys.executable, str(RUNNER_FILE), "--graph", graph, *action]
    done = run_runner(argv, settings, None, f"The graph {graph} ({doing})", timeout, stdin_text=stdin_text)
    line = next((ln for ln in done.stdout.splitlines() if ln.startswith(prefix)), None)
    if done.returncode != 0 or line is None:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise StoreError(f"The graph {graph} {failed}: {last.removeprefix('error: ')}")
    return line.removeprefix(prefix)


def ask_graph(settings: GraphSettings, timeout: float = 120.0) -> tuple[GraphChannels, dict]:
    """Run the graph's runner with ``--action channels``: (the kinds, the raw report)."""
    if not settings.graph:
        raise StoreError("No LangGraph graph is set for this store.")
    text = _runner_answer(settings, ["--action", "channels"], "channels ", "reporting its channels",
                          "could not be loaded", timeout)
    try:
        channels, report = parse_line(settings.graph, text)
    except ValueError as err:
        raise StoreError(f"The graph {settings.graph} reported its channels in a form this version "
                         f"does not read ({err}).") from err
    return channels, report


def _report_files(report: Any) -> dict[str, int]:
    files = report.get("files") if isinstance(report, dict) else None
    return {str(k): v for k, v in files.items() if isinstance(v, int)} if isinstance(files, dict) else {}


def graph_report(url: str, settings: GraphSettings) -> tuple[GraphChannels, dict[str, int]]:
    """(the channel kinds of the store's graph, the graph's project files and their mtimes): from
    the cache while those files are unchanged, else asked of the graph (StoreError says why it
    could not answer)."""
    assert settings.graph
    key = _cache_key(url, settings)
    entry = _read_cache().get(key)
    if _fresh(entry):
        try:
            return parse_report(settings.graph, entry), _report_files(entry)
        except ValueError:
            pass
    channels, report = ask_graph(settings)
    _write_cache(key, report)
    return channels, _report_files(report)


def graph_channels(url: str, settings: GraphSettings) -> GraphChannels:
    """The channel kinds of the store's graph (``graph_report``)."""
    return graph_report(url, settings)[0]


def _mtimes(files: Mapping[str, int]) -> list[int]:
    out = []
    for path in sorted(files):
        try:
            out.append(os.stat(path).st_mtime_ns)
        except OSError:
            out.append(-1)
    return out


def _decoded(answer: Any) -> tuple[bool, Any]:
    """One channel of the runner's ``combined`` answer as (ok, display value or why not)."""
    if not isinstance(answer, dict):
        return False, "the graph's runner gave no value for it"
    if isinstance(answer.get("error"), str):
        return False, answer["error"]
    kind, data = answer.get("type"), answer.get("data")
    if not isinstance(kind, str) or not isinstance(data, str):
        return False, "the graph's runner answered in a form this version does not read"
    try:
        raw = base64.b64decode(data, validate=True)
    except ValueError:
        return False, "the graph's runner answered in a form this version does not read"
    value = decode_plain(kind, raw)
    if isinstance(value, dict) and set(value) == {"__error__"}:
        return False, str(value["__error__"])
    return True, value


class GraphCombiner:
    """Combines custom-reducer channels' pending writes with the graph's own reducers, in the
    graph's runner (a ``channels.Combiner``); answers are cached in memory (see the module
    docstring). Safe to call from several worker threads."""

    MAX_CACHED = 64

    def __init__(self, url: str, settings: GraphSettings, channels: GraphChannels, files: Mapping[str, int],
                 timeout: float = COMBINE_TIMEOUT) -> None:
        assert settings.graph
        self.url, self.settings, self.channels, self.files = url, settings, channels, dict(files)
        self.timeout = timeout
        self.runs = 0                                   # runner processes started (for tests and status)
        self._cache: OrderedDict[str, dict[str, tuple[bool, Any]]] = OrderedDict()
        self._lock = threading.Lock()

    def _request(self, ns: str, custom: CustomWrites) -> dict:
        return {"graph": self.channels.graph_key(ns),
                "channels": {c: {"stored": stored, "value": value, "writes": list(writes)}
                             for c, (stored, value, writes) in sorted(custom.items())}}

    def __call__(self, thread: str, ns: str, checkpoint_id: str, custom: CustomWrites) -> dict[str, tuple[bool, Any]]:
        request = self._request(ns, custom)
        text = json.dumps(runner_form(request), ensure_ascii=False, sort_keys=True)
        key = hashlib.sha256(json.dumps(
            [_cache_key(self.url, self.settings), thread, ns, checkpoint_id, _mtimes(self.files), text]
        ).encode("utf-8")).hexdigest()
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return dict(self._cache[key])
        answer = self._ask(text)
        with self._lock:
            self._cache[key] = answer
            while len(self._cache) > self.MAX_CACHED:
                self._cache.popitem(last=False)
        return dict(answer)

    def _ask(self, text: str) -> dict[str, tuple[bool, Any]]:
        graph = self.settings.graph
        self.runs += 1
        answer = _runner_answer(self.settings, ["--action", "combine", "--ops-json", "-"], "combined ",
                                "combining pending writes", "could not combine the pending writes",
                                self.timeout, stdin_text=text)
        if len(answer) > MAX_COMBINED_CHARS:
            raise StoreError(f"The graph {graph} answered with more than {MAX_COMBINED_CHARS:,} characters.")
        try:
            data = json.loads(answer)
        except ValueError as err:
            raise StoreError(f"The graph {graph} answered in a form this version does not read ({err}).") from err
        if not isinstance(data, dict):
            raise StoreError(f"The graph {graph} answered in a form this version does not read.")
        return {str(c): _decoded(v) for c, v in data.items()}


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
        channels, files = graph_report(store.info.url, settings)
        use(channels, None, GraphCombiner(store.info.url, settings, channels, files))
    except StoreError as err:
        use(None, str(err).rstrip("."))
        return str(err)
    return None


def cached_path() -> Path:
    """Where the cache lives (shown to the user)."""
    return paths.cache_dir() / CACHE_FILE
