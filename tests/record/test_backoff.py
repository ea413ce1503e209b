"""The recording library's retry delays back off exponentially and are jittered per process."""

from __future__ import annotations

import itertools
import random
import statistics
import subprocess
import sys

from inspector.record.backoff import retry_delays


def test_delays_stay_in_the_upper_half_of_a_doubling_envelope() -> None:
    delays = list(itertools.islice(retry_delays(0.1, 2.0, random.Random(7)), 12))
    envelopes = [min(0.1 * 2 ** n, 2.0) for n in range(12)]
    assert all(env / 2 <= d <= env for d, env in zip(delays, envelopes, strict=True))
    assert delays[-1] >= 1.0                 # it did back off to the cap's half or more


def test_a_fleet_that_failed_together_does_not_retry_together() -> None:
    """100 writers lose the server at the same instant: their retry times spread out."""
    fleet = [list(itertools.islice(retry_delays(0.1, 2.0, random.Random(seed)), 8)) for seed in range(100)]
    retry_times = [list(itertools.accumulate(d)) for d in fleet]
    for round_n in (0, 3, 7):
        times = [t[round_n] for t in retry_times]
        assert len({round(t, 4) for t in times}) > 90          # almost nobody shares an instant
        assert statistics.pstdev(times) > 0.01 * (round_n + 1)


def test_every_process_draws_its_own_delays() -> None:
    code = ("import itertools; from inspector.record.backoff import retry_delays; "
            "print(list(itertools.islice(retry_delays(), 5)))")
    runs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
            for _ in range(3)}
    assert len(runs) == 3
