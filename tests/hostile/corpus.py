"""A generator of damaged and malicious stores (native and LangGraph SQLite files).

``build(directory)`` writes every case into its own sub-directory and returns the cases:
each names the STORE argument and the run and checkpoints the commands are pointed at.
The base stores are written by the real recording library and the real LangGraph
``SqliteSaver``; each case then damages a copy with plain SQL, as an attacker would.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import struct
import subprocess
import tempfile
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable

import msgpack
import zstandard

from inspector.codec import Chunk, ChunkedList, ChunkedText, Ref, digest_of, frame_chunk, pack

RUN, FORK = "r1", "r2"


@dataclass(frozen=True)
class Case:
    """One hostile store: where it is and what the commands ask of it."""

    name: str
    store: str                 # the STORE argument (a path or a URL)
    run: str = RUN
    a: str = f"{RUN}:0"
    b: str = f"{RUN}:1"
    expect_ok: bool = False    # True: every command must succeed (exit 0)
    forked: bool = True        # the store's run has a fork (``delete`` names both: a fork alone stops it)
    other_user: bool = False   # True: read by another user when the tests run as root


# -- base stores ------------------------------------------------------------------------------
def _native_base(path: Path) -> None:
    from inspector.record import Checkpointer
    tasks = {"goal": "g", "tasks": [{"id": "t1", "title": "one", "status": "in_progress",
                                     "checks": [{"name": "c", "passed": False}]}]}
    with Checkpointer(path, name="base", agent="corpus", heartbeat=60) as cp:
        cp.save({"messages": ["hello"], "n": 0}, kind="input", tasks=tasks)
        cp.save({"messages": ["hello", "world"], "n": 1}, kind="llm", name="think")
        cp.save({"messages": ["hello", "world", "!"] , "n": 2}, kind="tool", name="search")
        old = cp.run_id
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE ci_runs SET id=? WHERE id=?", (RUN, old))
        conn.execute("UPDATE ci_checkpoints SET run_id=? WHERE run_id=?", (RUN, old))
        first = conn.execute("SELECT id FROM ci_checkpoints WHERE run_id=? AND seq=1", (RUN,)).fetchone()[0]
        row = conn.execute("SELECT * FROM ci_runs WHERE id=?", (RUN,)).fetchone()
        cols = [d[1] for d in conn.execute("PRAGMA table_info(ci_runs)")]
        fork = dict(zip(cols, row), id=FORK, name="fork", parent_run=RUN, parent_checkpoint=first,
                    status="forked", checkpoint_count=0, head_seq=-1)
        conn.execute(f"INSERT INTO ci_runs ({','.join(fork)}) VALUES ({','.join('?' * len(fork))})",
                     list(fork.values()))
    conn.close()


def _langgraph_base(path: Path) -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.checkpoint.base import empty_checkpoint, create_checkpoint
    conn = sqlite3.connect(path, check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.setup()
    config = {"configurable": {"thread_id": "t1", "checkpoint_ns": ""}}
    checkpoint = empty_checkpoint()
    for step in range(3):
        checkpoint = create_checkpoint(checkpoint, None, step)
        checkpoint["channel_values"] = {"messages": ["m"] * (step + 1), "step": step}
        checkpoint["channel_versions"] = {"messages": step + 1, "step": step + 1}
        config = saver.put(config, checkpoint, {"source": "loop", "step": step, "parents": {}},
                           {"messages": step + 1, "step": step + 1})
    conn.close()


def _copy(src: Path, dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    target = dest / src.name
    shutil.copyfile(src, target)
    return target


def _sql(path: Path, *statements: tuple) -> None:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA synchronous=OFF")    # test data: no fsync per case
    try:
        for stmt in statements:
            conn.execute(*stmt) if isinstance(stmt, tuple) else conn.execute(stmt)
        conn.commit()
    finally:
        conn.close()


def _put_piece(path: Path, raw: bytes, *, codec: int = 0, size: int | None = None,
               data: bytes | None = None) -> bytes:
    digest = digest_of(raw)
    _sql(path, ("INSERT OR REPLACE INTO ci_blobs (hash, codec, size, data) VALUES (?, ?, ?, ?)",
                (digest, codec, len(raw) if size is None else size, raw if data is None else data)))
    return digest


def _set_state(path: Path, digest: object, seq: int = 1, column: str = "state_hash") -> None:
    _sql(path, (f"UPDATE ci_checkpoints SET {column}=? WHERE run_id=? AND seq=?", (digest, RUN, seq)))


def _state_piece(path: Path, value: object, seq: int = 1) -> None:
    _set_state(path, _put_piece(path, pack(value)), seq)


# -- the zstd frames an attacker writes by hand -----------------------------------------------
def rle_frame(content_size: int, block: int = 128 * 1024) -> bytes:
    """A valid zstd frame of ``content_size`` zero bytes made of RLE blocks (4 bytes per
    128 KB): 4 GiB is a 131 KB blob whose header declares 4 GiB."""
    out = [struct.pack("<I", 0xFD2FB528), bytes([0xE0]), struct.pack("<Q", content_size)]
    left = content_size
    while left > 0:
        n = min(block, left)
        left -= n
        header = (1 if left == 0 else 0) | (1 << 1) | (n << 3)     # last flag, RLE type, size
        out.append(header.to_bytes(3, "little") + b"\x00")
    return b"".join(out)


# -- the cases --------------------------------------------------------------------------------
def _chain(path: Path, leaf: bytes, link, count: int) -> None:
    """Insert ``count`` pieces, each ``link(digest of the one before)``, in one transaction;
    the last becomes the state of r1:1."""
    digest, rows = digest_of(leaf), [(digest_of(leaf), 0, len(leaf), leaf)]
    for _ in range(count):
        raw = pack(link(digest))
        digest = digest_of(raw)
        rows.append((digest, 0, len(raw), raw))
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA synchronous=OFF")
    with conn:
        conn.executemany("INSERT OR REPLACE INTO ci_blobs (hash, codec, size, data) VALUES (?, ?, ?, ?)", rows)
    conn.close()
    _set_state(path, digest)


def _dag(path: Path) -> None:
    _chain(path, pack("leaf" * 20), lambda d: [Ref(d, 1), Ref(d, 1)], 40)


def _repeated_chunk(path: Path) -> None:
    chunk = msgpack.packb(msgpack.ExtType(3, msgpack.packb([pack("x" * 400)] * 128)))
    digest = _put_piece(path, chunk, codec=1, data=zstandard.ZstdCompressor().compress(chunk))
    table = ChunkedList(tuple(Chunk(count=128, size=len(chunk), digest=digest) for _ in range(60_000)))
    raw = pack({"messages": table})
    _set_state(path, _put_piece(path, raw, codec=1, data=zstandard.ZstdCompressor().compress(raw)))


def _text(path: Path, items: list, *, count: int | None = None, entries: int = 1, inline: bool = False) -> None:
    """A state ``{"doc": text}`` whose text piece (format 4) names ``entries`` times one chunk
    holding ``items``, each entry counting ``count`` segments (default: the truth)."""
    chunk = frame_chunk([pack(item) for item in items])
    digest = _put_piece(path, chunk, codec=1, data=zstandard.ZstdCompressor().compress(chunk))
    text = ChunkedText(tuple(Chunk(count=len(items) if count is None else count, size=len(chunk), digest=digest)
                             for _ in range(entries)))
    if inline:
        _state_piece(path, {"doc": text})
        return
    raw = pack(text)
    _state_piece(path, {"doc": Ref(_put_piece(path, raw, codec=1, data=zstandard.ZstdCompressor().compress(raw)), 10)})


def _zstd_declaring(size: int, column: int | None) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        frame = rle_frame(size)
        raw = pack("x" * 1000)
        digest = digest_of(raw)
        _sql(path, ("INSERT INTO ci_blobs VALUES (?, 1, ?, ?)", (digest, column or size, frame)))
        _set_state(path, digest)
    return make


def _zstd_no_content_size(path: Path) -> None:
    frame = zstandard.ZstdCompressor(write_content_size=False).compress(b"\x00" * (64 << 20))
    raw = pack("x" * 1000)
    digest = digest_of(raw)
    _sql(path, ("INSERT INTO ci_blobs VALUES (?, 1, ?, ?)", (digest, len(raw), frame)))
    _set_state(path, digest)


def _deep(kind: str, levels: int) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        raw = (b"\x91" if kind == "array" else b"\x81\xa1k") * levels + b"\x01"
        _set_state(path, _put_piece(path, raw))
    return make


def _ref_chain(path: Path) -> None:
    _chain(path, pack("end"), lambda d: [Ref(d, 1)], 5000)


def _legit_deep(path: Path) -> None:
    value: object = "bottom"
    for _ in range(250):
        value = {"k": value}
    _state_piece(path, value)


def _symlink_loop(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    link = directory / "loop.db"
    os.symlink(link, link)
    return link


def _killed_writer(directory: Path) -> Path:
    """A store whose writer was SIGKILLed with checkpoints committed in its -wal."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "store.db"
    code = textwrap.dedent(f"""
        import os, sqlite3, sys
        from inspector.record import Checkpointer
        cp = Checkpointer({str(path)!r}, name="killed")
        for n in range(25):
            cp.save({{"n": n}})
        conn = sqlite3.connect({str(path)!r})
        conn.execute("UPDATE ci_runs SET id='r1' WHERE id=?", (cp.run_id,))
        conn.execute("UPDATE ci_checkpoints SET run_id='r1' WHERE run_id=?", (cp.run_id,))
        conn.commit()
        print("saved", flush=True)
        sys.stdin.read()
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "saved"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert (directory / "store.db-wal").exists() and (directory / "store.db-shm").exists()
    return path


PUBLIC: list[Path] = []


def public_dir() -> Path:
    """A directory another user can reach (pytest's own are private to this user);
    ``cleanup`` removes it."""
    path = Path(tempfile.mkdtemp(prefix="ci-hostile-"))
    path.chmod(0o755)
    PUBLIC.append(path)
    return path


def cleanup() -> None:
    """Remove the directories ``_public_dir`` made (making their read-only parts writable)."""
    for path in PUBLIC:
        for folder, _, _ in os.walk(path):
            os.chmod(folder, 0o755)
        shutil.rmtree(path, ignore_errors=True)
    PUBLIC.clear()


def _read_only_tree(directory: Path, base: Path) -> Path:
    path = _copy(base, directory)
    path.chmod(0o444)
    directory.chmod(0o555)
    return path


def _lg_text_body(path: Path) -> None:
    _sql(path, "UPDATE checkpoints SET checkpoint = CAST(checkpoint AS TEXT) "
               "WHERE rowid = (SELECT min(rowid) FROM checkpoints)")


def _lg_deep_metadata(path: Path) -> None:
    _sql(path, ("UPDATE checkpoints SET metadata = ?", ("[" * 100_000 + "]" * 100_000,)))


def _lg_deep_ext(path: Path) -> None:
    blob = msgpack.packb(1)
    for _ in range(900):
        blob = msgpack.packb(msgpack.ExtType(5, msgpack.packb(["mod", "Cls", blob])))
    _sql(path, ("UPDATE writes SET value = ?, type = 'msgpack'", (blob,)),
         ("UPDATE checkpoints SET checkpoint = ?, type = 'msgpack' WHERE rowid = "
          "(SELECT max(rowid) FROM checkpoints)", (msgpack.packb({"v": 1, "id": "x", "ts": "t",
                                                                   "channel_values": {"deep": msgpack.ExtType(0, blob)},
                                                                   "channel_versions": {}, "versions_seen": {}}),)))


def _lg_body(path: Path, channel_values: bytes) -> None:
    """The last checkpoint's body: a map whose channel_values are ``channel_values`` (raw msgpack)."""
    head = msgpack.packb({"v": 1, "id": "x", "ts": "t", "channel_versions": {}, "versions_seen": {}})
    body = bytes([head[0] + 1]) + head[1:] + msgpack.packb("channel_values") + channel_values   # fixmap n+1
    _sql(path, ("UPDATE checkpoints SET checkpoint = ?, type = 'msgpack' WHERE rowid = "
                "(SELECT max(rowid) FROM checkpoints)", (body,)))


def _lg_huge_declared(path: Path) -> None:
    # a map declaring 2^32-1 entries and an array declaring 2^32-1 items, in a few bytes
    _lg_body(path, b"\x81\xa1a\xdd\xff\xff\xff\xff" + b"\x00" * 64)
    _sql(path, ("UPDATE writes SET value = ?, type = 'msgpack'", (b"\xdf\xff\xff\xff\xff\x00\x00",)))


def _lg_many_tiny_ext(path: Path) -> None:
    tiny = msgpack.ExtType(0, msgpack.packb(["m", "C", 1]))
    _lg_body(path, msgpack.packb({"exts": [tiny] * 300_000}))


def _lg_ext_bomb(path: Path) -> None:
    # 300 levels of ext, each payload holding the next with a 256 KB string beside it: each
    # level's payload is unpacked again (300 x 256 KB); the depth budget stops it at 256
    value: object = "x" * 256 * 1024
    for _ in range(300):
        value = msgpack.ExtType(0, msgpack.packb(["m", "C", [value, "x" * 1024]]))
    _lg_body(path, msgpack.packb({"bomb": value}))


def _native_cases(base: Path, root: Path) -> list[Case]:
    """Damage a copy of the native base store for each case."""
    escape = "\x1b]0;pwned\x07\x1b[2J\x1b[31mred\r\x08"
    simple: dict[str, Callable[[Path], None]] = {
        "lineage_cycle": lambda p: _sql(p, ("UPDATE ci_runs SET parent_run=?, parent_checkpoint=1 WHERE id=?", (FORK, RUN))),
        "checkpoint_parent_cycle": lambda p: _sql(p, "UPDATE ci_checkpoints SET parent_id = id"),
        "time_as_string": lambda p: _sql(p, "UPDATE ci_checkpoints SET created='yesterday'",
                                         "UPDATE ci_runs SET updated='soon', heartbeat='x', created='then'"),
        "wrong_column_types": lambda p: _sql(p, "UPDATE ci_checkpoints SET size=x'00ff', ops='many', "
                                                "tasks_done=1.5, name=42, parent_id='p' WHERE seq=1",
                                             "UPDATE ci_runs SET owner_pid='me', epoch=x'01', checkpoint_count='x' WHERE id='r2'"),
        # a run whose checkpoints a prune would remove (no fork, not running) counting them
        # in text: the plan once subtracted from it (a traceback)
        "prunable_count_as_text": lambda p: _sql(p, f"DELETE FROM ci_runs WHERE id='{FORK}'",
                                                 f"UPDATE ci_runs SET status='completed', checkpoint_count='x' "
                                                 f"WHERE id='{RUN}'"),
        # a number where a BLOB belongs (found by putting one in every BLOB column): bytes() of
        # it is that many zero bytes, 3 GB here (prune's list of pieces: MemoryError)
        "piece_hash_a_number": lambda p: _sql(p, f"DELETE FROM ci_runs WHERE id='{FORK}'",
                                              f"UPDATE ci_runs SET status='completed' WHERE id='{RUN}'",
                                              "UPDATE ci_blobs SET hash=3000000000 "
                                              "WHERE rowid=(SELECT max(rowid) FROM ci_blobs)"),
        # a running run owned on this host by pid -5 (found by driving the window over mutated
        # stores): psutil refused the pid, and runs, stuck and the window's run list failed
        "owner_pid_negative": lambda p: _sql(p, ("UPDATE ci_runs SET status='running', owner_host=?, owner_pid=-5, "
                                                 "heartbeat=1e9 WHERE id=?", (os.uname().nodename, RUN))),
        # a checkpoint the run counts but its listing cannot give (a seq out of range; found the
        # same way): the window's timeline read that page again at every paint
        "checkpoint_seq_negative": lambda p: _sql(p, "UPDATE ci_checkpoints SET seq=-5 WHERE seq=2"),
        # the same with a prunable checkpoint's state hash in text: the plan's count of the pieces
        # it frees once took it for bytes (a traceback)
        "prunable_hash_as_text": lambda p: _sql(p, f"DELETE FROM ci_runs WHERE id='{FORK}'",
                                                f"UPDATE ci_runs SET status='completed' WHERE id='{RUN}'",
                                                "UPDATE ci_checkpoints SET state_hash=hex(state_hash) WHERE seq=0"),
        # a schema entry whose name is not UTF-8 and whose SQL does not parse: SQLite's message
        # quotes the name, and the standard library raised UnicodeDecodeError decoding it
        "schema_name_not_utf8": lambda p: _sql(p, "PRAGMA writable_schema=ON",
                                               "UPDATE sqlite_master SET name=CAST(x'63695f70eb' AS TEXT), "
                                               "sql='CREATE TABLE ci_pins (' WHERE name='ci_pins'"),
        "seq_as_text": lambda p: _sql(p, "UPDATE ci_checkpoints SET seq='one' WHERE seq=1"),
        "hash_as_text": lambda p: _sql(p, "UPDATE ci_checkpoints SET state_hash=hex(state_hash) WHERE seq=1"),
        "hash_wrong_length": lambda p: _set_state(p, b"\x01\x02"),
        "missing_piece": lambda p: _set_state(p, b"\x07" * 16),
        "piece_digest_mismatch": lambda p: _sql(p, "UPDATE ci_blobs SET data = x'93010203', codec=0, size=4"),
        "unknown_codec": lambda p: _sql(p, "UPDATE ci_blobs SET codec=7"),
        "size_column_text": lambda p: _sql(p, "UPDATE ci_blobs SET size='big'"),
        "data_as_text": lambda p: _sql(p, "UPDATE ci_blobs SET data=CAST(data AS TEXT) WHERE codec=0"),
        "garbage_piece": lambda p: _set_state(p, _put_piece(p, b"\xc1\xc1\xc1")),
        "dag_2_40": _dag,
        "repeated_chunk": _repeated_chunk,
        "zstd_declares_4gib": _zstd_declaring(4 << 30, 1000),
        "zstd_declares_16gib": _zstd_declaring(16 << 30, 1000),
        "size_column_4gib": _zstd_declaring(4 << 30, None),
        "zstd_no_content_size": _zstd_no_content_size,
        "deep_arrays_900": _deep("array", 900),
        "deep_maps_900": _deep("map", 900),
        "deep_arrays_5000": _deep("array", 5000),
        "ref_chain_5000": _ref_chain,
        "meta_json_100k_deep": lambda p: _sql(p, ("UPDATE ci_checkpoints SET meta=?", ("[" * 100_000 + "]" * 100_000,))),
        "meta_json_900_deep": lambda p: _sql(p, ("UPDATE ci_checkpoints SET meta=?", ("[" * 900 + "]" * 900,))),
        "meta_not_object": lambda p: _sql(p, "UPDATE ci_checkpoints SET meta='[1, 2]'"),
        "labels_not_object": lambda p: _sql(p, "UPDATE ci_runs SET labels='\"x\"', resume_spec='7'"),
        "bytes_map_key": lambda p: _state_piece(p, {b"\xffkey": 1, "n": [1, 2]}),
        "int_map_key": lambda p: _state_piece(p, {1: "one", None: "none"}),
        "tasks_is_list": lambda p: _set_state(p, _put_piece(p, pack([1, 2, 3])), 1, "tasks_hash"),
        "tasks_wrong_fields": lambda p: _set_state(p, _put_piece(p, pack({"tasks": [{"status": 5, "checks": "no",
                                                                                     "progress": "x"}, 7]})), 1, "tasks_hash"),
        "ext_unknown": lambda p: _set_state(p, _put_piece(p, msgpack.packb(msgpack.ExtType(9, b"x")))),
        # text pieces (format 4): a segment that is not text, a text marker inside a value, a
        # table that miscounts its chunk, and 60,000 entries naming one 50 KB chunk (3 GB of text)
        "text_segment_not_text": lambda p: _text(p, ["line\n", 7, None]),
        "text_inside_a_value": lambda p: _text(p, ["line\n"] * 3, inline=True),
        "text_count_mismatch": lambda p: _text(p, ["line\n"] * 3, count=99),
        "text_repeated_chunk": lambda p: _text(p, ["x" * 400] * 128, entries=60_000),
        "chunk_count_mismatch": lambda p: _state_piece(p, {"l": ChunkedList((Chunk(count=99, size=3, digest=_put_piece(p, pack([1, 2]))),))}),
        "run_name_invalid_utf8": lambda p: _sql(p, f"UPDATE ci_runs SET name=CAST(x'ff{'fe' * 3}41' AS TEXT), "
                                                   f"agent=CAST(x'c3' AS TEXT) WHERE id='{FORK}'"),
        "checkpoint_name_invalid_utf8": lambda p: _sql(p, "UPDATE ci_checkpoints SET name=CAST(x'ff41' AS TEXT), "
                                                          "change=CAST(x'c328' AS TEXT) WHERE seq=1"),
        "terminal_escapes": lambda p: _sql(p, ("UPDATE ci_runs SET name=?, agent=?", (escape, escape)),
                                           ("UPDATE ci_checkpoints SET name=?, change=?, kind=?", (escape, escape, "tool\x1b[2J"))),
        "nan_infinity": lambda p: _state_piece(p, {"nan": float("nan"), "inf": float("inf"), "ninf": float("-inf"),
                                                   "big": 2 ** 64 - 1}),
        "argv_is_string": lambda p: _sql(p, ("UPDATE ci_runs SET resume_spec=?", (json.dumps({"argv": "python agent.py", "cwd": 3}),))),
        "newer_version": lambda p: _sql(p, "UPDATE ci_meta SET value='99' WHERE key='format_version'"),
        "version_text": lambda p: _sql(p, "UPDATE ci_meta SET value='two' WHERE key='format_version'"),
        "no_runs": lambda p: _sql(p, "DELETE FROM ci_runs", "DELETE FROM ci_checkpoints"),
        "missing_table": lambda p: _sql(p, "DROP TABLE ci_blobs"),
        "huge_numbers": lambda p: _sql(p, "UPDATE ci_checkpoints SET size=9223372036854775807, ops=-9223372036854775808, "
                                          "created=1e308", "UPDATE ci_runs SET head_seq=2147483647, checks_total=-5"),
        # counters that contradict what they count (found by a mutation fuzzer): shown as valid,
        # and the run's checkpoints could not be reached by RUN:-1 or the window's --select
        "impossible_counts": lambda p: _sql(p, f"UPDATE ci_runs SET checks_passed=7, checks_total=-3, "
                                               f"checkpoint_count=-2, head_seq=-9 WHERE id='{RUN}'",
                                            "UPDATE ci_checkpoints SET size=-100, ops=-1, checks_passed=9, "
                                            "checks_total=2 WHERE seq=1"),
    }
    cases = []
    for name, damage in simple.items():
        path = _copy(base, root / name)
        damage(path)
        cases.append(Case(name, str(path)))
    data = base.read_bytes()
    for name, content in {"truncated": data[: len(data) // 2], "zero_bytes": b"",
                          "random_bytes": os.urandom(65536), "header_only": data[:100]}.items():
        (root / name).mkdir()
        (root / name / "store.db").write_bytes(content)
        cases.append(Case(name, str(root / name / "store.db")))
    cases.append(Case("legit_250_deep", str(_apply(base, root / "legit_250_deep", _legit_deep)), expect_ok=True))
    cases.append(Case("clean_store", str(_copy(base, root / "clean_store")), expect_ok=True))
    cases.append(Case("read_only_dir", str(_read_only_tree(public_dir() / "read_only_dir", base)),
                      expect_ok=True, other_user=True))
    cases.append(Case("killed_writer", str(_killed_writer(root / "killed_writer")), a="r1:0", b="r1:24", forked=False,
                      expect_ok=True))
    copied = root / "wal_without_shm"
    copied.mkdir()
    for suffix in ("", "-wal"):          # a killed writer's store copied without its -shm
        shutil.copyfile(root / "killed_writer" / f"store.db{suffix}", copied / f"store.db{suffix}")
    cases.append(Case("wal_without_shm", str(copied / "store.db"), a="r1:0", b="r1:24", expect_ok=True,
                      forked=False))
    cases.append(Case("symlink_loop", str(_symlink_loop(root / "symlink_loop"))))
    (root / "directory").mkdir()
    cases.append(Case("a_directory", str(root / "directory")))
    cases.append(Case("missing_file", str(root / "directory" / "nothing.db")))
    cases.append(Case("pg_bad_url", "postgresql://[::1"))
    cases.append(Case("pg_unreachable", "postgresql://nobody@127.0.0.1:9/none?connect_timeout=2"))
    cases.append(Case("unknown_scheme", "mysql://x/y"))
    return cases


def _apply(base: Path, directory: Path, damage: Callable[[Path], None]) -> Path:
    path = _copy(base, directory)
    damage(path)
    return path


def _lg_write_a_number(path: Path) -> None:
    """A pending write of the head whose value is a number where its BLOB belongs."""
    conn = sqlite3.connect(path)
    cols = [r[1] for r in conn.execute("PRAGMA table_info(writes)")]
    conn.close()
    values = {"task_id": "'t'", "idx": "0", "channel": "'messages'", "type": "'msgpack'", "value": "3000000000",
              "task_path": "''"}
    picked = [c for c in cols if c in values]
    _sql(path, f"INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, {', '.join(picked)}) "
               f"SELECT thread_id, checkpoint_ns, checkpoint_id, {', '.join(values[c] for c in picked)} "
               "FROM checkpoints WHERE rowid=(SELECT max(rowid) FROM checkpoints)")


def _langgraph_cases(base: Path, root: Path) -> list[Case]:
    damages = {"lg_body_as_text": _lg_text_body, "lg_metadata_100k_deep": _lg_deep_metadata,
               "lg_deep_ext": _lg_deep_ext,
               "lg_thread_invalid_utf8": lambda p: _sql(p, "UPDATE checkpoints SET thread_id=CAST(x'ff' AS TEXT) "
                                                           "WHERE rowid=(SELECT min(rowid) FROM checkpoints)"),
               "lg_metadata_not_json": lambda p: _sql(p, "UPDATE checkpoints SET metadata=x'ff00'"),
               "lg_parent_cycle": lambda p: _sql(p, "UPDATE checkpoints SET parent_checkpoint_id=checkpoint_id"),
               "lg_zero_type": lambda p: _sql(p, "UPDATE checkpoints SET type=NULL, checkpoint=NULL"),
               # the last checkpoint's id stored as a BLOB (it sorts after every text id): the
               # storage report's pages once found it again after itself, forever
               # a type tag LangGraph's serializer does not know (it raises NotImplementedError:
               # import's verification once let that through as a traceback)
               "lg_unknown_type_tag": lambda p: _sql(p, "UPDATE checkpoints SET type='msgpack\x01' "
                                                        "WHERE rowid=(SELECT min(rowid) FROM checkpoints)"),
               # a pending write's index beyond 64 bits (a REAL in the column): import's copy once
               # failed on it with OverflowError
               "lg_write_index_huge": lambda p: _sql(p, "UPDATE writes SET idx=1e308 "
                                                        "WHERE rowid=(SELECT min(rowid) FROM writes)"),
               "lg_checkpoint_id_blob": lambda p: _sql(p, "UPDATE checkpoints SET checkpoint_id=CAST(checkpoint_id AS BLOB) "
                                                          "WHERE rowid=(SELECT max(rowid) FROM checkpoints)"),
               # numbers where BLOBs belong: bytes() of one is that many zero bytes (3 GB here: the
               # head's body read by runs, show, history, usage and import; a pending write's value)
               "lg_body_a_number": lambda p: _sql(p, "UPDATE checkpoints SET checkpoint=3000000000 "
                                                     "WHERE rowid=(SELECT max(rowid) FROM checkpoints)"),
               "lg_write_value_a_number": _lg_write_a_number,
               "lg_huge_declared": _lg_huge_declared, "lg_many_tiny_ext": _lg_many_tiny_ext,
               "lg_ext_bomb": _lg_ext_bomb}
    cases = [Case("lg_clean", str(_copy(base, root / "lg_clean")), run="t1", a="t1:0", b="t1:1", expect_ok=True)]
    for name, damage in damages.items():
        cases.append(Case(name, str(_apply(base, root / name, damage)), run="t1", a="t1:0", b="t1:-1"))
    return cases


def _lane_base(path: Path) -> None:
    """A thread written by the real ``InspectorSaver`` (LangGraph lanes in a native store): two
    chat turns, so its checkpoints have pending writes, typed leaves and list chunks."""
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.graph import START, MessagesState, StateGraph

    from inspector.record.langgraph import InspectorSaver
    builder = StateGraph(MessagesState)
    builder.add_node("reply", lambda s: {"messages": [AIMessage(content="answer " * 40, id=f"a{len(s['messages'])}")]})
    builder.add_edge(START, "reply")
    with InspectorSaver.from_conn_string(str(path)) as saver:
        graph = builder.compile(checkpointer=saver)
        for turn in range(2):
            graph.invoke({"messages": [HumanMessage(content=f"q{turn}", id=f"q{turn}")]},
                         {"configurable": {"thread_id": "t1"}})


_LEAF_NUMBER = msgpack.packb({"__lg__": "msgpack", "b": 3_000_000_000})


def _lane_cases(base: Path, root: Path) -> list[Case]:
    """Damage the real saver cannot write: its pending writes, LangGraph rows and pieces."""
    state_of_1 = "(SELECT state_hash FROM ci_checkpoints WHERE seq=1)"
    damages = {
        "lane_write_bad_zstd": lambda p: _sql(p, "UPDATE ci_lg_writes SET codec=1, data=x'28b52ffd0400aabbcc'"),
        "lane_write_bad_msgpack": lambda p: _sql(p, "UPDATE ci_lg_writes SET codec=0, data=x'c1c1c1'"),
        "lane_write_huge_declared": lambda p: _sql(p, "UPDATE ci_lg_writes SET codec=1, size=1000000000000"),
        "lane_write_channel_not_text": lambda p: _sql(p, "UPDATE ci_lg_writes SET channel=x'ff00'"),
        # text columns holding BLOBs or numbers (found by mutating stores at random): a
        # namespace and task paths as BLOBs once reached the snapshot as bytes (a traceback)
        "lane_ns_blob": lambda p: _sql(p, "UPDATE ci_lg_lanes SET checkpoint_ns=x'96c6fc5ce4'"),
        "lane_write_columns_not_text": lambda p: _sql(p, "UPDATE ci_lg_writes SET task_path=CAST(task_path AS BLOB), "
                                                         "task_id=CAST(task_id AS BLOB), idx=idx || 'x', data='text'"),
        "lane_body_not_bytes": lambda p: _sql(p, "UPDATE ci_lg_checkpoints SET body='text', type=x'ff', "
                                                 "parent_checkpoint_id=7"),
        "lane_metadata_not_json": lambda p: _sql(p, "UPDATE ci_lg_checkpoints SET metadata=x'ff00'"),
        # a pending write's typed leaf whose bytes are a number (found by mutating the saver's
        # writes): bytes() of it, 3 GB; a float failed with TypeError
        "lane_write_leaf_a_number": lambda p: _sql(p, ("UPDATE ci_lg_writes SET codec=0, data=?, size=?",
                                                       (_LEAF_NUMBER, len(_LEAF_NUMBER)))),
        "lane_body_garbage": lambda p: _sql(p, "UPDATE ci_lg_checkpoints SET body=x'c1c1'"),
        "lane_parent_cycle": lambda p: _sql(p, "UPDATE ci_lg_checkpoints SET parent_checkpoint_id=checkpoint_id"),
        "lane_missing_state_piece": lambda p: _sql(p, f"DELETE FROM ci_blobs WHERE hash={state_of_1}"),
        "lane_state_piece_bad_zstd": lambda p: _sql(p, f"UPDATE ci_blobs SET codec=1, data=x'28b52ffd00' "
                                                       f"WHERE hash={state_of_1}"),
    }
    cases = [Case("lane_clean", str(_copy(base, root / "lane_clean")), run="t1", a="t1:0", b="t1:1",
                  expect_ok=True)]
    for name, damage in damages.items():
        cases.append(Case(name, str(_apply(base, root / name, damage)), run="t1", a="t1:0", b="t1:1"))
    return cases


def build(root: Path) -> list[Case]:
    """Write every case under ``root`` (a fresh directory) and return them."""
    bases = root / "_bases"
    bases.mkdir(parents=True)
    native, lg, lane = bases / "native.db", bases / "langgraph.db", bases / "lanes.db"
    _native_base(native)
    _langgraph_base(lg)
    _lane_base(lane)
    return _native_cases(native, root) + _langgraph_cases(lg, root) + _lane_cases(lane, root)
