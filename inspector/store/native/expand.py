"""Kept for older imports: budgeted expansion of pieces now lives in ``inspector.codec.expand``."""

from inspector.codec.expand import *  # noqa: F403
from inspector.codec.expand import ROOT, Cost, build, check, fetch_all, resolve_all, resolve_value  # noqa: F401
