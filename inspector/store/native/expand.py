"""Kept for older imports: budgeted expansion of pieces now lives in ``inspector.codec.expand``."""

from inspector.codec.expand import *  # noqa: F403
from inspector.codec.expand import (  # noqa: F401
    ROOT,
    Cost,
    build,
    check,
    check_values,
    fetch_all,
    resolve_all,
    resolve_value,
)
