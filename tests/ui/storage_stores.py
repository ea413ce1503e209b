"""Stores the Storage view's tests prune, written by the real recording library."""

from __future__ import annotations

import random
from pathlib import Path

from inspector.record import Checkpointer


def churning_store(path: Path, steps: int = 150) -> None:
    """Two runs whose documents are replaced a few at a time: a prune leaves thousands of
    pieces no checkpoint reaches, which its collection deletes after the checkpoints."""
    rnd = random.Random(3)
    for n in range(2):
        docs = ["".join(rnd.choice("abcdef ") for _ in range(300)) for _ in range(20)]
        with Checkpointer(path, name=f"churn {n}") as cp:
            for step in range(steps):
                for _ in range(5):
                    docs[rnd.randrange(20)] = "".join(rnd.choice("abcdef ") for _ in range(300))
                cp.save({"docs": list(docs), "step": step}, kind="tool", name="step", force=True)
