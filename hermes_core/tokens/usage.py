"""The usage-anchored running count that decides when to compress, at O(new messages)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hermes_core.tokens.costs import (
    DEFAULT_IMAGE_TOKENS,
    REPLY_PRIMING,
    MessageCostCache,
    check_message_list,
    default_cost_cache,
)
from hermes_core.tokens.counters import TokenCounter
from hermes_core.transcript.identity import message_digest

__all__ = ["RunningTokenCount"]


class RunningTokenCount:
    """The compression trigger's prompt-token count, anchored on real usage.

    Algorithm:

    * ``observe(messages)`` keeps, for the list it saw last, its length, the digests of its first
      and last messages and the summed estimated cost. If the new list has the same first message
      and still holds the previously-last message at the same index (compared by digest, so
      in-place edits of either are caught), only the appended messages are costed: two hashes
      plus O(new messages). Otherwise (compaction, edits, a different transcript) everything is
      recounted through the cost cache (a hash per unchanged message) and any anchor is dropped.
    * ``anchor(prompt_tokens, messages)``, called with the real ``usage.prompt_tokens`` of a
      response and the messages that were sent, makes that figure the count for those messages.
      The next ``observe`` returns ``N + ratio * cost(messages appended since)``.
    * Each anchor yields a sample ``N / estimated`` for the same messages (estimated = summed
      costs + reply priming). The first sample sets ``correction_ratio``; later ones are blended
      in with weight ``smoothing`` (an exponential moving average), always clamped to
      ``[min_ratio, max_ratio]``. The ratio scales the estimated part only, never an anchored
      figure. One instance serves one model; the ratio it learns belongs to that model.

    A middle message edited in place while the ends stay unchanged is not noticed; call
    ``reset()`` after such edits.
    """

    def __init__(
        self,
        counter: TokenCounter,
        *,
        image_tokens: int = DEFAULT_IMAGE_TOKENS,
        cache: MessageCostCache | None = None,
        initial_ratio: float = 1.0,
        smoothing: float = 0.3,
        min_ratio: float = 0.5,
        max_ratio: float = 2.0,
    ) -> None:
        if not 0.0 < smoothing <= 1.0:
            raise ValueError("smoothing must be in (0, 1]")
        if not 0.0 < min_ratio <= max_ratio:
            raise ValueError("need 0 < min_ratio <= max_ratio")
        self.counter = counter
        self.image_tokens = image_tokens
        self.cache = cache if cache is not None else default_cost_cache()
        self.smoothing = smoothing
        self.min_ratio = min_ratio
        self.max_ratio = max_ratio
        self._ratio = self._clamp(initial_ratio)
        self.samples = 0
        self.last_total = 0
        self.reset()

    def _clamp(self, ratio: float) -> float:
        return min(self.max_ratio, max(self.min_ratio, ratio))

    @property
    def correction_ratio(self) -> float:
        """Learned real/estimated ratio, applied to the not-yet-anchored part of the count."""
        return self._ratio

    @property
    def anchored_tokens(self) -> int | None:
        """The real prompt-token figure the count currently rests on, if any."""
        return self._anchor_tokens

    def reset(self) -> None:
        """Forget the transcript and the anchor (the learned ratio is kept)."""
        self._n = 0
        self._first_digest = b""
        self._last_digest = b""
        self._estimated = 0  # summed message costs of the first _n messages
        self._anchor_tokens: int | None = None
        self._since_anchor = 0  # summed costs of messages appended after the anchor

    @staticmethod
    def _same(message: Any, digest: bytes) -> bool:
        return isinstance(message, Mapping) and message_digest(message) == digest

    def follows(self, messages: Sequence[Mapping[str, Any]]) -> bool:
        """Whether ``messages`` extends the list seen last, so :meth:`observe` costs only the
        appended messages (two digests); else it would recount the whole list."""
        n = len(messages)
        return (
            0 < self._n <= n
            and self._same(messages[0], self._first_digest)
            and self._same(messages[self._n - 1], self._last_digest)
        )

    def _advance(self, messages: Sequence[Mapping[str, Any]]) -> None:
        """Bring the state up to ``messages``, costing only what was appended when possible."""
        if not isinstance(messages, (list, tuple)):
            raise TypeError(f"expected a list of message dicts, got {type(messages).__name__}")
        n = len(messages)
        grew = self.follows(messages)
        start = self._n if grew else 0
        if not grew:
            self.reset()
        fresh = messages[start:]
        check_message_list(fresh)
        added = sum(self.cache.measure(m, self.counter, self.image_tokens).total for m in fresh)
        if n == 0:
            return
        if start == 0:
            self._first_digest = message_digest(messages[0])
        if fresh:
            self._last_digest = message_digest(messages[-1])
        self._n = n
        self._estimated += added
        self._since_anchor += added

    def _estimated_prompt(self) -> int:
        return self._estimated + REPLY_PRIMING if self._n else 0

    def observe(self, messages: Sequence[Mapping[str, Any]]) -> int:
        """Current best count of the prompt ``messages`` would make."""
        self._advance(messages)
        if self._anchor_tokens is not None:
            total = self._anchor_tokens + self._ratio * self._since_anchor
        else:
            total = self._ratio * self._estimated_prompt()
        self.last_total = int(total + 0.5)
        return self.last_total

    def anchor(self, prompt_tokens: int, messages: Sequence[Mapping[str, Any]]) -> None:
        """Adopt the API's real prompt-token figure for ``messages`` and learn from it."""
        if isinstance(prompt_tokens, bool) or not isinstance(prompt_tokens, int):
            raise TypeError(f"prompt_tokens must be an int, got {type(prompt_tokens).__name__}")
        self._advance(messages)
        if prompt_tokens <= 0 or not self._n:
            return  # providers that report no usage send 0; nothing to learn
        estimated = self._estimated_prompt()
        sample = prompt_tokens / estimated
        if self.samples == 0:
            self._ratio = self._clamp(sample)
        else:
            self._ratio = self._clamp(
                (1.0 - self.smoothing) * self._ratio + self.smoothing * sample
            )
        self.samples += 1
        self._anchor_tokens = prompt_tokens
        self._since_anchor = 0
        self.last_total = prompt_tokens
