"""Interval policies: when a ``save`` call really writes a snapshot."""

from __future__ import annotations

import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Interval:
    """Snapshot every ``steps`` operations and/or every ``seconds`` seconds (whichever first)."""

    steps: int = 1
    seconds: float | None = None

    @classmethod
    def every_step(cls) -> Interval:
        """Snapshot after every operation (the default)."""
        return cls(1, None)

    @classmethod
    def every(cls, steps: int) -> Interval:
        """Snapshot every N operations."""
        if steps < 1:
            raise ValueError("the interval must be at least one operation")
        return cls(steps, None)

    @classmethod
    def every_seconds(cls, seconds: float) -> Interval:
        """Snapshot when at least T seconds passed since the last snapshot."""
        if seconds <= 0:
            raise ValueError("the interval must be a positive number of seconds")
        return cls(10**9, seconds)

    @classmethod
    def parse(cls, text: str) -> Interval:
        """'step', 'N' (operations) or 'Ns' (seconds)."""
        text = text.strip().lower()
        if text in ("", "step", "every", "1"):
            return cls.every_step()
        if text.endswith("s"):
            return cls.every_seconds(float(text[:-1]))
        return cls.every(int(text))

    def due(self, ops_since: int, last_time: float, now: float | None = None) -> bool:
        """Whether a snapshot is due after ``ops_since`` operations."""
        if ops_since >= self.steps:
            return True
        return self.seconds is not None and ((now or time.time()) - last_time) >= self.seconds

    def __str__(self) -> str:
        if self.seconds is not None:
            return f"every {self.seconds:g} s"
        return "every step" if self.steps == 1 else f"every {self.steps} operations"
