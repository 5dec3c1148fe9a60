"""How work grows with input, counted, never timed.

A time limit fails on a busy machine and passes a quadratic algorithm on a fast one, and even
a ratio of two timed runs moves with the load between them. So the growth tests count work:
every Python function call and every call into C (``sys.setprofile`` sees both) while the code
runs. The count is the same on any machine for the same input, so a test that reads it cannot
depend on the machine's speed. Linear work gives a growth of about 4 for four times the input,
quadratic about 16.

What a call count cannot see is the work inside one C call (a regular expression that
backtracks); tests/test_redact.py checks the patterns' shape for that, and bench/hostile.py
times them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any


def work(run: Callable[[], object]) -> int:
    """The number of Python and C calls made while ``run`` runs (deterministic)."""
    calls = 0

    def count(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal calls
        if event in ("call", "c_call"):
            calls += 1

    previous = sys.getprofile()
    sys.setprofile(count)
    try:
        run()
    finally:
        sys.setprofile(previous)
    return calls


def growth(run: Callable[[str], object], text: str) -> float:
    """Work for ``text`` over work for its first quarter."""
    quarter = text[: len(text) // 4]
    small = work(lambda: run(quarter))
    return work(lambda: run(text)) / max(small, 1)
