"""``checkpoint-inspector info STORE``: what a store is and what its adapter can do."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inspector.commands._common import add_json_arg, add_store_arg, print_json
from inspector.model import Capability
from inspector.store import open_reader
from inspector.store.sqlite_ro import may_write

if TYPE_CHECKING:
    import argparse


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``info`` sub-command."""
    parser = sub.add_parser("info", help="the store's kind, backend and capabilities (fork, resume, live)")
    add_store_arg(parser)
    add_json_arg(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the store's description and each capability with its reason."""
    with open_reader(args.store) as store:
        info = store.info
        runs = store.count_runs()
        # this command opens every store read-only; what matters to a user is whether they may write it
        writable, why = _writable(str(args.store)), "file permissions"
        if writable is None:
            writable, why = _role_may_write(store), "your database role may only read"
    caps = {a: info.capabilities.get(a) for a in ("fork", "resume", "live")}
    read_only = info.read_only if writable is None else not writable
    if read_only:
        caps.update({a: Capability(False, f"the store is read-only for you ({why})")
                     for a in ("fork", "resume") if caps[a].available})
    if args.json:
        print_json({"display": info.display, "kind": info.kind, "label": info.label, "backend": info.backend,
                    "format_version": info.format_version, "read_only": read_only, "runs": runs,
                    "capabilities": {a: {"available": c.available, "reason": c.reason} for a, c in caps.items()}})
        return 0
    print(f"{info.display}")
    print(f"  kind: {info.label or info.kind} ({info.kind}) · {info.backend} · "
          f"{'read-only for you' if read_only else 'writable by you'} · {runs:,} run{'' if runs == 1 else 's'}")
    for action, cap in caps.items():
        word = "yes" if cap.available else "no"
        print(f"  {action}: {word}" + (f" — {cap.reason}" if cap.reason else ""))
    return 0


def _writable(target: str) -> bool | None:
    """Whether this user may write the store at the local path ``target`` (a SQLite file: it and
    its folder, where SQLite keeps its journal; a folder of files: the folder); None for a URL
    (the server decides when it is written)."""
    if "://" in target:
        if not target.startswith("sqlite:///"):
            return None
        target = target[len("sqlite:///"):].split("?", 1)[0]
    path = Path(target).expanduser()
    return os.access(path, os.W_OK | os.X_OK) if path.is_dir() else may_write(path)


def _role_may_write(store: Any) -> bool | None:
    """Whether the PostgreSQL role a store was opened as may write its tables (INSERT on one of
    the schema's tables, and not read-only by default, as ``init --readonly-role`` makes a
    role); None for other stores."""
    engine = getattr(store, "engine", None)
    if engine is None or engine.dialect.name != "postgresql":
        return None
    with engine.connect() as conn:
        return bool(conn.exec_driver_sql(
            "SELECT coalesce(bool_or(has_table_privilege(c.oid, 'INSERT')), false)"
            " AND NOT coalesce('default_transaction_read_only=on' = ANY(r.rolconfig), false)"
            " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace, pg_roles r"
            " WHERE n.nspname = current_schema() AND c.relkind = 'r' AND r.rolname = current_user"
            " GROUP BY r.rolconfig").scalar())
