"""What a message's cost is known to be before it is counted: hard bounds, then an estimate.

:class:`~hermes_core.tokens.table.CostTable` keeps each message at the cheapest level that
still decides: its *size* (the framing tokens, exact, and the UTF-8 bytes of its text: a byte
level BPE never makes more tokens than bytes, so the cost lies between the framing and the
framing plus the bytes), then the calibrated *estimate* with the error model below, then the
exact count.

The error model, fitted in bench/compress_cold.py on the sample and generated transcripts
(where its worst case uses about 60% of the margin): a sum of estimated text tokens ``T`` over
messages that estimate ``t_i`` lies within ``ALPHA * T + Z * sqrt(sum((SIGMA * t_i)**2 +
SLACK**2))`` of its exact value. ``ALPHA`` allows a systematic bias (a script the estimate
knows less well), the root-sum-square term the scatter of single messages. The table checks
the model on every message it counts exactly and stops trusting estimates when one message, or
the counted ones together, fall outside it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence, Sized
from typing import Any, Final, NamedTuple

from hermes_core.tokens.costs import REPLY_PRIMING, _measure
from hermes_core.tokens.estimate import estimate_tokens

__all__ = [
    "ALPHA",
    "ESTIMATED_COUNTERS",
    "SIGMA",
    "SLACK",
    "Span",
    "Z",
    "clear_estimates",
    "estimate",
    "primed",
    "profiles",
    "spread",
]

#: Counters whose costs may be estimated first: the estimate is calibrated on o200k.
ESTIMATED_COUNTERS: Final = frozenset({"tiktoken:o200k_base"})
ALPHA: Final = 0.15  # systematic bias allowed, as a share of the estimated text tokens
SIGMA: Final = 0.30  # scatter of one message, as a share of its estimated text tokens
SLACK: Final = 2.0  # scatter of one message in tokens, for short messages
Z: Final = 3.0  # how many "standard deviations" of scatter the bound allows

#: A profile: [framing tokens, UTF-8 bytes of the text, estimated text tokens or -1].
Profile = list[int]


class Span(NamedTuple):
    """A sum of costs: exact when ``lo == hi``. ``point`` is the best single figure: exact
    costs, estimates, and for messages only sized their bytes at the transcript's sampled
    tokens per byte."""

    lo: float
    point: int
    hi: float


def spread(text: int) -> tuple[float, float]:
    """(linear, squared) allowance of the error model for one message of ``text`` tokens."""
    return ALPHA * text, (SIGMA * text) ** 2 + SLACK**2


def primed(tokens: float, messages: Sized) -> int:
    """Prompt tokens of a list whose costs sum to ``tokens``: plus reply priming, unless empty."""
    return int(tokens) + REPLY_PRIMING if len(messages) else 0


def _utf8_bytes(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


class _Sizer:
    """A counter that counts nothing and measures the text it is shown (framing stays exact)."""

    name = "size"

    def __init__(self) -> None:
        self.size = 0

    def count_text(self, text: str) -> int:
        self.size += _utf8_bytes(text)
        return 0


class _Tally(_Sizer):
    """The estimate as a counter that also remembers the text's bytes and estimated tokens."""

    name = "estimate"

    def __init__(self) -> None:
        super().__init__()
        self.text = 0

    def count_text(self, text: str) -> int:
        self.size += _utf8_bytes(text)
        tokens = estimate_tokens(text)
        self.text += tokens
        return tokens


class _Profiles:
    """A bounded LRU of profiles by (image tokens, content key), so a second cold call of the
    same transcript neither sizes nor estimates again."""

    def __init__(self, maxsize: int = 16384) -> None:
        self.maxsize = maxsize
        self._data: OrderedDict[tuple[int, Any], Profile] = OrderedDict()
        self._lock = threading.Lock()

    def get_many(
        self,
        keys: Sequence[tuple[int, Any]],
        messages: Sequence[Mapping[Any, Any]],
        estimated: Sequence[bool],
    ) -> list[Profile]:
        """The profiles of ``messages`` (one lock for the lookups, one for what is new),
        estimated where ``estimated`` says so."""
        with self._lock:
            data = self._data
            found = [data.get(key) for key in keys]
            for key, hit in zip(keys, found, strict=True):
                if hit is not None:
                    data.move_to_end(key)
        fresh: list[tuple[tuple[int, Any], Profile]] = []
        profiles: list[Profile] = []
        for key, hit, message, wanted in zip(keys, found, messages, estimated, strict=True):
            if hit is None:
                made = _profile(message, key[0], wanted)
                fresh.append((key, made))
                profiles.append(made)
                continue
            if wanted and hit[2] < 0:
                estimate(hit, message, key[0])
            profiles.append(hit)
        if fresh:
            with self._lock:
                data.update(fresh)
                while len(data) > self.maxsize:
                    data.popitem(last=False)
        return profiles

    def clear(self) -> None:
        with self._lock:
            self._data.clear()


def _profile(message: Mapping[Any, Any], image_tokens: int, estimated: bool) -> Profile:
    if estimated:
        tally = _Tally()
        total = _measure(message, tally, image_tokens).total
        return [total - tally.text, tally.size, tally.text]
    sizer = _Sizer()
    return [_measure(message, sizer, image_tokens).total, sizer.size, -1]


def estimate(found: Profile, message: Mapping[Any, Any], image_tokens: int) -> None:
    """Add the estimate to a profile that only has the size (in place: profiles are shared by
    content, and the estimate of a content never changes)."""
    if found[2] < 0:
        found[:] = _profile(message, image_tokens, True)


_PROFILES = _Profiles()


def profiles(
    keys: Sequence[tuple[int, Any]],
    messages: Sequence[Mapping[Any, Any]],
    estimated: Sequence[bool],
) -> list[Profile]:
    """The shared profiles of ``messages`` (``keys``: image tokens and content key of each)."""
    return _PROFILES.get_many(keys, messages, estimated)


def clear_estimates() -> None:
    """Forget every profile (benchmarks that measure a cold call clear this too)."""
    _PROFILES.clear()
