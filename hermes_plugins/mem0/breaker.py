"""A small circuit breaker: after N consecutive failures, calls pause for a cool-down.

A dead or rate-limited Mem0 would otherwise cost every turn a full timeout; pausing keeps
turns fast and gives the service room to recover. The clock is injectable for tests.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class CircuitBreaker:
    """Counts consecutive failures; ``allow()`` is false while the breaker is open."""

    def __init__(
        self,
        threshold: int = 5,
        cooldown: float = 120.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.threshold = threshold
        self.cooldown = cooldown
        self._clock = clock
        self._lock = threading.Lock()
        self._failures = 0
        self._open_until: float | None = None

    @property
    def failures(self) -> int:
        return self._failures

    def allow(self) -> bool:
        """Whether a call may go out now (closed, or the cool-down has passed)."""
        with self._lock:
            return self._open_until is None or self._clock() >= self._open_until

    def seconds_left(self) -> float:
        with self._lock:
            if self._open_until is None:
                return 0.0
            return max(0.0, self._open_until - self._clock())

    def success(self) -> None:
        with self._lock:
            self._failures = 0
            self._open_until = None

    def failure(self) -> bool:
        """Record one failure; returns True when this failure opened (or re-opened) it."""
        with self._lock:
            self._failures += 1
            if self._failures >= self.threshold:
                self._open_until = self._clock() + self.cooldown
                return True
            return False
