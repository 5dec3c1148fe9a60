"""When to compact before the threshold: once carrying the growth has cost what a compaction does.

Why: with prompt caching every request pays the cached price for its whole prompt, so a
prompt that grows from ``after`` (what the last compaction left) towards the threshold pays
``rate x (prompt - after)`` more on every request than a freshly compacted one would. A
compaction costs once: the cache miss on what it keeps (``(1 - rate) x`` the tokens after the
cached system prompt) and the summariser's output. Waiting for the threshold pays the first
cost over and over; compacting too often pays the second. The rule is rent-or-buy: compact as
soon as what the session has paid for carrying its growth since the last compaction reaches
what one compaction costs. For a steady growth of ``g`` tokens a request that compacts at
``after + sqrt(2 x cost x g / rate)``, the least a sawtooth from ``after`` can bill, and it
never bills more than twice that whatever the growth does. Measured on replays of generated
sessions (bench/session_cost.py, bench/README.md): 25-40% less than compacting only at the
threshold of a 128K window.

Bounds: an early compaction must be worth a cut (the prompt at least twice what a compaction
leaves), and the threshold stays in charge: at or over it the compressor compacts as always.
Pure arithmetic and a small record the compressor keeps (and persists) per conversation.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from hermes_core.compression.cache_cost import MIN_CUT, OUTPUT_PRICE

__all__ = ["MIN_CUT", "CarryCost", "first_account", "one_off_cost", "system_tokens"]


def one_off_cost(after: int, cached: int, summary_output: int, rate: float) -> tuple[float, float]:
    """What one compaction bills once, in input-token equivalents, as (cache miss,
    summariser): the request after it pays the uncached price for everything past the
    ``cached`` prefix it kept, and the summariser is paid ``OUTPUT_PRICE`` per output token
    (its input grows with the middle it reads, i.e. with the time between compactions, so it
    does not move the best moment)."""
    missed = max(0, after - max(0, cached))
    return (1.0 - rate) * missed, OUTPUT_PRICE * max(0, summary_output)


@dataclass
class CarryCost:
    """One conversation's account: ``after`` (tokens a compaction leaves: the last one's, or
    an estimate before the first), ``miss`` and ``summariser`` (what one compaction costs
    once: :func:`one_off_cost`), and the carrying cost of the requests sent since the last
    compaction, counted two ways because hosts differ: per usage report (``paid_usage``) and
    per list handed in that grew (``paid_lists``; the previous list was sent). ``paid`` is the
    larger, so a host that reports no usage, or one that hands its list over only when it
    compacts (hermes-agent), is counted right, and one that does both is not counted twice."""

    rate: float
    after: int
    miss: float
    summariser: float
    summary_after: int = 0  # what the last summary left (0: none yet, ``after`` stands in)
    estimate: int = 0  # before the first compaction: ``after`` without the system prompt
    estimated: bool = True  # no compaction yet: ``after`` is ``estimate`` plus the prefix
    fixed: int = 0  # tokens every request carries outside the messages (hermes-agent's tools)
    paid_usage: float = 0.0
    paid_lists: float = 0.0
    seen_length: int = 0  # messages in the last list handed in
    seen_prompt: int = 0  # its prompt tokens

    @property
    def base(self) -> int:
        """What a compaction could leave now: the lower of the last one's landing and the last
        summary's (a pruning that landed high does not make a high prompt look cheap)."""
        return min(self.after, self.summary_after) if self.summary_after else self.after

    @property
    def paid(self) -> float:
        return max(self.paid_usage, self.paid_lists)

    def carrying(self, prompt_tokens: int) -> float:
        """What a request of ``prompt_tokens`` pays over one right after a compaction."""
        return self.rate * max(0, prompt_tokens - self.base)

    def note_usage(self, prompt_tokens: int) -> None:
        """A request of ``prompt_tokens`` was sent (its usage came back)."""
        self.paid_usage += self.carrying(prompt_tokens)

    def note_list(self, length: int, prompt_tokens: int) -> None:
        """A list of ``length`` messages (``prompt_tokens``) was handed in: a longer one than
        last time means the last one was sent."""
        if length > self.seen_length and self.seen_length:
            self.paid_lists += self.carrying(self.seen_prompt)
        self.seen_length, self.seen_prompt = length, prompt_tokens

    def note_prefix(self, tokens: int) -> None:
        """Before the first compaction, what one would leave includes the system prompt
        (``tokens``, the list's first message when it is one): every compaction keeps it."""
        if self.estimated:
            self.after = self.summary_after = max(1, self.estimate + max(0, tokens))

    def missed_cut(self, prompt_tokens: int) -> None:
        """An early compaction at ``prompt_tokens`` cut too little (compression/early.py): the
        next one waits until the prompt is ``MIN_CUT`` times this."""
        self.after = max(self.after, prompt_tokens)
        self.summary_after = max(self.summary_after, prompt_tokens)
        self.estimated = False

    def due(self, prompt_tokens: int, *, cache_cold: bool = False) -> bool:
        """Whether compacting before sending ``prompt_tokens`` (with ``fixed``) bills less
        than carrying on: the next request's carrying cost counts as paid. ``cache_cold``:
        the provider's cache has expired (an idle gap), so the cache miss is paid anyway and
        only the summariser counts."""
        prompt_tokens -= self.fixed
        if prompt_tokens < MIN_CUT * max(1, self.base):
            return False
        cost = self.summariser if cache_cold else self.miss + self.summariser
        return self.paid + self.carrying(prompt_tokens) >= cost

    def compacted(
        self, after: int, cost: tuple[float, float], length: int, *, summary: bool
    ) -> None:
        """A compaction (a ``summary``, or pruning alone) left ``length`` messages of
        ``after`` tokens and cost ``cost`` (:func:`one_off_cost`) once: a new cycle starts."""
        self.after, self.paid_usage, self.paid_lists = max(1, after), 0.0, 0.0
        self.estimated = False
        if summary:
            self.summary_after = self.after
        self.miss, self.summariser = (max(0.0, part) for part in cost)
        self.seen_length, self.seen_prompt = length, after

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def restore(self, data: Mapping[str, Any]) -> None:
        """Put back a persisted account; a value of the wrong type or out of range is left
        at its default (state rows may be old, damaged or hostile: compression/state.py), and
        what was paid is capped at one compaction's cost (more would only make it due)."""
        for key in ("miss", "summariser", "paid_usage", "paid_lists"):
            value = data.get(key)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                continue
            if math.isfinite(value) and value >= 0:
                setattr(self, key, float(value))
        for key, low in (("after", 1), ("summary_after", 0), ("estimate", 0)):
            value = data.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value >= low:
                setattr(self, key, value)
        for key in ("seen_length", "seen_prompt", "fixed"):
            value = data.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                setattr(self, key, value)
        if isinstance(data.get("estimated"), bool):
            self.estimated = data["estimated"]
        cap = self.miss + self.summariser
        self.paid_usage, self.paid_lists = min(self.paid_usage, cap), min(self.paid_lists, cap)


def first_account(rate: float, tail_budget: int, summary_budget: int) -> CarryCost:
    """The account before the first compaction: what one would leave is estimated as the
    tail and summary budgets (plus the system prompt: :meth:`CarryCost.note_prefix`), its
    summariser as half the summary budget."""
    after = tail_budget + summary_budget
    miss, summariser = one_off_cost(after, 0, summary_budget // 2, rate)
    return CarryCost(rate, after, miss, summariser, summary_after=after, estimate=after)


def system_tokens(messages: Sequence[Any], cost: Callable[[Any], int]) -> int:
    """The tokens of the list's system prompt (its first message when it is one): every
    compaction keeps it, and a cache keeps it across one."""
    first = messages[0] if messages else None
    system = isinstance(first, Mapping) and first.get("role") in ("system", "developer")
    return cost(first) if system else 0
