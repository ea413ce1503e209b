"""Kept for older imports: the content codec now lives in ``inspector.codec``."""

from inspector.codec import *  # noqa: F403
from inspector.codec import __all__  # noqa: F401
