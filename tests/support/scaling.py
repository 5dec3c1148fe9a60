"""How work grows with input, counted, never timed.

A time limit fails on a busy machine and passes a quadratic algorithm on a fast one, and even
a ratio of two timed runs moves with the load between them. So the growth tests count work:
every line of Python executed (``sys.settrace``, so a loop that makes no call still counts) and
every call into C (``sys.setprofile``) while the code runs. The count is the same on any
machine for the same input, so a test that reads it cannot depend on the machine's speed.
Linear work gives a growth of about 4 for four times the input, quadratic about 16.

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
    """Python lines executed plus calls into C while ``run`` runs (deterministic)."""
    steps = 0

    def lines(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal steps
        steps += 1  # "call", then each "line" (and "return") of that frame
        return lines

    def c_calls(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal steps
        if event == "c_call":
            steps += 1

    previous_trace, previous_profile = sys.gettrace(), sys.getprofile()
    sys.settrace(lines)
    sys.setprofile(c_calls)
    try:
        run()
    finally:
        sys.settrace(previous_trace)
        sys.setprofile(previous_profile)
    return steps


def growth(run: Callable[[str], object], text: str) -> float:
    """Work for ``text`` over work for its first quarter."""
    quarter = text[: len(text) // 4]
    small = work(lambda: run(quarter))
    return work(lambda: run(text)) / max(small, 1)
