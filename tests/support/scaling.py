"""Growth ratios instead of wall-clock limits: how much slower four times the input is.

A fixed time limit fails on a busy machine and passes a quadratic algorithm on a fast
one; the ratio of two runs in the same process does neither. Linear work gives about 4,
quadratic about 16.
"""

from __future__ import annotations

import time
from collections.abc import Callable


def best_seconds(run: Callable[[], object], repeat: int = 3) -> float:
    """The fastest of ``repeat`` runs (the least disturbed by the rest of the machine)."""
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best


def growth(run: Callable[[str], object], text: str, repeat: int = 3) -> float:
    """Seconds for ``text`` over seconds for its first quarter."""
    quarter = text[: len(text) // 4]
    small = best_seconds(lambda: run(quarter), repeat)
    return best_seconds(lambda: run(text), repeat) / max(small, 1e-4)
