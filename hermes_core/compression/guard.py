"""The anti-thrash and cooldown state machine (spec 10 §5 layer 2, §6).

A small state machine with an injected clock, so every decision comes with a reason and can
be tested exactly; :mod:`hermes_core.compression.policy` holds the arithmetic around it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any, Final

PROBE_AFTER_S: Final = 300
NOTHING_TO_COMPRESS_BACKOFF_S: Final = 300
INEFFECTIVE_SAVINGS: Final = 0.10
NO_PROVIDER_COOLDOWN_S: Final = 600
TIMEOUT_LADDER_S: Final[tuple[int, ...]] = (60, 300, 900)
DEFAULT_COOLDOWN_S: Final = 60
MAX_STRIKES: Final = 2
MAX_FALLBACK_STREAK: Final = 2

_STATE_VERSION: Final = 1
_SUMMARIZERS: Final = ("llm", "fallback", None)


@dataclass(frozen=True)
class _Pending:
    """A compaction waiting for the first real usage report to judge it."""

    tokens_before: int
    tokens_after: int
    summarizer: str | None
    probe: bool


def _left(until: float | None, now: float) -> float:
    return 0.0 if until is None else max(0.0, until - now)


def _secs(remaining: float) -> int:
    return max(1, math.ceil(remaining))


class CompressionGuard:
    """Cooldowns and anti-thrash for automatic compression, for one session.

    Independent sub-states, checked in this order by :meth:`blocked_reason`:

    * **Summary cooldown** (§5 layer 2). ``record_summary_failure`` blocks for 600 s
      (``no_provider``), for 60 -> 300 -> 900 s on consecutive failures when the kind is
      ``timeout`` (the ladder stays at 900 and is reset only by ``record_summary_success``, which
      also lifts the cooldown), or for 60 s otherwise. A new failure never shortens a cooldown.
    * **Anti-thrash** (§6). ``record_compaction`` leaves a *pending verdict*; the first
      ``record_usage`` after it judges it: savings under 10% of ``tokens_before``, or still at or
      over the threshold, is a *strike*; an effective compaction clears all strikes.
      ``OPEN`` -(strike, strike)-> ``BLOCKED`` -(300 s)-> ``PROBE_OPEN`` -(compaction)->
      ``PROBING`` (blocked until its usage report) -(effective)-> ``OPEN`` or -(ineffective)->
      ``BLOCKED`` for another 300 s. Any compaction recorded while strikes are at the limit
      (forced ones too) is the probe; ``is_probe()`` says whether the next one would be.
      A compaction marked ``probe=True`` re-blocks at once when ineffective.
    * **Nothing to compress**: a 300 s backoff, not a strike; a recorded compaction ends it.

    An *optional* summary (one the cache-cost verdict preferred where pruning alone would do)
    that fails does not block: ``record_summary_failure(kind, blocking=False)`` rests the LLM
    for the same length instead (:meth:`use_llm` is False meanwhile), so pruning and the
    free fallback go on and the failing endpoint is not called again until it is over.

    The fallback streak is separate and never blocks: two ``summarizer="fallback"`` compactions
    in a row turn :meth:`use_llm` off; after 300 s it is on again for a probe, and an ``"llm"``
    compaction clears the streak while another fallback arms a new 300 s wait. Pruning-only
    compactions (``summarizer=None``) leave the streak alone.

    Warnings: :meth:`warning_due` returns the reason once per blocked period while over the
    threshold; a period starts when an event blocks a guard that was not blocked.
    """

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._strikes = 0
        self._probe_failed = False
        self._probe_at: float | None = None
        self._pending: _Pending | None = None
        self._fallback_streak = 0
        self._llm_probe_at: float | None = None
        self._cooldown_until: float | None = None
        self._cooldown_kind: str | None = None
        self._llm_rest_until: float | None = None  # an optional summary failed: LLM off
        self._timeout_streak = 0
        self._backoff_until: float | None = None
        self._warned = False

    # ---- queries

    def blocked_reason(self) -> str | None:
        """Why automatic compression must not run now; None when it may."""
        now = self._clock()
        if (left := _left(self._cooldown_until, now)) > 0:
            kind = self._cooldown_kind
            if kind == "timeout":
                why = "after a timeout"
            elif kind == "no_provider":
                why = "with no summary provider configured"
            else:
                why = f"after a summary failure ({kind})"
            return f"summary cooldown: {_secs(left)} s left {why}"
        if self._strikes >= MAX_STRIKES:
            if self._pending is not None and self._pending.probe:
                return "probe compaction awaiting its usage report"
            if (left := _left(self._probe_at, now)) > 0:
                if self._probe_failed:
                    return f"the probe compaction was ineffective; next probe in {_secs(left)} s"
                return f"two ineffective compactions in a row; next probe in {_secs(left)} s"
        if (left := _left(self._backoff_until, now)) > 0:
            return f"nothing to compress; retry in {_secs(left)} s"
        return None

    def is_probe(self) -> bool:
        """True when the next compaction would be the one probe allowed after a block."""
        return (
            self._strikes >= MAX_STRIKES
            and self._pending is None
            and _left(self._probe_at, self._clock()) == 0
        )

    def should_compress(
        self, prompt_tokens: int, threshold: int, *, enabled: bool = True, force: bool = False
    ) -> tuple[bool, str | None]:
        """(compress now?, reason when blocked); `force` compresses regardless of everything."""
        if force:
            return True, None
        if not enabled:
            return False, "compression disabled"
        if prompt_tokens < threshold:
            return False, None
        reason = self.blocked_reason()
        return (reason is None), reason

    def use_llm(self) -> bool:
        """False while two fallback summaries in a row say the LLM is not worth calling, and
        while the LLM rests after an optional summary failed."""
        if _left(self._llm_rest_until, self._clock()) > 0:
            return False
        if self._fallback_streak < MAX_FALLBACK_STREAK:
            return True
        return _left(self._llm_probe_at, self._clock()) == 0

    def llm_off_reason(self) -> str | None:
        """Why :meth:`use_llm` is False now (the reason a fallback summary then carries)."""
        now = self._clock()
        if (left := _left(self._llm_rest_until, now)) > 0:
            return f"the LLM rests {_secs(left)} s more after an optional summary failed"
        streak = self._fallback_streak >= MAX_FALLBACK_STREAK
        if streak and (left := _left(self._llm_probe_at, now)) > 0:
            return f"two fallback summaries in a row; the LLM is tried again in {_secs(left)} s"
        return None

    def warning_due(self, prompt_tokens: int, threshold: int) -> str | None:
        """The reason to emit as `compression_blocked`, once per blocked period over threshold."""
        reason = self.blocked_reason()
        if reason is None or prompt_tokens < threshold or self._warned:
            return None
        self._warned = True
        return reason

    # ---- events

    def record_compaction(
        self,
        *,
        tokens_before: int,
        tokens_after: int,
        summarizer: str | None,
        probe: bool = False,
    ) -> None:
        """Leave a verdict pending for the next usage report and track the fallback streak."""
        if summarizer not in _SUMMARIZERS:
            raise ValueError(f"summarizer must be 'llm', 'fallback' or None, got {summarizer!r}")
        if tokens_before < 0 or tokens_after < 0:
            raise ValueError("token counts must not be negative")
        was_blocked = self.blocked_reason() is not None
        now = self._clock()
        probe = probe or self._strikes >= MAX_STRIKES
        new = _Pending(tokens_before, tokens_after, summarizer, probe)
        if self._pending is not None:  # two compactions, one report: judge them together
            old = self._pending
            new = replace(new, tokens_before=old.tokens_before, probe=old.probe or probe)
        self._pending = new
        self._backoff_until = None
        if summarizer == "llm":
            self._fallback_streak, self._llm_probe_at = 0, None
        elif summarizer == "fallback" and self.use_llm():
            # Count only fallbacks where the LLM was tried, so forced ones do not delay the probe.
            self._fallback_streak += 1
            if self._fallback_streak >= MAX_FALLBACK_STREAK:
                self._llm_probe_at = now + PROBE_AFTER_S
        self._new_period_if_blocked(was_blocked)

    def record_usage(self, prompt_tokens: int, threshold: int) -> str | None:
        """Judge the pending compaction with real usage: 'effective', 'ineffective' or None."""
        pending = self._pending
        if pending is None:
            return None
        # The wait for a probe's report is not a period of its own: a failed probe warns again.
        was_blocked = self.blocked_reason() is not None and not pending.probe
        self._pending = None
        before = pending.tokens_before
        savings = (before - prompt_tokens) / before if before > 0 else 0.0
        if savings >= INEFFECTIVE_SAVINGS and prompt_tokens < threshold:
            self._strikes, self._probe_at, self._probe_failed = 0, None, False
            return "effective"
        self._strikes += 1
        if pending.probe:
            self._strikes = max(self._strikes, MAX_STRIKES)
            self._probe_failed = True
        if self._strikes >= MAX_STRIKES:
            self._probe_at = self._clock() + PROBE_AFTER_S
        self._new_period_if_blocked(was_blocked)
        return "ineffective"

    def record_summary_failure(self, kind: str, *, blocking: bool = True) -> None:
        """Start (or extend) the cooldown for a failed summary of this kind; with
        ``blocking=False`` (an optional summary) rest the LLM for as long instead."""
        was_blocked = self.blocked_reason() is not None
        if kind == "timeout":
            step = min(self._timeout_streak, len(TIMEOUT_LADDER_S) - 1)
            seconds = TIMEOUT_LADDER_S[step]
            self._timeout_streak += 1
        elif kind == "no_provider":
            seconds = NO_PROVIDER_COOLDOWN_S
        else:
            seconds = DEFAULT_COOLDOWN_S
        until = self._clock() + seconds
        if not blocking:
            if self._llm_rest_until is None or until > self._llm_rest_until:
                self._llm_rest_until = until
            return
        if self._cooldown_until is None or until > self._cooldown_until:
            self._cooldown_until, self._cooldown_kind = until, kind
        self._new_period_if_blocked(was_blocked)

    def record_summary_success(self) -> None:
        """A summary worked: reset the timeout ladder and lift the cooldown."""
        self._timeout_streak = 0
        self._cooldown_until, self._cooldown_kind = None, None
        self._llm_rest_until = None

    def record_nothing_to_compress(self) -> None:
        """Everything is protected or too short: back off for 300 s without a strike."""
        was_blocked = self.blocked_reason() is not None
        self._backoff_until = self._clock() + NOTHING_TO_COMPRESS_BACKOFF_S
        self._new_period_if_blocked(was_blocked)

    def end_backoff(self) -> None:
        """The transcript grew enough since "nothing to compress" that trying again is new work
        (ours: otherwise a growing transcript can outrun its window during the backoff)."""
        self._backoff_until = None

    def _new_period_if_blocked(self, was_blocked: bool) -> None:
        if not was_blocked and self.blocked_reason() is not None:
            self._warned = False

    # ---- persistence

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready state; clock readings become remaining seconds (monotonic is per process)."""
        now, pending = self._clock(), self._pending

        def remaining(until: float | None) -> float | None:
            return None if until is None else _left(until, now)

        return {
            "version": _STATE_VERSION,
            "strikes": self._strikes,
            "probe_failed": self._probe_failed,
            "probe_in_s": remaining(self._probe_at),
            "pending": None if pending is None else asdict(pending),
            "fallback_streak": self._fallback_streak,
            "llm_probe_in_s": remaining(self._llm_probe_at),
            "cooldown_s": remaining(self._cooldown_until),
            "cooldown_kind": self._cooldown_kind,
            "llm_rest_s": remaining(self._llm_rest_until),
            "timeout_streak": self._timeout_streak,
            "backoff_s": remaining(self._backoff_until),
            "warned": self._warned,
        }

    @classmethod
    def from_dict(
        cls, data: Mapping[str, Any], *, clock: Callable[[], float] = time.monotonic
    ) -> CompressionGuard:
        """Rebuild a guard saved by :meth:`to_dict`, re-anchoring the timers on `clock`."""
        if data.get("version") != _STATE_VERSION:
            raise ValueError(f"unsupported guard state version: {data.get('version')!r}")
        guard = cls(clock=clock)
        now = clock()

        def until(key: str) -> float | None:
            value = data.get(key)
            return None if value is None else now + max(0.0, float(value))

        guard._strikes = int(data.get("strikes", 0))
        guard._probe_failed = bool(data.get("probe_failed", False))
        guard._probe_at = until("probe_in_s")
        raw = data.get("pending")
        if raw is not None:
            summarizer = raw.get("summarizer")
            if summarizer not in _SUMMARIZERS:
                raise ValueError(f"invalid pending summarizer: {summarizer!r}")
            guard._pending = _Pending(
                int(raw["tokens_before"]), int(raw["tokens_after"]), summarizer, bool(raw["probe"])
            )
        guard._fallback_streak = int(data.get("fallback_streak", 0))
        guard._llm_probe_at = until("llm_probe_in_s")
        guard._cooldown_until = until("cooldown_s")
        kind = data.get("cooldown_kind")
        guard._cooldown_kind = None if kind is None else str(kind)
        guard._llm_rest_until = until("llm_rest_s")
        guard._timeout_streak = int(data.get("timeout_streak", 0))
        guard._backoff_until = until("backoff_s")
        guard._warned = bool(data.get("warned", False))
        return guard
