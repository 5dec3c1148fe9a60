"""Per-message costs for one compression: bounded first, counted exactly where it matters.

Why: a one-shot compression of a long transcript (the CLI, any cold caller) spent most of its
time tokenising text whose exact count changes no decision: a 1,000-turn transcript is 18x
over the threshold whatever the tokenizer says. :class:`CostTable` takes each message's exact
cost from the shared cache when a host counted it already, and otherwise knows it only as
bounds (:mod:`~hermes_core.tokens.bounds`: its size, or its estimate with an error model). A
decision is a question about sums of costs ("is the prompt over the threshold?"):
:meth:`CostTable.settle` asks it of the bounds and, while both answers are possible, estimates
the largest sized messages, then counts the largest estimated ones exactly, so every decision
is the one exact counts give. Indexing the table gives exact costs, counted on demand: the
tail walk counts the tail and the one group at its edge, never the middle.

Before the first decision the newest messages are counted exactly (a calibration sample of
the model on this transcript); so is every message counted later, and once one falls outside
the model no estimate is trusted: bounds fall back to the hard ones (framing to framing plus
bytes), so decisions stay exact and merely count more. Every ``SAMPLE_STRIDE``-th message is
estimated up front so that :attr:`Span.point` (the reported ``tokens_before``) extrapolates
the sized ones from the transcript's own tokens per byte. Only ``o200k_base`` (the encoding
the estimate is calibrated on, and the default) starts from bounds; any other counter is
counted exactly, as before.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Final, overload

from hermes_core.tokens import bounds
from hermes_core.tokens.bounds import Span, clear_estimates, primed, spread
from hermes_core.tokens.costs import (
    DEFAULT_IMAGE_TOKENS,
    MessageCostCache,
    default_cost_cache,
)
from hermes_core.tokens.counters import TokenCounter
from hermes_core.transcript.identity import content_key

__all__ = ["CostTable", "Span", "clear_estimates", "primed"]

#: Estimated text tokens of the newest messages counted exactly before the first decision.
CALIBRATION_TOKENS: Final = 4_096
#: Each refinement estimates (or counts) the largest open messages worth this share of the rest.
REFINE_SHARE: Final = 0.25
#: Every this-many-th message is estimated at once, for the tokens per byte of the point figure.
SAMPLE_STRIDE: Final = 8
_DEFAULT_TOKENS_PER_BYTE: Final = 0.25
_NO_PROFILE: Final[bounds.Profile] = [0, 0, 0]  # of a cost exact from the start: never read


class CostTable(Sequence[int]):
    """The costs of ``messages`` for one compression; ``table[i]`` is always exact.

    Costs already in ``cache`` are exact at once; the rest start as bounds when the counter is
    in ``bounds.ESTIMATED_COUNTERS``, else are counted now. Exact counts go through ``cache``,
    so every later count of the same message shares them."""

    def __init__(
        self,
        messages: Sequence[Mapping[str, Any]],
        counter: TokenCounter,
        *,
        image_tokens: int = DEFAULT_IMAGE_TOKENS,
        cache: MessageCostCache | None = None,
    ) -> None:
        self._messages = messages
        self._counter = counter
        self._image_tokens = image_tokens
        self._cache = cache if cache is not None else default_cost_cache()
        self._keys = [(counter.name, image_tokens, content_key(m)) for m in messages]
        found = self._cache.peek_many(self._keys)
        self._exact: list[int | None] = [None if c is None else c.total for c in found]
        self._profiles: list[bounds.Profile] = [_NO_PROFILE] * len(messages)  # exact ones
        self._ids = {id(m): i for i, m in enumerate(messages)}
        self._trusted = True
        self._checked = [0, 0.0, 0.0]  # counted after estimating: error, linear, squared
        self._estimating = counter.name in bounds.ESTIMATED_COUNTERS
        open_ = [i for i, cost in enumerate(self._exact) if cost is None]
        if not self._estimating:
            for i in open_:
                self._count(i)
            open_ = []
        sampled = [i % SAMPLE_STRIDE == 0 for i in open_]
        found_profiles = bounds.profiles(
            [(image_tokens, self._keys[i][2]) for i in open_], [messages[i] for i in open_], sampled
        )
        sampled_text = sampled_bytes = 0
        for i, found_profile, sample in zip(open_, found_profiles, sampled, strict=True):
            self._profiles[i] = found_profile
            if sample:
                sampled_text += found_profile[2]
                sampled_bytes += found_profile[1]
        per_byte = sampled_text / sampled_bytes if sampled_bytes else 0.0
        self._per_byte = per_byte or _DEFAULT_TOKENS_PER_BYTE

    # --- the sequence: exact costs ----------------------------------------------------------

    def __len__(self) -> int:
        return len(self._exact)

    @overload
    def __getitem__(self, index: int) -> int: ...

    @overload
    def __getitem__(self, index: slice) -> list[int]: ...

    def __getitem__(self, index: int | slice) -> int | list[int]:
        if isinstance(index, slice):
            return [self._count(i) for i in range(*index.indices(len(self)))]
        return self._count(range(len(self))[index])

    def __iter__(self) -> Iterator[int]:
        return (self._count(i) for i in range(len(self)))

    def _count(self, i: int) -> int:
        cost = self._exact[i]
        if cost is not None:
            return cost
        found = self._profiles[i]
        if self._estimating:
            bounds.estimate(found, self._messages[i], self._image_tokens)  # to check the model
        cost = self._cache.measure_keyed(
            self._keys[i], self._messages[i], self._counter, self._image_tokens
        ).total
        self._exact[i] = cost
        if found[1]:  # it had a profile: check the model on it
            error = cost - found[0] - found[2]
            linear, squared = spread(found[2])
            checked = self._checked
            checked[0] += error
            checked[1] += linear
            checked[2] += squared
            if abs(error) > linear + bounds.Z * math.sqrt(squared):
                self._trusted = False
        return cost

    # --- bounds -----------------------------------------------------------------------------

    @property
    def pending(self) -> int:
        """How many costs are not exact yet (0: every sum is exact)."""
        return sum(1 for cost in self._exact if cost is None)

    @property
    def trusted(self) -> bool:
        """False once a message counted exactly fell outside the error model."""
        return self._trusted

    def index_of(self, message: Mapping[str, Any]) -> int | None:
        """The index of this very message object in the table, if it is one of its messages."""
        i = self._ids.get(id(message))
        return i if i is not None and self._messages[i] is message else None

    def span(self, indices: Iterable[int] | None = None, extra: int = 0) -> Span:
        """Bounds of ``extra`` plus the costs at ``indices`` (all messages when ``None``; an
        index listed twice counts twice)."""
        exact, profiles = self._exact, self._profiles
        known = framing = size = guessed = open_size = 0
        sized = linear = squared = 0.0
        for i in range(len(exact)) if indices is None else indices:
            cost = exact[i]
            if cost is not None:
                known += cost
                continue
            fixed, text_bytes, text = profiles[i]
            framing += fixed
            open_size += text_bytes
            if text < 0:
                size += text_bytes
                sized += text_bytes * self._per_byte
                continue
            guessed += text
            lin, sq = spread(text)
            linear += lin
            squared += sq
        base = extra + known + framing
        point = base + guessed + round(sized)
        if not open_size and not guessed:
            return Span(point, point, point)
        lo, hi = float(base), float(base + open_size)  # hard: no text, or a token per byte
        if self._trusted and guessed:
            margin = linear + bounds.Z * math.sqrt(squared)
            lo = max(lo, base + guessed - margin)
            hi = min(hi, base + size + guessed + margin)
        return Span(lo, point, hi)

    def calibrate(self, tokens: int = CALIBRATION_TOKENS) -> None:
        """Count the newest open messages exactly, about ``tokens`` of text, to check the model
        on this transcript before any decision rests on it (they start the tail anyway)."""
        counted = 0
        for i in range(len(self) - 1, -1, -1):
            if counted >= tokens:
                break
            if self._exact[i] is None:
                self._count(i)
                counted += self._profiles[i][2]
        self._check()

    def _check(self) -> None:
        """The counted messages together must sit within the model's bound for their sum."""
        error, linear, squared = self._checked
        if abs(error) > linear + bounds.Z * math.sqrt(squared):
            self._trusted = False

    def refine(self, indices: Iterable[int] | None = None) -> bool:
        """Narrow the bounds among ``indices`` (all when ``None``): estimate the largest sized
        messages, about a quarter of their bytes; when none is left, count the largest estimated
        ones exactly, about a quarter of their tokens (all of them once estimates are not
        trusted). False when nothing there was left to narrow."""
        pool = range(len(self)) if indices is None else indices
        profiles = self._profiles
        left = sorted({i for i in pool if self._exact[i] is None}, key=lambda i: profiles[i][1])
        if not left:
            return False
        sized = [i for i in left if profiles[i][2] < 0]
        if sized and self._trusted:
            goal, done = REFINE_SHARE * sum(profiles[i][1] for i in sized), 0
            while sized and (done == 0 or done < goal):
                i = sized.pop()
                done += max(profiles[i][1], 1)
                bounds.estimate(profiles[i], self._messages[i], self._image_tokens)
            return True
        left.sort(key=lambda i: profiles[i][2])
        goal = REFINE_SHARE * sum(profiles[i][2] for i in left) if self._trusted else math.inf
        done = 0
        while left and (done == 0 or done < goal):
            i = left.pop()
            done += max(profiles[i][2], 1)
            self._count(i)
        self._check()
        return True

    def settle(
        self, decide: Callable[[], bool | None], indices: Iterable[int] | None = None
    ) -> bool:
        """``decide()`` reads spans and returns the answer, or ``None`` while the bounds allow
        both; narrows (see :meth:`refine`) among ``indices``, then anywhere, until it answers.
        ``decide`` must answer once every span it reads is exact."""
        pools = [None] if indices is None else [list(indices), None]
        for pool in pools:
            while (verdict := decide()) is None:
                if not self.refine(pool):
                    break
            else:
                return verdict
        raise RuntimeError("a decision stayed open on exact costs")

    def clear_of(
        self, marks: Sequence[float], scale: Callable[[float], int], extra: int = 0
    ) -> int:
        """``scale(extra + sum of all costs)``, with no mark between what it is and what exact
        counts would make it, so every ``>= mark`` test on it answers as on the exact figure."""

        def decide() -> bool | None:
            span = self.span(None, extra)
            lo, hi = scale(span.lo), scale(span.hi)
            return True if all(hi < mark or lo >= mark for mark in marks) else None

        self.settle(decide)
        return scale(self.span(None, extra).point)

    def monotone(
        self,
        test: Callable[[float, float], bool],
        rising: tuple[list[int] | None, int],
        falling: tuple[list[int] | None, int],
    ) -> bool:
        """``test(a, b)`` of two sums given as (indices or ``None`` for all, exact extra), as
        exact counts answer it, for a test that never turns false as ``a`` grows or ``b``
        shrinks. The falling sum's messages are narrowed first (usually the open one)."""

        def decide() -> bool | None:
            a, b = self.span(*rising), self.span(*falling)
            best, worst = test(a.hi, b.lo), test(a.lo, b.hi)
            return best if best == worst else None

        return self.settle(decide, falling[0])

    def at_least(self, limit: float, indices: Iterable[int] | None = None, extra: int = 0) -> bool:
        """Whether ``extra`` plus the costs at ``indices`` reach ``limit``, as exact counts say
        (for a check such as "did the compaction grow the prompt?")."""
        chosen = None if indices is None else list(indices)

        def decide() -> bool | None:
            span = self.span(chosen, extra)
            return True if span.lo >= limit else False if span.hi < limit else None

        return self.settle(decide, chosen)

    def split(
        self, messages: Sequence[Mapping[str, Any]], cost: Callable[[Mapping[str, Any]], int]
    ) -> tuple[list[int], int]:
        """A prompt of ``messages`` as a sum: their table indices, and the exact tokens of the
        others (new or rewritten messages, by ``cost``) plus reply priming."""
        indices: list[int] = []
        extra = primed(0, messages)
        for message in messages:
            i = self.index_of(message)
            if i is None:
                extra += cost(message)
            else:
                indices.append(i)
        return indices, extra

    def exact_prompt(
        self, messages: Sequence[Mapping[str, Any]], cost: Callable[[Mapping[str, Any]], int]
    ) -> int:
        """Exact prompt tokens of ``messages``, counting what is left (callers keep this to
        lists bounded by the window, where it is cheap)."""
        indices, extra = self.split(messages, cost)
        return self.exact_total(indices) + extra

    def exact_total(self, indices: Iterable[int] | None = None) -> int:
        """The exact sum of the costs at ``indices`` (all when ``None``), counting what is left."""
        return sum(self._count(i) for i in (range(len(self)) if indices is None else indices))
