"""The compression trigger: threshold, the anchored running count, and the anti-thrash guard.

Apart from the pipeline, so what decides *when* (one count shared with the pipeline, the
host's real usage, the guard's verdicts) reads as one idea."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from hermes_core.compression import policy, schedule
from hermes_core.compression.arguments import check_messages, check_usage
from hermes_core.compression.overflow import MIN_PLAUSIBLE_WINDOW, stated_window
from hermes_core.compression.rate import CompactionRate
from hermes_core.compression.result import CompressionEvent, CompressionResult, EventSink
from hermes_core.config.settings import Settings
from hermes_core.errors import ConfigError
from hermes_core.tokens import REPLY_PRIMING, RunningTokenCount, get_counter, message_tokens
from hermes_core.tokens.table import CostTable

log = logging.getLogger("hermes_context.compression")
#: "Nothing to compress" backs off for 300 s, or until the transcript grows this much.
GROWTH_ENDS_BACKOFF = 1.25
#: A prompt at this share of the window (less the reply's reservation) is about to stop
#: fitting: it compacts whatever the frequency limits say (overflow prevention).
WINDOW_EDGE = 0.95


def as_settings(config: Settings | Mapping[str, Any] | None) -> Settings:
    """Settings from a :class:`Settings`, a config mapping (validated), or the defaults."""
    if config is None:
        return Settings()
    if isinstance(config, Settings):
        return config
    from hermes_core.config.loader import load_config

    return load_config(config).settings


class CompressionTrigger:
    """When to compress one conversation; the Compressor adds how (and sets the two below)."""

    compactions: int
    previous_summary: str | None

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
        self._window = (context_length, max_tokens)  # as configured (set_model changes it)
        self._learned_window: int | None = None  # stated by an overflow error (note_overflow)
        self._threshold = self._derive(context_length, max_tokens, self.model, None)
        self.counter = get_counter(self.model, settings.model.tokenizer)
        self._clock = clock
        self.guard = policy.CompressionGuard(clock=clock)
        comp = settings.compression
        self.rate = CompactionRate(
            max_per_hour=comp.max_per_hour,
            min_requests_between=comp.min_requests_between,
            clock=clock,
        )
        self._auto_go = False  # the last should_compress said yes on its own (not overflow)
        self._early_go = False  # ... and before the threshold: the cost schedule's
        self.on_event = on_event
        self.last_prompt_tokens: int | None = None
        self.running = self._new_running()
        self._nothing_at: int | None = None  # tokens when "nothing to compress" last happened
        self._undo_hold = False  # that backoff is an undo's "no immediate redo" (hold_after_undo)
        self._sent: tuple[Sequence[Mapping[str, Any]], int] | None = None  # what goes out next
        self._overflow_due = False
        self._idle_due = False
        self._cache_cold = False  # a gap longer than compression.cache_ttl: the cache expired
        self._active_at: float | None = None  # clock of the last observe/compress
        self.carry = self._first_carry()  # the cost schedule's account (compression/schedule.py)

    def _first_carry(self) -> schedule.CarryCost:
        comp, window = self.settings.compression, self.context_length
        tail = policy.configured_tail_budget(comp, self.threshold_tokens, window)
        return schedule.first_account(comp.cached_price, tail, policy.summary_budget(window))

    def _new_running(self, ratio: float = 1.0, samples: int = 0) -> RunningTokenCount:
        image = self.settings.compression.image_tokens
        running = RunningTokenCount(self.counter, image_tokens=image, initial_ratio=ratio)
        running.samples = samples
        return running

    def _derive(
        self, context_length: int, max_tokens: int, model: str | None, learned: int | None
    ) -> policy.Threshold:
        """Spec 10 §3 for this window, lowered (never raised) by a window the provider stated."""
        comp = self.settings.compression
        window = context_length if learned is None else min(context_length, learned)
        # a reservation larger than the real window cannot be kept at all: drop it
        reserved = 0 if window < context_length and max_tokens >= window else max_tokens
        try:
            threshold = policy.resolve_threshold(
                context_length=window,
                max_tokens=reserved,
                model=model,
                threshold=comp.threshold,
                model_thresholds=comp.model_thresholds,
                threshold_tokens=comp.threshold_tokens,
            )
        except ValueError as exc:
            raise ConfigError(f"cannot compress with this window: {exc}") from None
        if window == context_length:
            return threshold
        configured = self._derive(context_length, max_tokens, model, None)
        steps = [f"window {window:,} learned from the provider's overflow error"]
        steps += threshold.provenance[:-1]
        tokens = threshold.tokens
        if configured.tokens < tokens:  # e.g. the small-context floor: never trigger later
            tokens = configured.tokens
            steps.append(f"kept at {tokens:,}: a smaller window never raises the trigger")
        steps.append(f"trigger at {tokens:,} tokens")
        return replace(threshold, tokens=tokens, provenance=tuple(steps))

    @property
    def context_length(self) -> int:
        """The window in use: the configured one, or the smaller one the provider stated."""
        configured = self._window[0]
        learned = self._learned_window
        return configured if learned is None else min(configured, learned)

    @property
    def max_tokens(self) -> int:
        return self._window[1]

    def nothing_to_compress(self, tokens: int) -> None:
        """Back off (spec 10 §6), until the transcript grows by a quarter."""
        self.guard.record_nothing_to_compress()
        self._nothing_at = max(tokens, 1)
        self._undo_hold = False

    def hold_after_undo(self, tokens: int) -> None:
        """An undo restored a transcript of ``tokens`` that was over the trigger: back off as
        after "nothing to compress" so the next request does not compact it again, but only
        below the window's edge (:meth:`window_edge`): a prompt past it would be refused as
        too long, so there automatic compaction runs (docs/undo.md)."""
        self.nothing_to_compress(tokens)
        self._undo_hold = True

    @property
    def early_due(self) -> bool:
        """The last yes was the cost schedule's (a host then passes ``optional=True``)."""
        return self._early_go

    def window_edge(self) -> int:
        """The prompt size at which a request is about to stop fitting the window (less the
        reply's reservation): no backoff or frequency limit holds automatic compaction there."""
        return int(self.context_length * WINDOW_EDGE) - self.max_tokens

    @property
    def threshold_tokens(self) -> int:
        return self._threshold.tokens

    @property
    def threshold_provenance(self) -> list[str]:
        return list(self._threshold.provenance)

    def count(self, messages: Sequence[Any]) -> int:
        """Prompt tokens of ``messages`` with the one cost function (cached by content)."""
        image = self.settings.compression.image_tokens
        total = sum(message_tokens(m, self.counter, image_tokens=image) for m in messages)
        return total + REPLY_PRIMING if messages else 0

    def observe(self, messages: Sequence[Any]) -> int:
        """The prompt-token count of ``messages`` for the trigger: anchored on the last real
        usage, and O(new messages) when the list only grew since the last call.

        ``messages`` is taken to be what goes out next: a later ``update_from_usage`` without
        messages anchors on it (as it was now, even if the list grows in place meanwhile)."""
        check_messages(messages)
        self._touch(len(messages))
        self._sent = (messages, len(messages))
        self.last_prompt_tokens = self.running.observe(messages)
        self._note_list(messages, self.last_prompt_tokens)
        return self.last_prompt_tokens

    def _touch(self, length: int | None = None) -> None:
        """Note activity (``length``: a list handed in, a request when it grew); a gap
        longer than ``idle_compact_after_seconds`` arms the idle trigger (spec 10 §8): the
        provider's prompt cache has expired by then, so a compaction now costs no extra
        cache miss."""
        comp, now = self.settings.compression, self._clock()
        gap = None if self._active_at is None else now - self._active_at
        if gap is not None and comp.idle_compact_after_seconds > 0:
            self._idle_due = self._idle_due or gap > comp.idle_compact_after_seconds
        if gap is not None and comp.cache_ttl > 0:
            self._cache_cold = self._cache_cold or gap > comp.cache_ttl
        self._active_at = now
        self._auto_go = False
        if length is not None:
            self.rate.note_list(length)

    def should_compress(self, prompt_tokens: int | None = None) -> tuple[bool, str | None]:
        """Whether to compress now, and why not when over the threshold but blocked.

        Without ``prompt_tokens`` it uses the last figure from :meth:`observe` or
        :meth:`update_from_usage`. After :meth:`note_overflow` it is true at once (unless
        ``compression.enabled`` is false); after an idle gap the trigger is half the threshold."""
        tokens = prompt_tokens if prompt_tokens is not None else self.last_prompt_tokens or 0
        enabled = self.settings.compression.enabled
        self._auto_go = self._early_go = False
        if self._overflow_due and enabled:
            return True, None  # the provider refused the request: the guard cannot help it
        grown = self._nothing_at is not None and tokens >= self._nothing_at * GROWTH_ENDS_BACKOFF
        if grown or (self._undo_hold and tokens >= self.window_edge()):
            # grown by a quarter since: that is new work to compress; an undo's hold ends at
            # the window's edge: the restored transcript would not fit any more
            self.guard.end_backoff()
            self._nothing_at, self._undo_hold = None, False
        trigger = self.threshold_tokens
        if self._idle_due:
            trigger = max(1, trigger // 2)
        early = self.settings.compression.schedule == "cost" and tokens < trigger
        if early and self.carry.due(tokens, cache_cold=self._idle_due or self._cache_cold):
            trigger, self._early_go = tokens, True  # carrying on bills more than compacting
        go, reason = self.guard.should_compress(tokens, trigger, enabled=enabled)
        if go:
            go, reason = self._within_rate(tokens)
            self._auto_go = go
        elif enabled:
            warning = self.guard.warning_due(tokens, self.threshold_tokens)
            if warning:
                self._emit("compression_blocked", reason=warning, tokens=tokens)
        return go, reason

    def _within_rate(self, tokens: int) -> tuple[bool, str | None]:
        """The frequency limits (compression/rate.py) hold compactions before the threshold
        (the cost schedule's, an idle gap's) only: a prompt at or over the threshold always
        compacts, so no request goes out over it."""
        block = self.rate.block()
        if block is None:
            return True, None
        if tokens >= min(self.threshold_tokens, self.window_edge()):
            return True, None
        if self.rate.warning_due():
            self._emit("compression_blocked", tokens=tokens, **block.as_event())
        return False, block.reason

    def _settle(self, source: Sequence[Mapping[str, Any]], result: CompressionResult) -> bool:
        """After a ``compress``: what goes out next, and an automatic compaction counted for
        the frequency limits; True when the transcript changed."""
        changed = result.status in ("compressed", "pruned")
        self._sent = (result.messages, len(result.messages)) if changed else (source, len(source))
        if changed:
            self._new_cycle(result)
            self.running.reset()  # the list was rewritten, not appended to: recount it next time
            if self._auto_go:
                self.rate.record(len(result.messages))
        self._auto_go = False
        return changed

    def _note_list(self, messages: Sequence[Any], tokens: int) -> None:
        """The cost schedule's view of a list handed in (a request when it grew)."""
        self.carry.note_list(len(messages), tokens)
        if self.carry.estimated:
            ratio = self.running.correction_ratio
            self.carry.note_prefix(int(schedule.system_tokens(messages, self._cost) * ratio))

    def _new_cycle(self, result: CompressionResult) -> None:
        """Start the cost schedule's next cycle from what this compaction left and cost."""
        ratio = self.running.correction_ratio
        after = int(result.tokens_after * ratio)
        cached = schedule.system_tokens(result.messages, self._cost)
        usage = result.stats.get("summarizer_usage") or {}
        output = usage.get("completion_tokens") or 0
        rate = self.settings.compression.cached_price
        cost = schedule.one_off_cost(after, int(cached * ratio), output, rate)
        summary = result.status == "compressed"
        self.carry.compacted(after, cost, len(result.messages), summary=summary)

    def use_clock(self, clock: Callable[[], float]) -> None:
        """Run every timer on another monotonic clock from now on (a replay's simulated time):
        the time left on each is kept."""
        state = self.guard.to_dict()
        rate = self.rate.to_dict()
        idle = None if self._active_at is None else self._clock() - self._active_at
        self._clock = clock
        self.guard = policy.CompressionGuard.from_dict(state, clock=clock)
        self.rate = CompactionRate(
            max_per_hour=self.rate.max_per_hour,
            min_requests_between=self.rate.min_requests_between,
            clock=clock,
        )
        self.rate.restore(rate, elapsed=0.0)
        self._active_at = None if idle is None else clock() - idle

    def update_from_usage(self, usage: Any, messages: Sequence[Any] | None = None) -> None:
        """Real ``usage.prompt_tokens`` from the API (any API's usage record or the SDK's
        object, read at the boundary: tokens/reported.py): judges the last compaction (anti-thrash)
        and anchors the running count on the messages that were sent: ``messages`` when given,
        else those of the last :meth:`observe`, or the list the last ``compress`` returned."""
        check_usage(usage, messages)
        prompt = usage.get("prompt_tokens")
        if isinstance(prompt, bool) or not isinstance(prompt, int) or prompt < 0:
            return
        self.last_prompt_tokens = prompt
        self._overflow_due = self._idle_due = self._cache_cold = False  # the cache is warm
        self.rate.note_usage()
        self.carry.note_usage(prompt)
        if messages is None and self._sent is not None:
            sent, n = self._sent
            messages = sent if len(sent) == n else list(sent[:n])
        if messages is not None:
            self.running.anchor(prompt, messages)
        self.guard.record_usage(prompt, self.threshold_tokens)

    def note_overflow(self, message: str) -> int | None:
        """The provider refused the request as too long (HTTP 413, "maximum context length").

        The next :meth:`should_compress` is true at once. When ``message`` states the window,
        the threshold is re-derived for it (only ever lowered) and the window is returned;
        ``None`` when it states none, or none smaller than the one in use."""
        self._overflow_due = True
        stated = stated_window(message)
        if stated is None or not self._adopt_window(stated):
            return None
        log.warning(
            "the provider states a window of %s tokens; compression now triggers at %s",
            f"{stated:,}",
            f"{self.threshold_tokens:,}",
        )
        return stated

    def _adopt_window(self, window: int) -> bool:
        """Use ``window`` when it is plausible and smaller than the one in use."""
        if not MIN_PLAUSIBLE_WINDOW <= window < self.context_length:
            return False
        context, out = self._window
        self._threshold = self._derive(context, out, self.model, window)
        self._learned_window = window
        return True

    def set_model(
        self, name: str, *, context_length: int | None = None, max_tokens: int | None = None
    ) -> None:
        """Switch this conversation to another model or window (``None``: keep the current).

        The threshold is re-derived (``model_thresholds`` apply); the guard, the previous
        summary and the counters are kept. The learned token ratio is reset only when the
        tokenizer encoding changes (it corrects *our* count, which is per encoding); a window
        learned from an overflow is kept only for the same model."""
        model = name or self.settings.model.name or None
        context = self._window[0] if context_length is None else context_length
        out = self._window[1] if max_tokens is None else max_tokens
        learned = self._learned_window if model == self.model else None
        threshold = self._derive(context, out, model, learned)  # raises before any change
        counter = get_counter(model, self.settings.model.tokenizer)
        if counter.name != self.counter.name:
            self.counter = counter
            self.running = self._new_running()
        self.model, self._window, self._learned_window = model, (context, out), learned
        self._threshold = threshold

    def _trigger(self, source: list[dict[str, Any]], costs: CostTable) -> int:
        """:meth:`observe` when cheap (costs known, or the list only grew), else the estimate,
        counted exactly until every verdict of the trigger is the one exact counts give."""
        if not costs.pending or self.running.follows(source):
            return self.observe(source)
        ratio, trigger = self.running.correction_ratio, self.threshold_tokens
        nothing = [] if self._nothing_at is None else [self._nothing_at * GROWTH_ENDS_BACKOFF]
        nothing += [self.window_edge()] if self._undo_hold else []
        proactive = self.settings.compression.proactive_prune_tokens  # 0: off
        marks = [trigger, max(1, trigger // 2), *nothing, *([proactive] if proactive else [])]
        marks.append(int(schedule.MIN_CUT * self.carry.base))  # the cost schedule's earliest point
        tokens = costs.clear_of(marks, lambda t: int(ratio * t + 0.5), REPLY_PRIMING)
        self._sent, self.last_prompt_tokens = (source, len(source)), tokens
        self._note_list(source, tokens)
        return tokens

    def _notice(self, phase: str, text: str) -> None:
        """A ``status`` event for chat surfaces, when ``compression.progress_notices``."""
        if self.settings.compression.progress_notices:
            self._emit("status", phase=phase, text=text)

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
