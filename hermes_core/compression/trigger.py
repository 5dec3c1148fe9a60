"""The compression trigger: threshold, the anchored running count, and the anti-thrash guard.

Kept apart from the pipeline so that what decides *when* to compress (one count shared with
the pipeline, the host's real usage, the guard's verdicts) reads as one idea.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hermes_core.compression import policy
from hermes_core.compression.result import CompressionEvent, EventSink
from hermes_core.config.settings import Settings
from hermes_core.errors import ConfigError
from hermes_core.tokens import REPLY_PRIMING, RunningTokenCount, get_counter, message_tokens

log = logging.getLogger("hermes_context.compression")
#: "Nothing to compress" backs off for 300 s, or until the transcript grows this much.
GROWTH_ENDS_BACKOFF = 1.25


class CompressionTrigger:
    """When to compress one conversation (the :class:`Compressor` adds how)."""

    def __init__(
        self,
        settings: Settings,
        *,
        context_length: int,
        max_tokens: int = 0,
        model: str | None = None,
        clock: Callable[[], float] = time.monotonic,
        on_event: EventSink | None = None,
    ) -> None:
        self.settings = settings
        self.model = model or settings.model.name or None
        self.context_length = context_length
        comp = settings.compression
        try:
            self._threshold = policy.resolve_threshold(
                context_length=context_length,
                max_tokens=max_tokens,
                model=self.model,
                threshold=comp.threshold,
                model_thresholds=comp.model_thresholds,
                threshold_tokens=comp.threshold_tokens,
            )
        except ValueError as exc:
            raise ConfigError(f"cannot compress with this window: {exc}") from None
        self.counter = get_counter(self.model, settings.model.tokenizer)
        self.guard = policy.CompressionGuard(clock=clock)
        self.on_event = on_event
        self.last_prompt_tokens: int | None = None
        self.running = RunningTokenCount(self.counter, image_tokens=comp.image_tokens)
        self._nothing_at: int | None = None  # tokens when "nothing to compress" last happened

    def nothing_to_compress(self, tokens: int) -> None:
        """Back off (spec 10 §6), until the transcript grows by a quarter."""
        self.guard.record_nothing_to_compress()
        self._nothing_at = max(tokens, 1)

    @property
    def threshold_tokens(self) -> int:
        return self._threshold.tokens

    @property
    def threshold_provenance(self) -> list[str]:
        return list(self._threshold.provenance)

    def count(self, messages: Sequence[Mapping[str, Any]]) -> int:
        """Prompt tokens of ``messages`` with the one cost function (cached by content)."""
        image = self.settings.compression.image_tokens
        total = sum(message_tokens(m, self.counter, image_tokens=image) for m in messages)
        return total + REPLY_PRIMING if messages else 0

    def observe(self, messages: Sequence[Mapping[str, Any]]) -> int:
        """The prompt-token count of ``messages`` for the trigger: anchored on the last real
        usage, and O(new messages) when the list only grew since the last call."""
        self.last_prompt_tokens = self.running.observe(messages)
        return self.last_prompt_tokens

    def should_compress(self, prompt_tokens: int | None = None) -> tuple[bool, str | None]:
        """Whether to compress now, and why not when over the threshold but blocked.

        Without ``prompt_tokens`` it uses the last figure from :meth:`observe` or
        :meth:`update_from_usage`."""
        tokens = prompt_tokens if prompt_tokens is not None else self.last_prompt_tokens or 0
        enabled = self.settings.compression.enabled
        if self._nothing_at is not None and tokens >= self._nothing_at * GROWTH_ENDS_BACKOFF:
            self.guard.end_backoff()  # grown by a quarter since: that is new work to compress
            self._nothing_at = None
        go, reason = self.guard.should_compress(tokens, self.threshold_tokens, enabled=enabled)
        if not go and enabled:
            warning = self.guard.warning_due(tokens, self.threshold_tokens)
            if warning:
                self._emit("compression_blocked", reason=warning, tokens=tokens)
        return go, reason

    def update_from_usage(
        self, usage: Mapping[str, Any], messages: Sequence[Mapping[str, Any]] | None = None
    ) -> None:
        """Real ``usage.prompt_tokens`` from the API: judges the last compaction (anti-thrash)
        and, given the ``messages`` that were sent, anchors the running count on it."""
        prompt = usage.get("prompt_tokens")
        if isinstance(prompt, bool) or not isinstance(prompt, int) or prompt < 0:
            return
        self.last_prompt_tokens = prompt
        if messages is not None:
            self.running.anchor(prompt, messages)
        self.guard.record_usage(prompt, self.threshold_tokens)

    def _cost(self, message: Mapping[str, Any]) -> int:
        image = self.settings.compression.image_tokens
        return message_tokens(message, self.counter, image_tokens=image)

    def _emit(self, event_kind: Any, /, **data: Any) -> None:
        if self.on_event is None:
            return
        try:
            self.on_event(CompressionEvent(event_kind, data))
        except Exception:
            log.warning("compression event callback failed", exc_info=True)
