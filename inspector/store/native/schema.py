"""Tables of the native store (SQLAlchemy Core); documented in FORMAT.md beside this file."""

from __future__ import annotations

from sqlalchemy import (BigInteger, Boolean, Column, Float, Index, Integer, LargeBinary,
                        MetaData, SmallInteger, String, Table, Text, UniqueConstraint)

from inspector.store.native import FORMAT_VERSION  # noqa: F401  (re-exported)

APPLICATION = "checkpoint-inspector"

metadata = MetaData()

meta = Table(
    "ci_meta", metadata,
    Column("key", String(64), primary_key=True),
    Column("value", Text, nullable=False),
)

runs = Table(
    "ci_runs", metadata,
    Column("id", String(64), primary_key=True),
    Column("name", Text, nullable=False),
    Column("agent", Text, nullable=False, default=""),
    Column("status", String(16), nullable=False),
    Column("created", Float, nullable=False),
    Column("updated", Float, nullable=False),
    Column("owner_host", Text),
    Column("owner_pid", Integer),
    Column("heartbeat", Float),
    Column("epoch", Integer, nullable=False, default=1),
    Column("resume_spec", Text),            # JSON: {"argv": [...], "cwd": str, "env": {...}}
    Column("resumable", Boolean, nullable=False, default=True),
    Column("not_resumable_reason", Text),
    Column("parent_run", String(64)),
    Column("parent_checkpoint", BigInteger),
    Column("fork_reason", Text),
    Column("labels", Text),                 # JSON object
    Column("last_error", Text),
    Column("head_seq", Integer, nullable=False, default=-1),
    Column("checkpoint_count", Integer, nullable=False, default=0),
    Column("tasks_done", Integer, nullable=False, default=0),
    Column("tasks_total", Integer, nullable=False, default=0),
    Column("checks_passed", Integer, nullable=False, default=0),
    Column("checks_total", Integer, nullable=False, default=0),
)
Index("ci_runs_updated", runs.c.updated)
Index("ci_runs_parent", runs.c.parent_run)

checkpoints = Table(
    "ci_checkpoints", metadata,
    Column("id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True),
    Column("run_id", String(64), nullable=False),
    Column("seq", Integer, nullable=False),
    Column("parent_id", BigInteger),
    Column("kind", String(16), nullable=False),
    Column("name", Text, nullable=False, default=""),
    Column("created", Float, nullable=False),
    Column("state_hash", LargeBinary(16), nullable=False),
    Column("tasks_hash", LargeBinary(16)),
    Column("meta", Text),                   # JSON object
    Column("size", BigInteger, nullable=False, default=0),
    Column("size_delta", BigInteger, nullable=False, default=0),
    Column("ops", Integer, nullable=False, default=1),
    Column("tasks_done", Integer, nullable=False, default=0),
    Column("tasks_total", Integer, nullable=False, default=0),
    Column("checks_passed", Integer, nullable=False, default=0),
    Column("checks_total", Integer, nullable=False, default=0),
    Column("change", Text, nullable=False, default=""),
    Column("epoch", Integer, nullable=False, default=1),
    UniqueConstraint("run_id", "seq", name="ci_checkpoints_run_seq"),
)

blobs = Table(
    "ci_blobs", metadata,
    Column("hash", LargeBinary(16), primary_key=True),
    Column("codec", SmallInteger, nullable=False),   # 0 raw msgpack, 1 zstd(msgpack)
    Column("size", Integer, nullable=False),         # raw (uncompressed) length
    Column("data", LargeBinary, nullable=False),
)

# Pinned checkpoints (never pruned). Not required: stores made before pins have no such table,
# and only writers create it (``inspector.store.native.pins.ensure_table``); readers tolerate its absence.
pins = Table(
    "ci_pins", metadata,
    Column("checkpoint_id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=False),
    Column("run_id", String(64), nullable=False),
    Column("created", Float, nullable=False),
    Column("note", Text, nullable=False, default=""),
)
Index("ci_pins_run", pins.c.run_id)

REQUIRED_TABLES = {"ci_meta", "ci_runs", "ci_checkpoints", "ci_blobs"}

# -- LangGraph lanes (format 3, written by inspector.record.langgraph.InspectorSaver) -------
# One lane = one (thread_id, checkpoint_ns) of a LangGraph thread = one ordinary run above.
lg_lanes = Table(
    "ci_lg_lanes", metadata,
    Column("run_id", String(64), primary_key=True),
    Column("thread_id", Text, nullable=False),
    Column("checkpoint_ns", Text, nullable=False, default=""),
    UniqueConstraint("thread_id", "checkpoint_ns", name="ci_lg_lanes_thread_ns"),
)

lg_checkpoints = Table(
    "ci_lg_checkpoints", metadata,
    Column("id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=False),
    Column("run_id", String(64), nullable=False),
    Column("thread_id", Text, nullable=False),
    Column("checkpoint_ns", Text, nullable=False, default=""),
    Column("checkpoint_id", Text, nullable=False),
    Column("parent_checkpoint_id", Text),
    Column("lg_run_id", Text),               # metadata["run_id"] (delete_for_runs)
    Column("type", String(32), nullable=False),   # serde type tag of body
    Column("body", LargeBinary, nullable=False),  # the checkpoint without channel_values
    Column("metadata", Text, nullable=False),     # JSON object (LangGraph metadata)
    UniqueConstraint("thread_id", "checkpoint_ns", "checkpoint_id", name="ci_lg_checkpoints_key"),
)
Index("ci_lg_checkpoints_run", lg_checkpoints.c.lg_run_id)

lg_writes = Table(
    "ci_lg_writes", metadata,
    Column("thread_id", Text, primary_key=True),
    Column("checkpoint_ns", Text, primary_key=True, default=""),
    Column("checkpoint_id", Text, primary_key=True),
    Column("task_id", Text, primary_key=True),
    Column("idx", Integer, primary_key=True),
    Column("channel", Text, nullable=False),
    Column("task_path", Text, nullable=False, default=""),
    Column("codec", SmallInteger, nullable=False, default=0),   # 0 raw, 1 zstd (as ci_blobs)
    Column("data", LargeBinary, nullable=False),  # the whole value, plain msgpack (no markers)
    Column("size", BigInteger, nullable=False, default=0),   # raw length
)

LANGGRAPH_TABLES = {"ci_lg_lanes", "ci_lg_checkpoints", "ci_lg_writes"}
