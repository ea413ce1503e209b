"""Retry delays with jitter: after a server restart a fleet of agents does not retry in lockstep."""

from __future__ import annotations

import random
from collections.abc import Iterator

FIRST_DELAY = 0.1   # seconds before the first retry (the envelope; the delay drawn is at most this)
MAX_DELAY = 2.0     # the envelope doubles up to this


def retry_delays(first: float = FIRST_DELAY, cap: float = MAX_DELAY,
                 rng: random.Random | None = None) -> Iterator[float]:
    """Endless delays for retrying a write: an exponential envelope (``first``, doubling up to
    ``cap``) with "equal jitter" — each delay is drawn uniformly from the upper half of its
    envelope, so it still backs off but two processes that failed at the same instant drift
    apart instead of hitting the restarted server together on every round."""
    rng = rng or random.Random()     # seeded from the OS: every process draws its own delays
    envelope = first
    while True:
        yield envelope / 2 + rng.uniform(0, envelope / 2)
        envelope = min(envelope * 2, cap)
