"""An early compaction (the cost schedule's) is kept only when it cuts; else it leaves no trace.

Why: the anti-thrash guard strikes a compaction that did not help and backs off after
"nothing to compress", and two strikes block automatic compaction, the one at the threshold
included. A compaction the schedule asked for before the threshold is optional: when it
finds nothing to cut, would not shrink, or cuts too little, it must not spend the guard's
patience meant for the threshold (that let requests go over it). So the guard's state is
taken before such an attempt and put back when the attempt is dropped, and the schedule
moves its base up instead: it tries again only once the prompt has doubled from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from hermes_core.compression.guard import CompressionGuard
from hermes_core.compression.result import CompressionResult, outcome

if TYPE_CHECKING:
    # the engine's base, not the engine: importing the engine here made a circle
    from hermes_core.compression.trigger import CompressionTrigger as Compressor

__all__ = ["EARLY_MIN_SAVING", "Attempt", "settle", "snapshot"]

#: An early compaction is kept only when it saves at least this share of the prompt.
EARLY_MIN_SAVING: Final = 0.25


@dataclass(frozen=True)
class Attempt:
    """What an early attempt may change and must give back when it is dropped."""

    guard: dict[str, Any]
    nothing_at: int | None
    undo_hold: bool
    compactions: int
    previous_summary: str | None


def snapshot(compressor: Compressor) -> Attempt:
    return Attempt(
        guard=compressor.guard.to_dict(),
        nothing_at=compressor._nothing_at,
        undo_hold=compressor._undo_hold,
        compactions=compressor.compactions,
        previous_summary=compressor.previous_summary,
    )


#: The guard's anti-thrash state, put back after a dropped attempt; the LLM's health (fallback
#: streak, rest) is kept, so a summariser that failed in the attempt is not asked again at once.
_ANTI_THRASH: Final = ("strikes", "probe_failed", "probe_in_s", "pending", "backoff_s", "warned")


def _guard(attempt: Attempt, compressor: Compressor) -> dict[str, Any]:
    """The guard after a dropped attempt: its anti-thrash state as before, its view of the
    LLM as now; a summary cooldown the attempt started becomes a rest of the LLM instead
    (a cooldown would block the compaction at the threshold too)."""
    now = compressor.guard.to_dict()
    merged = {**now, **{key: attempt.guard.get(key) for key in _ANTI_THRASH}}
    started = (now.get("cooldown_s") or 0) > (attempt.guard.get("cooldown_s") or 0)
    if started:
        merged["llm_rest_s"] = max(now.get("llm_rest_s") or 0, now.get("cooldown_s") or 0)
    merged["cooldown_s"] = attempt.guard.get("cooldown_s")
    merged["cooldown_kind"] = attempt.guard.get("cooldown_kind")
    return merged


def settle(
    compressor: Compressor, attempt: Attempt, result: CompressionResult, source: list[Any]
) -> CompressionResult:
    """``result`` when the early compaction cut enough; else the input unchanged, the
    compressor as it was before the attempt, and the schedule's base moved up."""
    before, after = result.tokens_before, result.tokens_after
    if result.status in ("compressed", "pruned") and after <= before * (1 - EARLY_MIN_SAVING):
        return result
    compressor.guard = CompressionGuard.from_dict(
        _guard(attempt, compressor), clock=compressor._clock
    )
    compressor._nothing_at, compressor._undo_hold = attempt.nothing_at, attempt.undo_hold
    compressor.compactions = attempt.compactions
    compressor.previous_summary = attempt.previous_summary
    compressor.carry.missed_cut(int(before * compressor.running.correction_ratio))
    if result.status in ("compressed", "pruned"):
        why = f"it would cut only {before:,} -> {after:,} tokens"
    else:
        why = result.reason or result.status
    reason = (
        f"an early compaction (compression.schedule: cost) was dropped, input kept: {why}; "
        "the next one waits until the prompt doubles, the threshold compacts as always"
    )
    return outcome(source, "unchanged", reason, tokens_before=before, stats=result.stats)
