"""The recording library agents import: ``from inspector.record import Checkpointer``."""

from inspector.errors import OwnershipLost
from inspector.record.checkpointer import Checkpointer
from inspector.record.handoff import ENV_VAR, Handoff, read_handoff
from inspector.record.interval import Interval

__all__ = ["Checkpointer", "Interval", "Handoff", "OwnershipLost", "ENV_VAR", "read_handoff"]
