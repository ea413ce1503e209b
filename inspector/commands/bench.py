"""``checkpoint-inspector bench NAME``: benchmarks, one module per name in ``inspector.bench``."""

from __future__ import annotations

import argparse
import importlib
import pkgutil

import inspector.bench


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``bench`` and one sub-command per benchmark module."""
    parser = sub.add_parser("bench", help="run a benchmark and print its figures")
    names = sub_parsers = parser.add_subparsers(dest="bench", metavar="BENCH", required=True)
    for module in sorted(pkgutil.iter_modules(inspector.bench.__path__), key=lambda m: m.name):
        if not module.name.startswith("_"):
            importlib.import_module(f"inspector.bench.{module.name}").register(sub_parsers)
    del names
