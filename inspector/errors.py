"""The error classes that cross layers: user-facing store errors versus bugs."""

from __future__ import annotations


class StoreError(Exception):
    """The environment's fault (missing, foreign, corrupt, locked, newer store…).

    The message is one sentence a user understands; the CLI prints it and exits 2,
    the GUI shows it and stays usable.
    """


class NotAStoreError(StoreError):
    """The path or URL exists but is not a store we can read."""


class RunNotFoundError(StoreError):
    """There is no such run (never was, or it was deleted)."""


class CheckpointNotFoundError(StoreError):
    """There is no such checkpoint (never was, or it was pruned or deleted)."""


class NewerFormatError(StoreError):
    """The store was written by a newer version of the format."""


class CorruptDataError(StoreError):
    """A blob, row or payload in the store cannot be decoded."""


class ReadOnlyError(StoreError):
    """A write was attempted on a store opened read-only."""


class OwnershipLost(StoreError):
    """This process no longer owns the run: another process resumed it (newer epoch)."""


class TaskStateError(ValueError):
    """A task state does not follow the documented model; the message says where."""


class NotResumableError(StoreError):
    """The run refuses to be resumed; the message gives the reason."""


class UnstorableStateError(TypeError, ValueError):
    """The recording library cannot store this state: a value of a type JSON has no form
    for, or (``StateTooDeepError``) nesting deeper than it can encode. Nothing was written;
    the run goes on and the next ``save`` may succeed. (A TypeError and a ValueError, so
    callers catching either, as before, still do.)"""


class StateTooDeepError(UnstorableStateError):
    """The state nests more levels deep than the recording library can store."""


class ResumeSpecError(ValueError):
    """A resume spec is not ``{"argv": [str, …], "cwd": str, "env": {str: str}, "inherit": [str]}``."""
