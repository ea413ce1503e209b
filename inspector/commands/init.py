"""``checkpoint-inspector init STORE``: create a store's schema (idempotent), optionally a read-only role."""

from __future__ import annotations

import argparse
import os
from typing import Any

from inspector.commands._common import add_json_arg, add_store_arg, print_json
from inspector.errors import StoreError
from inspector.store import create_store
from inspector.store.engine import parse_target
from inspector.store.native.schema import FORMAT_VERSION
from inspector.store.roles import grant_readonly_role, readonly_url


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``init`` sub-command."""
    parser = sub.add_parser(
        "init", help="create a native store's tables (safe to repeat); on PostgreSQL also a read-only role",
        description="Create the tables of a native checkpoint store at a SQLite path or a "
                    "postgresql:// URL. Running it again changes nothing. With --readonly-role, "
                    "also create a PostgreSQL login role that can only read the store, for "
                    "people who browse it with the inspector.")
    add_store_arg(parser)
    add_json_arg(parser)
    parser.add_argument("--readonly-role", metavar="NAME",
                        help="create (or update) a PostgreSQL role that may only read the store")
    parser.add_argument("--readonly-password-env", metavar="VAR",
                        help="set the role's password from this environment variable "
                             "(never pass passwords on the command line)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Create the schema; then the read-only role if asked."""
    password = None
    if args.readonly_password_env:
        if not args.readonly_role:
            raise StoreError("--readonly-password-env needs --readonly-role.")
        password = os.environ.get(args.readonly_password_env)
        if password is None:
            raise StoreError(f"The environment variable {args.readonly_password_env} is not set.")
    if args.readonly_role and parse_target(args.store).backend != "postgresql":
        raise StoreError("Read-only roles exist only on PostgreSQL; a SQLite store is opened "
                         "read-only by the inspector anyway.")
    store = create_store(args.store)
    try:
        info = store.info
        result: dict[str, Any] = {"store": info.display, "backend": info.backend, "format_version": FORMAT_VERSION}
        if args.readonly_role:
            created = grant_readonly_role(store.engine, info.display, args.readonly_role, password)
            result["readonly_role"] = {"name": args.readonly_role, "created": created,
                                       "url": readonly_url(info.display, args.readonly_role)}
    finally:
        store.close()
    if args.json:
        print_json(result)
        return 0
    print(f"Store ready: {result['store']} ({result['backend']}, native format {FORMAT_VERSION}).")
    role = result.get("readonly_role")
    if role:
        verb = "created" if role["created"] else "updated"
        print(f"Read-only role {role['name']} {verb}; browse with:")
        print(f"  checkpoint-inspector open {role['url']}")
    return 0
