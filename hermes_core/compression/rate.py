"""How often automatic compactions may run: per rolling hour and per N requests.

Why: the strikes of :mod:`hermes_core.compression.guard` catch compactions that do not help,
not compactions that each help a little, very often (one hermes-agent session compacted 108
times in 11 hours and nothing tripped); each one costs a summary call and a cold prompt cache.
Only *automatic* compactions count and only they are limited: what the provider demands
(overflow recovery) or a person asks for (``force``) is outside the cap, and the trigger lets
a prompt about to outgrow the window through (see ``CompressionTrigger.should_compress``).
State with an injected monotonic clock; :meth:`to_dict` stores ages, so a restart keeps the
count (``compression/state.py`` ages it by the wall-clock time that passed).
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

__all__ = ["HOUR_S", "Block", "CompactionRate"]

HOUR_S: Final = 3600.0


@dataclass(frozen=True)
class Block:
    """Why automatic compaction waits, and when that lifts (seconds or requests from now)."""

    reason: str
    lifts_in_s: int | None = None
    lifts_after_requests: int | None = None

    def as_event(self) -> dict[str, Any]:
        data: dict[str, Any] = {"reason": self.reason, "limit": "rate"}
        if self.lifts_in_s is not None:
            data["lifts_in_s"] = self.lifts_in_s
        if self.lifts_after_requests is not None:
            data["lifts_after_requests"] = self.lifts_after_requests
        return data


class CompactionRate:
    """Counts automatic compactions in the last hour and requests since the last one.

    A *request* is counted from two sources and the larger count wins: usage reports
    (:meth:`note_usage`, one per response) and lists handed in that grew
    (:meth:`note_list`), so a host that reports no usage, or one that hands its list over
    only when it compacts (hermes-agent), is still counted right."""

    def __init__(
        self,
        *,
        max_per_hour: int,
        min_requests_between: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_per_hour = max_per_hour
        self.min_requests_between = min_requests_between
        self._clock = clock
        # clock readings, oldest first, within the hour; only the newest max_per_hour matter
        self._times: deque[float] = deque(maxlen=max_per_hour)
        self._usages: int | None = None  # None: no automatic compaction yet
        self._lists = 0
        self._seen_len = 0  # the length of the last list handed in
        self._warned = False

    # ---- events

    def note_usage(self) -> None:
        """A response came back: one more request."""
        if self._usages is not None:
            self._usages += 1

    def note_list(self, length: int) -> None:
        """A list of ``length`` messages was handed in: a longer one than last time is a new
        request (the same list again, or a shorter one after a compaction, is not)."""
        if length > self._seen_len and self._usages is not None:
            self._lists += 1
        self._seen_len = length

    def record(self, length_after: int) -> None:
        """An automatic compaction was done; its output has ``length_after`` messages."""
        now = self._clock()
        self._expire(now)
        self._times.append(now)
        self._usages, self._lists, self._seen_len = 0, 0, length_after
        self._warned = False

    # ---- queries

    def block(self) -> Block | None:
        """Why the next automatic compaction must wait; None when it may run."""
        now = self._clock()
        self._expire(now)
        cap = self.max_per_hour
        if cap > 0 and len(self._times) >= cap:
            lifts = self._times[len(self._times) - cap] + HOUR_S - now
            seconds = max(1, math.ceil(lifts))
            return Block(
                f"{len(self._times)} automatic compactions in the last hour "
                f"(compression.max_per_hour: {cap}); the next may run in {seconds} s",
                lifts_in_s=seconds,
            )
        needed, done = self.min_requests_between, self.requests_since()
        if needed > 1 and done is not None and done < needed:
            more = needed - done
            return Block(
                f"{done} request{'' if done == 1 else 's'} since the last automatic compaction "
                f"(compression.min_requests_between: {needed}); the next may run after "
                f"{more} more",
                lifts_after_requests=more,
            )
        return None

    def requests_since(self) -> int | None:
        """Requests since the last automatic compaction; None when there was none."""
        return None if self._usages is None else max(self._usages, self._lists)

    def warning_due(self) -> bool:
        """True once per blocked period (a period starts with each compaction)."""
        if self._warned:
            return False
        self._warned = True
        return True

    def _expire(self, now: float) -> None:
        while self._times and now - self._times[0] >= HOUR_S:
            self._times.popleft()

    # ---- persistence

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: compaction times as seconds ago (a monotonic reading means nothing in
        another process)."""
        now = self._clock()
        self._expire(now)
        return {
            "ages_s": [max(0.0, now - t) for t in self._times],
            "usages": self._usages,
            "lists": self._lists,
            "warned": self._warned,
        }

    def restore(self, data: Mapping[str, Any], *, elapsed: float) -> None:
        """Put back :meth:`to_dict` output saved ``elapsed`` wall-clock seconds ago; raises
        ``ValueError``/``TypeError`` (nothing changed) when it is malformed."""
        ages = data.get("ages_s", [])
        if not isinstance(ages, list):
            raise TypeError(f"ages_s must be a list, got {type(ages).__name__}")
        parsed: list[float] = []
        for age in ages:
            if isinstance(age, bool) or not isinstance(age, (int, float)):
                raise TypeError(f"ages_s holds {age!r}, not a number")
            if not math.isfinite(age) or age < 0:
                raise ValueError(f"ages_s holds {age!r}, not an age in seconds")
            parsed.append(float(age) + elapsed)
        usages, lists = data.get("usages"), data.get("lists", 0)
        for name, value in (("usages", usages), ("lists", lists)):
            if value is None and name == "usages":
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
        now = self._clock()
        recent = sorted(now - age for age in parsed if age < HOUR_S)
        self._times = deque(recent, maxlen=self.max_per_hour)  # a huge row keeps the newest
        self._usages, self._lists = usages, int(lists)
        self._warned = bool(data.get("warned", False))
