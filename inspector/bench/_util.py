"""Small helpers shared by the benchmarks: timing statistics and table printing."""

from __future__ import annotations

import json
import statistics
from typing import Any
from collections.abc import Sequence


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) by nearest rank."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def summary_ms(samples: Sequence[float]) -> dict[str, float]:
    """Median, p95, mean and max of samples in seconds, as milliseconds."""
    return {"median_ms": statistics.median(samples) * 1e3, "p95_ms": percentile(samples, 95) * 1e3,
            "mean_ms": statistics.fmean(samples) * 1e3, "max_ms": max(samples) * 1e3}


def print_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Aligned plain-text table."""
    text = [[f"{c:.3f}" if isinstance(c, float) else str(c) for c in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in text)) for i, h in enumerate(headers)]
    print("  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=False)))
    for row in text:
        print("  ".join(c.rjust(w) for c, w in zip(row, widths, strict=False)))


def dump(result: Any) -> None:
    """Print JSON results."""
    print(json.dumps(result, indent=2, default=str))
