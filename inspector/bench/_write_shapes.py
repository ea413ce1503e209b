"""``bench write`` workloads beyond W1/W2: every state shape costs what changed.

* W3 — a flat dict of 0.1 / 1 / 10 / 50 MB (values of ~1 KB), one value replaced per step.
  W3-keys: one file removed anywhere and one added per step instead (the keys change).
* W4 — 10,000 records, 10 / 100 / 1,000 / 10,000 of them changed per step (dense changes),
  as a list and (W4-maps) as a map of id → record.
* W5 — a real LangGraph ``StateGraph`` (``add_messages``) run by ``graph.invoke`` with
  ``SqliteSaver``, against the same states saved through ``Checkpointer``.
* W6 — a long text document (0.1 / 1 / 10 MB of newline-terminated lines) edited in place,
  ~1 KB per step: lines inserted in the middle, a line rewritten as a paragraph, or text appended.
* W7 — a window over a message history (0.1 / 1 / 10 MB of ~600-byte messages): the oldest
  message dropped and a new one appended per step, so every kept message moves down one place.
* W1 floor — a raw ``sqlite3`` insert of exactly the bytes W1's saves write, same durability.

The peer of W3/W4/W6/W7 is the naive store: ``json.dumps`` + zstd (level 3) of the whole state,
one row per checkpoint in SQLite with the same durability (WAL, synchronous=NORMAL). Every
figure and its peer come from the same run; bytes per save are the growth of the database
file (after a WAL checkpoint) divided by the saves.
"""

from __future__ import annotations

import importlib
import json
import os
import random
import sqlite3
import string
import time
from pathlib import Path
from typing import Any
from collections.abc import Callable, Iterator

import zstandard

from inspector.bench._util import print_table, summary_ms
from inspector.record import Checkpointer

SYNCHRONOUS = "NORMAL"
W3_SIZES_MB = (0.1, 1, 10, 50)
W3_TARGET = {"bytes": 10_000, "ms": 5.0}      # per save, at 50 MB
W4_RECORDS = 10_000
W6_SIZES_MB = (0.1, 1, 10)
W6_EDIT_BYTES = 1_000
W6_RECORDS = 1_000        # W6-list: notes in the list, one of them the long text
W4_DENSITIES = (10, 100, 1_000, 10_000)
W7_SIZES_MB = (0.1, 1, 10)
W7_MESSAGE_BYTES = 600
_ALPHABET = string.ascii_lowercase + "      "


def _file_bytes(path: Path) -> int:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    # the file and what its log still holds (not the -shm index, which goes with the last connection)
    return sum(p.stat().st_size for p in (path, path.with_name(path.name + "-wal")) if p.exists())


def _text(rnd: random.Random, n: int) -> str:
    return "".join(rnd.choices(_ALPHABET, k=n))


class JsonRows:
    """The naive peer: each checkpoint is ``zstd(json.dumps(state))`` in one SQLite row."""

    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute(f"PRAGMA synchronous={SYNCHRONOUS}")
        self.conn.execute("CREATE TABLE checkpoints (id INTEGER PRIMARY KEY, run TEXT, seq INT, data BLOB)")
        self.zstd = zstandard.ZstdCompressor(level=3)
        self.seq = 0

    def save(self, state: Any) -> None:
        """One checkpoint row holding the whole state."""
        data = self.zstd.compress(json.dumps(state).encode())
        self.conn.execute("BEGIN IMMEDIATE")
        self.conn.execute("INSERT INTO checkpoints (run, seq, data) VALUES (?, ?, ?)", ("bench", self.seq, data))
        self.conn.execute("COMMIT")
        self.seq += 1

    def close(self) -> None:
        """Release the connection."""
        self.conn.close()


def _measure(path: Path, states: Iterator[Any], make: Callable[[Path], Any], first: Any) -> dict:
    """Save ``first`` (not timed), then each of ``states`` timed; bytes per save from the
    file's growth."""
    saver = make(path)
    save = saver.save
    save(first)
    start_bytes = _file_bytes(path)
    times = []
    cpu = []
    u0 = _switches()
    for state in states:
        t0 = time.perf_counter()
        c0 = time.process_time()
        save(state)
        cpu.append(time.process_time() - c0)
        times.append(time.perf_counter() - t0)
    waits, preempted = (b - a for a, b in zip(u0, _switches(), strict=True))
    saver.close()
    grown = _file_bytes(path) - start_bytes
    cpu.sort()
    n = max(len(times), 1)
    return {**summary_ms(times), "cpu_median_ms": cpu[len(cpu) // 2] * 1e3 if cpu else 0.0,
            "saves": len(times), "bytes_per_save": grown / n,
            "waits_per_save": waits / n, "preempted_per_save": preempted / n}


def _switches() -> tuple[int, int]:
    """This thread's context switches so far: (voluntary: it waited for I/O, a lock or sleep;
    involuntary: the scheduler gave its core to another process). Where a save's wall time
    goes beyond its CPU time: waits mean I/O (an fsync, a WAL checkpoint), preemptions a
    machine busier than its cores."""
    try:
        resource = importlib.import_module("resource")      # Unix only
        usage = resource.getrusage(resource.RUSAGE_THREAD)
    except (ImportError, AttributeError, OSError):       # not Linux: no per-thread counts
        return (0, 0)
    return (usage.ru_nvcsw, usage.ru_nivcsw)


class _Ours:
    def __init__(self, path: Path) -> None:
        self.cp = Checkpointer(path, name="bench", agent="bench", heartbeat=3600)

    def save(self, state: Any) -> None:
        self.cp.save(state, kind="step", name="step", force=True)

    def close(self) -> None:
        self.cp.close()


def _pair(tmp: Path, label: str, first: Any, states: Callable[[], Iterator[Any]]) -> dict:
    """Ours and the json+zstd peer on the same sequence of states."""
    ours = _measure(tmp / f"{label}-ours.db", states(), _Ours, first)
    peer = _measure(tmp / f"{label}-json.db", states(), JsonRows, first)
    return {"ours": ours, "json_zstd": peer, "time_ratio": peer["median_ms"] / ours["median_ms"],
            "cpu_ratio": peer["cpu_median_ms"] / max(ours["cpu_median_ms"], 1e-6),
            "bytes_ratio": peer["bytes_per_save"] / max(ours["bytes_per_save"], 1)}


# -- W3: a flat dict, one value replaced per step ---------------------------------------
def w3_state(mb: float, seed: int = 3) -> dict:
    """A flat dict of about ``mb`` MB: keys ``file-0000001`` …, values of ~1 KB of text."""
    rnd = random.Random(seed)
    return {f"file-{i:07d}": _text(rnd, 1000) for i in range(max(1, int(mb * 1000)))}


def w3_steps(state: dict, steps: int, seed: int = 4) -> Callable[[], Iterator[dict]]:
    """Each step replaces one value (1 KB) of a copy of ``state`` (the same sequence each call)."""
    def run() -> Iterator[dict]:
        rnd = random.Random(seed)
        live = dict(state)
        keys = list(live)
        for _ in range(steps):
            live[rnd.choice(keys)] = _text(rnd, 1000)
            yield live
    return run


def w3_key_steps(state: dict, steps: int, seed: int = 4) -> Callable[[], Iterator[dict]]:
    """Each step removes one file anywhere and adds a new one (1 KB): the keys change."""
    def run() -> Iterator[dict]:
        rnd = random.Random(seed)
        live = dict(state)
        for i in range(steps):
            keys = list(live)
            del live[keys[rnd.randrange(len(keys))]]
            live[f"added-{i:07d}"] = _text(rnd, 1000)
            yield live
    return run


def _sized(tmp: Path, label: str, sizes: tuple[float, ...], state_of: Callable[[float], dict],
           steps_of: Callable[[dict], Callable[[], Iterator[dict]]]) -> list[dict]:
    """A workload at every state size: its first state, then its steps, ours against the peer."""
    rows = []
    for mb in sizes:
        state = state_of(mb)
        rows.append({"mb": mb, **_pair(tmp, f"{label}-{mb}", dict(state), steps_of(state))})
    return rows


def run_w3(tmp: Path, steps: int, sizes: tuple[float, ...] = W3_SIZES_MB, keys: bool = False) -> list[dict]:
    """W3 at every size (``keys``: W3-keys, a file removed and one added per step)."""
    if keys:
        return _sized(tmp, "w3k", sizes, w3_state, lambda state: w3_key_steps(state, steps))
    return _sized(tmp, "w3", sizes, w3_state, lambda state: w3_steps(state, steps))


# -- W4: dense changes ---------------------------------------------------------------------
def w4_records(n: int = W4_RECORDS, seed: int = 5) -> list[dict]:
    """``n`` small records (~140 bytes of JSON each)."""
    rnd = random.Random(seed)
    return [{"id": f"r{i}", "status": rnd.choice(["pending", "running", "done"]), "score": rnd.random(),
             "n": rnd.randint(0, 10**6), "note": _text(rnd, 60)} for i in range(n)]


def _shaped(records: list[dict], as_map: bool) -> Any:
    live = [dict(r) for r in records]
    return {r["id"]: r for r in live} if as_map else live


def w4_steps(records: list[dict], changing: int, steps: int, seed: int = 6,
             as_map: bool = False) -> Callable[[], Iterator[dict]]:
    """Each step changes ``changing`` records (a new score, count and status), in place;
    the records are a list, or a map of id → record with ``as_map``."""
    def run() -> Iterator[dict]:
        rnd = random.Random(seed)
        shaped = _shaped(records, as_map)
        live = list(shaped.values()) if as_map else shaped
        state = {"records": shaped}
        for _ in range(steps):
            for i in rnd.sample(range(len(live)), changing):
                live[i]["score"] = rnd.random()
                live[i]["n"] = rnd.randint(0, 10**6)
                live[i]["status"] = rnd.choice(["pending", "running", "done"])
            yield state
    return run


def run_w4(tmp: Path, steps: int, densities: tuple[int, ...] = W4_DENSITIES, as_map: bool = False) -> list[dict]:
    """W4 at every density (W4-maps with ``as_map``)."""
    records = w4_records()
    rows = []
    for changing in densities:
        first = {"records": _shaped(records, as_map)}
        label = f"w4{'m' if as_map else ''}-{changing}"
        rows.append({"changing": changing, **_pair(tmp, label, first,
                                                  w4_steps(records, changing, steps, as_map=as_map))})
    return rows


# -- W6: a long text edited in place -------------------------------------------------------
_W6_WORDS = (
    "the", "a", "an", "of", "to", "in", "and", "or", "for", "with", "on", "at", "by", "from", "as", "is",
    "are", "was", "be", "been", "it", "this", "that", "these", "state", "value", "record", "agent", "model",
    "run", "step", "save", "load", "store", "check", "chunk", "piece", "text", "line", "file", "document",
    "section", "paragraph", "change", "edit", "insert", "replace", "append", "result", "error", "note",
    "draft", "plan", "def", "return", "if", "else", "elif", "for", "while", "class", "import", "self",
    "none", "true", "false", "yield", "lambda", "async", "await", "print", "len", "range", "list", "dict",
    "str", "int", "float", "open", "read", "write", "close", "path", "name", "key", "data", "index",
    "count", "user", "message", "tool", "call", "reply", "answer", "question", "summary", "context",
    "memory", "token", "budget", "limit", "retry", "fast", "slow", "small", "large", "first", "last",
    "next", "previous", "before", "after", "every", "each", "some", "many", "few", "all")


def _w6_line(rnd: random.Random) -> str:
    """One newline-terminated line of 20–100 characters of words, prose or code; some blank."""
    if rnd.random() < 0.08:
        return "\n"
    target = rnd.randint(20, 100)
    indent = " " * (4 * rnd.randint(0, 2)) if rnd.random() < 0.3 else ""
    words: list[str] = []
    size = len(indent)
    while size < target:
        word = rnd.choice(_W6_WORDS)
        words.append(word)
        size += len(word) + 1
    line = indent + " ".join(words)
    if len(line) > 99:                  # whole words, at most 100 characters with the newline
        line = line[:line.rindex(" ", 0, 99)]
    return line + ("." if rnd.random() < 0.5 and len(line) < 98 else "") + "\n"


def _w6_lines(rnd: random.Random, n: int) -> str:
    """About ``n`` characters (at least one line) of whole lines."""
    out: list[str] = []
    size = 0
    while size < n or not out:
        line = _w6_line(rnd)
        out.append(line)
        size += len(line)
    return "".join(out)


def w6_state(mb: float, seed: int = 7) -> dict:
    """``{"doc": text, "step": 0, "title": …}``, the text ~``mb`` MB of lines of prose and code."""
    rnd = random.Random(seed)
    return {"doc": _w6_lines(rnd, int(mb * 1e6)), "step": 0, "title": f"a long document of {mb:g} MB"}


def _w6_line_start(doc: str, rnd: random.Random) -> int:
    """The start of a random line in the middle half of ``doc``."""
    at = rnd.randint(len(doc) // 4, 3 * len(doc) // 4)
    return doc.rfind("\n", 0, at) + 1


def w6_edit(doc: str, step: int, rnd: random.Random) -> str:
    """One ~1 KB edit of ``doc``, by turns: (a) new lines inserted at a line in the middle,
    (b) a line in the middle rewritten as a ~1 KB paragraph, (c) lines appended at the end."""
    new = _w6_lines(rnd, W6_EDIT_BYTES)
    kind = step % 3
    if kind == 2:
        return doc + new
    start = _w6_line_start(doc, rnd)
    if kind == 0:
        return doc[:start] + new + doc[start:]
    end = doc.find("\n", start)
    end = len(doc) if end < 0 else end + 1
    return doc[:start] + new + doc[end:]


def w6_steps(state: dict, steps: int, seed: int = 8) -> Callable[[], Iterator[dict]]:
    """Each step makes one ~1 KB edit of the text of a copy of ``state`` (the same sequence each call)."""
    def run() -> Iterator[dict]:
        rnd = random.Random(seed)
        live = dict(state)
        for i in range(1, steps + 1):
            live["doc"] = w6_edit(live["doc"], i - 1, rnd)
            live["step"] = i
            yield live
    return run


def w6_list_state(mb: float, seed: int = 7) -> dict:
    """W6's text as the body of one of ``W6_RECORDS`` notes kept as a list (a long list: its
    items have no path in the store, the text is found again by its ends)."""
    notes = [{"path": f"notes/{i:04}.md", "body": f"# note {i}\n"} for i in range(W6_RECORDS)]
    notes[W6_RECORDS // 2]["body"] = w6_state(mb, seed)["doc"]
    return {"notes": notes, "step": 0, "title": f"notes, one a document of {mb:g} MB"}


def w6_list_steps(state: dict, steps: int, seed: int = 8) -> Callable[[], Iterator[dict]]:
    """Each step makes one ~1 KB edit of the long note's body, in place, as W6 edits its text."""
    def run() -> Iterator[dict]:
        rnd = random.Random(seed)
        live = dict(state)
        notes = live["notes"] = [dict(note) for note in state["notes"]]
        note = notes[W6_RECORDS // 2]
        for i in range(1, steps + 1):
            note["body"] = w6_edit(note["body"], i - 1, rnd)
            live["step"] = i
            yield live
    return run


def w6_map_state(mb: float, seed: int = 7) -> dict:
    """W6's text as the content of one of ``W6_RECORDS`` files kept in a map by path (the
    agent's files: a big map, cut in chunks by its keys)."""
    files = {f"src/file_{i:04}.py": f"# file {i}\n" for i in range(W6_RECORDS)}
    files[f"src/file_{W6_RECORDS // 2:04}.py"] = w6_state(mb, seed)["doc"]
    return {"files": files, "step": 0, "title": f"files, one a document of {mb:g} MB"}


def w6_map_steps(state: dict, steps: int, seed: int = 8) -> Callable[[], Iterator[dict]]:
    """Each step makes one ~1 KB edit of the long file, as W6 edits its text."""
    def run() -> Iterator[dict]:
        rnd = random.Random(seed)
        live = dict(state)
        files = live["files"] = dict(state["files"])
        path = f"src/file_{W6_RECORDS // 2:04}.py"
        for i in range(1, steps + 1):
            files[path] = w6_edit(files[path], i - 1, rnd)
            live["step"] = i
            yield live
    return run


W6_PLACES = {     # workload key → the text's place: its state, its steps, its name and what the table says of it
    "w6": (w6_state, w6_steps, "W6", ""),
    "w6l": (w6_list_state, w6_list_steps, "W6-list",
            f" as the body of one of {W6_RECORDS:,} notes in a list (its items have no path)"),
    "w6m": (w6_map_state, w6_map_steps, "W6-map", f" as the content of one of {W6_RECORDS:,} files in a map by path"),
}


def run_w6(tmp: Path, steps: int, sizes: tuple[float, ...] = W6_SIZES_MB, place: str = "w6") -> list[dict]:
    """W6 at every size, its text where ``place`` (a key of ``W6_PLACES``) puts it."""
    make, edits, _, _ = W6_PLACES[place]
    return _sized(tmp, place, sizes, make, lambda state: edits(state, steps))


# -- W7: a window over a history --------------------------------------------------------------
def _w7_message(rnd: random.Random, i: int) -> dict:
    return {"role": ("user", "assistant", "tool")[i % 3], "id": f"m{i}", "content": _text(rnd, W7_MESSAGE_BYTES)}


def w7_state(mb: float, seed: int = 9) -> dict:
    """``{"messages": [...], "step": 0}``: ~``mb`` MB of ~600-byte messages."""
    rnd = random.Random(seed)
    count = max(1, int(mb * 1e6 / (W7_MESSAGE_BYTES + 40)))
    return {"messages": [_w7_message(rnd, i) for i in range(count)], "step": 0}


def w7_steps(state: dict, steps: int, seed: int = 10) -> Callable[[], Iterator[dict]]:
    """Each step drops the oldest message and appends a new one (the last N kept)."""
    def run() -> Iterator[dict]:
        rnd = random.Random(seed)
        live = dict(state)
        count = len(state["messages"])
        for i in range(1, steps + 1):
            live["messages"] = live["messages"][1:] + [_w7_message(rnd, count + i)]
            live["step"] = i
            yield live
    return run


def run_w7(tmp: Path, steps: int, sizes: tuple[float, ...] = W7_SIZES_MB) -> list[dict]:
    """W7 at every size."""
    return _sized(tmp, "w7", sizes, w7_state, lambda state: w7_steps(state, steps))


# -- W1 floor --------------------------------------------------------------------------------
def run_floor(tmp: Path, steps: int) -> dict:
    """W1's saves against a raw insert of the very bytes they wrote (same schema, same
    durability, one transaction per checkpoint, precompressed)."""
    from inspector.bench._w1 import w1_states
    from inspector.store.native import blobs
    from inspector.store.native import writer as native_writer

    captured: list[tuple[list, dict]] = []
    original = native_writer.NativeWriter.append

    def recording(self: Any, run_id: str, epoch: int, cp: Any) -> Any:
        new = [(d, raw) for d, raw in cp.pieces.items() if d not in self._known]
        info = original(self, run_id, epoch, cp)
        captured.append((new, {"state_hash": cp.state_hash, "tasks_hash": cp.tasks_hash, "size": cp.size,
                               "change": cp.change, "kind": cp.kind, "name": cp.name}))
        return info
    times = []
    native_writer.NativeWriter.append = recording   # type: ignore[method-assign]  # the floor benchmark records the real writer's rows
    try:
        with Checkpointer(tmp / "floor-ours.db", name="bench", heartbeat=3600) as cp:
            for state, tasks in w1_states(steps):
                t0 = time.perf_counter()
                cp.save(state, kind="llm", name="step", tasks=tasks)
                times.append(time.perf_counter() - t0)
    finally:
        native_writer.NativeWriter.append = original   # type: ignore[method-assign]  # put back
    # compressed here, outside the timed saves (the floor inserts bytes already compressed)
    compressed = [([(d, *blobs.compress(raw), len(raw)) for d, raw in new], row) for new, row in captured]
    floor = _raw_inserts(tmp / "floor-raw.db", compressed)
    ours = summary_ms(times)
    return {"steps": steps, "ours": ours, "raw_insert": floor, "ratio": ours["median_ms"] / floor["median_ms"],
            "parts_us": _save_parts(tmp / "floor-parts.db", steps)}


def _save_parts(path: Path, steps: int) -> dict:
    """Where a W1 save's time goes, from a second run of the same saves with timers around
    the parts (so the timed run above carries none): the median per save, in µs, of the
    whole save, the state's encoding, the part of it that checks the kept chunks of the
    message list against the state (exactness), the transaction, and the compression in it."""
    from inspector.bench._w1 import w1_states
    from inspector.codec import encoder
    from inspector.store.native import blobs
    from inspector.store.native import writer as native_writer

    spent: dict[str, float] = {}
    parts: dict[str, list[float]] = {"save": [], "encode": [], "check": [], "transaction": [], "compress": []}
    patched = [(encoder.PieceEncoder, "encode", "encode"), (encoder._ListLayout, "_unchanged", "check"),
               (native_writer.NativeWriter, "append", "transaction"), (blobs, "compress", "compress")]
    originals = [(owner, attr, getattr(owner, attr)) for owner, attr, _ in patched]

    def timer(fn: Callable, name: str) -> Callable:
        def timed(*args: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return fn(*args)
            finally:
                spent[name] = spent.get(name, 0.0) + time.perf_counter() - t0
        return timed
    for (owner, attr, name), (_, _, fn) in zip(patched, originals, strict=True):
        setattr(owner, attr, timer(fn, name))
    try:
        with Checkpointer(path, name="bench", heartbeat=3600) as cp:
            for state, tasks in w1_states(steps):
                spent.clear()
                t0 = time.perf_counter()
                cp.save(state, kind="llm", name="step", tasks=tasks)
                parts["save"].append(time.perf_counter() - t0)
                for name in ("encode", "check", "transaction", "compress"):
                    parts[name].append(spent.get(name, 0.0))
    finally:
        for owner, attr, fn in originals:
            setattr(owner, attr, fn)
    return {name: sorted(v)[len(v) // 2] * 1e6 if v else 0.0 for name, v in parts.items()}


def _raw_inserts(path: Path, captured: list[tuple[list, dict]]) -> dict:
    """Replay the captured writes with plain sqlite3 into a fresh store of the same schema."""
    from inspector.store import create_store
    create_store(path).close()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA synchronous={SYNCHRONOUS}")
    conn.execute("INSERT INTO ci_runs (id, name, agent, status, created, updated, epoch, resumable, head_seq, "
                 "checkpoint_count, tasks_done, tasks_total, checks_passed, checks_total) "
                 "VALUES ('r', 'bench', '', 'running', 0, 0, 1, 1, -1, 0, 0, 0, 0, 0)")
    times = []
    for seq, (new, row) in enumerate(captured):
        t0 = time.perf_counter()
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("UPDATE ci_runs SET head_seq = head_seq + 1, checkpoint_count = checkpoint_count + 1, "
                     "updated = ?, heartbeat = ? WHERE id = 'r' AND epoch = 1", (t0, t0))
        if new:
            conn.executemany("INSERT INTO ci_blobs (hash, codec, size, data) VALUES (?, ?, ?, ?) "
                             "ON CONFLICT DO NOTHING", [(d, codec, size, data) for d, codec, data, size in new])
        conn.execute("INSERT INTO ci_checkpoints (run_id, seq, parent_id, kind, name, created, state_hash, "
                     "tasks_hash, meta, size, size_delta, ops, tasks_done, tasks_total, checks_passed, "
                     "checks_total, change, epoch) VALUES ('r', ?, NULL, ?, ?, ?, ?, ?, '{}', ?, 0, 1, 0, 0, 0, 0, ?, 1)",
                     (seq, row["kind"], row["name"], t0, row["state_hash"], row["tasks_hash"], row["size"],
                      row["change"]))
        conn.execute("COMMIT")
        times.append(time.perf_counter() - t0)
    conn.close()
    return summary_ms(times)


# -- printing ----------------------------------------------------------------------------------
def print_w3(rows: list[dict]) -> None:
    """W3's table, its growth with state size and the 50 MB target."""
    _print_sized("W3 flat dict, one ~1 KB value replaced per save (peer: json.dumps + zstd row, same durability)",
                 rows)
    big = [r for r in rows if r["mb"] == 50]
    if big:
        ours = big[0]["ours"]
        ok = ours["bytes_per_save"] <= W3_TARGET["bytes"] and ours["median_ms"] <= W3_TARGET["ms"]
        print(f"target at 50 MB (<= 10 KB and <= 5 ms per save): {ours['bytes_per_save'] / 1e3:.1f} KB, "
              f"{ours['median_ms']:.2f} ms wall ({ours['cpu_median_ms']:.2f} ms of CPU; "
              f"load average {_load()}) — {'met' if ok else 'MISSED'}")


def print_w3_keys(rows: list[dict]) -> None:
    """W3-keys' table and the design's bar for every shape."""
    _print_sized("W3-keys flat dict, one ~1 KB file removed and one added per save (peer: json.dumps + zstd row, "
                 "same durability)", rows)
    ok = all(r["time_ratio"] >= 1 and r["bytes_ratio"] >= 1 for r in rows)
    print(f"target (<= json+zstd time and bytes at every size): {'met' if ok else 'MISSED'}")


def print_w6(rows: list[dict], place: str = "w6") -> None:
    """W6's table (the text where ``place`` puts it), its growth with the text's size, and
    the design's bar for every shape: never slower and never bigger than a json + zstd row."""
    _, _, name, where = W6_PLACES[place]
    _print_sized(f"{name} long text{where}, ~1 KB edited per save (insert, replace or "
                 "append; peer: json.dumps + zstd row, same durability)", rows)
    ok = all(r["time_ratio"] >= 1 and r["bytes_ratio"] >= 1 for r in rows)
    print(f"target (<= json+zstd time and bytes at every size): {'met' if ok else 'MISSED'}")


def print_w7(rows: list[dict]) -> None:
    """W7's table, its growth, and the design's bar for every shape."""
    _print_sized("W7 a window over a message history, the oldest ~600-byte message dropped and one appended per "
                 "save (peer: json.dumps + zstd row, same durability)", rows)
    ok = all(r["time_ratio"] >= 1 and r["bytes_ratio"] >= 1 for r in rows)
    print(f"target (<= json+zstd time and bytes at every size): {'met' if ok else 'MISSED'}")


def _print_sized(title: str, rows: list[dict]) -> None:
    """A table of ours against json + zstd by state size, where our wall time goes beyond CPU,
    and the growth from the smallest size to the largest."""
    print("\n" + title)
    print_table(("state MB", "ours ms", "ours cpu ms", "ours KB/save", "json+zstd ms", "json+zstd KB/save",
                 "faster", "smaller"),
                [(r["mb"], r["ours"]["median_ms"], r["ours"]["cpu_median_ms"], r["ours"]["bytes_per_save"] / 1e3,
                  r["json_zstd"]["median_ms"], r["json_zstd"]["bytes_per_save"] / 1e3, f"{r['time_ratio']:.1f}x",
                  f"{r['bytes_ratio']:.0f}x") for r in rows])
    print("where our wall time goes beyond CPU, per save: waits (I/O: fsync, WAL checkpoints) and preemptions "
          "(another process had the core): " + ", ".join(
              f"{r['mb']:g} MB {r['ours'].get('waits_per_save', 0):.2f} / {r['ours'].get('preempted_per_save', 0):.2f}"
              for r in rows))
    _growth(rows, "mb")


def _load() -> str:
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except (AttributeError, OSError):
        return "unknown"


def _growth(rows: list[dict], size_key: str) -> None:
    if len(rows) < 2:
        return
    a, b = rows[0], rows[-1]
    scale = b[size_key] / a[size_key]
    print(f"growth {a[size_key]} -> {b[size_key]} MB (state x{scale:.0f}): ours time "
          f"x{b['ours']['median_ms'] / a['ours']['median_ms']:.1f}, bytes "
          f"x{b['ours']['bytes_per_save'] / max(a['ours']['bytes_per_save'], 1):.1f}; json+zstd time "
          f"x{b['json_zstd']['median_ms'] / a['json_zstd']['median_ms']:.1f}, bytes "
          f"x{b['json_zstd']['bytes_per_save'] / max(a['json_zstd']['bytes_per_save'], 1):.1f}")


def print_w4(rows: list[dict], shape: str = "W4", what: str = "records") -> None:
    """W4's table and its target (no slower and no bigger than json + zstd at any density)."""
    print(f"\n{shape} {W4_RECORDS:,} {what}, N changed per save (peer: json.dumps + zstd row, same durability)")
    print_table(("changing", "ours ms", "ours cpu ms", "ours KB/save", "json+zstd ms", "json+zstd cpu ms",
                 "json+zstd KB/save", "faster", "faster (cpu)", "smaller"),
                [(r["changing"], r["ours"]["median_ms"], r["ours"]["cpu_median_ms"], r["ours"]["bytes_per_save"] / 1e3,
                  r["json_zstd"]["median_ms"], r["json_zstd"]["cpu_median_ms"], r["json_zstd"]["bytes_per_save"] / 1e3,
                  f"{r['time_ratio']:.2f}x", f"{r['cpu_ratio']:.2f}x", f"{r['bytes_ratio']:.2f}x") for r in rows])
    ok = all(r["time_ratio"] >= 1 and r["bytes_ratio"] >= 1 for r in rows)
    print(f"target (<= json+zstd time and bytes at every density): {'met' if ok else 'MISSED'}")


def print_w4_maps(rows: list[dict]) -> None:
    """W4-maps' table: the same records in a map of id → record."""
    print_w4(rows, "W4-maps", "records in a map of id → record")


def print_floor(res: dict) -> None:
    """W1 against its physical floor."""
    print(f"\nW1 floor ({res['steps']} steps): save median {res['ours']['median_ms']:.3f} ms vs raw insert of the "
          f"same bytes {res['raw_insert']['median_ms']:.3f} ms (same schema, WAL, synchronous={SYNCHRONOUS}) — "
          f"{res['ratio']:.2f}x the floor ({'met' if res['ratio'] <= 2 else 'MISSED'} <= 2x)")
    p = res.get("parts_us")
    if p:
        rest = p["save"] - p["encode"] - p["transaction"]
        print(f"where a save goes (medians of a second, instrumented run, µs): save {p['save']:.0f} = state encoding "
              f"{p['encode']:.0f} (of which checking the kept chunks against the state, for exactness, {p['check']:.0f}) "
              f"+ transaction {p['transaction']:.0f} (of which compressing the new pieces {p['compress']:.0f}; the raw "
              f"insert of the same bytes: {res['raw_insert']['median_ms'] * 1e3:.0f}) + the rest (task state, "
              f"summary, score) {rest:.0f}")
