"""Which compaction bills less under prompt caching: pruning alone, or a summary.

Why: what a user pays for is prompt tokens, and with prompt caching (a request's common prefix
with the one before is billed at a fraction of the price) a compaction costs twice: the request
after it pays full price for everything past the prefix it kept (the cache miss), and every
request until the next compaction pays the cached price for the whole prompt. A compaction
that stops just under the threshold (pruning alone usually does) is followed by another one a
few requests later: measured on replays of generated sessions (``bench/session_cost.py``),
always accepting a pruning that sufficed billed 7-15% more than this rule.

The model, per token of headroom a compaction leaves (``threshold - after``), with ``g`` the
tokens a request adds: the miss, ``(1 - rate) * missed``, plus what the summariser is paid,
spread over the headroom, plus ``rate * (after + threshold) / (2 * g)``, the cached price of the
requests of the cycle (the prompt grows from ``after`` to the threshold over ``headroom / g``
requests). The cycle term dominates, so the rule prefers whichever lands lower, and prunes only
when pruning lands nearly as low as a summary would (the first compaction of a session whose
bulk is old tool output): then the saving pays for the miss. Pure arithmetic; the engine feeds
it exact counts of what it keeps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

from hermes_core.compression.serialize import MAX_SUMMARY_INPUT_CHARS

__all__ = [
    "CACHED_PRICE",
    "MIN_CUT",
    "OUTPUT_PRICE",
    "Kept",
    "Option",
    "choose",
    "cost_per_headroom",
    "cycle_end",
    "prune_pays",
]

#: Price of a cached prompt token against an uncached one (Anthropic and recent OpenAI
#: models bill cache reads at a tenth; the choice holds at a half too, see the tests).
CACHED_PRICE: Final = 0.1
#: Price of a summariser output token against an input token.
OUTPUT_PRICE: Final = 4.0
#: An early compaction (the cost schedule) needs a prompt at least this many times what a
#: compaction leaves: a cut worth making.
MIN_CUT: Final = 2.0
#: The summariser prompt's input cap in tokens (its 160,000 characters at about 4 a token).
SUMMARISER_INPUT_TOKENS: Final = MAX_SUMMARY_INPUT_CHARS // 4


@dataclass(frozen=True)
class Option:
    """One way to compact: the prompt it leaves, the tokens of it a cache still holds (its
    unchanged prefix), and the summariser tokens it pays for (input + OUTPUT_PRICE x output)."""

    after: int
    kept_prefix: int = 0
    summariser: float = 0.0


def cost_per_headroom(
    option: Option, threshold: int, growth: float, rate: float = CACHED_PRICE
) -> float:
    """Billed-equivalent input tokens per token of headroom the option leaves (``inf`` when it
    leaves none). ``growth``: tokens a request adds (at least 1)."""
    headroom = threshold - option.after
    if headroom <= 0:
        return math.inf
    missed = max(0, option.after - option.kept_prefix)
    once = (1.0 - rate) * missed + option.summariser
    cycle = rate * (option.after + threshold) / (2.0 * max(growth, 1.0))
    return once / headroom + cycle


def cycle_end(after: int, once: float, growth: float, threshold: int, rate: float) -> int:
    """Where the cost schedule (compression/schedule.py) would compact next after landing at
    ``after`` with a one-off cost of ``once``: ``after + sqrt(2 x once x growth / rate)``, not
    before ``MIN_CUT x after`` and never past the threshold."""
    if rate <= 0:
        return threshold
    best = after + math.sqrt(2.0 * max(0.0, once) * max(growth, 1.0) / rate)
    return int(min(threshold, max(MIN_CUT * after, best)))


def prune_pays(
    pruned: Option, summary: Option, threshold: int, growth: float, rate: float = CACHED_PRICE
) -> bool:
    """Whether stopping after pruning bills no more per token of headroom than summarising."""
    return cost_per_headroom(pruned, threshold, growth, rate) <= cost_per_headroom(
        summary, threshold, growth, rate
    )


@dataclass(frozen=True)
class Kept:
    """Exact token counts the engine has when pruning sufficed, in the trigger's units."""

    pruned: int  # the whole prompt after pruning
    pruned_prefix: int  # its leading messages pruning left untouched (still cached)
    head: int  # the protected head (it stays in front of a summary, cached)
    tail: int  # the protected tail
    tail_requests: int  # assistant messages in the tail: the requests that added it
    summary: int  # the expected summary (the previous one's size when there is one)


def choose(
    kept: Kept, threshold: int, llm: bool, rate: float = CACHED_PRICE, *, early: bool = False
) -> dict[str, float | bool]:
    """Both options costed and the verdict, for ``stats["cache_cost"]``: ``prune`` is True
    when stopping after pruning bills no more per token of headroom. ``llm``: a summariser
    would be paid (its input: the pruned middle, as far as the prompt cap lets it, and
    OUTPUT_PRICE x the summary); the offline fallback costs nothing. ``early``: the cost
    schedule decides when the next compaction comes, so each option's cycle ends where the
    schedule would end it (:func:`cycle_end`), not at the threshold: a pruning that lands
    high then buys a short cycle, and pruning after pruning no longer piles up."""
    growth = kept.tail / max(1, kept.tail_requests)
    middle = max(0, kept.pruned - kept.head - kept.tail)
    # the summariser reads each message once whenever it summarises it: pruning now only
    # defers that input, so under the cost schedule a summary's own cost is its output
    read = 0 if early else min(middle, SUMMARISER_INPUT_TOKENS)
    paid = read + OUTPUT_PRICE * kept.summary
    pruned = Option(kept.pruned, kept.pruned_prefix)
    summary = Option(kept.head + kept.summary + kept.tail, kept.head, paid if llm else 0.0)

    def end(option: Option) -> int:
        if not early:
            return threshold
        once = (1.0 - rate) * max(0, option.after - option.kept_prefix) + option.summariser
        return cycle_end(option.after, once, growth, threshold, rate)

    prune_cost = cost_per_headroom(pruned, end(pruned), growth, rate)
    summary_cost = cost_per_headroom(summary, end(summary), growth, rate)
    return {
        "prune": prune_cost <= summary_cost,
        "prune_cost": round(prune_cost, 4),
        "summary_cost": round(summary_cost, 4),
        "growth_per_request": round(growth, 1),
        "pruned_after": pruned.after,
        "summary_after": summary.after,
    }
